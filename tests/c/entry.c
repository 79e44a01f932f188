/* SPDX-License-Identifier: MIT */
/* entry.c -- makes one durability request through one entry point, so that
 * the kernel's counters can show whether it reached the disk.
 *
 * Usage: entry [-t THREADS] [-f] CALL DIR
 * CALL exec-FUNCTION starts entry-static (beside this program) through the
 * exec entry point FUNCTION: the request is its fsync.
 *   -t N  make the request from N threads at once, as the process's first
 *         calls (the library initialises under contention)
 *   -f    also make it in a forked child
 * Built plain, with -D_FORTIFY_SOURCE=2 (open becomes __open_2) and -m32.
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform.h"

static const char *dir;
static char static_prog[4096]; /* entry-static, beside this program */
static volatile int sync_flags = O_WRONLY | O_SYNC; /* not a constant */
static pthread_barrier_t start;

/* The directory of `path` (".": none), in a buffer of its own. */
static const char *dirname_of(const char *path)
{
	static char buf[4096];
	const char *slash = strrchr(path, '/');

	snprintf(buf, sizeof(buf), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	return buf;
}

static int fail(const char *what)
{
	perror(what);
	exit(1);
}

/* A fresh file in DIR with a page of data not yet on disk. */
static int dirty_file(int flags)
{
	char path[4096] = ""; /* all of it is written, not only the name */
	static int n;
	int fd;

	snprintf(path, sizeof(path), "%s/f%d-%d-%lx", dir, getpid(),
		 __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED),
		 (unsigned long)pthread_self());
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || write(fd, path, sizeof(path)) != sizeof(path))
		fail("dirty_file");
	if (flags == O_RDWR)
		return fd;
	close(fd);
	fd = open(path, flags);
	if (fd < 0)
		fail("reopen");
	return fd;
}

static int write_page(int fd)
{
	static const char page[4096];

	if (write(fd, page, sizeof(page)) != sizeof(page))
		fail("write");
	return fd;
}

/* A shared mapping of fd's first page, changed. */
static char *dirty_map(int fd)
{
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		fail("mmap");
	m[0] = 'x';
	return m;
}

/* A new temporary file named after `name`, by one of mkstemp's kin: with
 * O_SYNC or O_DSYNC when it takes flags, else written and synced. */
static int temp_file(const char *call, const char *name)
{
	char t[4200], ts[4200];

	snprintf(t, sizeof(t), "%s-XXXXXX", name);
	snprintf(ts, sizeof(ts), "%s-XXXXXX.s", name);
	if (!strcmp(call, "mkostemp"))
		return write_page(mkostemp(t, O_SYNC)) < 0;
	if (!strcmp(call, "mkostemp64"))
		return write_page(mkostemp64(t, O_DSYNC)) < 0;
	if (!strcmp(call, "mkostemps"))
		return write_page(mkostemps(ts, 2, O_SYNC)) < 0;
	if (!strcmp(call, "mkostemps64"))
		return write_page(mkostemps64(ts, 2, O_DSYNC)) < 0;
	if (!strcmp(call, "mkstemp"))
		return fsync(write_page(mkstemp(t)));
	if (!strcmp(call, "mkstemp64"))
		return fsync(write_page(mkstemp64(t)));
	if (!strcmp(call, "mkstemps"))
		return fsync(write_page(mkstemps(ts, 2)));
	if (!strcmp(call, "mkstemps64"))
		return fsync(write_page(mkstemps64(ts, 2)));
	fprintf(stderr, "entry: unknown call %s\n", call);
	exit(2);
}

/* fd's file opened again by its handle, with O_SYNC, through libc or
 * syscall(). */
static int by_handle(int fd, int raw)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[MAX_HANDLE_SZ];
	} h = {.fh.handle_bytes = MAX_HANDLE_SZ};
	int mount_id, mfd = open(dir, O_RDONLY | O_DIRECTORY);

	if (mfd < 0 || name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH))
		fail("name_to_handle_at");
	if (raw)
		return write_page(syscall(SYS_open_by_handle_at, mfd, &h.fh, O_WRONLY | O_SYNC));
	return write_page(open_by_handle_at(mfd, &h.fh, O_WRONLY | O_SYNC));
}

/* A new file `name` made by fopen and its kin, written and synced. */
static int stream_file(const char *call, const char *name)
{
	static char page[4096];
	FILE *f = NULL;

	if (!strcmp(call, "fopen"))
		f = fopen(name, "w");
	else if (!strcmp(call, "fopen64"))
		f = fopen64(name, "a");
	else if (!strcmp(call, "freopen"))
		f = freopen(name, "w", fopen("/dev/null", "r"));
	else if (!strcmp(call, "freopen64"))
		f = freopen64(name, "w+", fopen("/dev/null", "r"));
	if (!f || fwrite(page, sizeof(page), 1, f) != 1 || fflush(f) ||
	    fsync(fileno(f)))
		fail(call);
	return fclose(f);
}

