/* SPDX-License-Identifier: MIT */
/* syscall.c -- libc's syscall(): a program that asks the kernel by number
 * for a write, a durability call or a change of names is journaled like one
 * that calls the function, by calling the library's wrapper of it.  The
 * calls routed are the tables of include/crashtest_routes.h; what is not
 * routed reaches the kernel unseen, and crashtest finds the copy changed
 * past the library (unknown).
 */
#include "ct.h"
#include "crashtest_routes.h"
#include "requests.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define A(i, type) ((type)a[i])

typedef long route_fn(const long *a);

/* The requests of include/requests.h. */
static long route_fsync(const long *a) { return fsync(A(0, int)); }
static long route_fdatasync(const long *a) { return fdatasync(A(0, int)); }
static long route_syncfs(const long *a) { return syncfs(A(0, int)); }
static long route_sync(const long *a) { (void)a; sync(); return 0; }
static long route_msync(const long *a) { return msync(A(0, void *), A(1, size_t), A(2, int)); }
static long route_sync_file_range(const long *a)
{
	return sync_file_range(A(0, int), a[1], a[2], A(3, unsigned));
}
static long route_open(const long *a) { return open(A(0, const char *), A(1, int), A(2, mode_t)); }
static long route_openat(const long *a)
{
	return openat(A(0, int), A(1, const char *), A(2, int), A(3, mode_t));
}
/* openat2 as openat when it asks nothing openat cannot do. */
static long route_openat2(const long *a)
{
	const struct open_how *how = A(2, const struct open_how *);

	if (!how || A(3, size_t) < sizeof(*how) || how->resolve || how->flags > 0xffffffffULL)
		return REAL(syscall)(SYS_openat2, a[0], a[1], a[2], a[3]);
	return openat(A(0, int), A(1, const char *), (int)how->flags, (mode_t)how->mode);
}
static long route_pwritev2(const long *a)
{
	return pwritev2(A(0, int), A(1, const struct iovec *), A(2, int), a[3], A(5, int));
}
static long route_write(const long *a) { return write(A(0, int), A(1, const void *), A(2, size_t)); }
static long route_writev(const long *a)
{
	return writev(A(0, int), A(1, const struct iovec *), A(2, int));
}
static long route_pwrite64(const long *a)
{
	return pwrite(A(0, int), A(1, const void *), A(2, size_t), a[3]);
}
static long route_pwritev(const long *a)
{
	return pwritev(A(0, int), A(1, const struct iovec *), A(2, int), a[3]);
}

#define CT_ROUTE_fsync route_fsync
#define CT_ROUTE_fdatasync route_fdatasync
#define CT_ROUTE_syncfs route_syncfs
#define CT_ROUTE_sync route_sync
#define CT_ROUTE_msync route_msync
/* A 32-bit ABI passes 64-bit offsets in two registers each: those calls
 * reach the kernel unseen there. */
#define CT_ROUTE_sync_file_range (EMD_OFFSET64_ONE_REG ? route_sync_file_range : NULL)
#define CT_ROUTE_open route_open
#define CT_ROUTE_openat route_openat
#define CT_ROUTE_openat2 route_openat2
#define CT_ROUTE_open_by_handle_at NULL /* opens no name, truncates unseen */
#define CT_ROUTE_pwritev2 (EMD_OFFSET64_ONE_REG ? route_pwritev2 : NULL)
#define CT_ROUTE_io_uring_enter NULL /* the ring's writes are unseen */
#define CT_ROUTE_io_uring_setup NULL
#define CT_ROUTE_io_submit NULL
#define CT_ROUTE_write route_write
#define CT_ROUTE_writev route_writev
#define CT_ROUTE_pwrite64 (EMD_OFFSET64_ONE_REG ? route_pwrite64 : NULL)
#define CT_ROUTE_pwritev (EMD_OFFSET64_ONE_REG ? route_pwritev : NULL)

