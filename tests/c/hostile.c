/* SPDX-License-Identifier: MIT */
/* hostile.c -- a program that tries to make the seccomp supervisor act with
 * rights it does not have, or fail it: built static, so that the filter
 * answers its calls (test_supervisor.py).  Each command prints what the
 * program saw, to compare with a native run. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *err(long r)
{
	return r < 0 ? strerrorname_np(errno) : "ok";
}

/* A Landlock domain: reading only under /usr (and `also`, if not NULL). */
static int read_only_usr(const char *also)
{
	struct landlock_ruleset_attr attr = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE};
	struct landlock_path_beneath_attr usr = {.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE};
	struct landlock_path_beneath_attr more = {.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);

	usr.parent_fd = open("/usr", O_PATH | O_CLOEXEC);
	more.parent_fd = also ? open(also, O_PATH | O_CLOEXEC) : -1;
	if (also && syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &more, 0))
		return perror("landlock"), 1;
	if (rs < 0 || syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &usr, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_landlock_restrict_self, rs, 0))
		return perror("landlock"), 1;
	return 0;
}

/* An open of argv[0], plain and O_SYNC. */
static int open_sync(char **argv)
{
	printf("plain %s\n", err(open(argv[0], O_RDONLY)));
	printf("sync %s\n", err(open(argv[0], O_RDONLY | O_SYNC)));
	return 0;
}

/* Landlock, then the O_SYNC open of argv[0]. */
static int landlock(char **argv)
{
	return read_only_usr(NULL) ? 1 : open_sync(argv);
}

/* Landlock (the program argv[0] readable), then exec argv: a domain
 * entered before any filter. */
static int landlock_exec(char **argv)
{
	if (read_only_usr(argv[0]))
		return 1;
	execv(argv[0], argv);
	return perror(argv[0]), 127;
}

/* landlock_restrict_self(rs, 0) through the i386 entry (int 0x80), which
 * a filter of x86_64 numbers does not see. */
static long restrict_self_i386(int rs)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(446L), "b"((long)rs), "c"(0L) : "memory");
	return r;
}

/* As landlock, but the domain is entered through the i386 entry. */
static int landlock32(char **argv)
{
	struct landlock_ruleset_attr attr = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE};
	struct landlock_path_beneath_attr usr = {.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);

	usr.parent_fd = open("/usr", O_PATH | O_CLOEXEC);
	if (rs < 0 || syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &usr, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || restrict_self_i386(rs) != 0)
		return perror("landlock"), 1;
	printf("plain %s\n", err(open(argv[0], O_RDONLY)));
	printf("sync %s\n", err(open(argv[0], O_RDONLY | O_SYNC)));
	return 0;
}

/* /proc/self through an O_SYNC open: whose status is it? */
static int proc_status(char **argv)
{
	char line[256];
	FILE *f;
	int fd = open("/proc/self/status", O_RDONLY | O_SYNC);

	(void)argv;
	if (fd < 0 || !(f = fdopen(fd, "r")))
		return printf("%s\n", err(-1)), 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Name:", 5) || !strncmp(line, "Pid:", 4))
			fputs(line, stdout);
	return 0;
}

/* /proc/self/mem read and written: is it this process's memory? */
static int proc_mem(char **argv)
{
	static volatile char mine[16] = "mine";
	char got[16] = "";
	int fd = open("/proc/self/mem", O_RDWR | O_SYNC);

	(void)argv;
	if (fd < 0)
		return printf("%s\n", err(-1)), 0;
	if (pread(fd, got, sizeof(got), (off_t)(unsigned long)mine) < 0)
		return printf("read %s\n", err(-1)), 0;
	printf("%s\n", strcmp(got, "mine") ? "another process's memory" : "its own memory");
	return 0;
}

/* An O_CREAT|O_SYNC open of argv[0] (e.g. /proc/self/cwd/x); prints errno. */
static int create(char **argv)
{
	printf("%s\n", err(open(argv[0], O_WRONLY | O_CREAT | O_SYNC, 0600)));
	return 0;
}

/* The effective capabilities: the permitted ones but `drop` (a bit mask
 * of the low word). */