/* A new file `path` in DIR whose data and entry are durable: for the audit,
 * which then follows the entry a call makes for it. */
static void durable_file(char *path, size_t size)
{
	int fd, dfd = open(dir, O_RDONLY | O_DIRECTORY);

	snprintf(path, size, "%s/s%d-%lx", dir, getpid(), (unsigned long)pthread_self());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || dfd < 0 || fsync(write_page(fd)) || fsync(dfd))
		fail("durable_file");
	close(fd);
	close(dfd);
}

/* Gives `name` to a durable file by a rename or a link, through libc or
 * syscall(): the audit sees the entry, never synced. */
static int new_entry(const char *call, const char *name)
{
	static const struct {
		const char *call;
		long nr;
		int at;
	} sys[] = {
#ifdef SYS_rename
		{"syscall-rename", SYS_rename, 0},
#endif
#ifdef SYS_link
		{"syscall-link", SYS_link, 0},
#endif
		{"syscall-renameat", SYS_renameat, 1},
		{"syscall-renameat2", SYS_renameat2, 1},
		{"syscall-linkat", SYS_linkat, 1},
	};
	char old[4096];

	durable_file(old, sizeof(old));
	if (!strcmp(call, "rename"))
		return rename(old, name);
	if (!strcmp(call, "renameat"))
		return renameat(AT_FDCWD, old, AT_FDCWD, name);
	if (!strcmp(call, "renameat2"))
		return renameat2(AT_FDCWD, old, AT_FDCWD, name, RENAME_NOREPLACE);
	if (!strcmp(call, "link"))
		return link(old, name);
	if (!strcmp(call, "linkat"))
		return linkat(AT_FDCWD, old, AT_FDCWD, name, 0);
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		if (!strcmp(call, sys[i].call))
			return sys[i].at ? syscall(sys[i].nr, AT_FDCWD, old, AT_FDCWD, name, 0)
					 : syscall(sys[i].nr, old, name);
	fprintf(stderr, "entry: unknown call %s\n", call);
	exit(2);
}

/* Two O_SYNC files opened through syscall(), written five times each: the
 * first through syscall(), the second through libc's write calls. */
static void osync_through_syscall(const char *name)
{
	struct iovec iov = {(void *)"data", 4};
	char second[4200];
	long a, b;

	snprintf(second, sizeof(second), "%s-2", name);
	a = syscall(SYS_openat, AT_FDCWD, name, O_WRONLY | O_CREAT | O_SYNC, 0644);
	b = syscall(SYS_openat, AT_FDCWD, second, O_WRONLY | O_CREAT | O_SYNC, 0644);
	if (a < 0 || b < 0)
		fail("syscall(SYS_openat)");
	if (syscall(SYS_write, a, "data", 4) != 4 ||
	    syscall(SYS_pwrite64, a, "data", 4, 4, 0) != 4 ||
	    syscall(SYS_writev, a, &iov, 1) != 4 ||
	    syscall(SYS_pwritev, a, &iov, 1, 8, 0) != 4 ||
	    syscall(SYS_pwritev2, a, &iov, 1, 12, 0, 0) != 4)
		fail("syscall(SYS_write...)");
	if (write(b, "data", 4) != 4 || pwrite(b, "data", 4, 4) != 4 ||
	    writev(b, &iov, 1) != 4 || pwritev(b, &iov, 1, 8) != 4 ||
	    pwritev2(b, &iov, 1, 12, 0) != 4)
		fail("write...");
	close(a);
	close(b);
}

/* Five pages through syscall(), as a program making its own calls does. */
static void write_pages_sys(int fd)
{
	static const char page[4096];

	for (int i = 0; i < 5; i++)
		if (syscall(SYS_write, fd, page, sizeof(page)) != sizeof(page))
			fail("syscall write");
}

/* A Linux AIO write with RWF_DSYNC, submitted through syscall() (as
 * libaio does): the kernel syncs it in the submitting thread. */
static int aio_dsync_write(int fd)
{
	static char page[4096];
	struct iocb cb = {.aio_lio_opcode = IOCB_CMD_PWRITE, .aio_fildes = (unsigned)fd,
			  .aio_buf = (unsigned long)page, .aio_nbytes = sizeof(page),
			  .aio_rw_flags = RWF_DSYNC};
	struct iocb *list[] = {&cb};
	struct io_event ev;
	aio_context_t ctx = 0;
	int r = -1;

	if (syscall(SYS_io_setup, 1, &ctx) != 0)
		return -1;
	if (syscall(SYS_io_submit, ctx, 1, list) == 1 &&
	    syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) == 1 && ev.res == sizeof(page))
		r = 0;
	syscall(SYS_io_destroy, ctx);
	return r;
}

