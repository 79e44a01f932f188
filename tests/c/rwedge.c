/* SPDX-License-Identifier: MIT */
/* rwedge.c -- reads and writes at the kernel's edges, for nocache through
 * the supervisor (built static: tests/py/test_supervisor_policies_attack.py):
 * each case prints what the calls returned, errno and the file position,
 * for the test to compare with the native run.
 * Usage: rwedge CASE FILE
 *   partread   read(2) into a buffer whose second page is unmapped, then
 *              into one wholly unmapped
 *   partwrite  write(2) from such buffers
 *   big        read(2) and write(2) of 20 MiB in one call
 *   badlen     read(2) of a count past the address space (64-bit only),
 *              readv(2) of an iov_len past SSIZE_MAX
 *   far        reads and writes at offsets past 4 GiB (a 32-bit caller's
 *              in two words, the low one with its top bit set; preadv2 and
 *              pwritev2 too), and at -1; FILE's size after
 *   efbig      FILE opened without O_LARGEFILE (which only a 32-bit
 *              caller's open leaves out): writes across 2 GiB and past it,
 *              by each call, at an offset and at the file position
 *   nofsetid   without CAP_FSETID in its effective set, write(2) to FILE
 *              (natively the write clears FILE's set-user-ID bit)
 *   unshare    a thread reads FILE at descriptor 10, leaves the process's
 *              descriptor table (unshare(CLONE_FILES)), puts its own
 *              program there and reads 4 bytes of it (64 times): 7f454c46
 *   sigwrite   8 appends of 8 MiB to FILE while another thread signals
 *              this one (SA_RESTART) all along; FILE's size after
 *   euid       print the effective user id (FILE unused)
 * Or: rwedge e2big PROGRAM SETUID: exec PROGRAM with an argument past the
 * kernel's 128 KiB (E2BIG), then exec SETUID euid x.
 * Or: rwedge oldpidfd|nokillable|nolistener COMMAND..., COMMAND with
 * pidfd_open refusing PIDFD_THREAD (EINVAL), as before Linux 6.9, or
 * seccomp refusing SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, as before 5.19,
 * or SECCOMP_FILTER_FLAG_NEW_LISTENER (no filter of a supervisor's can be
 * put on), for all it starts.
 * Or: rwedge listener COMMAND..., COMMAND under another supervisor's filter
 * (one that lets every call through, its listener held open): the kernel
 * takes one listener to a chain, EBUSY for nocache's. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define BIG (20 << 20)

static void say(const char *what, ssize_t r, int fd)
{
	int e = errno;

	printf("%s %zd %s pos %lld\n", what, r, r < 0 ? strerror(e) : "ok",
	       (long long)lseek64(fd, 0, SEEK_CUR));
}

/* Two pages, the second unmapped. */
static char *half_mapped(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p + 4096, 4096) != 0)
		exit(2);
	memset(p, 'w', 4096);
	return p;
}

static int partread(int fd)
{
	char *p = half_mapped();

	errno = 0;
	say("read-half", read(fd, p, 8192), fd);
	say("read-none", read(fd, p + 4096, 4096), fd);
	say("pread-half", pread(fd, p, 8192, 0), fd);
	return 0;
}

static int partwrite(int fd)
{
	char *p = half_mapped();

	say("write-half", write(fd, p, 8192), fd);
	say("write-none", write(fd, p + 4096, 4096), fd);
	say("pwrite-half", pwrite(fd, p, 8192, 100000), fd);
	return 0;
}

static int big(int fd)
{
	char *buf = calloc(1, BIG);

	if (!buf)
		return 2;
	say("read-big", read(fd, buf, BIG), fd);
	say("write-big", pwrite(fd, buf, BIG, 0), fd);
	return 0;
}

static int badlen(int fd)
{
	static char buf[64];
	struct iovec v[2] = {{buf, 8}, {buf + 8, (size_t)-1}};
	volatile size_t huge = SIZE_MAX / 4 + 1; /* volatile: no compile-time overflow */

	/* Past the end of the address space; a 32-bit caller's has none the
	 * kernel checks (its user space ends at the 64-bit one's): it would be
	 * read into. */
	if (sizeof(size_t) == 8)
		say("read-huge", read(fd, buf, huge), fd);
	say("readv-neg", readv(fd, v, 2), fd);
	return 0;
}

