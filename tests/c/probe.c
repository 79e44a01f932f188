/* SPDX-License-Identifier: MIT */
/* probe.c -- the semantics matrix: every intercepted call against every kind
 * of descriptor or argument, one line each with the result and errno.
 *
 * tests/py/test_semantics.py runs it natively and under eatmydata and wants
 * the same lines: the library may skip the I/O, never change an answer.
 * Usage: probe DIR
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define CANARY 4242

static char dir[4096];

/* One line: the case, the result, errno on failure, and whether errno was
 * left alone on success. */
static void report(const char *call, const char *kind, long r)
{
	int e = errno;

	if (r < 0)
		printf("%s %s: -1 %s\n", call, kind, strerrorname_np(e));
	else
		printf("%s %s: %d%s\n", call, kind, r > 0 ? 1 : 0,
		       e == CANARY ? "" : " errno-changed");
	errno = CANARY;
}

struct fd_kind {
	const char *name;
	int fd;
};

static int file_fd(const char *name, int flags)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, flags | O_CREAT, 0644);
}

/* Every kind of descriptor the calls are asked about. */
static int make_kinds(struct fd_kind *k)
{
	int p[2], s[2], n = 0;

	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		exit(2);
	k[n++] = (struct fd_kind){"file-rw", file_fd("f", O_RDWR)};
	k[n++] = (struct fd_kind){"file-ro", file_fd("f", O_RDONLY)};
	k[n++] = (struct fd_kind){"file-wo", file_fd("f", O_WRONLY)};
	k[n++] = (struct fd_kind){"dir", open(dir, O_RDONLY | O_DIRECTORY)};
	k[n++] = (struct fd_kind){"o-path", open(dir, O_PATH)};
	k[n++] = (struct fd_kind){"pipe-r", p[0]};
	k[n++] = (struct fd_kind){"pipe-w", p[1]};
	k[n++] = (struct fd_kind){"socket", s[0]};
	k[n++] = (struct fd_kind){"dev-null", open("/dev/null", O_RDWR)};
	k[n++] = (struct fd_kind){"dev-zero", open("/dev/zero", O_RDONLY)};
	k[n++] = (struct fd_kind){"eventfd", eventfd(0, 0)};
	k[n++] = (struct fd_kind){"memfd", memfd_create("probe", 0)};
	k[n++] = (struct fd_kind){"closed", 1000};
	k[n++] = (struct fd_kind){"negative", -1};
	k[n++] = (struct fd_kind){"huge", 1 << 30};
	return n;
}