/* The changes of include/crashtest_routes.h. */
static long route_copy_file_range(const long *a)
{
	return copy_file_range(A(0, int), A(1, off64_t *), A(2, int), A(3, off64_t *),
			       A(4, size_t), A(5, unsigned));
}
static long route_sendfile(const long *a)
{
	return sendfile(A(0, int), A(1, int), A(2, off_t *), A(3, size_t));
}
static long route_ftruncate(const long *a) { return ftruncate(A(0, int), A(1, off_t)); }
static long route_truncate(const long *a) { return truncate(A(0, const char *), A(1, off_t)); }
static long route_fallocate(const long *a)
{
	return fallocate(A(0, int), A(1, int), a[2], a[3]);
}
static long route_creat(const long *a) { return creat(A(0, const char *), A(1, mode_t)); }
static long route_rename(const long *a) { return rename(A(0, const char *), A(1, const char *)); }
static long route_renameat(const long *a)
{
	return renameat(A(0, int), A(1, const char *), A(2, int), A(3, const char *));
}
static long route_renameat2(const long *a)
{
	return renameat2(A(0, int), A(1, const char *), A(2, int), A(3, const char *), A(4, unsigned));
}
static long route_unlink(const long *a) { return unlink(A(0, const char *)); }
static long route_unlinkat(const long *a) { return unlinkat(A(0, int), A(1, const char *), A(2, int)); }
static long route_rmdir(const long *a) { return rmdir(A(0, const char *)); }
static long route_mkdir(const long *a) { return mkdir(A(0, const char *), A(1, mode_t)); }
static long route_mkdirat(const long *a) { return mkdirat(A(0, int), A(1, const char *), A(2, mode_t)); }
static long route_link(const long *a) { return link(A(0, const char *), A(1, const char *)); }
static long route_linkat(const long *a)
{
	return linkat(A(0, int), A(1, const char *), A(2, int), A(3, const char *), A(4, int));
}
static long route_symlink(const long *a) { return symlink(A(0, const char *), A(1, const char *)); }
static long route_symlinkat(const long *a)
{
	return symlinkat(A(0, const char *), A(1, int), A(2, const char *));
}
/* The kernel takes a device number of 32 bits and ignores the rest of the
 * register, where glibc's mknodat refuses one past 32 bits (EINVAL). */
static long route_mknod(const long *a)
{
	return mknod(A(0, const char *), A(1, mode_t), A(2, unsigned));
}
static long route_mknodat(const long *a)
{
	return mknodat(A(0, int), A(1, const char *), A(2, mode_t), A(3, unsigned));
}
static long route_bind(const long *a)
{
	return bind(A(0, int), A(1, const struct sockaddr *), A(2, socklen_t));
}
static long route_sendto(const long *a)
{
	return sendto(A(0, int), A(1, const void *), A(2, size_t), A(3, int),
		      A(4, const struct sockaddr *), A(5, socklen_t));
}
static long route_sendmsg(const long *a)
{
	return sendmsg(A(0, int), A(1, const struct msghdr *), A(2, int));
}
/* Its count's register whole, as the kernel gets it: the supervisor's
 * filter lets the listener's own handoff through by the upper half
 * (shared/filter.c), which sendmmsg's unsigned int would drop. */
static long route_sendmmsg(const long *a)
{
	return ct_claimed(A(0, int), ct_sys(SYS_sendmmsg, a[0], a[1], a[2], a[3]));
}
static long route_vmsplice(const long *a)
{
	return vmsplice(A(0, int), A(1, const struct iovec *), A(2, size_t), A(3, unsigned));
}
static long route_splice(const long *a)
{
	return splice(A(0, int), A(1, loff_t *), A(2, int), A(3, loff_t *), A(4, size_t),
		      A(5, unsigned));
}
static long route_tee(const long *a) { return tee(A(0, int), A(1, int), A(2, size_t), A(3, unsigned)); }

struct route {
	long nr;
	route_fn *fn;
};

#define REQUEST_ROW(name, nr, ...) {(nr), CT_ROUTE_##name},
#define CHANGE_ROW(name, nr) {(nr), route_##name},
static const struct route routes[] = {EMD_REQUESTS(REQUEST_ROW) CT_CHANGES(CHANGE_ROW)};

PL_EXPORT long syscall(long nr, ...)
{
	long a[6];

	PL_SYSCALL_ARGS(a, nr);
	for (size_t i = 0; nr >= 0 && i < sizeof(routes) / sizeof(*routes); i++)
		if (routes[i].nr == nr && routes[i].fn)
			return routes[i].fn(a);
	return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
