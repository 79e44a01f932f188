/* SPDX-License-Identifier: MIT */
/* filter.c -- the filter of eatmydata --seccomp, and how it is installed.
 *
 * The filter lets every system call through but the durability requests:
 * those go to a supervisor process (SECCOMP_RET_USER_NOTIF), which answers
 * them as the library would (supervisor.c).  Calls that cannot sync pass
 * untouched: an fsync of a negative descriptor (EBADF from the kernel),
 * sync_file_range with no flags (the library's own validation), opens
 * without O_SYNC.  Everything else stays in the kernel's per-syscall
 * "always allowed" cache, which is why the filter costs almost nothing.
 */
#include "launch/common.h"
#include "seccomp.h"
#include "supervisor.h"
#include "requests.h"
#include "elf_kind.h"
#include "launch/sync_on_exit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define NOTIFY SECCOMP_RET_USER_NOTIF
#define ALLOW SECCOMP_RET_ALLOW

EMD_REQUEST_TABLE(requests);

struct filter {
	struct sock_filter insn[256];
	unsigned short n;
};

static void emit(struct filter *f, struct sock_filter insn)
{
	if (f->n == sizeof(f->insn) / sizeof(*f->insn))
		die("seccomp filter too long");
	f->insn[f->n++] = insn;
}

/* "if nr: body", the body `len` instructions that end in a return. */
static void rule(struct filter *f, long nr, unsigned char len)
{
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, len));
}

static void ret(struct filter *f, unsigned action)
{
	emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

static void load(struct filter *f, unsigned offset)
{
	emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset));
}

/* Notify when any bit of `mask` is set in argument `arg`. */
static void notify_if_flags(struct filter *f, long nr, int arg, unsigned mask)
{
	rule(f, nr, 4);
	load(f, ARG_LO(arg));
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1));
	ret(f, NOTIFY);
	ret(f, ALLOW);
}

/* Notify unless the descriptor is negative: the kernel's own EBADF. */
static void notify_unless_negative(struct filter *f, long nr, int arg)
{
	rule(f, nr, 4);
	load(f, ARG_LO(arg));
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, 0, 1));
	ret(f, ALLOW);
	ret(f, NOTIFY);
}

static void notify(struct filter *f, long nr)
{
	rule(f, nr, 1);
	ret(f, NOTIFY);
}

/* The rules of one ABI, from the request table: each request the
 * supervisor answers, by its number and argument there.  Landlock is no
 * durability request, but the supervisor must know that someone in the
 * tree confined itself, which cannot be seen from outside. */
static void abi_rules(struct filter *f, int compat, const struct seccomp_options *opt)
{
	load(f, offsetof(struct seccomp_data, nr));
	for (int i = 0; i < EMD_NREQUESTS; i++) {
		const struct emd_request *r = &requests[i];
		long nr = compat ? r->nr32 : r->nr;
		int arg = compat ? r->arg32 : r->arg;

		if (nr < 0 || !supervisor_answers(r))
			continue;
		if (r->test == EMD_TEST_FD)
			notify_unless_negative(f, nr, arg);
		else if (r->test == EMD_TEST_BITS)
			notify_if_flags(f, nr, arg, r->bits);
		else
			notify(f, nr);
	}
	notify(f, SYS_landlock_restrict_self);
	if (EMD_X32_BIT && !compat)
		notify(f, SYS_landlock_restrict_self | EMD_X32_BIT);
	if (opt->no_io_uring) {
		rule(f, SYS_io_uring_setup, 1); /* one number on every ABI */
		ret(f, SECCOMP_RET_ERRNO | ENOSYS);
	}
	ret(f, ALLOW);
}

/* "if the ABI is `arch`: its rules", patched once their length is known. */
static void abi_block(struct filter *f, unsigned arch, int compat,
		      const struct seccomp_options *opt)
{
	unsigned short at = f->n;

	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, 0));
	abi_rules(f, compat, opt);
	if (f->n - at - 1 > 255)
		die("seccomp filter too long");
	f->insn[at].jf = (unsigned char)(f->n - at - 1);
}

/* Each ABI the kernel runs here gets its own rules (x32 shares the native
 * ABI's arch with a bit in the number, which none of the rules has); any
 * other ABI only has Landlock watched. */
static void build(struct filter *f, const struct seccomp_options *opt)
{
	load(f, offsetof(struct seccomp_data, arch));
	abi_block(f, EMD_ARCH_NATIVE, 0, opt);
	abi_block(f, EMD_ARCH_COMPAT, 1, opt);
	load(f, offsetof(struct seccomp_data, nr));
	notify(f, SYS_landlock_restrict_self);
	ret(f, ALLOW);
}

