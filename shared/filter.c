/* SPDX-License-Identifier: MIT */
/* filter.c -- the seccomp filter, made from the request table, and putting
 * a process under it (include/filter.h).  Linked into the library and the
 * launcher: it calls nothing the library intercepts, allocates nothing, and
 * may run in a vfork child.
 *
 * The filter lets every system call through but the durability requests:
 * those go to the supervisor (SECCOMP_RET_USER_NOTIF), which answers them
 * as the library would.  Calls that cannot sync pass untouched: an fsync of
 * a negative descriptor (EBADF from the kernel), sync_file_range with no
 * flags (the library's own validation), opens without O_SYNC.  Everything
 * else stays in the kernel's per-syscall "always allowed" cache, which is
 * why a filter costs little (about 45 ns a system call here).
 */
#define _GNU_SOURCE 1
#include "filter.h"
#include "change_requests.h"
#include "io_requests.h"
#include "requests.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define NOTIFY SECCOMP_RET_USER_NOTIF
#define ALLOW SECCOMP_RET_ALLOW

EMD_REQUEST_TABLE(requests);
EMD_IO_TABLE(io_requests);
EMD_END_TABLE(io_ends);
EMD_CHANGE_TABLE(changes);

static void emit(struct emd_filter *f, struct sock_filter insn)
{
	if (f->n == sizeof(f->insn) / sizeof(*f->insn))
		f->overflow = 1;
	else
		f->insn[f->n++] = insn;
}

/* "if nr: body", the body `len` instructions that end in a return. */
static void rule(struct emd_filter *f, long nr, unsigned char len)
{
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, len));
}

static void ret(struct emd_filter *f, unsigned action)
{
	emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

static void load(struct emd_filter *f, unsigned offset)
{
	emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset));
}

/* Notify when any bit of `mask` is set in argument `arg`. */
static void notify_if_flags(struct emd_filter *f, long nr, int arg, unsigned mask)
{
	rule(f, nr, 4);
	load(f, ARG_LO(arg));
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1));
	ret(f, NOTIFY);
	ret(f, ALLOW);
}

/* Notify unless the descriptor is negative: the kernel's own EBADF. */
static void notify_unless_negative(struct emd_filter *f, long nr, int arg)
{
	rule(f, nr, 4);
	load(f, ARG_LO(arg));
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, 0, 1));
	ret(f, ALLOW);
	ret(f, NOTIFY);
}

static void notify(struct emd_filter *f, long nr)
{
	rule(f, nr, 1);
	ret(f, NOTIFY);
}

/* Notify when the system call is any of the table's ALWAYS rows: one
 * jump each to a return they share. */
static void notify_any(struct emd_filter *f, int compat)
{
	unsigned short at = f->n;
	int k = 0;

	for (size_t i = 0; i < EMD_NCHANGES; i++)
		if (changes[i].test == EMD_TEST_ALWAYS && (compat ? changes[i].nr32 : changes[i].nr) >= 0)
			k++;
	for (size_t i = 0; i < EMD_NCHANGES; i++) {
		long nr = compat ? changes[i].nr32 : changes[i].nr;

		if (changes[i].test == EMD_TEST_ALWAYS && nr >= 0) {
			emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr,
							     (unsigned char)(k - (f->n - at)), 0));
		}
	}
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0));
	ret(f, NOTIFY);
}

/* crashtest's: each call of change_requests.h, by its test. */
static void change_rules(struct emd_filter *f, int compat)
{
	notify_any(f, compat);
	for (size_t i = 0; i < EMD_NCHANGES; i++) {
		const struct emd_change *r = &changes[i];
		long nr = compat ? r->nr32 : r->nr;

		if (nr < 0 || r->test == EMD_TEST_ALWAYS)
			continue;
		if (r->test == EMD_TEST_FD)
			notify_unless_negative(f, nr, r->arg);
		else
			notify_if_flags(f, nr, r->arg, r->bits);
	}
}

