/* SPDX-License-Identifier: MIT */
/* data.c -- file contents: each write to a regular file of the copy goes to
 * the journal with its bytes (taken from the caller's own buffer once the
 * call returned), each truncation with its size; a write to a pipe or a
 * socket is a claim.
 *
 * A change and its record are made under the library's lock, so that two
 * threads writing one region are journaled in the order they wrote; the
 * file's size a record gives as before it is the one the lock found.  A write
 * on a regular file outside the copy and the run directory is something no
 * state can represent: the run is "unknown".
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Where each descriptor's file lies, keyed by its inode: one readlink per
 * file, not per write. */
#define CACHED 1024
static struct {
	uint64_t dev, ino;
	enum ct_where where;
} cache[CACHED];

static enum ct_where where_file(int fd, const struct stat *st)
{
	char path[PATH_MAX];
	enum ct_where where;

	if (fd >= 0 && fd < CACHED && cache[fd].where && cache[fd].dev == st->st_dev &&
	    cache[fd].ino == st->st_ino)
		return cache[fd].where;
	if (ct_fd_path(fd, path, sizeof(path)) != 0)
		where = CT_OUTSIDE, path[0] = '\0';
	else
		where = ct_in_root(path) ? CT_FILE : ct_in_run(path) ? CT_NONE : CT_OUTSIDE;
	/* A file --outside-ok names (the JVM's hsperfdata): no state holds it. */
	if (where == CT_OUTSIDE && path[0] && ct_outside_ok(path, getenv(CT_ENV_OUTSIDE_OK)))
		ct_note(CT_IGNORED, st, path);
	else if (where == CT_OUTSIDE)
		ct_note(CT_UNKNOWN, st, "a file outside the directory was written");
	if (fd >= 0 && fd < CACHED) {
		cache[fd].dev = st->st_dev;
		cache[fd].ino = st->st_ino;
		cache[fd].where = where;
	}
	return where;
}

/* A regular file of the copy (CT_FILE), a pipe or socket, whose writes are
 * claims (CT_CLAIMED), or neither. */
enum ct_where ct_where_fd(int fd, struct stat *st)
{
	int saved = errno;
	enum ct_where where = CT_NONE;

	if (ct_active() && fstat(fd, st) == 0) {
		if (S_ISREG(st->st_mode))
			where = where_file(fd, st);
		else if (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode))
			where = CT_CLAIMED;
	}
	errno = saved;
	return where == CT_OUTSIDE ? CT_NONE : where;
}

/* Before a change of file st's contents through fd: claims, then the lock,
 * under which st is taken again, since another process may have changed
 * the file since the first look: its size then is the one the change
 * starts from (a write past the end or not, the size a truncation left). */
