/* SPDX-License-Identifier: MIT */
/* write.c -- pwritev2 with RWF_SYNC or RWF_DSYNC: the write happens, the
 * sync does not.  pwritev2, pwritev64v2 and syscall(SYS_pwritev2) all go
 * through emd_pwritev2.
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

long emd_pwritev2(int fd, int flags, long (*call)(void *arg, int flags),
		  void *arg, const void *site)
{
	struct emd_rec rec;

	if (!(flags & EMD_RWF_SYNC_FLAGS)) {
		int kind = emd_write_kind(fd);

		if (EMD_LIKELY(kind < 0))
			return call(arg, flags);
		emd_rec_start(&rec, kind, fd, NULL, site);
		return emd_rec_finish(&rec, call(arg, flags));
	}
	emd_rec_start(&rec, flags & RWF_SYNC ? EMD_K_PWRITEV2_SYNC : EMD_K_PWRITEV2_DSYNC,
		      fd, NULL, site);
	if (!emd_eating())
		return emd_rec_finish(&rec, call(arg, flags));
	return emd_rec_finish(&rec,
			   emd_note_result(fd, call(arg, emd_rwf_flags(fd, flags))));
}

struct pwritev2_args {
	int fd;
	const struct iovec *iov;
	int cnt;
	off64_t offset;
};

/* On a 32-bit ABI pwritev2's off_t widens to pwritev64v2's: -1 (the
 * current position) stays -1. */
static long call_pwritev64v2(void *arg, int flags)
{
	struct pwritev2_args *a = arg;

	return EMD_REAL(pwritev64v2)(a->fd, a->iov, a->cnt, a->offset, flags);
}

/* The body of pwritev2 and pwritev64v2: the one's offset is the other's,
 * or (32-bit off_t) widens to it. */
static ssize_t pwritev2_at(int fd, const struct iovec *iov, int iovcnt,
			   off64_t offset, int flags, const void *site)
{
	struct pwritev2_args a = {fd, iov, iovcnt, offset};

	return emd_pwritev2(fd, flags, call_pwritev64v2, &a, site);
}

EMD_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt,
			    off_t offset, int flags)
{
	return pwritev2_at(fd, iov, iovcnt, offset, flags, EMD_CALLER);
}

#ifdef EMD_LFS64 /* musl's pwritev64v2 is pwritev2 */
EMD_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int iovcnt,
			       off64_t offset, int flags)
{
	return pwritev2_at(fd, iov, iovcnt, offset, flags, EMD_CALLER);
}
#endif