/* The request table's rules of one ABI: each request the supervisor
 * answers, by its number and argument there. */
static void request_rules(struct emd_filter *f, int compat, int probe_errno)
{
	int timed = probe_errno == EMD_PROBE_TIME;

	for (int i = 0; i < EMD_NREQUESTS; i++) {
		const struct emd_request *r = &requests[i];
		long nr = compat ? r->nr32 : r->nr;
		int arg = compat ? r->arg32 : r->arg;

		if (nr < 0 || !(emd_supervised(r) || (timed && emd_file_write(r))))
			continue;
		/* syncstat asks of each write whether its file syncs it, and
		 * counts a call with sync flags on a negative descriptor too
		 * (its EBADF), as the library does. */
		if (timed && r->test == EMD_TEST_WRITE)
			notify_unless_negative(f, nr, 0);
		else if (timed && emd_file_write(r))
			notify(f, nr);
		else if (r->test == EMD_TEST_FD && !timed)
			notify_unless_negative(f, nr, arg);
		else if (r->test == EMD_TEST_BITS)
			notify_if_flags(f, nr, arg, r->bits);
		else
			notify(f, nr);
	}
}

/* The rules of one ABI, from the policy's table; nocache's reads and
 * writes in the 32-bit ABI too.  Landlock is no request, but the
 * supervisor must know that someone in the tree confined itself, which
 * cannot be seen from outside. */
static void abi_rules(struct emd_filter *f, int compat, int no_io_uring, int probe_errno,
		      enum emd_filter_table table)
{
	long probe_nr = compat ? EMD_PROBE_NR32 : EMD_PROBE_NR;

	load(f, offsetof(struct seccomp_data, nr));
	if (probe_nr >= 0) { /* the probe; then on to the rules, with nr again */
		rule(f, probe_nr, 3);
		load(f, ARG_LO(0));
		emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)EMD_PROBE_FD,
						     0, 1));
		ret(f, SECCOMP_RET_ERRNO | (unsigned)probe_errno);
		load(f, offsetof(struct seccomp_data, nr));
	}
	if (no_io_uring) {
		rule(f, SYS_io_uring_setup, 1); /* one number on every ABI */
		ret(f, SECCOMP_RET_ERRNO | ENOSYS);
	}
	for (size_t i = 0; table == EMD_FILTER_IO && i < EMD_NIO; i++) {
		long nr = compat ? io_requests[i].nr32 : io_requests[i].nr;

		if (nr >= 0)
			notify_unless_negative(f, nr, 0);
	}
	for (int i = 0; table == EMD_FILTER_IO && i < EMD_NENDS; i++) {
		long nr = compat ? io_ends[i].nr32 : io_ends[i].nr;

		if (nr >= 0 && i == EMD_END_close)
			notify_unless_negative(f, nr, 0);
		else if (nr >= 0)
			notify(f, nr);
	}
	if (table == EMD_FILTER_CHANGES)
		change_rules(f, compat);
	if (table == EMD_FILTER_REQUESTS)
		request_rules(f, compat, probe_errno);
	notify(f, SYS_landlock_restrict_self);
	if (EMD_X32_BIT && !compat)
		notify(f, SYS_landlock_restrict_self | EMD_X32_BIT);
	ret(f, ALLOW);
}

/* "if the ABI is `arch`: its rules", patched once their length is known. */
static void abi_block(struct emd_filter *f, unsigned arch, int compat, int no_io_uring,
		      int probe_errno, enum emd_filter_table table)
{
	unsigned short at = f->n;

	/* A conditional jump goes 255 instructions at most: past the block
	 * with an unconditional one. */
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0));
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0));
	abi_rules(f, compat, no_io_uring, probe_errno, table);
	if (!f->overflow)
		f->insn[at + 1].k = (unsigned)(f->n - at - 2);
}

/* Each ABI the kernel runs here gets its own rules (x32 shares the native
 * ABI's arch with a bit in the number, which none of the rules has); any
 * other ABI only has Landlock watched. */
