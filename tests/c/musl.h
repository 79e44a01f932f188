/* SPDX-License-Identifier: MIT */
/* musl.h -- what the test programs take of glibc's that musl has not, for
 * their musl builds (make CC=musl-gcc includes it before each): errno's
 * names, and the functions older musl lacks (preadv2 and pwritev2 before
 * 1.2.5, renameat2, execveat, close_range, closefrom), through syscall(),
 * as a program built against it must make them.
 */
#ifndef EMD_TESTS_MUSL_H
#define EMD_TESTS_MUSL_H

#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define EMD_ERRNO_NAMES(X)                                                     \
	X(EPERM) X(ENOENT) X(ESRCH) X(EINTR) X(EIO) X(ENXIO) X(E2BIG)          \
	X(ENOEXEC) X(EBADF) X(ECHILD) X(EAGAIN) X(ENOMEM) X(EACCES) X(EFAULT)  \
	X(EBUSY) X(EEXIST) X(EXDEV) X(ENODEV) X(ENOTDIR) X(EISDIR) X(EINVAL)   \
	X(ENFILE) X(EMFILE) X(ENOTTY) X(ETXTBSY) X(EFBIG) X(ENOSPC) X(ESPIPE)  \
	X(EROFS) X(EMLINK) X(EPIPE) X(ERANGE) X(ENAMETOOLONG) X(ENOSYS)        \
	X(ENOTEMPTY) X(ELOOP) X(EOVERFLOW) X(EOPNOTSUPP) X(ENOTSOCK)           \
	X(EDESTADDRREQ) X(ECANCELED) X(EBADFD) X(EDQUOT) X(ESTALE)
#define EMD_ERRNO_CASE(name)                                                   \
	case name:                                                             \
		return #name;

static inline const char *strerrorname_np(int err)
{
	switch (err) {
		EMD_ERRNO_NAMES(EMD_ERRNO_CASE)
	}
	return NULL;
}

#ifndef RWF_SYNC
#define RWF_HIPRI 0x00000001
#define RWF_DSYNC 0x00000002
#define RWF_SYNC 0x00000004
#define RWF_NOWAIT 0x00000008
#define RWF_APPEND 0x00000010
static inline ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return syscall(SYS_preadv2, fd, iov, cnt, (long)off, 0L, flags);
}
static inline ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return syscall(SYS_pwritev2, fd, iov, cnt, (long)off, 0L, flags);
}
#endif
#define preadv64v2 preadv2
#define pwritev64v2 pwritev2

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#define RENAME_WHITEOUT (1 << 2)
static inline int renameat2(int olddir, const char *old, int newdir, const char *new,
			    unsigned flags)
{
	return (int)syscall(SYS_renameat2, olddir, old, newdir, new, flags);
}
#endif

static inline int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			   int flags)
{
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

static inline int close_range(unsigned lo, unsigned hi, int flags)
{
	return (int)syscall(SYS_close_range, lo, hi, flags);
}

static inline void closefrom(int lo)
{
	syscall(SYS_close_range, lo, ~0U, 0);
}

#endif