static int effective_caps(unsigned drop)
{
	struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &head, data))
		return -1;
	for (int i = 0; i < 2; i++)
		data[i].effective = data[i].permitted & (i ? ~0u : ~drop);
	return (int)syscall(SYS_capset, &head, data);
}

/* Root that takes the user id argv[0] and the group id argv[1] and keeps
 * every capability (as root has them), then creates argv[2] with O_SYNC:
 * the file's owner and group. */
static int setid_create(char **argv)
{
	struct stat st;
	uid_t uid = (uid_t)atoi(argv[0]);
	gid_t gid = (gid_t)atoi(argv[1]);
	int fd;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid) || effective_caps(0))
		return perror("setid"), 1;
	fd = open(argv[2], O_WRONLY | O_CREAT | O_SYNC, 0600);
	if (fd < 0 || fstat(fd, &st) != 0)
		return perror(argv[2]), 1;
	printf("%u:%u\n", (unsigned)st.st_uid, (unsigned)st.st_gid);
	return 0;
}

/* Root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH in its effective
 * set (still permitted), then the O_SYNC open of argv[0]. */
static int drop_dac(char **argv)
{
	if (effective_caps(1u << CAP_DAC_OVERRIDE | 1u << CAP_DAC_READ_SEARCH))
		return perror("capset"), 1;
	return open_sync(argv);
}

/* Under umask 077, create argv[0] with O_SYNC and mode 0666: the mode it
 * got. */
static int umask_create(char **argv)
{
	struct stat st;
	int fd;

	umask(077);
	fd = open(argv[0], O_WRONLY | O_CREAT | O_SYNC, 0666);
	if (fd < 0 || fstat(fd, &st) != 0)
		return perror(argv[0]), 1;
	printf("%04o\n", (unsigned)st.st_mode & 07777);
	return 0;
}

/* A seccomp filter of the program's own (SECCOMP_RET_TRACE for getppid,
 * which it never calls), then argv[0] created with O_SYNC and written. */
static int own_filter(char **argv)
{
	struct sock_filter insn[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {4, insn};
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return perror("seccomp"), 1;
	fd = open(argv[0], O_WRONLY | O_CREAT | O_SYNC, 0600);
	printf("%s\n", err(fd < 0 ? fd : write(fd, "data", 4)));
	return 0;
}

/* chroot(argv[0]), then create argv[1] with O_SYNC. */
static int chroot_create(char **argv)
{
	if (chroot(argv[0]) || chdir("/"))
		return perror("chroot"), 1;
	return create(argv + 1);
}

static volatile sig_atomic_t ticks;
static void tick(int sig)
{
	(void)sig;
	ticks++;
}

/* A signal every `us` microseconds, restarting calls. */
static void ticking(long us)
{
	struct sigaction sa = {.sa_handler = tick, .sa_flags = SA_RESTART};
	struct itimerval it = {{0, us}, {0, us}};

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* Appends of argv[1] MiB with RWF_DSYNC under a signal every argv[2] us:
 * the file must hold exactly what the calls said they wrote. */
static int appends(char **argv)
{
	size_t n = 1 << 20, total = 0;
	char *buf = calloc(1, n);
	struct iovec iov = {buf, n};
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	struct stat st;

	ticking(atol(argv[2]));
	for (int i = 0; i < atoi(argv[1]); i++) {
		ssize_t r = pwritev2(fd, &iov, 1, -1, RWF_DSYNC);
		if (r < 0)
			return printf("write %s\n", err(-1)), 0;
		total += r;
	}
	fstat(fd, &st);
	printf("%s\n", (size_t)st.st_size == total ? "size as written" : "size differs");
	return 0;
}

/* Fresh names created O_EXCL|O_SYNC in directory argv[0] under a signal
 * every argv[1] us: none may fail. */
static int exclusive(char **argv)
{
	char name[4096];
	int failed = 0;

	ticking(atol(argv[1]));
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "%s/%d", argv[0], i);
		failed += open(name, O_WRONLY | O_CREAT | O_EXCL | O_SYNC, 0600) < 0;
	}
	printf("%d failed\n", failed);
	return 0;
}

