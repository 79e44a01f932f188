/* SPDX-License-Identifier: MIT */
/* write.c -- pwritev2 with RWF_SYNC or RWF_DSYNC: the write happens, the
 * sync does not.
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

EMD_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt,
			    off_t offset, int flags)
{
	struct emd_rec rec;

	if (EMD_LIKELY(!(flags & EMD_RWF_SYNC_FLAGS)))
		return EMD_REAL(pwritev2)(fd, iov, iovcnt, offset, flags);
	emd_rec_begin(&rec, EMD_K_PWRITEV2_SYNC, fd, NULL, EMD_CALLER);
	if (!emd_eating())
		return emd_rec_end(&rec, EMD_REAL(pwritev2)(fd, iov, iovcnt,
							    offset, flags));
	return emd_rec_end(&rec, emd_done(fd, EMD_REAL(pwritev2)(
						      fd, iov, iovcnt, offset,
						      emd_rwf_flags(fd, flags))));
}

#ifdef EMD_LFS_ALIASES
EMD_EXPORT ssize_t pwritev64v2(int, const struct iovec *, int, off64_t, int)
	__attribute__((alias("pwritev2")));
#else
EMD_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int iovcnt,
			       off64_t offset, int flags)
{
	struct emd_rec rec;

	if (EMD_LIKELY(!(flags & EMD_RWF_SYNC_FLAGS)))
		return EMD_REAL(pwritev64v2)(fd, iov, iovcnt, offset, flags);
	emd_rec_begin(&rec, EMD_K_PWRITEV2_SYNC, fd, NULL, EMD_CALLER);
	if (!emd_eating())
		return emd_rec_end(&rec, EMD_REAL(pwritev64v2)(fd, iov, iovcnt,
							       offset, flags));
	return emd_rec_end(&rec, emd_done(fd, EMD_REAL(pwritev64v2)(
						      fd, iov, iovcnt, offset,
						      emd_rwf_flags(fd, flags))));
}
#endif
