/* SPDX-License-Identifier: MIT */
/* open.c -- every way to open a file (open, openat, creat, mkostemp and
 * kin, fopen, their *64 and fortified names; syscall.c adds syscall()):
 * without O_SYNC and O_DSYNC, through one helper that also does what the
 * audit, the record and --sync-on-exit need, so that no entry point can
 * drift from the others (fopen, which cannot ask for sync, only tells the
 * audit of the file it creates).
 *
 * Every program opens files all the time, so an open that neither syncs nor
 * creates goes straight through: a test and a call through its entry
 * (emd.h), the real open where nothing is recorded, else the real open and
 * fdid.c's forget.  `mode` is read only when the flags say it was passed,
 * as the C standard requires.
 */
#include "emd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The open has happened: what is recorded is that it asked for sync. */
static int opened_sync(int fd, int flags, const void *site)
{
	struct emd_rec rec;

	emd_rec_start(&rec, emd_open_kind(flags), fd, NULL, site);
	if (__atomic_load_n(&emd_follow_writes, __ATOMIC_RELAXED) == EMD_FOLLOW_ON)
		emd_mark_sync_fd(fd);
	return emd_rec_finish(&rec, emd_note_result(fd, fd));
}

/* Out of line, so that the call-through paths save no registers. */
__attribute__((noinline)) long emd_open(const struct emd_open *op,
					const void *site)
{
	unsigned long long before = emd_audit_before_open(op->flags);
	long fd = emd_fd_forget(op->call(op, emd_open_flags(op->flags)));

	if (before)
		emd_audit_created((int)fd, op->dirfd, op->path, before, site);
	if (op->flags & EMD_OPEN_SYNC_FLAGS)
		return opened_sync((int)fd, op->flags, site);
	return fd;
}

static long call_open(const struct emd_open *op, int flags)
{
	if (op->dirfd == AT_FDCWD)
		return EMD_REAL(open)(op->path, flags, op->mode);
	return EMD_REAL(openat)(op->dirfd, op->path, flags, op->mode);
}

typedef long open_call(const struct emd_open *op, int flags);

/* The slow path of open and openat (and of open64 and openat64 on a 32-bit
 * ABI: `call` says which), out of line: the fast path builds no struct and
 * saves no registers. */
__attribute__((noinline)) static int open_slow(int dirfd, const char *path,
					       int flags, mode_t mode,
					       open_call *call, const void *site)
{
	struct emd_open op = {dirfd, path, flags, mode, call, NULL};

	return (int)emd_open(&op, site);
}

/* The mode after `flags` in a variadic open, if the flags say it is there. */
static mode_t mode_arg(int flags, va_list ap)
{
	return __OPEN_NEEDS_MODE(flags) ? va_arg(ap, mode_t) : 0;
}

/* The entries' forgetting bodies: called with flags that pass no mode. */
static int open_forget(const char *path, int flags, ...)
{
	return (int)emd_fd_forget(EMD_REAL(open)(path, flags));
}

static int openat_forget(int dirfd, const char *path, int flags, ...)
{
	return (int)emd_fd_forget(EMD_REAL(openat)(dirfd, path, flags));
}

static __typeof__(open) *open_entry = open_forget;
static __typeof__(openat) *openat_entry = openat_forget;

void emd_open_entries(int forget)
{
	EMD_ENTRY_SET(open, forget);
	EMD_ENTRY_SET(openat, forget);
}

EMD_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	va_list ap;

	if (EMD_LIKELY(!(flags & EMD_OPEN_SLOW_FLAGS)))
		return EMD_ENTRY(open)(path, flags);
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return open_slow(AT_FDCWD, path, flags, mode, call_open, EMD_CALLER);
}

EMD_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	va_list ap;

	if (EMD_LIKELY(!(flags & EMD_OPEN_SLOW_FLAGS)))
		return EMD_ENTRY(openat)(dirfd, path, flags);
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return open_slow(dirfd, path, flags, mode, call_open, EMD_CALLER);
}

/* libc's creat opens through its own internal open, out of our reach. */
EMD_EXPORT int creat(const char *path, mode_t mode)
{
	return open_slow(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode,
			 call_open, EMD_CALLER);
}