/* Starts entry-static, which fsyncs, through the exec entry point `how`
 * (in a child), and waits for it: the library puts it under the filter. */
static int exec_static(const char *how)
{
	char *argv[] = {"entry-static", "fsync", (char *)dir, NULL};
	const char *base = strrchr(static_prog, '/') + 1;
	int status = -1, fd;
	pid_t pid;

	if (!strcmp(how, "posix_spawn") || !strcmp(how, "posix_spawnp")) {
		if ((how[11] ? posix_spawnp(&pid, base, NULL, NULL, argv, environ)
			     : posix_spawn(&pid, static_prog, NULL, NULL, argv, environ)) != 0)
			return -1;
	} else if ((pid = fork()) == 0) {
		fd = open(static_prog, O_RDONLY);
		if (!strcmp(how, "execve"))
			execve(static_prog, argv, environ);
		else if (!strcmp(how, "execv"))
			execv(static_prog, argv);
		else if (!strcmp(how, "execvp"))
			execvp(base, argv);
		else if (!strcmp(how, "execvpe"))
			execvpe(base, argv, environ);
		else if (!strcmp(how, "execl"))
			execl(static_prog, "entry-static", "fsync", dir, (char *)NULL);
		else if (!strcmp(how, "execle"))
			execle(static_prog, "entry-static", "fsync", dir, (char *)NULL, environ);
		else if (!strcmp(how, "execlp"))
			execlp(base, "entry-static", "fsync", dir, (char *)NULL);
		else if (!strcmp(how, "fexecve"))
			fexecve(fd, argv, environ);
		else if (!strcmp(how, "execveat"))
			execveat(AT_FDCWD, static_prog, argv, environ, 0);
		_exit(127);
	}
	return pid < 0 || waitpid(pid, &status, 0) < 0 || status != 0 ? -1 : 0;
}

