/* SPDX-License-Identifier: MIT */
/* behalf.c -- a program the supervisor makes calls for (nocache's reads
 * and writes, crashtest's changes), attacking what it does on the
 * program's behalf (built static: tests/py/test_supervisor_behalf_attack.py).
 * Each case prints what the calls returned, for the test to compare with
 * the native run.
 * Usage: behalf CASE FILE...
 *   burst FILE BIG   40 bursts of 16 threads, each reading FILE 20 times
 *                    at once, then BIG read whole: "burst N" (BIG's bytes)
 *   stuck FILE N     N threads each write a page to FILE (pwrite, at
 *                    their own place) from memory that faults until all
 *                    N have begun (userfaultfd): "stuck N written"
 *   readbuf FILE     FILE's first 64 KiB read into a static buffer: "read N
 *                    SUM", the sum of the bytes read
 *   unreachable FILE FILE's first page read into, and written at 8 KiB from,
 *                    memory no other process reaches: memfd_secret's, and
 *                    perf's ring buffer (a device's mapping): the counts
 *                    and the sum of the bytes each read holds
 *   maps FILE N V    with N mappings more (pages, writable and not in turn),
 *                    one preadv of FILE into V buffers of 16 bytes, one in
 *                    each of V writable pages: "maps R SUM"
 *   tell VIA         "committed" written over the start of ./data, the peer
 *                    told so by VIA (sendmsg, sendmmsg, vmsplice, splice,
 *                    tee), ./data synced after: a claim before the data is
 *                    durable
 *   untold VIA       the same, but the telling fails (the peer gone: EPIPE,
 *                    SIGPIPE ignored) and tells no one
 *   creat FILE       open(FILE, O_CREAT | O_WRONLY | O_TRUNC): its errno
 *   fsize FILE       under a file size limit of 64 KiB (SIGXFSZ ignored),
 *                    1-byte writes at FILE's position for a second while
 *                    another thread moves it between 0 and 1 MiB: "size
 *                    N", FILE's size then (natively at most 64 KiB)
 * Or: behalf victim COMMAND...: run COMMAND, then say whether this
 * process's static buffer (readbuf's, at the same address in this static
 * program) was written meanwhile: "victim untouched" (as pid 1 of a pid
 * namespace, where a namespace below without a /proc of its own has its
 * own pid 1).  Under a seccomp filter of its own, once COMMAND is started,
 * that allows everything (no_new_privs): its status then reads as that of
 * a program of COMMAND's under nocache's filter.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int burst_fd;
static char buf64k[1 << 16];

static void *reader(void *arg)
{
	char buf[4096];

	(void)arg;
	for (int i = 0; i < 20; i++)
		if (pread(burst_fd, buf, sizeof(buf), 0) < 0)
			exit(3);
	return NULL;
}

/* Threads come and go: the supervisor's workers with them. */
static int burst(const char *file, const char *big)
{
	static char buf[1 << 16];
	pthread_t t[16];
	long long total = 0;
	ssize_t n;
	int fd;

	if ((burst_fd = open(file, O_RDONLY)) < 0)
		return 2;
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 16; i++)
			if (pthread_create(&t[i], NULL, reader, NULL) != 0)
				return 2;
		for (int i = 0; i < 16; i++)
			pthread_join(t[i], NULL);
	}
	if ((fd = open(big, O_RDONLY)) < 0)
		return 2;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	printf("burst %lld\n", total);
	return n < 0;
}

static struct {
	int fd, uffd, started, written;
	char *lazy;
} stuck;