/* Does the program need the filter (elf_kind.c)? */
static int unreachable(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return 0;
	r = emd_elf_unreachable(fd);
	close(fd);
	return r;
}

int seccomp_wanted(const struct seccomp_options *opt, const char *file)
{
	if (!strcmp(opt->mode, "on"))
		return 1;
	if (!strcmp(opt->mode, "off"))
		return 0;
	if (strcmp(opt->mode, "auto") != 0)
		die("--seccomp takes auto, on or off, not '%s'", opt->mode);
	return file && unreachable(file);
}

/* CAP_SYS_ADMIN may install a filter without no_new_privs. */
static int privileged(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	if (f)
		fclose(f);
	return (caps >> CAP_SYS_ADMIN) & 1;
}

static void send_fd(int sock, int fd)
{
	char data = 0, ctl[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {&data, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != 1)
		die("cannot pass the seccomp listener: %s", strerror(errno));
}

static int recv_fd(int sock)
{
	char data, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {&data, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1 || !(c = CMSG_FIRSTHDR(&msg)) ||
	    c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The command runs only once the supervisor answers: a byte on the socket
 * (nothing: it died, and every durability request would fail). */
static void wait_ready(int sock)
{
	char byte;
	ssize_t n;

	while ((n = read(sock, &byte, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		die("the seccomp supervisor did not start");
}

/* The supervisor: a grandchild, so that it is nobody's child in the tree,
 * in a session of its own, holding no descriptor of the tree's from the
 * start (a launcher that fails before sending the listener must not leave
 * behind a process holding its output open). */
static void start_supervisor(int sock, const char *only)
{
	pid_t middle = fork(), grandchild;
	int listener, null, status;

	if (middle < 0)
		die("cannot fork: %s", strerror(errno));
	if (middle > 0) {
		while (waitpid(middle, &status, 0) < 0)
			if (errno != EINTR)
				die("cannot start the seccomp supervisor: %s", strerror(errno));
		if (!WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			die("cannot start the seccomp supervisor");
		return;
	}
	if ((grandchild = fork()) != 0)
		_exit(grandchild < 0);
	setsid();
	/* The socket at 3, nothing else of the launcher's: a few descriptors
	 * are enough (ulimit -n 6 runs).  Stdio is /dev/null. */
	if (dup2(sock, 3) < 0)
		_exit(1);
	/* All but --sync-on-exit's note directory. */
	close_range(sync_on_exit_keep(4), ~0U, 0);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		_exit(1);
	if (null > 3)
		close(null);
	listener = recv_fd(3);
	if (listener < 0)
		_exit(0);
	if ((sock = fcntl(3, F_DUPFD_CLOEXEC, 4)) < 0 || dup2(listener, 3) < 0)
		_exit(1);
	close(listener);
	supervise(3, sock, only);
}

/* Install the filter; the notified caller waits killably once the
 * supervisor has its request (Linux 5.19), so that a signal cannot make
 * it ask again what the supervisor is already doing (an append twice). */
static int install(struct sock_fprog *prog)
{
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			      SECCOMP_FILTER_FLAG_NEW_LISTENER |
				      SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, prog);

	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				  SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
	return fd;
}

void seccomp_install(const struct seccomp_options *opt)
{
	struct filter f = {0};
	struct sock_fprog prog;
	int sv[2], listener;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		die("cannot create a socket: %s", strerror(errno));
	start_supervisor(sv[1], opt->only);
	close(sv[1]);
	build(&f, opt);
	prog = (struct sock_fprog){.len = f.n, .filter = f.insn};
	if (!privileged() && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die("cannot set no_new_privs: %s", strerror(errno));
	listener = install(&prog);
	/* One listener per filter tree: an outer eatmydata --seccomp, or a
	 * container runtime's supervisor, is there already.  Under the outer
	 * eatmydata the tree is eaten anyway; "auto" runs on without its own
	 * filter (closing the socket ends the supervisor). */
	if (listener < 0 && errno == EBUSY && strcmp(opt->mode, "auto") == 0) {
		close(sv[0]);
		return;
	}
	if (listener < 0 && errno == EBUSY)
		die("cannot install the seccomp filter: the process is under one "
		    "with a supervisor already (an outer eatmydata --seccomp, or a "
		    "container's)");
	if (listener < 0)
		die("cannot install the seccomp filter: %s", strerror(errno));
	send_fd(sv[0], listener);
	close(listener);
	wait_ready(sv[0]);
	close(sv[0]);
}
