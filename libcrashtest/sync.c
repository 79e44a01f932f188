/* SPDX-License-Identifier: MIT */
/* sync.c -- the durability calls, each a crash point; sync_file_range's
 * writeout; and shared writable mappings, whose writes the library cannot
 * follow: the file is held (image.c) from mmap to munmap.
 *
 * A durability call's record says where in the journal it began: it covers
 * what was recorded before, not what another thread wrote meanwhile.  The
 * images it takes of held files come before its record.  A call that fails
 * makes nothing durable but is still a crash point.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A durability call begins: claims before it, and where the journal is. */
static uint64_t begin_sync(void)
{
	if (!ct_active())
		return 0;
	ct_claims();
	return ct_journal_size() + 1;
}

static void note_sync(enum ct_kind kind, const struct stat *st, uint64_t begin, int flags)
{
	struct ct_record h = {.kind = (uint16_t)kind, .flags = (uint16_t)flags, .begin = begin};

	if (st) {
		h.dev = st->st_dev;
		h.ino = st->st_ino;
	}
	ct_record(&h, NULL, 0);
}

/* The pages a durability call pictured are written while it runs: a crash
 * point where any part of them is on the disk. */
static void during(int pictured, const struct stat *st, int flags)
{
	if (pictured)
		note_sync(CT_DURING, st, 0, flags);
}

/* After fsync or fdatasync of fd returned r. */
static void synced(int r, int fd, int flags, uint64_t begin)
{
	struct stat st;
	int saved = errno;

	if (!begin)
		return;
	if (fstat(fd, &st) != 0)
		st = (struct stat){0};
	ct_lock();
	if (r == 0)
		during(ct_image_synced(&st), &st, 0);
	note_sync(CT_SYNC, &st, begin, flags | (r ? CT_F_FAILED : 0));
	ct_unlock();
	errno = saved;
}

PL_EXPORT int fsync(int fd)
{
	uint64_t begin = begin_sync();
	int r = REAL(fsync)(fd);

	synced(r, fd, 0, begin);
	return r;
}

PL_EXPORT int fdatasync(int fd)
{
	uint64_t begin = begin_sync();
	int r = REAL(fdatasync)(fd);

	synced(r, fd, CT_F_DATA, begin);
	return r;
}

/* sync, or syncfs (fd >= 0), which makes the copy durable only when fd is
 * on the copy's file system. */
static void synced_all(int r, int fd, uint64_t begin)
{
	int saved = errno, outside = fd >= 0 && !ct_on_copy_fs(fd);

	if (!begin)
		return;
	ct_lock();
	if (r == 0 && !outside)
		during(ct_image_synced(NULL), NULL, 0);
	note_sync(CT_SYNC_ALL, NULL, begin, (r ? CT_F_FAILED : 0) | (outside ? CT_F_OUTSIDE : 0));
	ct_unlock();
	errno = saved;
}

PL_EXPORT void sync(void)
{
	uint64_t begin = begin_sync();

	REAL(sync)();
	synced_all(0, -1, begin);
}

PL_EXPORT int syncfs(int fd)
{
	uint64_t begin = begin_sync();
	int r = REAL(syncfs)(fd);

	synced_all(r, fd, begin);
	return r;
}

/* A crash point; what it made durable is imaged, that range only. */
PL_EXPORT int msync(void *addr, size_t len, int flags)
{
	uint64_t begin = flags & MS_SYNC ? begin_sync() : 0;
	int r = REAL(msync)(addr, len, flags), saved = errno;

	if (begin) {
		ct_lock();
		if (r == 0)
			during(ct_image_range(addr, len), NULL, CT_F_RANGE);
		note_sync(CT_SYNC, NULL, begin, CT_F_RANGE | (r ? CT_F_FAILED : 0));
		ct_unlock();
	}
	errno = saved;
	return r;
}

/* Not a durability call, but a file system with a journal makes what it
 * waited for durable at its next commit (crashtest/durable.c). */
PL_EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags)
{
	unsigned int wait = SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	int r = REAL(sync_file_range)(fd, off, n, flags), saved = errno;
	struct stat st;

	if (r == 0 && (flags & wait) == wait && ct_where_fd(fd, &st) == CT_FILE) {
		struct ct_record h = {.kind = CT_WRITEOUT, .dev = st.st_dev, .ino = st.st_ino,
				      .off = off, .size = n};

		ct_record(&h, NULL, 0);
	}
	errno = saved;
	return r;
}

static void *mapped(void *p, size_t len, int prot, int flags, int fd, long long off)
{
	if (p != MAP_FAILED && (prot & PROT_WRITE) && (flags & MAP_SHARED) && fd >= 0)
		ct_image_hold(fd, NULL, p, len, off);
	return p;
}

PL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mapped(REAL(mmap)(addr, len, prot, flags, fd, off), len, prot, flags, fd, off);
}

#ifdef EMD_LFS64
PL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return mapped(REAL(mmap64)(addr, len, prot, flags, fd, off), len, prot, flags, fd, off);
}
#endif

/* The mapping's last picture is taken while it is still there. */
PL_EXPORT int munmap(void *addr, size_t len)
{
	ct_image_free_range(addr, len);
	return REAL(munmap)(addr, len);
}
