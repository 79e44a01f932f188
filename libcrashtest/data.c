/* SPDX-License-Identifier: MIT */
/* data.c -- file contents: before a write or a truncation changes a regular
 * file of the copy, the bytes it replaces and the old size go to the journal.
 *
 * Undoing the non-durable records of a file, newest first, restores its
 * contents at its last durability point whatever the overlaps; so only the
 * first change to a region after such a point needs saving (saved_before).
 * A write on a regular file outside the copy and the run directory is
 * something no rollback can represent: it makes the crash point "unknown".
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

/* The regions of each file saved since the generation began.  A later write
 * inside them saves nothing: its record would be undone before the first
 * one, which holds the region's contents at the last durability point.
 * Bytes past the size at the first change need no saving either: the
 * rollback truncates to that size.  Per process (a fork inherits a valid
 * table); another process's records are undone in their turn. */
#define FILES 64
#define SPANS 16
static struct region {
	uint64_t dev, ino, gen;
	long long base;
	int n;
	long long from[SPANS], to[SPANS];
} regions[FILES];
static unsigned next_slot;

static struct region *region_of(const struct stat *st, int *fresh)
{
	uint64_t gen = ct_generation();
	struct region *e;

	*fresh = 0;
	for (int i = 0; i < FILES; i++)
		if (regions[i].gen == gen && regions[i].dev == st->st_dev && regions[i].ino == st->st_ino)
			return &regions[i];
	e = &regions[next_slot++ % FILES];
	*e = (struct region){.dev = st->st_dev, .ino = st->st_ino, .gen = gen, .base = st->st_size};
	*fresh = 1;
	return e;
}

static int covered(const struct region *e, long long off, long long end)
{
	for (int i = 0; off < end && i < e->n; i++)
		if (e->from[i] <= off && end <= e->to[i])
			return 1;
	return off >= end;
}

static void add_span(struct region *e, long long off, long long end)
{
	for (int i = 0; off < end && i < e->n; i++)
		if (off <= e->to[i] && end >= e->from[i]) {
			e->from[i] = off < e->from[i] ? off : e->from[i];
			e->to[i] = end > e->to[i] ? end : e->to[i];
			return;
		}
	if (off < end && e->n < SPANS) {
		e->from[e->n] = off;
		e->to[e->n++] = end;
	}
}

/* Is [off, off + n) saved already?  If not, the caller saves it. */
static int saved_before(const struct stat *st, long long off, long long n)
{
	int fresh;
	struct region *e = region_of(st, &fresh);
	long long end = off + n < e->base ? off + n : e->base;

	if (!fresh && covered(e, off, end))
		return 1;
	add_span(e, off, end);
	return 0;
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
	again = (int)ct_sys(SYS_openat, AT_FDCWD, link, O_RDONLY | O_CLOEXEC);
	if (again < 0)
		return -1;
	r = pread64(again, buf, n, off);
	close(again);
	return r;
}

