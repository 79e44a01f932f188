/* SPDX-License-Identifier: MIT */
/* write.c -- pwritev2 with RWF_SYNC or RWF_DSYNC: the write happens, the
 * sync does not.  One body for libc's pwritev2, its 32-bit pwritev64v2 and
 * syscall(SYS_pwritev2); they differ only in how the real call is made.
 */
#include "emd.h"

/* The flags only sync files that fsync would act on; on the rest (pipes,
 * sockets, eventfd...) the kernel's answer depends on them, so keep them. */
int emd_rwf_flags(int fd, int flags)
{
	if (!(flags & EMD_RWF_SYNC_FLAGS) || emd_check_fd(fd, -ESPIPE) != 0)
		return flags;
	return flags & ~EMD_RWF_SYNC_FLAGS;
}

long emd_pwritev2(long *a, emd_pwritev2_fn *real, const void *site)
{
	int fd = (int)a[0], flags = (int)a[EMD_PWRITEV2_FLAGS_ARG];
	struct emd_rec rec;

	emd_rec_begin(&rec, flags & RWF_SYNC ? EMD_K_PWRITEV2_SYNC : EMD_K_PWRITEV2_DSYNC,
		      fd, NULL, site);
	if (!emd_eating())
		return emd_rec_end(&rec, real(a));
	a[EMD_PWRITEV2_FLAGS_ARG] = emd_rwf_flags(fd, flags);
	return emd_rec_end(&rec, emd_done(fd, real(a)));
}

/* Without sync flags, a write to a descriptor opened O_SYNC still syncs. */
static long plain(const long *a, emd_pwritev2_fn *real, const void *site)
{
	struct emd_rec rec;
	int kind = emd_write_kind((int)a[0]);

	if (EMD_LIKELY(kind < 0))
		return real(a);
	emd_rec_begin(&rec, kind, (int)a[0], NULL, site);
	return emd_rec_end(&rec, real(a));
}

static long call_pwritev2(const long *a)
{
	return EMD_REAL(pwritev2)((int)a[0], (const struct iovec *)a[1],
				  (int)a[2], (off_t)a[3], (int)a[5]);
}

EMD_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt,
			    off_t offset, int flags)
{
	long a[6] = {fd, (long)iov, iovcnt, (long)offset, 0, flags};

	if (EMD_LIKELY(!(flags & EMD_RWF_SYNC_FLAGS)))
		return plain(a, call_pwritev2, EMD_CALLER);
	return emd_pwritev2(a, call_pwritev2, EMD_CALLER);
}

#ifdef EMD_LFS_ALIASES
EMD_EXPORT ssize_t pwritev64v2(int, const struct iovec *, int, off64_t, int)
	__attribute__((alias("pwritev2")));
#else
/* A 64-bit offset in two longs, low half first, as the system call takes it. */
static long call_pwritev64v2(const long *a)
{
	off64_t offset = (off64_t)(unsigned long)a[3] | (off64_t)a[4] << 32;

	return EMD_REAL(pwritev64v2)((int)a[0], (const struct iovec *)a[1],
				     (int)a[2], offset, (int)a[5]);
}

EMD_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int iovcnt,
			       off64_t offset, int flags)
{
	long a[6] = {fd, (long)iov, iovcnt, (long)offset, (long)(offset >> 32),
		     flags};

	if (EMD_LIKELY(!(flags & EMD_RWF_SYNC_FLAGS)))
		return plain(a, call_pwritev64v2, EMD_CALLER);
	return emd_pwritev2(a, call_pwritev64v2, EMD_CALLER);
}
#endif
