/* SPDX-License-Identifier: MIT */
/* floor.c -- the least any preloaded durability eater can cost, for
 * `make bench` only: sync calls return 0 without looking at their
 * arguments, opens mask the flags and call on.  Not faithful, not robust. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int fsync(int fd) { (void)fd; return 0; }
EXPORT int fdatasync(int fd) { (void)fd; return 0; }
EXPORT void sync(void) {}
EXPORT int syncfs(int fd) { (void)fd; return 0; }
EXPORT int msync(void *a, size_t l, int f) { (void)a; (void)l; (void)f; return 0; }
EXPORT int sync_file_range(int fd, off64_t o, off64_t n, unsigned f)
{
	(void)fd; (void)o; (void)n; (void)f;
	return 0;
}

EXPORT int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	va_list ap;
	mode_t mode;

	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return real(path, flags & ~O_SYNC, mode);
}

EXPORT int open64(const char *, int, ...) __attribute__((alias("open")));

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	va_list ap;
	mode_t mode;

	if (!real)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return real(dirfd, path, flags & ~O_SYNC, mode);
}

EXPORT int openat64(int, const char *, int, ...) __attribute__((alias("openat")));