/* RWF_DSYNC write of 64 KiB to argv[0] under a 16 KiB file size limit
 * set by the program itself, then an fsync. */
static int fsize(char **argv)
{
	struct rlimit r = {16384, 16384};
	static char buf[65536];
	struct iovec iov = {buf, sizeof(buf)};
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t w;

	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &r);
	w = pwritev2(fd, &iov, 1, 0, RWF_DSYNC);
	printf("wrote %zd %s\n", w, err(w));
	printf("fsync %s\n", err(fsync(fd)));
	return 0;
}

/* O_DIRECT with RWF_DSYNC, aligned as O_DIRECT wants. */
static int direct(char **argv)
{
	void *buf = aligned_alloc(4096, 4096);
	struct iovec iov = {buf, 4096};
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);

	memset(buf, 'x', 4096);
	printf("%s\n", err(pwritev2(fd, &iov, 1, 0, RWF_DSYNC)));
	return 0;
}

static int files_fd;
static const char *files_b;

static void *own_table(void *arg)
{
	struct iovec iov = {"thread", 6};
	int fd;

	(void)arg;
	if (unshare(CLONE_FILES) || (fd = open(files_b, O_WRONLY)) < 0 ||
	    dup2(fd, files_fd) < 0)
		return perror("unshare"), NULL;
	printf("%s\n", err(pwritev2(files_fd, &iov, 1, 0, RWF_DSYNC)));
	return NULL;
}

/* A thread with a descriptor table of its own writes to its fd N, which
 * is argv[1] there and argv[0] in the rest of the process. */
static int files(char **argv)
{
	pthread_t t;

	files_fd = open(argv[0], O_WRONLY);
	files_b = argv[1];
	pthread_create(&t, NULL, own_table, NULL);
	pthread_join(t, NULL);
	return 0;
}

/* At its descriptor limit, an O_SYNC open of argv[0]. */
static int fdlimit(char **argv)
{
	struct rlimit r = {16, 16};

	setrlimit(RLIMIT_NOFILE, &r);
	while (dup(0) >= 0)
		;
	printf("%s\n", err(open(argv[0], O_RDONLY | O_SYNC)));
	return 0;
}

/* At its descriptor limit, an O_CREAT|O_SYNC open of the fresh name
 * argv[0]: EMFILE, and nothing is created. */
static int fdlimit_create(char **argv)
{
	struct rlimit r = {16, 16};
	int e;

	setrlimit(RLIMIT_NOFILE, &r);
	while (dup(0) >= 0)
		;
	e = open(argv[0], O_WRONLY | O_CREAT | O_SYNC, 0600) < 0 ? errno : 0;
	printf("%s, %s\n", e ? strerrorname_np(e) : "ok",
	       access(argv[0], F_OK) ? "not created" : "created");
	return 0;
}

static int stalled_fd;
static char *stalled_mem;

static void *write_unprovided(void *arg)
{
	struct iovec iov = {stalled_mem, 4096};

	(void)arg;
	pwritev2(stalled_fd, &iov, 1, 0, RWF_DSYNC);
	return NULL;
}

/* stalled_mem: memory that no one provides (userfaultfd). */
static int stalled_setup(const char *path)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg = {.mode = UFFDIO_REGISTER_MODE_MISSING};
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);

	stalled_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	stalled_mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range = (struct uffdio_range){(unsigned long)stalled_mem, 4096};
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg))
		return perror("userfaultfd"), 1;
	return 0;
}

/* One thread's RWF_DSYNC write from memory that no one provides while the
 * main thread fsyncs: the fsync must not wait. */
static int stalled(char **argv)
{
	pthread_t t;

	if (stalled_setup(argv[0]))
		return 1;
	pthread_create(&t, NULL, write_unprovided, NULL);
	usleep(300000);
	printf("fsync %s\n", err(fsync(stalled_fd)));
	_exit(0);
}

static int full_go[2];

static void *write_unprovided_later(void *arg)
{
	char go;

	if (read(full_go[0], &go, 1) == 1)
		write_unprovided(arg);
	return NULL;
}