static void *stuck_writer(void *arg)
{
	long i = (long)arg;

	__atomic_add_fetch(&stuck.started, 1, __ATOMIC_SEQ_CST);
	if (pwrite(stuck.fd, stuck.lazy, 4096, i * 4096) == 4096)
		__atomic_add_fetch(&stuck.written, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The page given once every writer has begun, and half a second more: by
 * then each waits on it, in the kernel or in the supervisor. */
static void serve_page(int n)
{
	static char page[4096];
	struct uffdio_copy copy = {.dst = (unsigned long)stuck.lazy, .src = (unsigned long)page,
				   .len = 4096};
	const struct timespec tick = {0, 10000000}, half = {0, 500000000};

	while (__atomic_load_n(&stuck.started, __ATOMIC_SEQ_CST) < n)
		nanosleep(&tick, NULL);
	nanosleep(&half, NULL);
	memset(page, 's', sizeof(page));
	ioctl(stuck.uffd, UFFDIO_COPY, &copy);
}

static int stuck_writes(const char *file, int n)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg = {.mode = UFFDIO_REGISTER_MODE_MISSING};
	pthread_t t[1024];

	if (n < 1 || n > 1024 || (stuck.fd = open(file, O_WRONLY | O_CREAT, 0644)) < 0)
		return 2;
	stuck.uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	stuck.lazy = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range = (struct uffdio_range){(unsigned long)stuck.lazy, 4096};
	if (stuck.uffd < 0 || ioctl(stuck.uffd, UFFDIO_API, &api) ||
	    ioctl(stuck.uffd, UFFDIO_REGISTER, &reg))
		return 2;
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, stuck_writer, (void *)i) != 0)
			return 2;
	serve_page(n);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("stuck %d written\n", stuck.written);
	return 0;
}

static int moving_fd, moving = 1;

static void *mover(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&moving, __ATOMIC_RELAXED)) {
		lseek(moving_fd, 1 << 20, SEEK_SET);
		lseek(moving_fd, 0, SEEK_SET);
	}
	return NULL;
}

