/* SPDX-License-Identifier: MIT */
/* times.c -- times() and sysconf(_SC_CLK_TCK) in microseconds.
 *
 * A program that divides times() by sysconf(_SC_CLK_TCK) sees 10 ms steps;
 * here the tick is a microsecond: the elapsed count comes from
 * CLOCK_MONOTONIC and the CPU times from getrusage, which the kernel keeps
 * to the nanosecond.  The real times() still runs first, so a bad pointer
 * fails with EFAULT as it would.
 */
#define _GNU_SOURCE 1
#include "preload.h"

#include <limits.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#define HZ 1000000L

#define REAL_SYMBOLS(X) X(times) X(sysconf) X(__sysconf)
enum { REAL_SYMBOLS(PL_ID) NREAL };
static void *real_fn[NREAL];
static const char *const real_name[NREAL] = {REAL_SYMBOLS(PL_NAME)};
#define REAL(name) PL_REAL(real_fn, real_name, name)

long __sysconf(int name);

/* A count of microseconds as clock_t, which is 32 bits in a 32-bit process:
 * it wraps there as the kernel's own count does, computed unsigned (signed
 * overflow is undefined) and kept non-negative, so never the error value. */
static clock_t wrapped(unsigned long long us)
{
	return (clock_t)(us & (unsigned long long)LONG_MAX);
}

static clock_t ticks(struct timeval tv)
{
	return wrapped((unsigned long long)tv.tv_sec * HZ + (unsigned long long)tv.tv_usec);
}

PL_EXPORT clock_t times(struct tms *buf)
{
	struct rusage self, children;
	struct timespec now;

	if (REAL(times)(buf) == (clock_t)-1)
		return (clock_t)-1;
	if (buf && getrusage(RUSAGE_SELF, &self) == 0 &&
	    getrusage(RUSAGE_CHILDREN, &children) == 0) {
		buf->tms_utime = ticks(self.ru_utime);
		buf->tms_stime = ticks(self.ru_stime);
		buf->tms_cutime = ticks(children.ru_utime);
		buf->tms_cstime = ticks(children.ru_stime);
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	return wrapped((unsigned long long)now.tv_sec * HZ +
		       (unsigned long long)now.tv_nsec / 1000);
}

PL_EXPORT long sysconf(int name)
{
	return name == _SC_CLK_TCK ? HZ : REAL(sysconf)(name);
}

/* glibc's CLK_TCK macro calls this name. */
PL_EXPORT long __sysconf(int name)
{
	return name == _SC_CLK_TCK ? HZ : REAL(__sysconf)(name);
}
