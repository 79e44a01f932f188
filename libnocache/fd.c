/* SPDX-License-Identifier: MIT */
/* fd.c -- the end of a descriptor (close, dup2, dup3, closefrom, and
 * syscall(SYS_close), libuv's and so Node's) and of the process (exit,
 * _exit), when what the command brought in is written back and dropped,
 * and the copies the kernel makes itself (copy_file_range, sendfile), which
 * leave pages behind on both sides.
 */
#include "nocache.h"

#include <errno.h>
#include <linux/close_range.h>
#include <stdarg.h>
#include <stdnoreturn.h>
#include <sys/syscall.h>

PL_EXPORT int close(int fd)
{
	nc_forget(fd);
	return NC_REAL(close)(fd);
}

/* newfd is closed first, silently.  A file put under stdin, stdout or
 * stderr is written and read by libc's streams too (`sort -o FILE`). */
static int duped(int newfd, int r)
{
	int saved = errno;

	if (r >= 0)
		nc_std_stream(newfd);
	errno = saved;
	return r;
}

PL_EXPORT int dup2(int oldfd, int newfd)
{
	if (oldfd != newfd)
		nc_forget(newfd);
	return duped(newfd, NC_REAL(dup2)(oldfd, newfd));
}

PL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (oldfd != newfd)
		nc_forget(newfd);
	return duped(newfd, NC_REAL(dup3)(oldfd, newfd, flags));
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
	nc_flush_std();
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

/* libuv (Node's) closes a file with syscall(SYS_close), past close(3): the
 * file it wrote stayed cached.  Every other number goes on as it came; six
 * arguments are taken as the kernel's ABI passes them, as libc's own
 * syscall does. */
PL_EXPORT long syscall(long nr, ...)
{
	long a[6];

	PL_SYSCALL_ARGS(a, nr);
	if (nr == SYS_close)
		nc_forget((int)a[0]);
	else if (nr == SYS_close_range)
		nc_unpark_range((unsigned int)a[0], (unsigned int)a[1], (a[2] & CLOSE_RANGE_CLOEXEC) != 0);
	else if (nr == SYS_exit_group)
		nc_drop_all();
	return NC_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
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
