/* SPDX-License-Identifier: MIT */
/* libc.c -- what the tools call that the C library may not have (musl:
 * preadv2 and pwritev2 before 1.2.5, renameat2, glibc's sigabbrev_np;
 * platform.h says which): the system call, a table.  Nothing with glibc.
 */
#define _GNU_SOURCE 1
#include "platform.h"

#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* An offset as preadv2 and pwritev2 take it, in two words (a 64-bit ABI's
 * kernel reads the first alone). */
#define LO_HI(off) (long)(off), (long)((unsigned long long)(off) >> 32)

#ifndef EMD_HAVE_PWRITEV2
ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return syscall(SYS_preadv2, fd, iov, cnt, LO_HI(off), flags);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return syscall(SYS_pwritev2, fd, iov, cnt, LO_HI(off), flags);
}
#endif

#ifndef EMD_HAVE_RENAMEAT2
int renameat2(int olddir, const char *old, int newdir, const char *new, unsigned flags)
{
	return (int)syscall(SYS_renameat2, olddir, old, newdir, new, flags);
}
#endif

#ifndef EMD_LIBC_GLIBC
/* The signals' names without "SIG", as glibc's sigabbrev_np gives them. */
#define SIGNALS(X)                                                             \
	X(HUP) X(INT) X(QUIT) X(ILL) X(TRAP) X(ABRT) X(BUS) X(FPE) X(KILL)     \
	X(USR1) X(SEGV) X(USR2) X(PIPE) X(ALRM) X(TERM) X(STKFLT) X(CHLD)      \
	X(CONT) X(STOP) X(TSTP) X(TTIN) X(TTOU) X(URG) X(XCPU) X(XFSZ)         \
	X(VTALRM) X(PROF) X(WINCH) X(IO) X(PWR) X(SYS)
#define SIGNAL_ROW(name) [SIG##name] = #name,
static const char *const abbrevs[] = {SIGNALS(SIGNAL_ROW)};

const char *sigabbrev_np(int sig)
{
	return sig > 0 && (size_t)sig < sizeof(abbrevs) / sizeof(*abbrevs) ? abbrevs[sig] : NULL;
}
#endif
