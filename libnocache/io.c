/* SPDX-License-Identifier: MIT */
/* io.c -- the reads and writes, all of which end in preadv2/pwritev2.
 *
 * preadv2 and pwritev2 with no flags are readv/preadv and writev/pwritev
 * (offset -1 meaning the file position), for every kind of descriptor, so
 * one path serves them all, and adds RWF_DONTCACHE to large writes where it
 * can.
 */
#include "nocache.h"

#include <errno.h>

/* Try the call with RWF_DONTCACHE; returns 1 and the result in *r unless the
 * kernel refuses the flag for this file. */
static int try_dontcache(ssize_t (*call)(int, const struct iovec *, int,
					 off64_t, int),
			 int fd, struct nc_file *f, const struct iovec *iov,
			 int cnt, off64_t off, int flags, ssize_t *r)
{
	int saved = errno;

	*r = call(fd, iov, cnt, off, flags | RWF_DONTCACHE);
	if (*r >= 0 || errno != EOPNOTSUPP || (flags & RWF_DONTCACHE))
		return 1;
	nc_dontcache_refused(f);
	errno = saved;
	return 0;
}

/* The end of what a call at `off` moved over, or -1 for the file position. */
static off64_t end_of(off64_t off, ssize_t r)
{
	return off < 0 ? -1 : off + r;
}

typedef ssize_t io_fn(int, const struct iovec *, int, off64_t, int);

/* One read or write through preadv2 or pwritev2: a write with
 * RWF_DONTCACHE where `dontcache` allows and the file takes it, anything
 * else to be dropped behind.  What was written is to be written back
 * either way. */
static ssize_t io(io_fn *real, int fd, const struct iovec *iov, int cnt,
		  off64_t off, int flags, int dontcache, int wrote)
{
	struct nc_file *f = nc_file(fd);
	int mode = nc_mode(fd, f);
	ssize_t r;

	if (mode == NC_PLAIN)
		return real(fd, iov, cnt, off, flags);
	if (dontcache && mode == NC_DONTCACHE &&
	    try_dontcache(real, fd, f, iov, cnt, off, flags, &r)) {
		nc_touched(fd, f, r, end_of(off, r), NC_WROTE);
		return r;
	}
	r = real(fd, iov, cnt, off, flags);
	nc_touched(fd, f, r, end_of(off, r), wrote | NC_COUNTED);
	return r;
}

/* Never with RWF_DONTCACHE, which drops each folio a read touches, the
 * part it did not read too: `dd bs=4k` of a cold 8 MiB file read 13 MiB
 * from the disk, tar's 10 KiB reads of a 91 MiB tree 158 MiB.  The pages
 * go when the command has read past them (nc_touched). */
ssize_t nc_read(int fd, const struct iovec *iov, int cnt, off64_t off,
		int flags)
{
	return io(NC_REAL(preadv64v2), fd, iov, cnt, off, flags, 0, NC_READ);
}

/* `big`: a single buffer of NC_BIG_WRITE bytes or more, worth a writeback
 * of its own.  The caller's iovec array is never read here: a bad one is
 * the kernel's EFAULT. */
ssize_t nc_write(int fd, const struct iovec *iov, int cnt, off64_t off,
		 int flags, int big)
{
	return io(NC_REAL(pwritev64v2), fd, iov, cnt, off, flags, big,
		  NC_WROTE);
}

PL_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	struct iovec iov = {buf, n};

	return nc_read(fd, &iov, 1, -1, 0);
}

PL_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	return nc_read(fd, iov, cnt, -1, 0);
}

PL_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	struct iovec iov = {buf, n};

	/* preadv2 takes -1 as "the file position"; pread says EINVAL. */
	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	return nc_read(fd, &iov, 1, off, 0);
}

PL_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt,
			   off64_t off)
{
	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	return nc_read(fd, iov, cnt, off, 0);
}

PL_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt,
			     off64_t off, int flags)
{
	return nc_read(fd, iov, cnt, off, flags);
}

PL_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct iovec iov = {(void *)buf, n};

	return nc_write(fd, &iov, 1, -1, 0, n >= NC_BIG_WRITE);
}

PL_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	return nc_write(fd, iov, cnt, -1, 0, 0);
}

PL_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	struct iovec iov = {(void *)buf, n};

	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	return nc_write(fd, &iov, 1, off, 0, n >= NC_BIG_WRITE);
}

PL_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt,
			    off64_t off)
{
	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	return nc_write(fd, iov, cnt, off, 0, 0);
}

PL_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt,
			      off64_t off, int flags)
{
	return nc_write(fd, iov, cnt, off, flags, 0);
}

/* A file cut short loses the pages past its end: those written there
 * afterwards are the command's (`sort -o FILE FILE` cuts FILE to 0, then
 * writes all of it again), even where the file was cached before.  It is
 * classified first: what the cut leaves of what was cached stays. */
PL_EXPORT int ftruncate64(int fd, off64_t len)
{
	struct nc_file *f = nc_file(fd);
	int mode = nc_mode(fd, f), r = NC_REAL(ftruncate64)(fd, len);

	if (r == 0 && mode != NC_PLAIN)
		nc_truncated(fd, f, len);
	return r;
}

#ifdef EMD_LFS_ALIASES /* pread64 is pread, and so on (platform.h) */
PL_EXPORT int ftruncate(int, off_t) __attribute__((alias("ftruncate64")));
PL_EXPORT ssize_t pread(int, void *, size_t, off_t)
	__attribute__((alias("pread64")));
PL_EXPORT ssize_t preadv(int, const struct iovec *, int, off_t)
	__attribute__((alias("preadv64")));
PL_EXPORT ssize_t preadv2(int, const struct iovec *, int, off_t, int)
	__attribute__((alias("preadv64v2")));
PL_EXPORT ssize_t pwrite(int, const void *, size_t, off_t)
	__attribute__((alias("pwrite64")));
PL_EXPORT ssize_t pwritev(int, const struct iovec *, int, off_t)
	__attribute__((alias("pwritev64")));
PL_EXPORT ssize_t pwritev2(int, const struct iovec *, int, off_t, int)
	__attribute__((alias("pwritev64v2")));
#else
/* A 32-bit off_t widens to the 64-bit call. */
PL_EXPORT int ftruncate(int fd, off_t len)
{
	return ftruncate64(fd, len);
}

PL_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return pread64(fd, buf, n, off);
}

PL_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return preadv64(fd, iov, cnt, off);
}

PL_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off,
			  int flags)
{
	return nc_read(fd, iov, cnt, off, flags);
}

PL_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite64(fd, buf, n, off);
}

PL_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return pwritev64(fd, iov, cnt, off);
}

PL_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt,
			   off_t off, int flags)
{
	return nc_write(fd, iov, cnt, off, flags, 0);
}
#endif