static void fd_calls(const struct fd_kind *k)
{
	struct iovec iov = {"x", 1};

	errno = CANARY;
	report("fsync", k->name, fsync(k->fd));
	report("fdatasync", k->name, fdatasync(k->fd));
	report("syncfs", k->name, syncfs(k->fd));
	report("sfr-write", k->name, sync_file_range(k->fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	report("sfr-all", k->name, sync_file_range(k->fd, 0, 4096, 7));
	report("sfr-badflag", k->name, sync_file_range(k->fd, 0, 0, 8 | 2));
	report("sfr-negoff", k->name, sync_file_range(k->fd, -1, 0, 2));
	report("sfr-neglen", k->name, sync_file_range(k->fd, 0, -5, 2));
	report("pwritev2-dsync", k->name, pwritev2(k->fd, &iov, 1, -1, RWF_DSYNC));
	report("pwritev2-sync", k->name, pwritev2(k->fd, &iov, 1, 0, RWF_SYNC));
	report("pwritev2-badflag", k->name, pwritev2(k->fd, &iov, 1, 0, RWF_DSYNC | 0x10000));
	report("sys-fsync", k->name, syscall(SYS_fsync, k->fd));
	report("sys-fdatasync", k->name, syscall(SYS_fdatasync, k->fd));
	report("sys-syncfs", k->name, syscall(SYS_syncfs, k->fd));
	report("sys-sfr", k->name, syscall(SYS_sync_file_range, k->fd, 0, 0, 7));
	report("sys-pwritev2", k->name, syscall(SYS_pwritev2, k->fd, &iov, 1, 0, 0, RWF_DSYNC));
}

static void msync_calls(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	int fd = file_fd("m", O_RDWR);
	char *shared, *anon, *gone;

	if (ftruncate(fd, 2 * pg))
		exit(2);
	shared = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	anon = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gone = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, pg);
	shared[0] = 'x';
	errno = CANARY;
	report("msync", "shared-sync", msync(shared, 2 * pg, MS_SYNC));
	report("msync", "shared-async", msync(shared, pg, MS_ASYNC));
	report("msync", "shared-invalidate", msync(shared, pg, MS_SYNC | MS_INVALIDATE));
	report("msync", "both-flags", msync(shared, pg, MS_SYNC | MS_ASYNC));
	report("msync", "unknown-flag", msync(shared, pg, MS_SYNC | 64));
	report("msync", "unaligned", msync(shared + 1, pg, MS_SYNC));
	report("msync", "anon", msync(anon, pg, MS_SYNC));
	report("msync", "unmapped", msync(gone, pg, MS_SYNC));
	report("msync", "zero-length", msync(shared, 0, MS_SYNC));
	report("sys-msync", "shared-sync", syscall(SYS_msync, shared, pg, MS_SYNC));
	report("sys-msync", "unmapped", syscall(SYS_msync, gone, pg, MS_SYNC));
}

/* The created file's mode, which O_SYNC must not change. */
static void report_open(const char *call, const char *kind, int fd)
{
	struct stat st;

	report(call, kind, fd < 0 ? -1 : 0);
	if (fd >= 0 && fstat(fd, &st) == 0)
		printf("%s %s: mode %o\n", call, kind, st.st_mode);
	if (fd >= 0)
		close(fd);
	errno = CANARY;
}

static void open_calls(void)
{
	char path[4200], missing[4200];
	struct open_how how = {.flags = O_RDWR | O_CREAT | O_SYNC, .mode = 0600};
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	volatile int sync_flags = O_RDWR | O_SYNC;

	snprintf(path, sizeof(path), "%s/o", dir);
	snprintf(missing, sizeof(missing), "%s/nope/x", dir);
	umask(022);
	errno = CANARY;
	report_open("open", "create", open(path, O_RDWR | O_CREAT | O_SYNC, 0666));
	report_open("open", "existing", open(path, sync_flags));
	report_open("open", "missing", open(missing, O_RDWR | O_CREAT | O_DSYNC, 0600));
	report_open("open", "dir-write", open(dir, O_WRONLY | O_SYNC));
	report_open("open", "excl", open(path, O_RDWR | O_CREAT | O_EXCL | O_SYNC, 0600));
	report_open("open", "tmpfile", open(dir, O_RDWR | O_TMPFILE | O_SYNC, 0640));
	report_open("open64", "existing", open64(path, O_RDWR | O_DSYNC));
	report_open("openat", "create", openat(dfd, "o2", O_RDWR | O_CREAT | O_SYNC, 0604));
	report_open("openat", "bad-dirfd", openat(999, "o2", O_RDWR | O_SYNC));
	report_open("openat64", "existing", openat64(dfd, "o2", sync_flags));
	report_open("creat", "new", creat(path, 0700));
	report_open("sys-openat", "create", syscall(SYS_openat, dfd, "o3", O_RDWR | O_CREAT | O_SYNC, 0660));
	report_open("sys-openat2", "create", syscall(SYS_openat2, dfd, "o4", &how, sizeof(how)));
	report_open("sys-openat2", "bad-pointer", syscall(SYS_openat2, dfd, "o4", (void *)8, sizeof(how)));
	report_open("sys-openat2", "small", syscall(SYS_openat2, dfd, "o4", &how, 8));
	how.resolve = 1u << 31;
	report_open("sys-openat2", "bad-resolve", syscall(SYS_openat2, dfd, "o4", &how, sizeof(how)));
	close(dfd);
}

int main(int argc, char **argv)
{
	struct fd_kind kinds[32];
	int n;

	if (argc != 2 || strlen(argv[1]) > 4000) {
		fprintf(stderr, "usage: probe DIR\n");
		return 2;
	}
	strcpy(dir, argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	n = make_kinds(kinds);
	for (int i = 0; i < n; i++)
		fd_calls(&kinds[i]);
	msync_calls();
	open_calls();
	errno = CANARY;
	sync();
	report("sync", "-", 0);
	return 0;
}