void emd_filter_build(struct emd_filter *f, int no_io_uring, int probe_errno,
		      enum emd_filter_table table)
{
	f->n = 0;
	f->overflow = 0;
	load(f, offsetof(struct seccomp_data, arch));
	abi_block(f, EMD_ARCH_NATIVE, 0, no_io_uring, probe_errno, table);
	abi_block(f, EMD_ARCH_COMPAT, 1, no_io_uring, probe_errno, table);
	load(f, offsetof(struct seccomp_data, nr));
	notify(f, SYS_landlock_restrict_self);
	ret(f, ALLOW);
}

/* Install with a listener; the notified caller waits killably once the
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
	return fd < 0 ? -errno : fd;
}

static int send_listener(int sock, int fd, char data, emd_raw_syscall *sys)
{
	char ctl[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {&data, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	/* sendmmsg: the process is under the filter it sends, whose policy
	 * may notify sendmsg (crashtest's: a claim) to this very listener,
	 * which no one reads yet; and past a library's own wrappers. */
	if (sys)
		return sys(SYS_sendmmsg, sock, (long)&(struct mmsghdr){.msg_hdr = msg}, 1, MSG_NOSIGNAL,
			   0, 0) == 1 ? 0 : -EPIPE;
	return sendmmsg(sock, &(struct mmsghdr){.msg_hdr = msg}, 1, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* Whoever holds the listener can answer this process's calls for it and
 * put descriptors in it: only a supervisor of this user's or root's (the
 * socket's creator), never one whose socket reached a process of another
 * user (a descriptor left open across sudo). */
static int ours(int sock)
{
	struct ucred peer;
	socklen_t len = sizeof(peer);

	return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 &&
	       (peer.uid == 0 || peer.uid == geteuid());
}

static int filter_self(int sock, int no_io_uring, char tag, emd_raw_syscall *sys)
{
	struct emd_filter f;
	struct sock_fprog prog;
	struct pollfd alive = {.fd = sock, .events = POLLOUT};
	const char *policy;
	int listener, r;

	if (!EMD_ARCH_NATIVE)
		return -ENOSYS;
	/* A filter nobody answers would fail every request: none then. */
	if (poll(&alive, 1, 0) != 1 || (alive.revents & (POLLHUP | POLLERR | POLLNVAL)) ||
	    !ours(sock))
		return -EPIPE;
	policy = getenv("EATMYDATA_SECCOMP_POLICY");
	emd_filter_build(&f, no_io_uring, emd_probe_errno(policy), emd_filter_table_of(policy));
	if (f.overflow)
		return -E2BIG;
	prog = (struct sock_fprog){.len = f.n, .filter = f.insn};
	/* CAP_SYS_ADMIN, or no_new_privs set already, needs no more. */
	listener = install(&prog);
	if (listener == -EACCES && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
		listener = install(&prog);
	if (listener < 0)
		return listener;
	r = send_listener(sock, listener, tag, sys);
	close(listener);
	return r;
}

int emd_filter_self(int sock, int no_io_uring, char tag, emd_raw_syscall *sys)
{
	int saved = errno, r = filter_self(sock, no_io_uring, tag, sys);

	errno = saved;
	return r;
}

int emd_under_filter_of(const char *policy)
{
	int saved = errno;
	int r = syscall(EMD_PROBE_NR, EMD_PROBE_FD, 0) == -1 && errno == emd_probe_errno(policy);

	errno = saved;
	return r;
}

const char *emd_why_unfiltered(int r)
{
	if (r == -ECHILD)
		return "the seccomp supervisor could not be started";
	if (r == -EBUSY)
		return "under another seccomp supervisor's filter already";
	if (r == -EPIPE)
		return "the seccomp supervisor went away";
	if (r == -ENOSYS)
		return "no seccomp filter for this architecture";
	return "the kernel refused the seccomp filter";
}
