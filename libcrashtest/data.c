/* SPDX-License-Identifier: MIT */
/* data.c -- file contents: before a write or a truncation changes a regular
 * file of the copy, the bytes it replaces and the old size go to the journal.
 *
 * Every write saves what it overwrites (not only the first after a sync):
 * undoing the non-durable writes of a file, newest first, restores its
 * contents at its last durability point whatever the overlaps.  A write on a
 * regular file outside the copy and the run directory, or a shared writable
 * mapping of a file of the copy, is something no rollback can represent: it
 * makes every crash point of the run "unknown".
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Where each descriptor's file lies, keyed by its inode: one readlink per
 * file, not per write. */
enum { OUTSIDE = 1, INSIDE, OURS };
#define CACHED 1024
static struct {
	uint64_t dev, ino;
	int where;
} cache[CACHED];

static int where_is(int fd, const struct stat *st)
{
	char path[PATH_MAX];
	int where;

	if (fd >= 0 && fd < CACHED && cache[fd].dev == st->st_dev &&
	    cache[fd].ino == st->st_ino && cache[fd].where)
		return cache[fd].where;
	if (ct_is_stderr(st))
		where = OURS;
	else if (ct_fd_path(fd, path, sizeof(path)) != 0)
		where = OUTSIDE;
	else
		where = ct_in_root(path) ? INSIDE : ct_in_run(path) ? OURS : OUTSIDE;
	if (where == OUTSIDE)
		ct_note(CT_UNKNOWN, st, "written outside the directory");
	if (fd >= 0 && fd < CACHED) {
		cache[fd].dev = st->st_dev;
		cache[fd].ino = st->st_ino;
		cache[fd].where = where;
	}
	return where;
}

/* A regular file of the copy, or 0. */
static int tracked(int fd, struct stat *st)
{
	return ct_active() && fstat(fd, st) == 0 && S_ISREG(st->st_mode) &&
	       where_is(fd, st) == INSIDE;
}

/* pread through a second descriptor when fd is write-only. */
static ssize_t read_old(int fd, char *buf, size_t n, long long off)
{
	char link[64];
	ssize_t r = pread64(fd, buf, n, off);
	int again;

	if (r >= 0 || errno != EBADF)
		return r;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	again = (int)syscall(SYS_openat, AT_FDCWD, link, O_RDONLY | O_CLOEXEC);
	if (again < 0)
		return -1;
	r = pread64(again, buf, n, off);
	close(again);
	return r;
}

/* [off, off + n) of the file as it is, in records of at most CT_CHUNK. */
static void save_range(int fd, const struct stat *st, long long off, long long n)
{
	static __thread char buf[CT_CHUNK];
	struct ct_record h = {.kind = CT_DATA, .dev = st->st_dev, .ino = st->st_ino,
			      .size = st->st_size};
	long long end = off + n < st->st_size ? off + n : st->st_size;

	do {
		size_t want = end - off > CT_CHUNK ? CT_CHUNK : end > off ? (size_t)(end - off) : 0;
		ssize_t got = want ? read_old(fd, buf, want, off) : 0;

		if (got < 0 || (size_t)got != want) {
			ct_note(CT_UNKNOWN, st, "old contents unreadable");
			return;
		}
		h.off = off;
		ct_record(&h, buf, want);
		off += (long long)want;
	} while (off < end);
}

void ct_save_before_write(int fd, long long off, size_t n, int append)
{
	struct stat st;
	int saved = errno;

	if (n && tracked(fd, &st)) {
		if (append)
			off = st.st_size;
		else if (off < 0)
			off = lseek64(fd, 0, SEEK_CUR);
		if (off >= 0)
			save_range(fd, &st, off, (long long)n);
	}
	errno = saved;
}

void ct_save_whole(int fd)
{
	struct stat st;

	if (tracked(fd, &st))
		save_range(fd, &st, 0, st.st_size);
}

void ct_after_write(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0 && (fl & O_DSYNC) && tracked(fd, &st)) {
		ct_note(CT_SYNC, &st, NULL);
		ct_point("O_SYNC write", fd);
	}
}

/* Before a truncation to `len`: the bytes it drops and the old size. */
static void save_truncate(int fd, long long len)
{
	struct stat st;

	if (tracked(fd, &st))
		save_range(fd, &st, len, st.st_size > len ? st.st_size - len : 0);
}

static int is_append(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_APPEND);
}

static size_t iov_bytes(const struct iovec *iov, int n)
{
	size_t sum = 0;

	for (int i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* Each write, under one lock: save what it overwrites (begin_write), make
 * it, then note what O_SYNC makes of it (end_write, which keeps the
 * call's errno and returns its result). */
static void begin_write(int fd, long long off, size_t n, int append)
{
	ct_lock();
	ct_save_before_write(fd, off, n, append);
}

static ssize_t end_write(int fd, ssize_t r)
{
	int saved = errno;

	if (r > 0)
		ct_after_write(fd);
	ct_unlock();
	errno = saved;
	return r;
}

/* A truncation likewise: the bytes it drops saved first. */
static void begin_truncate(int fd, long long len)
{
	ct_lock();
	save_truncate(fd, len);
}

static int end_truncate(int r)
{
	int saved = errno;

	ct_unlock();
	errno = saved;
	return r;
}

PL_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	begin_write(fd, -1, n, is_append(fd));
	return end_write(fd, REAL(write)(fd, buf, n));
}

PL_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	begin_write(fd, off, n, 0);
	return end_write(fd, REAL(pwrite)(fd, buf, n, off));
}

PL_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	begin_write(fd, off, n, 0);
	return end_write(fd, REAL(pwrite64)(fd, buf, n, off));
}

PL_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	begin_write(fd, -1, iov_bytes(iov, cnt), is_append(fd));
	return end_write(fd, REAL(writev)(fd, iov, cnt));
}

PL_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	begin_write(fd, off, iov_bytes(iov, cnt), 0);
	return end_write(fd, REAL(pwritev)(fd, iov, cnt, off));
}

PL_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	begin_write(fd, off, iov_bytes(iov, cnt), 0);
	return end_write(fd, REAL(pwritev64)(fd, iov, cnt, off));
}

PL_EXPORT int ftruncate(int fd, off_t len)
{
	begin_truncate(fd, len);
	return end_truncate(REAL(ftruncate)(fd, len));
}

PL_EXPORT int ftruncate64(int fd, off64_t len)
{
	begin_truncate(fd, len);
	return end_truncate(REAL(ftruncate64)(fd, len));
}