/* Two threads' writes stuck in the supervisor (as in stalled), the second
 * made once no process or thread can be started any more (pids.max): the
 * main thread's fsync must be answered all the same. */
static int pids_full(char **argv)
{
	pthread_t t1, t2;

	if (stalled_setup(argv[0]) || pipe(full_go))
		return 1;
	if (pthread_create(&t1, NULL, write_unprovided, NULL) != 0 || (usleep(200000),
	    pthread_create(&t2, NULL, write_unprovided_later, NULL)) != 0)
		return printf("no thread\n"), 0;
	for (pid_t child; (child = fork()) >= 0;)
		if (child == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
	if (write(full_go[1], "g", 1) != 1)
		return 1;
	usleep(300000);
	printf("fsync %s\n", err(fsync(stalled_fd)));
	_exit(0);
}

/* RWF_DSYNC write of two pages, the second unmapped: as natively, the
 * first is written and counted, or the call fails with EFAULT. */
static int partial(char **argv)
{
	char *mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec iov[2] = {{mem, 4096}, {mem + 4096, 4096}};
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t r;

	munmap(mem + 4096, 4096);
	r = pwritev2(fd, iov, 2, 0, RWF_DSYNC);
	printf("%zd %s\n", r, err(r));
	return 0;
}

/* Its own "Seccomp:" line: whether it runs under a filter. */
static int status(char **argv)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	(void)argv;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8))
			fputs(line, stdout);
	return f ? fclose(f) : 1;
}

/* msync of the vsyscall page: listed in /proc/PID/maps, but no mapping
 * of the process (ENOMEM natively). */
static int vsyscall(char **argv)
{
	(void)argv;
	printf("%s\n", err(msync((void *)0xffffffffff600000UL, 4096, MS_SYNC)));
	return 0;
}

/* Drop the supplementary group argv[0] (kept: every other one, a list
 * longer than a page line), then an O_SYNC open of argv[1], which only
 * that group may read. */
static int drop_group(char **argv)
{
	gid_t groups[65536], gone = (gid_t)atol(argv[0]);
	int n = getgroups(65536, groups), kept = 0;

	for (int i = 0; i < n; i++)
		if (groups[i] != gone)
			groups[kept++] = groups[i];
	if (n < 0 || syscall(SYS_setgroups, kept, groups) != 0)
		return perror("setgroups"), 1;
	printf("plain %s\n", err(open(argv[1], O_RDONLY)));
	printf("sync %s\n", err(open(argv[1], O_RDONLY | O_SYNC)));
	return 0;
}

static volatile int swapping;
static char swap_name[4096], swap_fifo[4096];

static void *swapper(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&swapping, __ATOMIC_RELAXED))
		syscall(SYS_renameat2, AT_FDCWD, swap_name, AT_FDCWD, swap_fifo, RENAME_EXCHANGE);
	return NULL;
}

/* The FIFO comes and goes at the name (a link made and removed), which
 * is otherwise free, or a file the program just created (removed too). */
static void *comer(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&swapping, __ATOMIC_RELAXED)) {
		link(swap_fifo, swap_name);
		unlink(swap_name);
	}
	return NULL;
}

/* In directory argv[0], a regular file and a FIFO keep exchanging names
 * while the program opens one name O_RDONLY|O_NONBLOCK|O_SYNC, 3000
 * times (or, "create", a FIFO comes and goes at a name the program opens
 * O_CREAT, 20000 times): the FIFO must be opened (inotify IN_OPEN) exactly as often as
 * the program got it, no open of it made and dropped by someone else (each
 * open is followed by a close: inotify merges only like events). */
/* The IN_OPEN events waiting on inotify descriptor `in`, read (before its
 * queue of 16384 overflows). */
static int opens_seen(int in)
{
	char ev[65536];
	int seen = 0;
	ssize_t n;

	while ((n = read(in, ev, sizeof(ev))) > 0)
		for (char *e = ev; e < ev + n; e += sizeof(struct inotify_event) +
						   ((struct inotify_event *)e)->len)
			seen += !!(((struct inotify_event *)e)->mask & IN_OPEN);
	return seen;
}

