/* SPDX-License-Identifier: MIT */
/* fallback.c -- the next definition of a function the C library has not
 * (musl: preadv2 and pwritev2 before 1.2.5, renameat2, execveat, closefrom,
 * close_range; platform.h says which): the system call, made through the
 * next syscall() (the C library's, or that of a library preloaded after
 * this one, as for any function wrapped), so that the library's wrapper of
 * it calls through as it would to the C library's.  Nothing with glibc.
 */
#define _GNU_SOURCE 1
#include "preload.h"

#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void *next_syscall_fn;

/* The next syscall(): -1 and errno on failure, as the C library's (unused
 * with glibc). */
__attribute__((unused)) static long next_syscall(long nr, long a, long b, long c, long d, long e, long f)
{
	return ((long (*)(long, ...))pl_real(&next_syscall_fn, "syscall"))(nr, a, b, c, d, e, f);
}

/* An offset as preadv2 and pwritev2 take it, in two words (a 64-bit ABI's
 * kernel reads the first alone). */
#define LO_HI(off) (long)(off), (long)((unsigned long long)(off) >> 32)

#ifndef EMD_HAVE_PWRITEV2
static ssize_t sys_preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return next_syscall(SYS_preadv2, fd, (long)iov, cnt, LO_HI(off), flags);
}

static ssize_t sys_pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return next_syscall(SYS_pwritev2, fd, (long)iov, cnt, LO_HI(off), flags);
}
#endif

#ifndef EMD_HAVE_RENAMEAT2
static int sys_renameat2(int olddir, const char *old, int newdir, const char *new, unsigned flags)
{
	return (int)next_syscall(SYS_renameat2, olddir, (long)old, newdir, (long)new, flags, 0);
}
#endif

#ifndef EMD_HAVE_EXECVEAT
static int sys_execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	return (int)next_syscall(SYS_execveat, dirfd, (long)path, (long)argv, (long)envp, flags, 0);
}
#endif

#ifndef EMD_HAVE_CLOSEFROM
static void sys_closefrom(int lo)
{
	if (lo >= 0)
		next_syscall(SYS_close_range, lo, ~0U, 0, 0, 0, 0);
}

static int sys_close_range(unsigned lo, unsigned hi, int flags)
{
	return (int)next_syscall(SYS_close_range, lo, hi, flags, 0, 0, 0);
}
#endif

static const struct {
	const char *name;
	void *fn;
} fallbacks[] = {
#ifndef EMD_HAVE_PWRITEV2
	{"preadv2", (void *)sys_preadv2},
	{"pwritev2", (void *)sys_pwritev2},
#endif
#ifndef EMD_HAVE_RENAMEAT2
	{"renameat2", (void *)sys_renameat2},
#endif
#ifndef EMD_HAVE_EXECVEAT
	{"execveat", (void *)sys_execveat},
#endif
#ifndef EMD_HAVE_CLOSEFROM
	{"closefrom", (void *)sys_closefrom},
	{"close_range", (void *)sys_close_range},
#endif
	{NULL, NULL},
};

void *pl_fallback(const char *name)
{
	for (size_t i = 0; fallbacks[i].name; i++)
		if (strcmp(fallbacks[i].name, name) == 0)
			return fallbacks[i].fn;
	return NULL;
}