void ct_lock_file(int fd, struct stat *st)
{
	struct stat now;
	int saved = errno;

	ct_claims();
	ct_lock();
	if (fstat(fd, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino)
		*st = now;
	errno = saved;
}

/* Records of at most CT_CHUNK bytes each for the first n bytes of iov,
 * written at off: the payload is the caller's own iovecs, sliced. */
void ct_wrote(const struct stat *st, long long off, const struct iovec *iov, int cnt, size_t n,
	      int flags)
{
	struct iovec part[64];
	size_t skip = 0; /* bytes of iov[i] already recorded */
	int i = 0;

	while (n > 0 && i < cnt) {
		struct ct_record h = {.kind = CT_WRITE, .flags = (uint16_t)flags,
				      .dev = st->st_dev, .ino = st->st_ino, .off = off,
				      .size = st->st_size};
		size_t room = CT_CHUNK, got = 0;
		int k = 0;

		for (; i < cnt && k < 64 && room > 0 && got < n; k++) {
			size_t take = iov[i].iov_len - skip;

			take = take > room ? room : take > n - got ? n - got : take;
			part[k] = (struct iovec){(char *)iov[i].iov_base + skip, take};
			got += take, room -= take, skip += take;
			if (skip == iov[i].iov_len)
				i++, skip = 0;
		}
		ct_record(&h, part, k);
		off += (long long)got;
		n -= got;
	}
}

/* What the kernel copied into a file (copy_file_range, sendfile), read
 * from where it came: the source at its offset.  Never through a
 * descriptor of the library's own, whose close would drop the process's
 * POSIX locks on the file. */
void ct_copied(int in, long long in_off, const struct stat *st, long long off, long long n)
{
	static char buf[CT_CHUNK]; /* under ct_lock */

	while (n > 0) {
		size_t want = n > CT_CHUNK ? CT_CHUNK : (size_t)n;
		ssize_t got = pread64(in, buf, want, in_off);
		struct iovec v = {buf, got > 0 ? (size_t)got : 0};

		if (got <= 0) {
			ct_note(CT_UNKNOWN, st, "what the kernel copied into a file cannot be read back");
			return;
		}
		ct_wrote(st, off, &v, 1, (size_t)got, 0);
		in_off += got;
		off += got;
		n -= got;
	}
}

void ct_truncated(const struct stat *st, long long len)
{
	struct ct_record h = {.kind = CT_TRUNC, .dev = st->st_dev, .ino = st->st_ino,
			      .off = st->st_size, .size = len};

	ct_record(&h, NULL, 0);
}

void ct_zeroed(const struct stat *st, long long off, long long n)
{
	struct ct_record h = {.kind = CT_ZERO, .dev = st->st_dev, .ino = st->st_ino, .off = off,
			      .size = n};

	ct_record(&h, NULL, 0);
}

/* One write through fd: what it is (ct_where_fd), then, once made, its
 * record.  A write to a file of the copy holds the lock throughout. */
struct write_call {
	enum ct_where where;
	struct stat st;
	int fl;
};

static void begin_write(int fd, struct write_call *w)
{
	int saved = errno;

	w->where = ct_where_fd(fd, &w->st);
	if (w->where != CT_FILE)
		return;
	ct_lock_file(fd, &w->st);
	w->fl = fcntl(fd, F_GETFL);
	errno = saved;
}

/* Where the write of r bytes began: at the end, less r, for an append
 * (O_APPEND, RWF_APPEND: pwrite too appends then); else at off, or where
 * the file offset now is, less r. */
static long long began_at(int fd, const struct write_call *w, long long off, ssize_t r, int rwf)
{
	struct stat st;

	if ((w->fl & O_APPEND) || (rwf & RWF_APPEND))
		return fstat(fd, &st) == 0 ? st.st_size - r : -1;
	if (off >= 0)
		return off;
	off = lseek64(fd, 0, SEEK_CUR);
	return off < 0 ? -1 : off - r;
}

/* The write returned r: recorded, a claim, or nothing.  rwf: pwritev2's
 * flags.  Keeps errno; returns r. */
static ssize_t end_write(int fd, struct write_call *w, long long off, const struct iovec *iov,
			 int cnt, ssize_t r, int rwf)
{
	int saved = errno, flags = 0;
	long long at;

	if (w->where == CT_CLAIMED && r > 0) {
		struct ct_record h = {.kind = CT_CLAIM, .dev = w->st.st_dev, .ino = w->st.st_ino};

		ct_record(&h, NULL, 0);
	}
	if (w->where != CT_FILE)
		return errno = saved, r;
	if (r > 0 && (at = began_at(fd, w, off, r, rwf)) >= 0) {
		flags |= (w->fl & O_DSYNC) || (rwf & (RWF_DSYNC | RWF_SYNC)) ? CT_F_DSYNC : 0;
		flags |= ((w->fl & O_SYNC) == O_SYNC) || (rwf & RWF_SYNC) ? CT_F_SYNC : 0;
		ct_wrote(&w->st, at, iov, cnt, (size_t)r, flags);
	} else if (r > 0) {
		ct_note(CT_UNKNOWN, &w->st, "where a write went cannot be told");
	}
	ct_unlock();
	errno = saved;
	return r;
}

ssize_t ct_write_iov(int fd, long long off, const struct iovec *iov, int cnt, int rwf,
		     ssize_t (*call)(int, const struct iovec *, int, long long, int))
{
	struct write_call w;

	begin_write(fd, &w);
	return end_write(fd, &w, off, iov, cnt, call(fd, iov, cnt, off, rwf), rwf);
}

static ssize_t real_write(int fd, const struct iovec *iov, int cnt, long long off, int rwf)
{
	(void)cnt, (void)off, (void)rwf;
	return REAL(write)(fd, iov[0].iov_base, iov[0].iov_len);
}

static ssize_t real_pwrite(int fd, const struct iovec *iov, int cnt, long long off, int rwf)
{
	(void)cnt, (void)rwf;
	return REAL(pwrite64)(fd, iov[0].iov_base, iov[0].iov_len, off);
}

static ssize_t real_writev(int fd, const struct iovec *iov, int cnt, long long off, int rwf)
{
	(void)off, (void)rwf;
	return REAL(writev)(fd, iov, cnt);
}

static ssize_t real_pwritev(int fd, const struct iovec *iov, int cnt, long long off, int rwf)
{
	(void)rwf;
	return REAL(pwritev64)(fd, iov, cnt, off);
}

static ssize_t real_pwritev2(int fd, const struct iovec *iov, int cnt, long long off, int rwf)
{
	return REAL(pwritev64v2)(fd, iov, cnt, off, rwf);
}

PL_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct iovec v = {(void *)buf, n};

	return ct_write_iov(fd, -1, &v, 1, 0, real_write);
}

