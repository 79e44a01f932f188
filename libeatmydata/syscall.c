/* SPDX-License-Identifier: MIT */
/* syscall.c -- durability requested through libc's syscall(): the sync calls
 * are answered here, and the open and write calls lose their sync flags.
 *
 * syscall() is how a program reaches calls libc has no wrapper for, openat2
 * among them; programs that make the system call themselves (static and Go
 * binaries) are out of reach of any preloaded library.
 */
#include "emd.h"

#include <linux/openat2.h>
#include <stdarg.h>
#include <string.h>

/* openat2's struct open_how is extensible; larger ones than this pass
 * through unchanged. */
#define HOW_MAX 256

/* The kernel copies open_how from the caller, so a bad pointer is EFAULT,
 * not a crash: read it the same way.  NULL when it cannot be read or is of
 * a size this library does not know; the call then goes through as asked. */
static struct open_how *read_how(const long *a, unsigned char *copy)
{
	size_t size = (size_t)a[3];
	struct iovec local = {copy, size}, remote = {(void *)a[2], size};

	if (size < sizeof(struct open_how) || size > HOW_MAX)
		return NULL;
	if (emd_syscall(SYS_process_vm_readv, getpid(), (long)&local, 1,
			(long)&remote, 1, 0) != (long)size)
		return NULL;
	return (struct open_how *)copy;
}

static long real_syscall(long nr, const long *a)
{
	return EMD_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* openat2 has no libc wrapper: this is the open path's for it. */
static long open_how(long *a, const void *site)
{
	unsigned char copy[HOW_MAX];
	struct open_how *how = read_how(a, copy);
	unsigned long long before;
	int flags, fd;

	if (!how || !(how->flags & EMD_OPEN_SLOW_FLAGS))
		return real_syscall(SYS_openat2, a);
	flags = (int)how->flags;
	before = emd_audit_before_open(flags);
	if (emd_eating() && (flags & EMD_OPEN_SYNC_FLAGS)) {
		how->flags &= ~(unsigned long long)EMD_OPEN_SYNC_FLAGS;
		a[2] = (long)copy;
	}
	fd = (int)real_syscall(SYS_openat2, a);
	if (before)
		emd_audit_created(fd, (int)a[0], (const char *)a[1], before, site);
	return emd_opened(fd, flags, site);
}

static long call_pwritev2(const long *a)
{
	return real_syscall(SYS_pwritev2, a);
}

/* Opens and writes that ask for durability take their libc wrapper's path,
 * which records, marks and notes them: returns 1 with the result in *res
 * when the call was made there. */
static int route(long nr, long *a, const void *site, long *res)
{
	switch (nr) {
#ifdef SYS_open
	case SYS_open:
		if (!(a[1] & EMD_OPEN_SLOW_FLAGS))
			return 0;
		*res = emd_open(AT_FDCWD, (const char *)a[0], (int)a[1],
				(mode_t)a[2], site);
		return 1;
#endif
#ifdef SYS_creat
	case SYS_creat:
		*res = emd_open(AT_FDCWD, (const char *)a[0],
				O_CREAT | O_WRONLY | O_TRUNC, (mode_t)a[1], site);
		return 1;
#endif
	case SYS_openat:
		if (!(a[2] & EMD_OPEN_SLOW_FLAGS))
			return 0;
		*res = emd_open((int)a[0], (const char *)a[1], (int)a[2],
				(mode_t)a[3], site);
		return 1;
	case SYS_openat2:
		*res = open_how(a, site);
		return 1;
	case SYS_pwritev2:
		if (!(a[EMD_PWRITEV2_FLAGS_ARG] & EMD_RWF_SYNC_FLAGS))
			return 0;
		*res = emd_pwritev2(a, call_pwritev2, site);
		return 1;
	default:
		return 0;
	}
}

/* Clear the sync bits of one argument; what they would have synced is not
 * known here, so --sync-on-exit syncs everything. */
static int strip(long *arg, long bits)
{
	if (*arg & bits) {
		*arg &= ~bits;
		emd_note_all();
	}
	return 0;
}

/* Rewrite the arguments of a durability request in place; returns 1 when the
 * call is answered here, with its result in *res. */
static int eat(long nr, long *a, long *res)
{
	switch (nr) {
	case SYS_fsync:
	case SYS_fdatasync:
		*res = emd_check_fd((int)a[0], -EINVAL);
		break;
	case SYS_syncfs:
		*res = emd_check_fd((int)a[0], 0);
		break;
	case SYS_sync:
		emd_note_all();
		*res = 0;
		return 1;
#ifdef EMD_SFR_FLAGS_ARG
	case SYS_sync_file_range:
		return strip(&a[EMD_SFR_FLAGS_ARG], EMD_SFR_VALID);
#endif
#ifdef SYS_sync_file_range2
	case SYS_sync_file_range2:
		return strip(&a[1], EMD_SFR_VALID);
#endif
	case SYS_msync:
		if (a[2] != emd_msync_flags(a[2]))
			emd_note_all();
		a[2] = emd_msync_flags(a[2]);
		return 0;
	default:
		return 0;
	}
	if (*res == 0)
		emd_note_fd((int)a[0]);
	return 1;
}

/* The kind of durability request a system call is, for the record, or -1;
 * *fd is the descriptor it names, *addr the mapping. */
static int request_kind(long nr, const long *a, int *fd, const void **addr)
{
	*fd = (int)a[0];
	*addr = NULL;
	switch (nr) {
	case SYS_fsync:
		return EMD_K_FSYNC;
	case SYS_fdatasync:
		return EMD_K_FDATASYNC;
	case SYS_syncfs:
		return EMD_K_SYNCFS;
	case SYS_sync:
		*fd = -1;
		return EMD_K_SYNC;
#ifdef EMD_SFR_FLAGS_ARG
	case SYS_sync_file_range:
		return a[EMD_SFR_FLAGS_ARG] & EMD_SFR_VALID ? EMD_K_SYNC_FILE_RANGE : -1;
#endif
	case SYS_msync:
		*fd = -1;
		*addr = (const void *)a[0];
		return a[2] & MS_SYNC ? EMD_K_MSYNC : -1;
	case SYS_write:
	case SYS_writev:
	case SYS_pwrite64:
	case SYS_pwritev:
	case SYS_pwritev2: /* without sync flags: those were routed */
		return emd_write_kind(*fd);
	default:
		return -1;
	}
}

static long call(long nr, long *a)
{
	long res;

	if (emd_eating() && eat(nr, a, &res)) {
		if (res < 0) {
			errno = -res;
			return -1;
		}
		return res;
	}
	return real_syscall(nr, a);
}

EMD_EXPORT long syscall(long nr, ...)
{
	struct emd_rec rec;
	long a[6], res;
	va_list ap;
	const void *addr;
	int kind, fd;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (route(nr, a, EMD_CALLER, &res))
		return res;
	if (EMD_LIKELY(!(emd_mode_now() & EMD_RECORD)) ||
	    (kind = request_kind(nr, a, &fd, &addr)) < 0)
		return call(nr, a);
	emd_rec_begin(&rec, kind, fd, addr, EMD_CALLER);
	return emd_rec_end(&rec, call(nr, a));
}