static int swap_or_create(char **argv, int creating)
{
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), got = 0, seen = 0, fd;
	pthread_t t;
	struct stat st;

	snprintf(swap_name, sizeof(swap_name), "%s/name", argv[0]);
	snprintf(swap_fifo, sizeof(swap_fifo), "%s/fifo", argv[0]);
	if ((fd = open(swap_name, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
	    mkfifo(swap_fifo, 0600) || in < 0 || inotify_add_watch(in, swap_fifo, IN_OPEN | IN_CLOSE) < 0)
		return perror("swap"), 1;
	close(fd);
	if (creating)
		unlink(swap_name);
	swapping = 1;
	pthread_create(&t, NULL, creating ? comer : swapper, NULL);
	/* The window a create leaves is narrower than a swap's: more tries. */
	for (int i = 0; i < (creating ? 20000 : 3000); i++) {
		if ((fd = open(swap_name, O_RDONLY | O_NONBLOCK | O_SYNC | (creating ? O_CREAT : 0),
			       0600)) >= 0) {
			fstat(fd, &st);
			got += S_ISFIFO(st.st_mode);
			close(fd);
		}
		if (i % 1000 == 999)
			seen += opens_seen(in);
	}
	swapping = 0;
	pthread_join(t, NULL);
	seen += opens_seen(in);
	printf("%s\n", got == seen ? "the FIFO opened as often as the program got it"
				   : "the FIFO opened behind the program's back");
	return 0;
}

static int swap(char **argv)
{
	return swap_or_create(argv, 0);
}

static int swap_create(char **argv)
{
	return swap_or_create(argv, 1);
}

/* argv[2] fsyncs of argv[0] under a signal every argv[1] us whose handler
 * does not restart calls: how many failed, and with what. */
static int fsync_storm(char **argv)
{
	struct sigaction sa = {.sa_handler = tick};
	struct itimerval it = {{0, atol(argv[1])}, {0, atol(argv[1])}};
	int fd = open(argv[0], O_WRONLY | O_CREAT, 0600), failed = 0, last = 0;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < atoi(argv[2]); i++)
		if (fsync(fd) != 0)
			failed++, last = errno;
	printf("%d failed%s%s\n", failed, failed ? " " : "", failed ? strerrorname_np(last) : "");
	return 0;
}

/* "0" written with RWF_DSYNC to argv[0], a cgroup's cgroup.procs: it moves
 * the writer.  Is this process in cgroup argv[1] then? */
static int cgroup_zero(char **argv)
{
	struct iovec iov = {"0", 1};
	char line[4096];
	int fd = open(argv[0], O_WRONLY), in = 0;
	FILE *f;

	if (fd < 0 || pwritev2(fd, &iov, 1, 0, RWF_DSYNC) != 1)
		return perror("cgroup.procs"), 1;
	if (!(f = fopen("/proc/self/cgroup", "r")))
		return perror("/proc/self/cgroup"), 1;
	while (fgets(line, sizeof(line), f))
		in |= strstr(line, argv[1]) != NULL;
	printf("%s\n", in ? "moved itself" : "not moved");
	return 0;
}

/* Move into the memory cgroup whose cgroup.procs is argv[0], write 8 MiB
 * to argv[1] with RWF_DSYNC: is the page cache charged to that cgroup
 * (argv[2]: its memory.stat)? */
static int memcg_write(char **argv)
{
	size_t n = 8 << 20;
	char *buf = calloc(1, n), line[256];
	struct iovec iov = {buf, n};
	int procs = open(argv[0], O_WRONLY), fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	unsigned long long cache = 0;
	FILE *f;

	if (procs < 0 || write(procs, "0", 1) != 1 || fd < 0 ||
	    pwritev2(fd, &iov, 1, 0, RWF_DSYNC) != (ssize_t)n || !(f = fopen(argv[2], "r")))
		return perror("memcg"), 1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "cache %llu", &cache);
	printf("%s\n", cache >= n / 2 ? "charged to its cgroup" : "charged elsewhere");
	return 0;
}

/* An O_TMPFILE|O_EXCL|O_SYNC file in directory argv[0], which may never be
 * linked into the file system: linkat as argv[1] must fail. */
