/* SPDX-License-Identifier: MIT */
/* osync.c -- writes on descriptors opened with O_SYNC or O_DSYNC, each of
 * which syncs: recorded for syncstat, passed straight through otherwise.
 *
 * Opens mark their descriptor; a write to a marked one checks with
 * F_GETFL that it still is that file (descriptors are closed and reused
 * without this library seeing), so the extra system call is paid only on
 * writes that sync anyway.
 */
#include "emd.h"

#include <limits.h>

#define MARKED_FDS 65536 /* higher descriptors are not followed */

int emd_sync_fds;
static unsigned long marks[MARKED_FDS / (sizeof(unsigned long) * CHAR_BIT)];

#define WORD(fd) marks[(unsigned)(fd) / (sizeof(unsigned long) * CHAR_BIT)]
#define BIT(fd) (1UL << ((unsigned)(fd) % (sizeof(unsigned long) * CHAR_BIT)))

void emd_mark_sync_fd(int fd)
{
	if (fd >= MARKED_FDS)
		return;
	__atomic_fetch_or(&WORD(fd), BIT(fd), __ATOMIC_RELAXED);
	__atomic_store_n(&emd_sync_fds, 1, __ATOMIC_RELAXED);
}

/* How fd's writes sync, if it is (still) a descriptor whose writes do:
 * EMD_K_WRITE_SYNC or EMD_K_WRITE_DSYNC, else -1. */
int emd_sync_kind(int fd)
{
	int saved = errno;
	long flags;

	if (fd < 0 || fd >= MARKED_FDS || !(WORD(fd) & BIT(fd)))
		return -1;
	flags = emd_syscall(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
	errno = saved;
	if (flags >= 0 && (flags & EMD_OPEN_SYNC_FLAGS))
		return (flags & O_SYNC) == O_SYNC ? EMD_K_WRITE_SYNC : EMD_K_WRITE_DSYNC;
	__atomic_fetch_and(&WORD(fd), ~BIT(fd), __ATOMIC_RELAXED);
	return -1;
}

EMD_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(write)(fd, buf, n);
	emd_rec_start(&rec, kind, fd, NULL, EMD_CALLER);
	return emd_rec_finish(&rec, EMD_REAL(write)(fd, buf, n));
}

EMD_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(writev)(fd, iov, cnt);
	emd_rec_start(&rec, kind, fd, NULL, EMD_CALLER);
	return emd_rec_finish(&rec, EMD_REAL(writev)(fd, iov, cnt));
}

EMD_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(pwrite64)(fd, buf, n, off);
	emd_rec_start(&rec, kind, fd, NULL, EMD_CALLER);
	return emd_rec_finish(&rec, EMD_REAL(pwrite64)(fd, buf, n, off));
}

EMD_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt,
			     off64_t off)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(pwritev64)(fd, iov, cnt, off);
	emd_rec_start(&rec, kind, fd, NULL, EMD_CALLER);
	return emd_rec_finish(&rec, EMD_REAL(pwritev64)(fd, iov, cnt, off));
}

#ifdef EMD_LFS_ALIASES
EMD_EXPORT ssize_t pwrite(int, const void *, size_t, off_t)
	__attribute__((alias("pwrite64")));
EMD_EXPORT ssize_t pwritev(int, const struct iovec *, int, off_t)
	__attribute__((alias("pwritev64")));
#else
/* A 32-bit off_t widens to the 64-bit call. */
EMD_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite64(fd, buf, n, off);
}

EMD_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return pwritev64(fd, iov, cnt, off);
}
#endif