static int fsize(const char *file)
{
	struct rlimit lim = {64 << 10, 64 << 10};
	struct timespec now, end;
	struct stat st;
	pthread_t t;

	signal(SIGXFSZ, SIG_IGN);
	if ((moving_fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
	    setrlimit(RLIMIT_FSIZE, &lim) != 0 || pthread_create(&t, NULL, mover, NULL) != 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 1;
	do {
		for (int i = 0; i < 100; i++)
			if (write(moving_fd, "x", 1) < 0 && errno != EFBIG)
				return 2;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	__atomic_store_n(&moving, 0, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (fstat(moving_fd, &st) != 0)
		return 2;
	printf("size %lld\n", (long long)st.st_size);
	return 0;
}

/* A read into mem and a write from it, said. */
static void through(const char *what, int fd, char *mem)
{
	unsigned long sum = 0;
	ssize_t r = pread(fd, mem, 4096, 0), w;

	for (ssize_t i = 0; i < r; i++)
		sum += (unsigned char)mem[i];
	w = pwrite(fd, mem, 4096, 8192);
	printf("%s read %zd %lu write %zd\n", what, r, sum, w);
}

static int unreachable(const char *file)
{
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				    .config = PERF_COUNT_SW_DUMMY, .disabled = 1};
	int fd = open(file, O_RDWR), secret = (int)syscall(SYS_memfd_secret, 0), ring;
	char *m;

	if (fd < 0)
		return 2;
	if (secret < 0 || ftruncate(secret, 4096) != 0 ||
	    (m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, secret, 0)) == MAP_FAILED)
		printf("secret none\n"); /* a kernel without it */
	else
		through("secret", fd, m);
	ring = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (ring < 0 || (m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ring, 0)) ==
				MAP_FAILED)
		printf("ring none\n");
	else
		through("ring", fd, m);
	return 0;
}

static int many_maps(const char *file, int n, int v)
{
	struct iovec iov[1024];
	unsigned long sum = 0;
	ssize_t r;
	char *p = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open(file, O_RDONLY);

	if (fd < 0 || p == MAP_FAILED || v > 1024 || v > n / 2)
		return 2;
	for (int i = 1; i < n; i += 2) /* each its own mapping */
		if (mprotect(p + (size_t)i * 4096, 4096, PROT_READ) != 0)
			return 2;
	for (int i = 0; i < v; i++)
		iov[i] = (struct iovec){p + (size_t)(n / v * i & ~1) * 4096, 16};
	r = preadv(fd, iov, v, 0);
	for (int i = 0; i < v; i++)
		for (int j = 0; j < 16; j++)
			sum += (unsigned char)((char *)iov[i].iov_base)[j];
	printf("maps %zd %lu\n", r, sum);
	return 0;
}

/* "committed\n" told to the peer of p (a pipe or a socket pair: the
 * other end, p[0], the peer's, closed first when `gone`). */
static ssize_t told(const char *via, int p[2])
{
	static char word[] = "committed\n";
	struct iovec v = {word, sizeof(word) - 1};
	struct mmsghdr m = {.msg_hdr = {.msg_iov = &v, .msg_iovlen = 1}};
	int q[2], data = open("data", O_RDONLY);

	if (!strcmp(via, "sendmsg"))
		return sendmsg(p[1], &m.msg_hdr, MSG_NOSIGNAL);
	if (!strcmp(via, "sendmmsg"))
		return sendmmsg(p[1], &m, 1, MSG_NOSIGNAL);
	if (!strcmp(via, "vmsplice"))
		return vmsplice(p[1], &v, 1, 0);
	if (!strcmp(via, "splice"))
		return splice(data, NULL, p[1], NULL, v.iov_len, 0);
	/* tee: from a pipe the data was spliced into first (a claim too) */
	if (pipe(q) || splice(data, NULL, q[1], NULL, v.iov_len, 0) < 0)
		return -1;
	return tee(q[0], p[1], v.iov_len, 0);
}

static int tell(const char *via, int gone)
{
	int p[2], fd = open("data", O_WRONLY);
	int sock = !strcmp(via, "sendmsg") || !strcmp(via, "sendmmsg"), e;
	ssize_t r;

	signal(SIGPIPE, SIG_IGN);
	if (fd < 0 || write(fd, "committed\n", 10) != 10 ||
	    (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p)) != 0)
		return 2;
	if (gone)
		close(p[0]);
	r = told(via, p);
	e = errno;
	/* said once synced: what it prints is a claim too */
	if (fsync(fd) != 0)
		return 2;
	printf("%s %zd %s\n", via, r, r < 0 ? strerror(e) : "ok");
	return 0;
}

static int creat_it(const char *file)
{
	int fd = open(file, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	printf("creat %s\n", fd < 0 ? strerror(errno) : "ok");
	return 0;
}

static int readbuf(const char *file)
{
	unsigned long sum = 0;
	ssize_t n;
	int fd = open(file, O_RDONLY);

	if (fd < 0 || (n = read(fd, buf64k, sizeof(buf64k))) < 0)
		return 2;
	for (ssize_t i = 0; i < n; i++)
		sum += (unsigned char)buf64k[i];
	printf("read %zd %lu\n", n, sum);
	return 0;
}

static int victim(char **argv)
{
	struct sock_filter all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog prog = {1, all};
	pid_t child;
	int status;
	size_t i = 0;

	if ((child = fork()) == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	/* the command's supervisor has none of this one */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return 2;
	while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	while (i < sizeof(buf64k) && !buf64k[i])
		i++;
	printf("victim %s\n", i == sizeof(buf64k) ? "untouched" : "written");
	return child > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "victim"))
		return victim(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "readbuf"))
		return readbuf(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fsize"))
		return fsize(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "unreachable"))
		return unreachable(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "tell"))
		return tell(argv[2], 0);
	if (argc == 3 && !strcmp(argv[1], "untold"))
		return tell(argv[2], 1);
	if (argc == 3 && !strcmp(argv[1], "creat"))
		return creat_it(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "maps"))
		return many_maps(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "burst"))
		return burst(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "stuck"))
		return stuck_writes(argv[2], atoi(argv[3]));
	return 2;
}
