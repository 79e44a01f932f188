/* SPDX-License-Identifier: MIT */
/* syscall.c -- libc's syscall(): a program that asks the kernel by number
 * for a write, a durability call or a directory operation is journaled like
 * one that calls the function of that name, by calling it.  What is not
 * routed reaches the kernel unseen, and the rollback finds the file changed
 * past the library (unknown).  Calls whose 64-bit offsets come in two
 * registers on a 32-bit ABI are routed on 64-bit ABIs only; names that an
 * architecture lacks (SYS_open, SYS_rename...) are routed where it has them.
 */
#include "ct.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define A(i, type) ((type)a[i])

/* Writes at the file offset; 1 if nr is one, its result in *r. */
static int route_write(long nr, const long *a, long *r)
{
	switch (nr) {
	case SYS_write:
		*r = write(A(0, int), A(1, const void *), A(2, size_t));
		break;
	case SYS_writev:
		*r = writev(A(0, int), A(1, const struct iovec *), A(2, int));
		break;
	case SYS_copy_file_range:
		*r = copy_file_range(A(0, int), A(1, off64_t *), A(2, int), A(3, off64_t *),
				     A(4, size_t), A(5, unsigned));
		break;
	case SYS_sendfile:
		*r = sendfile(A(0, int), A(1, int), A(2, off_t *), A(3, size_t));
		break;
	default:
		return 0;
	}
	return 1;
}

/* Writes and truncations given a 64-bit offset in one register. */
static int route_at_offset(long nr, const long *a, long *r)
{
	(void)a, (void)r; /* none on a 32-bit ABI */
	switch (nr) {
#if __SIZEOF_LONG__ == 8
	case SYS_pwrite64:
		*r = pwrite(A(0, int), A(1, const void *), A(2, size_t), a[3]);
		break;
	case SYS_pwritev:
		*r = pwritev(A(0, int), A(1, const struct iovec *), A(2, int), a[3]);
		break;
	case SYS_pwritev2:
		*r = pwritev2(A(0, int), A(1, const struct iovec *), A(2, int), a[3], A(5, int));
		break;
	case SYS_ftruncate:
		*r = ftruncate(A(0, int), a[1]);
		break;
	case SYS_truncate:
		*r = truncate(A(0, const char *), a[1]);
		break;
	case SYS_fallocate:
		*r = fallocate(A(0, int), A(1, int), a[2], a[3]);
		break;
	case SYS_sync_file_range:
		*r = sync_file_range(A(0, int), a[1], a[2], A(3, unsigned));
		break;
#endif
	default:
		return 0;
	}
	return 1;
}

/* Durability calls. */
static int route_sync(long nr, const long *a, long *r)
{
	switch (nr) {
	case SYS_fsync:
		*r = fsync(A(0, int));
		break;
	case SYS_fdatasync:
		*r = fdatasync(A(0, int));
		break;
	case SYS_syncfs:
		*r = syncfs(A(0, int));
		break;
	case SYS_sync:
		sync();
		*r = 0;
		break;
	case SYS_msync:
		*r = msync(A(0, void *), A(1, size_t), A(2, int));
		break;
	default:
		return 0;
	}
	return 1;
}

/* Opens and renames, by directory descriptor. */
static int route_at(long nr, const long *a, long *r)
{
	switch (nr) {
	case SYS_openat:
		*r = openat(A(0, int), A(1, const char *), A(2, int), A(3, mode_t));
		break;
	case SYS_renameat:
		*r = renameat(A(0, int), A(1, const char *), A(2, int), A(3, const char *));
		break;
	case SYS_renameat2:
		*r = renameat2(A(0, int), A(1, const char *), A(2, int), A(3, const char *),
			       A(4, unsigned));
		break;
	case SYS_unlinkat:
		*r = unlinkat(A(0, int), A(1, const char *), A(2, int));
		break;
	case SYS_mkdirat:
		*r = mkdirat(A(0, int), A(1, const char *), A(2, mode_t));
		break;
	case SYS_linkat:
		*r = linkat(A(0, int), A(1, const char *), A(2, int), A(3, const char *), A(4, int));
		break;
	case SYS_symlinkat:
		*r = symlinkat(A(0, const char *), A(1, int), A(2, const char *));
		break;
	default:
		return 0;
	}
	return 1;
}

/* The same by path, where the architecture has them. */
static int route_path(long nr, const long *a, long *r)
{
	switch (nr) {
#ifdef SYS_open
	case SYS_open:
		*r = open(A(0, const char *), A(1, int), A(2, mode_t));
		break;
	case SYS_creat:
		*r = creat(A(0, const char *), A(1, mode_t));
		break;
	case SYS_rename:
		*r = rename(A(0, const char *), A(1, const char *));
		break;
	case SYS_unlink:
		*r = unlink(A(0, const char *));
		break;
	case SYS_mkdir:
		*r = mkdir(A(0, const char *), A(1, mode_t));
		break;
	case SYS_rmdir:
		*r = rmdir(A(0, const char *));
		break;
	case SYS_link:
		*r = link(A(0, const char *), A(1, const char *));
		break;
	case SYS_symlink:
		*r = symlink(A(0, const char *), A(1, const char *));
		break;
#endif
	default:
		return 0;
	}
	return 1;
}

PL_EXPORT long syscall(long nr, ...)
{
	long a[6], r;
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (route_write(nr, a, &r) || route_at_offset(nr, a, &r) || route_sync(nr, a, &r) ||
	    route_at(nr, a, &r) || route_path(nr, a, &r))
		return r;
	return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