static void do_call(const char *call)
{
	struct iovec iov = {(void *)"data", 4};
	char name[4096];
	int fd = dirty_file(O_RDWR), r = 0;

	snprintf(name, sizeof(name), "%s/o%d-%lx", dir, getpid(), (unsigned long)pthread_self());
	if (!strcmp(call, "fsync"))
		r = fsync(fd);
	else if (!strcmp(call, "fdatasync"))
		r = fdatasync(fd);
	else if (!strcmp(call, "sync"))
		sync();
	else if (!strcmp(call, "syncfs"))
		r = syncfs(fd);
	else if (!strcmp(call, "sync_file_range"))
		r = sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
			SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
	else if (!strcmp(call, "msync"))
		r = msync(dirty_map(fd), 4096, MS_SYNC);
	else if (!strcmp(call, "syscall-msync"))
		r = syscall(SYS_msync, dirty_map(fd), 4096, MS_SYNC);
	else if (!strcmp(call, "creat")) /* a new file, synced: for the audit */
		r = fsync(write_page(creat(name, 0644)));
	else if (!strcmp(call, "creat64"))
		r = fsync(write_page(creat64(name, 0644)));
#ifdef SYS_creat
	else if (!strcmp(call, "syscall-creat"))
		r = fsync(write_page(syscall(SYS_creat, name, 0644)));
#endif
#ifdef SYS_open
	else if (!strcmp(call, "syscall-open"))
		write_page(syscall(SYS_open, name, O_WRONLY | O_CREAT | O_SYNC, 0644));
#endif
	else if (!strcmp(call, "open"))
		write_page(open(name, O_WRONLY | O_CREAT | O_SYNC, 0644));
	else if (!strcmp(call, "open64"))
		write_page(open64(name, O_WRONLY | O_CREAT | O_DSYNC, 0644));
	else if (!strcmp(call, "openat"))
		write_page(openat(AT_FDCWD, name, O_WRONLY | O_CREAT | O_SYNC, 0644));
	else if (!strcmp(call, "openat64"))
		write_page(openat64(AT_FDCWD, name, O_WRONLY | O_CREAT | O_DSYNC, 0644));
	else if (!strcmp(call, "open-nomode")) /* __open_2 when fortified */
		write_page(dirty_file(sync_flags));
	else if (!strcmp(call, "open64-nomode")) {
		close(open64(name, O_WRONLY | O_CREAT, 0644));
		write_page(open64(name, sync_flags));
	} else if (!strcmp(call, "openat-nomode")) {
		close(open(name, O_WRONLY | O_CREAT, 0644));
		write_page(openat(AT_FDCWD, name, sync_flags));
	} else if (!strcmp(call, "openat64-nomode")) {
		close(open(name, O_WRONLY | O_CREAT, 0644));
		write_page(openat64(AT_FDCWD, name, sync_flags));
	} else if (!strcmp(call, "pwritev2"))
		r = pwritev2(fd, &iov, 1, 0, RWF_DSYNC) == 4 ? 0 : -1;
	else if (!strcmp(call, "pwritev64v2"))
		r = pwritev64v2(fd, &iov, 1, 0, RWF_SYNC) == 4 ? 0 : -1;
	else if (!strcmp(call, "syscall-fsync"))
		r = syscall(SYS_fsync, fd);
	else if (!strcmp(call, "syscall-fdatasync"))
		r = syscall(SYS_fdatasync, fd);
	else if (!strcmp(call, "syscall-sync"))
		r = syscall(SYS_sync);
	else if (!strcmp(call, "syscall-syncfs"))
		r = syscall(SYS_syncfs, fd);
	else if (!strcmp(call, "syscall-sync_file_range"))
#if EMD_SFR_FLAGS_ARG == 5 /* each offset in two words (platform.h) */
		r = syscall(SYS_sync_file_range, fd, 0, 0, 0, 0, 7);
#else
		r = syscall(SYS_sync_file_range, fd, 0, 0, 7);
#endif
	else if (!strcmp(call, "syscall-openat"))
		write_page(syscall(SYS_openat, AT_FDCWD, name, O_WRONLY | O_CREAT | O_SYNC, 0644));
	else if (!strcmp(call, "syscall-write")) {
		char other[4200];

		snprintf(other, sizeof(other), "%s-2", name);
		write_pages_sys(syscall(SYS_openat, AT_FDCWD, name, O_WRONLY | O_CREAT | O_SYNC, 0644));
		write_pages_sys(syscall(SYS_openat, AT_FDCWD, other, O_WRONLY | O_CREAT | O_DSYNC, 0644));
	} else if (!strcmp(call, "syscall-openat2")) {
		struct open_how how = {.flags = O_WRONLY | O_CREAT | O_SYNC, .mode = 0644};
		write_page(syscall(SYS_openat2, AT_FDCWD, name, &how, sizeof(how)));
	} else if (!strcmp(call, "syscall-osync"))
		osync_through_syscall(name);
	else if (!strcmp(call, "syscall-pwritev2"))
		r = syscall(SYS_pwritev2, fd, &iov, 1, 0, 0, RWF_DSYNC) == 4 ? 0 : -1;
	else if (!strcmp(call, "open_by_handle_at"))
		close(by_handle(fd, 0));
	else if (!strcmp(call, "syscall-open_by_handle_at"))
		close(by_handle(fd, 1));
	else if (!strncmp(call, "fopen", 5) || !strncmp(call, "freopen", 7))
		r = stream_file(call, name);
	else if (!strncmp(call, "mk", 2))
		r = temp_file(call, name);
	else if (!strncmp(call, "exec-", 5))
		r = exec_static(call + 5);
	else if (!strcmp(call, "syscall-io_submit"))
		r = aio_dsync_write(fd);
	else
		r = new_entry(call, name);
	if (r != 0)
		fail(call);
	close(fd);
}

static void *thread_main(void *call)
{
	pthread_barrier_wait(&start);
	do_call(call);
	return NULL;
}

static void run(const char *call, int threads)
{
	pthread_t t[64];

	if (threads <= 1) {
		do_call(call);
		return;
	}
	pthread_barrier_init(&start, NULL, threads);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)call))
			fail("pthread_create");
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	int threads = 1, forking = 0, c, status;
	pid_t pid = -1;

	while ((c = getopt(argc, argv, "t:f")) != -1) {
		if (c == 't')
			threads = atoi(optarg) > 64 ? 64 : atoi(optarg);
		else if (c == 'f')
			forking = 1;
		else
			return 2;
	}
	if (optind + 2 != argc)
		return 2;
	dir = argv[optind + 1];
	snprintf(static_prog, sizeof(static_prog), "%s/entry-static", dirname_of(argv[0]));
	/* The *p exec calls find it by name; set before any thread runs. */
	setenv("PATH", dirname_of(static_prog), 1);
	if (forking && (pid = fork()) < 0)
		fail("fork");
	run(argv[optind], threads);
	if (pid > 0 && (waitpid(pid, &status, 0) < 0 || status != 0))
		return 1;
	return 0;
}