/* [off, off + n) of the file as it is, in records of at most CT_CHUNK. */
static void save_range(int fd, const struct stat *st, long long off, long long n,
		       enum ct_kind kind)
{
	static __thread char buf[CT_CHUNK];
	struct ct_record h = {.kind = kind, .dev = st->st_dev, .ino = st->st_ino,
			      .size = kind == CT_IMAGE ? CT_IMAGE_RANGE : st->st_size,
			      .ino2 = (uint64_t)off};
	long long end = n < st->st_size - off ? off + n : st->st_size;

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

/* Where the write under way starts (between ct_begin_write and
 * ct_end_write, under the lock): an O_DSYNC write makes that range durable. */
static __thread long long write_at;

/* Before a write of n bytes at off (append: at the end; off < 0: at the
 * file offset) on fd, a file of the copy. */
static void save_write(int fd, const struct stat *st, long long off, size_t n, int append)
{
	long long len;

	if (append)
		off = st->st_size;
	else if (off < 0)
		off = lseek64(fd, 0, SEEK_CUR);
	write_at = off;
	if (off < 0)
		return;
	/* copy_file_range and fallocate may ask for up to the largest offset */
	len = n > (size_t)(LLONG_MAX - off) ? LLONG_MAX - off : (long long)n;
	if (!saved_before(st, off, len))
		save_range(fd, st, off, len, CT_DATA);
}

/* The whole of fd as undo, unless saved since the generation began: a file
 * the library is about to lose sight of (image.c). */
void ct_save_whole(int fd)
{
	struct stat st;
	int saved = errno;

	ct_lock();
	if (tracked(fd, &st) && !saved_before(&st, 0, st.st_size))
		save_range(fd, &st, 0, st.st_size, CT_DATA);
	ct_unlock();
	errno = saved;
}

/* Before a truncation of fd to `len`: the bytes it drops and the old size.
 * 1 if fd is a file of the copy. */
int ct_save_truncate(int fd, long long len, struct stat *st)
{
	int saved = errno;

	if (len < 0 || !tracked(fd, st)) /* EINVAL: nothing to save */
		return 0;
	save_range(fd, st, len, st->st_size > len ? st->st_size - len : 0, CT_DATA);
	ct_bump(); /* ext4-ordered keeps the truncation: later writes save anew */
	errno = saved;
	return 1;
}

void ct_truncated(const struct stat *st, long long len)
{
	struct ct_record h = {.kind = CT_TRUNC, .dev = st->st_dev, .ino = st->st_ino,
			      .off = len, .size = st->st_size, .ino2 = (uint64_t)len};

	ct_record(&h, NULL, 0);
}

/* sync_file_range wrote fd back and waited. */
void ct_writeout(int fd)
{
	struct stat st;
	int saved = errno;

	if (tracked(fd, &st)) {
		ct_note(CT_WRITEOUT, &st, NULL);
		ct_bump();
	}
	errno = saved;
}

/* After a write of n bytes on fd of the copy: one on an O_SYNC / O_DSYNC
 * descriptor, or made with RWF_DSYNC (`sync`), is a durability call for its
 * own range (and the size): an image of those bytes, not a sync of the file,
 * whose other unsynced writes stay as lost as they were.  Any other write is
 * a step. */
static void after_write(int fd, ssize_t n, const char *call, int sync)
{
	struct stat st;

	if (sync && write_at >= 0 && fstat(fd, &st) == 0) {
		save_range(fd, &st, write_at, n, CT_IMAGE);
		ct_point(call, fd);
	} else {
		ct_step(call, fd, NULL);
	}
}

size_t ct_iov_bytes(const struct iovec *iov, int n)
{
	size_t sum = 0;

	for (int i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* Each write on a file of the copy, under one lock: save what it
 * overwrites (ct_begin_write, not 0 for such a file), make it, then count
 * it (ct_end_write, which keeps the call's errno and returns its result).
 * Any other write takes the lock only to learn it is not one. */
int ct_begin_write(int fd, long long off, size_t n, int append)
{
	struct stat st;
	int saved = errno, fl = 0, t;

	ct_lock();
	write_at = -1;
	t = tracked(fd, &st) && (fl = fcntl(fd, F_GETFL)) >= 0;
	if (!t)
		ct_unlock(); /* a pipe or socket may block: no lock held over it */
	if (t && append == CT_FD_APPEND)
		append = !!(fl & O_APPEND);
	if (t && n)
		save_write(fd, &st, off, n, append);
	errno = saved;
	return t ? 1 | (fl & O_DSYNC ? CT_WRITE_DSYNC : 0) : 0;
}

ssize_t ct_end_write(int t, int fd, ssize_t r, const char *call, int sync)
{
	int saved = errno;

	if (t && r > 0)
		after_write(fd, r, t & CT_WRITE_DSYNC ? "O_SYNC write" : call,
			    sync || (t & CT_WRITE_DSYNC));
	if (t)
		ct_unlock();
	errno = saved;
	return r;
}

/* A truncation likewise: the bytes it drops saved first. */
static int begin_truncate(int fd, long long len, struct stat *st)
{
	ct_lock();
	return ct_active() && ct_save_truncate(fd, len, st);
}

static int end_truncate(int t, int fd, long long len, const struct stat *st, int r)
{
	int saved = errno;

	if (t && r == 0) {
		ct_truncated(st, len);
		ct_step("ftruncate", fd, NULL);
	}
	ct_unlock();
	errno = saved;
	return r;
}

PL_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	int t = ct_begin_write(fd, -1, n, CT_FD_APPEND);

	return ct_end_write(t, fd, REAL(write)(fd, buf, n), "write", 0);
}

PL_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	int t = ct_begin_write(fd, off, n, 0);

	return ct_end_write(t, fd, REAL(pwrite)(fd, buf, n, off), "pwrite", 0);
}

PL_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	int t = ct_begin_write(fd, off, n, 0);

	return ct_end_write(t, fd, REAL(pwrite64)(fd, buf, n, off), "pwrite64", 0);
}

PL_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	int t = ct_begin_write(fd, -1, ct_iov_bytes(iov, cnt), CT_FD_APPEND);

	return ct_end_write(t, fd, REAL(writev)(fd, iov, cnt), "writev", 0);
}

PL_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	int t = ct_begin_write(fd, off, ct_iov_bytes(iov, cnt), 0);

	return ct_end_write(t, fd, REAL(pwritev)(fd, iov, cnt, off), "pwritev", 0);
}

PL_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	int t = ct_begin_write(fd, off, ct_iov_bytes(iov, cnt), 0);

	return ct_end_write(t, fd, REAL(pwritev64)(fd, iov, cnt, off), "pwritev64", 0);
}

PL_EXPORT int ftruncate(int fd, off_t len)
{
	struct stat st;
	int t = begin_truncate(fd, len, &st);

	return end_truncate(t, fd, len, &st, REAL(ftruncate)(fd, len));
}

PL_EXPORT int ftruncate64(int fd, off64_t len)
{
	struct stat st;
	int t = begin_truncate(fd, len, &st);

	return end_truncate(t, fd, len, &st, REAL(ftruncate64)(fd, len));
}
