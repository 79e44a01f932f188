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

/* The bodies of pwrite and pwrite64, pwritev and pwritev64: the one name's
 * offset is the other's, or (32-bit off_t) widens to it. */
static ssize_t pwrite_at(int fd, const void *buf, size_t n, off64_t off,
			 const void *site)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(pwrite64)(fd, buf, n, off);
	emd_rec_start(&rec, kind, fd, NULL, site);
	return emd_rec_finish(&rec, EMD_REAL(pwrite64)(fd, buf, n, off));
}

static ssize_t pwritev_at(int fd, const struct iovec *iov, int cnt,
			  off64_t off, const void *site)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(pwritev64)(fd, iov, cnt, off);
	emd_rec_start(&rec, kind, fd, NULL, site);
	return emd_rec_finish(&rec, EMD_REAL(pwritev64)(fd, iov, cnt, off));
}

EMD_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	return pwrite_at(fd, buf, n, off, EMD_CALLER);
}

EMD_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite_at(fd, buf, n, off, EMD_CALLER);
}

EMD_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt,
			     off64_t off)
{
	return pwritev_at(fd, iov, cnt, off, EMD_CALLER);
}

EMD_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return pwritev_at(fd, iov, cnt, off, EMD_CALLER);
}