#define NON_LFS_MAX 0x7fffffffLL /* the kernel's MAX_NON_LFS */

static int efbig(const char *file)
{
	static char buf[128 << 10];
	struct iovec v[2] = {{buf, 4096}, {buf + 4096, 4096}};
	int fd = (int)syscall(SYS_openat, AT_FDCWD, file, O_RDWR); /* no O_LARGEFILE */

	if (fd < 0)
		return 2;
	memset(buf, 'e', sizeof(buf));
	/* 16 whole pages and the first 4095 bytes of the last one. */
	say("pwrite-across", pwrite64(fd, buf, 72 << 10, NON_LFS_MAX + 1 - (68 << 10)), fd);
	say("pwrite-past", pwrite64(fd, buf, 8192, NON_LFS_MAX + 1), fd);
	say("pwritev-across", pwritev64(fd, v, 2, NON_LFS_MAX - 100), fd);
	say("pwritev-past", pwritev64(fd, v, 2, NON_LFS_MAX), fd);
	if (lseek64(fd, NON_LFS_MAX - 4096, SEEK_SET) < 0)
		return 2;
	say("write-across", write(fd, buf, 8192), fd);
	say("write-past", write(fd, buf, 1), fd);
	say("writev-past", writev(fd, v, 2), fd);
	return 0;
}

#define GIB (1LL << 30)

static int far(const char *file)
{
	static char buf[8192], back[8192];
	struct iovec v[2] = {{buf, 4096}, {buf + 4096, 4096}};
	struct iovec w[2] = {{back, 4096}, {back + 4096, 4096}};
	int fd = open64(file, O_RDWR);

	if (fd < 0)
		return 2;
	memset(buf, 'f', sizeof(buf));
	say("pwrite-6g", pwrite64(fd, buf, 8192, 6 * GIB + 4096), fd);
	say("pwritev-5g", pwritev64(fd, v, 2, 5 * GIB + 100), fd);
	say("pread-6g", pread64(fd, back, 8192, 6 * GIB), fd);
	printf("%.4s%.4s\n", back + 4092, back + 4096);
	say("preadv-5g", preadv64(fd, w, 2, 5 * GIB), fd);
	printf("%.4s%.4s\n", back + 96, back + 100);
	/* Each read back by the other kind of call: a wrong offset is seen
	 * whichever of the two took it. */
	memset(buf, 'g', sizeof(buf));
	say("pwritev2-5g", pwritev64v2(fd, v, 2, 5 * GIB + 16384 + 100, RWF_HIPRI), fd);
	say("pread-5g", pread64(fd, back, 8192, 5 * GIB + 16384), fd);
	printf("%.4s%.4s\n", back + 96, back + 100);
	say("preadv2-6g", preadv64v2(fd, w, 2, 6 * GIB, 0), fd);
	printf("%.4s%.4s\n", back + 4092, back + 4096);
	say("pread-neg", pread64(fd, back, 1, -1), fd);
	say("pwritev-neg", pwritev64(fd, v, 2, -4096), fd);
	say("size", 0, fd);
	printf("size %lld\n", (long long)lseek64(fd, 0, SEEK_END));
	return 0;
}

static int nofsetid(const char *file)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	int fd;

	if (syscall(SYS_capget, &h, d) != 0)
		return 2;
	d[0].effective &= ~(1u << CAP_FSETID);
	if (syscall(SYS_capset, &h, d) != 0 || (fd = open(file, O_WRONLY)) < 0)
		return 2;
	say("write-nofsetid", write(fd, "x", 1), fd);
	return 0;
}

static void *unshared(void *arg)
{
	unsigned char b[4] = "";
	ssize_t n;
	int fd;

	(void)arg;
	for (int i = 0; i < 64; i++) /* each worker of the supervisor sees this thread */
		if (pread(10, b, 1, 0) != 1)
			return NULL;
	if (unshare(CLONE_FILES) != 0 || (fd = open("/proc/self/exe", O_RDONLY)) < 0 ||
	    dup2(fd, 10) != 10)
		return NULL;
	for (int i = 0; i < 64; i++) /* any worker's answer: the first not ELF's */
		if ((n = pread(10, b, 4, 0)) != 4 || memcmp(b, "\177ELF", 4))
			break;
	printf("unshared %zd %02x%02x%02x%02x\n", n, b[0], b[1], b[2], b[3]);
	return NULL;
}