PL_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct iovec v = {(void *)buf, n};

	return ct_write_iov(fd, off, &v, 1, 0, real_pwrite);
}

#ifdef EMD_LFS64
PL_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	struct iovec v = {(void *)buf, n};

	return ct_write_iov(fd, off, &v, 1, 0, real_pwrite);
}
#endif

PL_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	return ct_write_iov(fd, -1, iov, cnt, 0, real_writev);
}

PL_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return ct_write_iov(fd, off, iov, cnt, 0, real_pwritev);
}

#ifdef EMD_LFS64
PL_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	return ct_write_iov(fd, off, iov, cnt, 0, real_pwritev);
}
#endif

/* pwritev2: an offset of -1 is the file offset; its flags may append or
 * make the write durable. */
PL_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return ct_write_iov(fd, off, iov, cnt, flags, real_pwritev2);
}

#ifdef EMD_LFS64
PL_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	return ct_write_iov(fd, off, iov, cnt, flags, real_pwritev2);
}
#endif

/* A truncation of the file st (open as fd), through fd by call or by
 * path: made under the journal's lock and recorded once it succeeded. */
static int recorded_truncation(struct stat *st, long long len,
			       int (*call)(int, off64_t), int fd, const char *path)
{
	int r, saved;

	ct_lock_file(fd, st);
	r = call ? call(fd, len) : REAL(truncate64)(path, len);
	saved = errno;
	if (r == 0)
		ct_truncated(st, len);
	if (r == 0 && call && len == 0 && st->st_size > 0)
		ct_release_truncated(fd);
	ct_unlock();
	errno = saved;
	return r;
}

/* A truncation through fd: recorded once it succeeded. */
static int truncated(int fd, long long len, int (*call)(int, off64_t))
{
	struct stat st;
	enum ct_where where = len >= 0 ? ct_where_fd(fd, &st) : CT_NONE;

	if (where != CT_FILE)
		return call(fd, len);
	return recorded_truncation(&st, len, call, fd, NULL);
}

static int real_ftruncate(int fd, off64_t len)
{
	return REAL(ftruncate64)(fd, len);
}

PL_EXPORT int ftruncate(int fd, off_t len)
{
	return truncated(fd, len, real_ftruncate);
}

#ifdef EMD_LFS64
PL_EXPORT int ftruncate64(int fd, off64_t len)
{
	return truncated(fd, len, real_ftruncate);
}
#endif

/* truncate() by name: the file found through an O_PATH descriptor, whose
 * close, unlike another's, keeps the process's POSIX locks on it. */
static int truncate_path(const char *path, long long len)
{
	int fd = len >= 0 && ct_active() ? (int)ct_sys(SYS_openat, AT_FDCWD, path,
							 O_PATH | O_CLOEXEC) : -1;
	struct stat st;
	int r;

	if (fd < 0 || ct_where_fd(fd, &st) != CT_FILE) {
		if (fd >= 0)
			close(fd);
		return REAL(truncate64)(path, len);
	}
	r = recorded_truncation(&st, len, NULL, fd, path);
	close(fd);
	return r;
}

PL_EXPORT int truncate(const char *path, off_t len)
{
	return truncate_path(path, len);
}

#ifdef EMD_LFS64
PL_EXPORT int truncate64(const char *path, off64_t len)
{
	return truncate_path(path, len);
}
#endif
