/* SPDX-License-Identifier: MIT */
/* fd.c -- the end of a descriptor (close, dup2, dup3, closefrom) and of the
 * process (exit, _exit), when what the command brought in is written back
 * and dropped, and the copies the kernel makes itself (copy_file_range,
 * sendfile), which leave pages behind on both sides.
 */
#include "nocache.h"

#include <errno.h>
#include <linux/close_range.h>
#include <stdnoreturn.h>

PL_EXPORT int close(int fd)
{
	nc_forget(fd);
	return NC_REAL(close)(fd);
}

/* newfd is closed first, silently. */
PL_EXPORT int dup2(int oldfd, int newfd)
{
	if (oldfd != newfd)
		nc_forget(newfd);
	return NC_REAL(dup2)(oldfd, newfd);
}

PL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (oldfd != newfd)
		nc_forget(newfd);
	return NC_REAL(dup3)(oldfd, newfd, flags);
}

/* The numbers of parked files in the range go with it. */
PL_EXPORT void closefrom(int lowfd)
{
	if (lowfd >= 0)
		nc_unpark_range(lowfd, -1u, 0);
	NC_REAL(closefrom)(lowfd);
}

PL_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	/* CLOSE_RANGE_CLOEXEC closes nothing now: close ours here. */
	nc_unpark_range(first, last, (flags & CLOSE_RANGE_CLOEXEC) != 0);
	return NC_REAL(close_range)(first, last, flags);
}

/* Descriptors still open at exit: libc's exit runs this after the atexit
 * handlers (coreutils closes stdout in one).  A vfork child that calls _exit
 * shares the table with its parent: it writes back and drops what is
 * pending, which the parent then finds done. */
__attribute__((destructor)) static void at_exit(void)
{
	nc_drop_all();
}

PL_EXPORT noreturn void _exit(int status)
{
	nc_drop_all();
	NC_REAL(_exit)(status);
	__builtin_unreachable();
}

PL_EXPORT noreturn void _Exit(int status)
{
	nc_drop_all();
	NC_REAL(_Exit)(status);
	__builtin_unreachable();
}

/* Classify both sides before the copy (what was cached is to stay), drop
 * behind after it: the kernel copies through the cache, not DONTCACHE. */
static void before_copy(int in, int out)
{
	nc_mode(in, nc_file(in));
	nc_mode(out, nc_file(out));
}

static ssize_t after_copy(int in, const off64_t *off_in, int out,
			  const off64_t *off_out, ssize_t r)
{
	struct nc_file *fin = nc_file(in), *fout = nc_file(out);

	if (r > 0 && fin)
		nc_touched(in, fin, r, off_in ? *off_in : -1, NC_COUNTED);
	if (r > 0 && fout)
		nc_touched(out, fout, r, off_out ? *off_out : -1,
			   NC_WROTE | NC_COUNTED);
	return r;
}

PL_EXPORT ssize_t copy_file_range(int in, off64_t *off_in, int out,
				  off64_t *off_out, size_t len,
				  unsigned int flags)
{
	ssize_t r;

	before_copy(in, out);
	r = NC_REAL(copy_file_range)(in, off_in, out, off_out, len, flags);
	return after_copy(in, off_in, out, off_out, r);
}

PL_EXPORT ssize_t sendfile64(int out, int in, off64_t *offset, size_t count)
{
	ssize_t r;

	before_copy(in, out);
	r = NC_REAL(sendfile64)(out, in, offset, count);
	return after_copy(in, offset, out, NULL, r);
}

/* musl's sendfile64 is sendfile: defined above by that name. */
#if defined(EMD_LFS_ALIASES) /* sendfile64 is sendfile (platform.h) */
PL_EXPORT ssize_t sendfile(int, int, off_t *, size_t)
	__attribute__((alias("sendfile64")));
#elif defined(EMD_LFS64)
PL_EXPORT ssize_t sendfile(int out, int in, off_t *offset, size_t count)
{
	ssize_t r;

	before_copy(in, out);
	r = NC_REAL(sendfile)(out, in, offset, count);
	return after_copy(in, NULL, out, NULL, r);
}
#endif
