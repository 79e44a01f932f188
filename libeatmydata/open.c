/* SPDX-License-Identifier: MIT */
/* open.c -- open, openat and glibc's fortified __open_2 family, without
 * O_SYNC and O_DSYNC.
 *
 * Every program opens files all the time, so an open that neither syncs nor
 * creates goes straight through: a test, a load and a call.  `mode` is read
 * only when the flags say it was passed, as the C standard requires.
 */
#include "emd.h"

#include <stdarg.h>

int emd_opened_sync(int fd, int flags, const void *site)
{
	struct emd_rec rec;

	/* The open has happened: what is recorded is that it asked. */
	emd_rec_begin(&rec, emd_open_kind(flags), fd, NULL, site);
	if (rec.slot && fd >= 0 && !emd_eating())
		emd_mark_sync_fd(fd);
	return emd_rec_end(&rec, emd_done(fd, fd));
}

/* Every open that syncs or may create, whichever way it was asked (the libc
 * names, their 32-bit *64 forms, syscall()), comes here.  Out of line, so
 * that the call-through path saves no registers. */
__attribute__((noinline)) int emd_open(int dirfd, const char *path, int flags,
				       mode_t mode, const void *site)
{
	unsigned long long before = emd_audit_before_open(flags);
	int fd = dirfd == AT_FDCWD
			 ? EMD_REAL(open)(path, emd_open_flags(flags), mode)
			 : EMD_REAL(openat)(dirfd, path, emd_open_flags(flags),
					    mode);

	if (before)
		emd_audit_created(fd, dirfd, path, before, site);
	return emd_opened(fd, flags, site);
}

EMD_EXPORT int open(const char *path, int flags, ...)
{
	__typeof__(open) *real = EMD_REAL_READY(open);
	mode_t mode = 0;

	if (EMD_LIKELY(real && !(flags & EMD_OPEN_SLOW_FLAGS)))
		return real(path, flags);
	if (__OPEN_NEEDS_MODE(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return emd_open(AT_FDCWD, path, flags, mode, EMD_CALLER);
}

EMD_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	__typeof__(openat) *real = EMD_REAL_READY(openat);
	mode_t mode = 0;

	if (EMD_LIKELY(real && !(flags & EMD_OPEN_SLOW_FLAGS)))
		return real(dirfd, path, flags);
	if (__OPEN_NEEDS_MODE(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return emd_open(dirfd, path, flags, mode, EMD_CALLER);
}

/* The fortified entry points take no mode: glibc aborts the program when the
 * flags need one, and the real function still makes that check. */
EMD_EXPORT int __open_2(const char *path, int flags)
{
	return emd_opened(EMD_REAL(__open_2)(path, emd_open_flags(flags)),
			  flags, EMD_CALLER);
}

EMD_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return emd_opened(
		EMD_REAL(__openat_2)(dirfd, path, emd_open_flags(flags)), flags, EMD_CALLER);
}

#ifdef EMD_LFS_ALIASES
EMD_EXPORT int open64(const char *, int, ...) __attribute__((alias("open")));
EMD_EXPORT int openat64(int, const char *, int, ...)
	__attribute__((alias("openat")));
EMD_EXPORT int __open64_2(const char *, int) __attribute__((alias("__open_2")));
EMD_EXPORT int __openat64_2(int, const char *, int)
	__attribute__((alias("__openat_2")));
#else
/* On a 32-bit ABI the *64 names are the plain ones with O_LARGEFILE. */
EMD_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (__OPEN_NEEDS_MODE(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return emd_open(AT_FDCWD, path, flags | O_LARGEFILE, mode, EMD_CALLER);
}

EMD_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (__OPEN_NEEDS_MODE(flags)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return emd_open(dirfd, path, flags | O_LARGEFILE, mode, EMD_CALLER);
}

EMD_EXPORT int __open64_2(const char *path, int flags)
{
	return emd_opened(EMD_REAL(__open64_2)(path, emd_open_flags(flags)),
			  flags, EMD_CALLER);
}

EMD_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return emd_opened(
		EMD_REAL(__openat64_2)(dirfd, path, emd_open_flags(flags)),
		flags, EMD_CALLER);
}
#endif
