/* SPDX-License-Identifier: MIT */
/* open.c -- open, openat and glibc's fortified __open_2 family, without
 * O_SYNC and O_DSYNC.
 *
 * Every program opens files all the time, so an open without those flags
 * goes straight to libc: one test and a tail call.  `mode` is read only when
 * the flags say it was passed, as the C standard requires.
 */
#include "emd.h"

#include <stdarg.h>

EMD_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (__OPEN_NEEDS_MODE(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (EMD_LIKELY(!(flags & EMD_OPEN_SYNC_FLAGS)))
		return EMD_REAL(open)(path, flags, mode);
	fd = EMD_REAL(open)(path, emd_open_flags(flags), mode);
	return emd_done(fd, fd);
}

EMD_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (__OPEN_NEEDS_MODE(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (EMD_LIKELY(!(flags & EMD_OPEN_SYNC_FLAGS)))
		return EMD_REAL(openat)(dirfd, path, flags, mode);
	fd = EMD_REAL(openat)(dirfd, path, emd_open_flags(flags), mode);
	return emd_done(fd, fd);
}

/* The fortified entry points take no mode: glibc aborts the program when the
 * flags need one, and the real function still makes that check. */
EMD_EXPORT int __open_2(const char *path, int flags)
{
	int fd;

	if (EMD_LIKELY(!(flags & EMD_OPEN_SYNC_FLAGS)))
		return EMD_REAL(__open_2)(path, flags);
	fd = EMD_REAL(__open_2)(path, emd_open_flags(flags));
	return emd_done(fd, fd);
}

EMD_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int fd;

	if (EMD_LIKELY(!(flags & EMD_OPEN_SYNC_FLAGS)))
		return EMD_REAL(__openat_2)(dirfd, path, flags);
	fd = EMD_REAL(__openat_2)(dirfd, path, emd_open_flags(flags));
	return emd_done(fd, fd);
}

#ifdef EMD_LFS_ALIASES
EMD_EXPORT int open64(const char *, int, ...) __attribute__((alias("open")));
EMD_EXPORT int openat64(int, const char *, int, ...)
	__attribute__((alias("openat")));
EMD_EXPORT int __open64_2(const char *, int) __attribute__((alias("__open_2")));
EMD_EXPORT int __openat64_2(int, const char *, int)
	__attribute__((alias("__openat_2")));
#else
/* On a 32-bit ABI the *64 names add O_LARGEFILE: call through to them. */
EMD_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (__OPEN_NEEDS_MODE(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	fd = EMD_REAL(open64)(path, emd_open_flags(flags), mode);
	return (flags & EMD_OPEN_SYNC_FLAGS) ? emd_done(fd, fd) : fd;
}

EMD_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (__OPEN_NEEDS_MODE(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	fd = EMD_REAL(openat64)(dirfd, path, emd_open_flags(flags), mode);
	return (flags & EMD_OPEN_SYNC_FLAGS) ? emd_done(fd, fd) : fd;
}

EMD_EXPORT int __open64_2(const char *path, int flags)
{
	int fd = EMD_REAL(__open64_2)(path, emd_open_flags(flags));

	return (flags & EMD_OPEN_SYNC_FLAGS) ? emd_done(fd, fd) : fd;
}

EMD_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int fd = EMD_REAL(__openat64_2)(dirfd, path, emd_open_flags(flags));

	return (flags & EMD_OPEN_SYNC_FLAGS) ? emd_done(fd, fd) : fd;
}
#endif