/* mkstemp and its kin open through libc's own open, out of our reach: the
 * flags they take may ask for sync, and they create a file.  All four are
 * mkostemps with a suffix length and flags of 0 or not. */
static long call_mkostemps(const struct emd_open *op, int flags)
{
	return EMD_REAL(mkostemps)((char *)op->path, *(const int *)op->arg,
				   flags & ~O_CREAT);
}

static int make_temp(char *tmpl, int suffixlen, int flags, const void *site)
{
	struct emd_open op = {AT_FDCWD, tmpl, flags | O_CREAT, 0600,
			      call_mkostemps, &suffixlen};

	return (int)emd_open(&op, site);
}

EMD_EXPORT int mkstemp(char *tmpl)
{
	return make_temp(tmpl, 0, 0, EMD_CALLER);
}

EMD_EXPORT int mkostemp(char *tmpl, int flags)
{
	return make_temp(tmpl, 0, flags, EMD_CALLER);
}

EMD_EXPORT int mkstemps(char *tmpl, int suffixlen)
{
	return make_temp(tmpl, suffixlen, 0, EMD_CALLER);
}

EMD_EXPORT int mkostemps(char *tmpl, int suffixlen, int flags)
{
	return make_temp(tmpl, suffixlen, flags, EMD_CALLER);
}

/* open_by_handle_at takes open's flags but no path: it makes no entry for
 * the audit, so O_CREAT is kept out of the request's flags. */
struct by_handle {
	struct file_handle *handle;
	int creat;
};

static long call_open_by_handle_at(const struct emd_open *op, int flags)
{
	const struct by_handle *h = op->arg;

	return EMD_REAL(open_by_handle_at)(op->dirfd, h->handle,
					   flags | h->creat);
}

EMD_EXPORT int open_by_handle_at(int mount_fd, struct file_handle *handle,
				 int flags)
{
	struct by_handle h = {handle, flags & O_CREAT};
	struct emd_open op = {mount_fd, NULL, flags & ~O_CREAT, 0,
			      call_open_by_handle_at, &h};

	if (!(flags & EMD_OPEN_SYNC_FLAGS))
		return (int)emd_fd_forget(EMD_REAL(open_by_handle_at)(mount_fd, handle, flags));
	return (int)emd_open(&op, EMD_CALLER);
}

/* fopen and freopen open through libc's own open too.  They cannot ask for
 * sync, but "w" and "a" create a file, which the audit follows. */
static FILE *opened_stream(FILE *f, const char *path,
			   unsigned long long before, const void *site)
{
	if (f)
		emd_fd_forget(fileno_unlocked(f));
	if (before && f)
		emd_audit_created(fileno(f), AT_FDCWD, path, before, site);
	return f;
}

static unsigned long long stream_before(const char *path, const char *mode)
{
	int creates = path && mode && (mode[0] == 'w' || mode[0] == 'a');

	return emd_audit_before_open(creates ? O_CREAT : 0);
}

EMD_EXPORT FILE *fopen(const char *path, const char *mode)
{
	unsigned long long before = stream_before(path, mode);

	return opened_stream(EMD_REAL(fopen)(path, mode), path, before,
			     EMD_CALLER);
}

EMD_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	unsigned long long before = stream_before(path, mode);

	return opened_stream(EMD_REAL(freopen)(path, mode, stream), path,
			     before, EMD_CALLER);
}

#ifdef EMD_HAVE_FORTIFY_OPEN
/* The fortified entry points take no mode: glibc aborts the program when the
 * flags need one, and the real function still makes that check.  `arg`
 * set: the *64 names of a 32-bit ABI. */
static long call_open_2(const struct emd_open *op, int flags)
{
#ifndef EMD_LFS_ALIASES
	if (op->arg && op->dirfd == AT_FDCWD)
		return EMD_REAL(__open64_2)(op->path, flags);
	if (op->arg)
		return EMD_REAL(__openat64_2)(op->dirfd, op->path, flags);
#endif
	if (op->dirfd == AT_FDCWD)
		return EMD_REAL(__open_2)(op->path, flags);
	return EMD_REAL(__openat_2)(op->dirfd, op->path, flags);
}