static int tmpfile_excl(char **argv)
{
	char self[64];
	int fd = open(argv[0], O_TMPFILE | O_EXCL | O_WRONLY | O_SYNC, 0600);

	if (fd < 0)
		return perror("O_TMPFILE"), 1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	printf("link %s\n", err(linkat(AT_FDCWD, self, AT_FDCWD, argv[1], AT_SYMLINK_FOLLOW)));
	return 0;
}

/* An O_CREAT|O_EXCL|O_SYNC open of argv[0], which must not exist; prints errno. */
static int create_excl(char **argv)
{
	printf("%s\n", err(open(argv[0], O_RDWR | O_CREAT | O_EXCL | O_SYNC, 0600)));
	return 0;
}

/* Say "ready", read a pid from stdin (the supervisor's), and try what
 * would take it over or stop it: ptrace, its listener (descriptor 3), its
 * memory, a signal (0: the right to send one, sending none). */
static int attack(char **argv)
{
	char line[32], byte;
	struct iovec local = {&byte, 1}, remote = {(void *)line, 1};
	pid_t pid;
	int pidfd;

	(void)argv;
	printf("ready\n");
	if (!fgets(line, sizeof(line), stdin) || (pid = atoi(line)) <= 0)
		return 1;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	printf("ptrace %s\n", err(ptrace(PTRACE_ATTACH, pid, NULL, NULL)));
	printf("listener %s\n", err(syscall(SYS_pidfd_getfd, pidfd, 3, 0)));
	printf("memory %s\n", err(process_vm_readv(pid, &local, 1, &remote, 1, 0)));
	printf("signal %s\n", err(kill(pid, 0)));
	return 0;
}

/* Run argv with seccomp() refused, as some container runtimes do. */
static int deny_seccomp(char **argv)
{
	struct sock_filter insn[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {4, insn};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return perror("seccomp"), 1;
	execvp(argv[0], argv);
	return perror(argv[0]), 127;
}

/* fsync argv[0], say so, wait for a line, fsync again. */
static int fsync_twice(char **argv)
{
	int fd = open(argv[0], O_WRONLY | O_CREAT, 0600);
	char line[16];

	printf("first %s\n", err(fsync(fd)));
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	printf("second %s\n", err(fsync(fd)));
	return 0;
}

static const struct {
	const char *name;
	int args;
	int (*run)(char **);
} commands[] = {
	{"landlock", 1, landlock},     {"landlock32", 1, landlock32},     {"proc-status", 0, proc_status},
	{"proc-mem", 0, proc_mem},     {"create", 1, create},
	{"chroot-create", 2, chroot_create}, {"appends", 3, appends},
	{"exclusive", 2, exclusive},   {"fsize", 1, fsize},
	{"direct", 1, direct},         {"files", 2, files},
	{"fdlimit", 1, fdlimit},       {"stalled", 1, stalled},
	{"partial", 1, partial},       {"deny-seccomp", 1, deny_seccomp}, {"fsync-twice", 1, fsync_twice},
	{"vsyscall", 0, vsyscall},     {"status", 0, status},     {"open-sync", 1, open_sync},
	{"landlock-exec", 1, landlock_exec}, {"umask-create", 1, umask_create},
	{"setid-create", 3, setid_create}, {"drop-dac", 1, drop_dac}, {"own-filter", 1, own_filter},
	{"attack", 0, attack}, {"fdlimit-create", 1, fdlimit_create},
	{"create-excl", 1, create_excl}, {"tmpfile-excl", 2, tmpfile_excl},
	{"memcg-write", 3, memcg_write}, {"cgroup-zero", 2, cgroup_zero},
	{"fsync-storm", 3, fsync_storm}, {"swap", 1, swap}, {"swap-create", 1, swap_create},
	{"pids-full", 1, pids_full}, {"drop-group", 2, drop_group},
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; argc > 1 && i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[1], commands[i].name) && argc - 2 >= commands[i].args)
			return commands[i].run(argv + 2);
	fprintf(stderr, "usage: hostile COMMAND ARG...\n");
	return 2;
}