static int unshare_case(int fd)
{
	pthread_t t;

	if (dup2(fd, 10) != 10 || pthread_create(&t, NULL, unshared, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	return 0;
}

static int sigs_on;

static void on_usr1(int sig)
{
	(void)sig;
}

static void *signaller(void *arg)
{
	pthread_t to = *(pthread_t *)arg;

	while (__atomic_load_n(&sigs_on, __ATOMIC_RELAXED)) {
		pthread_kill(to, SIGUSR1);
		usleep(20);
	}
	return NULL;
}

static int sigwrite(const char *file)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	char *buf = calloc(1, 8 << 20);
	pthread_t me = pthread_self(), t;
	int fd = open(file, O_WRONLY | O_APPEND);
	struct stat st;

	if (!buf || fd < 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		return 2;
	sigs_on = 1;
	if (pthread_create(&t, NULL, signaller, &me) != 0)
		return 2;
	for (int i = 0; i < 8; i++)
		if (write(fd, buf, 8 << 20) != 8 << 20)
			return 1;
	__atomic_store_n(&sigs_on, 0, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (fstat(fd, &st) != 0)
		return 2;
	printf("sigwrite size %lld\n", (long long)st.st_size);
	return 0;
}

/* argv run with system call nr refused (EINVAL) when its argument arg has
 * a bit of `bits`. */
static int refusing(long nr, int arg, unsigned bits, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[arg])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(*f), f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return 2;
	execvp(argv[0], argv);
	return 127;
}

static int listening(char **argv)
{
	struct sock_filter f[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog prog = {1, f};

	int fd;

	/* The listener is close-on-exec, and closing it would free the
	 * filter of its listener: kept open. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    (fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			       SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog)) < 0 ||
	    fcntl(fd, F_SETFD, 0) != 0)
		return 2;
	execvp(argv[0], argv);
	return 127;
}

static int e2big(char *program, char *setuid_program)
{
	char *huge = malloc(200 << 10), *args[] = {program, huge, NULL};
	char *then[] = {setuid_program, "euid", "x", NULL};

	if (!huge)
		return 2;
	memset(huge, 'a', (200 << 10) - 1);
	huge[(200 << 10) - 1] = '\0';
	execv(program, args);
	printf("exec %s\n", strerror(errno));
	fflush(stdout);
	execv(setuid_program, then);
	return 127;
}

int main(int argc, char **argv)
{
	int fd;

	if (argc == 4 && !strcmp(argv[1], "e2big"))
		return e2big(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "euid"))
		return printf("euid %d\n", (int)geteuid()) < 0;
	if (argc > 2 && !strcmp(argv[1], "oldpidfd"))
		return refusing(SYS_pidfd_open, 1, O_EXCL, argv + 2);
	if (argc > 2 && !strcmp(argv[1], "nokillable")) /* WAIT_KILLABLE_RECV */
		return refusing(SYS_seccomp, 1, 1u << 5, argv + 2);
	if (argc > 2 && !strcmp(argv[1], "listener"))
		return listening(argv + 2);
	if (argc > 2 && !strcmp(argv[1], "nolistener"))
		return refusing(SYS_seccomp, 1, SECCOMP_FILTER_FLAG_NEW_LISTENER, argv + 2);
	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "sigwrite"))
		return sigwrite(argv[2]);
	if (!strcmp(argv[1], "nofsetid"))
		return nofsetid(argv[2]);
	if (!strcmp(argv[1], "efbig"))
		return efbig(argv[2]);
	if (!strcmp(argv[1], "far"))
		return far(argv[2]);
	if ((fd = open(argv[2], O_RDWR)) < 0)
		return 2;
	if (!strcmp(argv[1], "partread"))
		return partread(fd);
	if (!strcmp(argv[1], "partwrite"))
		return partwrite(fd);
	if (!strcmp(argv[1], "big"))
		return big(fd);
	if (!strcmp(argv[1], "unshare"))
		return unshare_case(fd);
	if (!strcmp(argv[1], "badlen"))
		return badlen(fd);
	return 2;
}