/* The body of the four: `lfs` set for the *64 names of a 32-bit ABI. */
static int open_2(int dirfd, const char *path, int flags, int *lfs,
		  const void *site)
{
	struct emd_open op = {dirfd, path, flags, 0, call_open_2, lfs};

	return (int)emd_open(&op, site);
}

EMD_EXPORT int __open_2(const char *path, int flags)
{
	return open_2(AT_FDCWD, path, flags, NULL, EMD_CALLER);
}

EMD_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return open_2(dirfd, path, flags, NULL, EMD_CALLER);
}
#endif

#if defined(EMD_LFS_ALIASES)
EMD_EXPORT int open64(const char *, int, ...) __attribute__((alias("open")));
EMD_EXPORT int openat64(int, const char *, int, ...)
	__attribute__((alias("openat")));
EMD_EXPORT int creat64(const char *, mode_t) __attribute__((alias("creat")));
EMD_EXPORT FILE *fopen64(const char *, const char *)
	__attribute__((alias("fopen")));
EMD_EXPORT FILE *freopen64(const char *, const char *, FILE *)
	__attribute__((alias("freopen")));
EMD_EXPORT int mkstemp64(char *) __attribute__((alias("mkstemp")));
EMD_EXPORT int mkostemp64(char *, int) __attribute__((alias("mkostemp")));
EMD_EXPORT int mkstemps64(char *, int) __attribute__((alias("mkstemps")));
EMD_EXPORT int mkostemps64(char *, int, int)
	__attribute__((alias("mkostemps")));
EMD_EXPORT int __open64_2(const char *, int) __attribute__((alias("__open_2")));
EMD_EXPORT int __openat64_2(int, const char *, int)
	__attribute__((alias("__openat_2")));
#elif defined(EMD_LFS64)
/* On a 32-bit ABI the *64 names add O_LARGEFILE: call through to them. */
static long call_open64(const struct emd_open *op, int flags)
{
	if (op->dirfd == AT_FDCWD)
		return EMD_REAL(open64)(op->path, flags, op->mode);
	return EMD_REAL(openat64)(op->dirfd, op->path, flags, op->mode);
}

EMD_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return open_slow(AT_FDCWD, path, flags, mode, call_open64, EMD_CALLER);
}

EMD_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return open_slow(dirfd, path, flags, mode, call_open64, EMD_CALLER);
}

EMD_EXPORT int creat64(const char *path, mode_t mode)
{
	return open_slow(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode,
			 call_open64, EMD_CALLER);
}

EMD_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	unsigned long long before = stream_before(path, mode);

	return opened_stream(EMD_REAL(fopen64)(path, mode), path, before,
			     EMD_CALLER);
}

EMD_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	unsigned long long before = stream_before(path, mode);

	return opened_stream(EMD_REAL(freopen64)(path, mode, stream), path,
			     before, EMD_CALLER);
}

/* glibc's *64 temporary files add O_LARGEFILE, and so do these. */
EMD_EXPORT int mkstemp64(char *tmpl)
{
	return make_temp(tmpl, 0, O_LARGEFILE, EMD_CALLER);
}

EMD_EXPORT int mkostemp64(char *tmpl, int flags)
{
	return make_temp(tmpl, 0, flags | O_LARGEFILE, EMD_CALLER);
}

EMD_EXPORT int mkstemps64(char *tmpl, int suffixlen)
{
	return make_temp(tmpl, suffixlen, O_LARGEFILE, EMD_CALLER);
}

EMD_EXPORT int mkostemps64(char *tmpl, int suffixlen, int flags)
{
	return make_temp(tmpl, suffixlen, flags | O_LARGEFILE, EMD_CALLER);
}

static int lfs = 1;

EMD_EXPORT int __open64_2(const char *path, int flags)
{
	return open_2(AT_FDCWD, path, flags, &lfs, EMD_CALLER);
}

EMD_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return open_2(dirfd, path, flags, &lfs, EMD_CALLER);
}
#endif
