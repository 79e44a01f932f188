/* SPDX-License-Identifier: MIT */
/* copy.c -- writes that do not look like write(): pwritev2 (its flags may
 * append or make the write durable), copy_file_range and sendfile (the
 * kernel copies into the file), fallocate and posix_fallocate (they extend,
 * zero, punch or shift a file).  Each saves what it may change, as a write
 * of that range would (data.c); glibc's posix_fallocate reaches the kernel
 * past fallocate, so both are wrapped.
 */
#include "ct.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

PL_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	int t = ct_begin_write(fd, off, ct_iov_bytes(iov, cnt),
			       (flags & RWF_APPEND) || (off == -1 && ct_is_append(fd)));

	return ct_end_write(t, fd, REAL(pwritev2)(fd, iov, cnt, off, flags), "pwritev2",
			    flags & (RWF_DSYNC | RWF_SYNC));
}

PL_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	int t = ct_begin_write(fd, off, ct_iov_bytes(iov, cnt),
			       (flags & RWF_APPEND) || (off == -1 && ct_is_append(fd)));

	return ct_end_write(t, fd, REAL(pwritev64v2)(fd, iov, cnt, off, flags), "pwritev2",
			    flags & (RWF_DSYNC | RWF_SYNC));
}

PL_EXPORT ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off,
				  size_t len, unsigned int flags)
{
	int t = ct_begin_write(out, out_off ? *out_off : -1, len, 0);

	return ct_end_write(t, out, REAL(copy_file_range)(in, in_off, out, out_off, len, flags),
			    "copy_file_range", 0);
}

/* sendfile's offset is the source's: it writes at the target's offset. */
PL_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	int t = ct_begin_write(out, -1, n, ct_is_append(out));

	return ct_end_write(t, out, REAL(sendfile)(out, in, off, n), "sendfile", 0);
}

PL_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	int t = ct_begin_write(out, -1, n, ct_is_append(out));

	return ct_end_write(t, out, REAL(sendfile64)(out, in, off, n), "sendfile", 0);
}

/* What fallocate may change: a range, or from off to the end when it
 * shifts the rest of the file. */
static int begin_fallocate(int fd, int mode, long long off, long long len)
{
	int shifts = mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE);

	return ct_begin_write(fd, off, (size_t)(shifts ? LLONG_MAX - off : len), 0);
}

/* fallocate returns 0 or -1; the write helpers count a result above 0. */
static int end_fallocate(int t, int fd, int r)
{
	return (int)ct_end_write(t, fd, r == 0 ? 1 : r, "fallocate", 0) == 1 ? 0 : r;
}

PL_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	int t = begin_fallocate(fd, mode, off, len);

	return end_fallocate(t, fd, REAL(fallocate)(fd, mode, off, len));
}

PL_EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	int t = begin_fallocate(fd, mode, off, len);

	return end_fallocate(t, fd, REAL(fallocate64)(fd, mode, off, len));
}

/* posix_fallocate returns an error number, not -1. */
PL_EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	int t = begin_fallocate(fd, 0, off, len);
	int err = REAL(posix_fallocate)(fd, off, len);

	end_fallocate(t, fd, err ? -1 : 0);
	return err;
}

PL_EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len)
{
	int t = begin_fallocate(fd, 0, off, len);
	int err = REAL(posix_fallocate64)(fd, off, len);

	end_fallocate(t, fd, err ? -1 : 0);
	return err;
}
