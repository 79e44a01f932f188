/* SPDX-License-Identifier: MIT */
/* sync.c -- the durability calls, each a crash point; truncate() by name;
 * and shared writable mappings, whose writes the library cannot follow: the
 * file is held (image.c) from mmap to munmap, imaged at each durability call.
 *
 * fsync and fdatasync are treated alike (POSIX: fdatasync keeps what is
 * needed to read the data back, the size included).  A call that fails makes
 * nothing durable but is still a crash point.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A durability call begins: what any thread or process writes from here on
 * may or may not be in it.  Saved regions are saved anew after it, and the
 * call's record says where in the journal it began (plus one), so that it
 * covers only what was recorded before. */
static long long begin_sync(void)
{
	if (!ct_active())
		return 0;
	ct_bump();
	return ct_journal_size() + 1;
}

static void note_sync(enum ct_kind kind, const struct stat *st, long long begin)
{
	struct ct_record h = {.kind = kind, .size = begin > 0 ? begin : 0};

	if (st) {
		h.dev = st->st_dev;
		h.ino = st->st_ino;
	}
	ct_record(&h, NULL, 0);
}

static void synced(int r, int fd, const char *call, long long begin)
{
	struct stat st;

	if (!ct_active())
		return;
	if (r == 0 && fstat(fd, &st) == 0) {
		note_sync(CT_SYNC, &st, begin);
		ct_image_synced(&st);
	}
	ct_point(call, fd);
}

PL_EXPORT int fsync(int fd)
{
	long long begin = begin_sync();
	int r = REAL(fsync)(fd);

	synced(r, fd, "fsync", begin);
	return r;
}

PL_EXPORT int fdatasync(int fd)
{
	long long begin = begin_sync();
	int r = REAL(fdatasync)(fd);

	synced(r, fd, "fdatasync", begin);
	return r;
}

PL_EXPORT void sync(void)
{
	long long begin = begin_sync();

	REAL(sync)();
	if (ct_active()) {
		note_sync(CT_SYNC_ALL, NULL, begin);
		ct_image_all();
		ct_point("sync", -1);
	}
}

/* syncfs makes the copy durable only when fd is on the copy's file system:
 * taking another one's for it would keep what was never synced. */
PL_EXPORT int syncfs(int fd)
{
	long long begin = begin_sync();
	int r = REAL(syncfs)(fd);

	if (ct_active()) {
		if (r == 0 && ct_on_copy_fs(fd)) {
			note_sync(CT_SYNC_ALL, NULL, begin);
			ct_image_all();
		}
		ct_point("syncfs", fd);
	}
	return r;
}

/* A crash point; what it made durable is imaged, that range only. */
PL_EXPORT int msync(void *addr, size_t len, int flags)
{
	int r = REAL(msync)(addr, len, flags);

	if (ct_active() && (flags & MS_SYNC)) {
		if (r == 0)
			ct_image_range(addr, len);
		ct_point("msync", -1);
	}
	return r;
}

/* truncate() by name: through a descriptor of our own, so that the bytes
 * it drops are saved like ftruncate's. */
static int before_truncate(const char *path, long long len, struct stat *st)
{
	int fd, t = 0, saved = errno;

	if (!ct_active())
		return 0;
	fd = (int)ct_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		ct_lock();
		t = ct_save_truncate(fd, len, st);
		ct_unlock();
		close(fd);
	}
	errno = saved; /* a file we could not read may still be truncated */
	return t;
}

static int after_truncate(int t, int r, const char *path, long long len,
			  const struct stat *st)
{
	if (t && r == 0) {
		ct_truncated(st, len);
		ct_step("truncate", -1, path);
	}
	return r;
}

PL_EXPORT int truncate(const char *path, off_t len)
{
	struct stat st;
	int t = before_truncate(path, len, &st);

	return after_truncate(t, REAL(truncate)(path, len), path, len, &st);
}

PL_EXPORT int truncate64(const char *path, off64_t len)
{
	struct stat st;
	int t = before_truncate(path, len, &st);

	return after_truncate(t, REAL(truncate64)(path, len), path, len, &st);
}

/* Not a durability call, but ext4 makes what it waited for durable at the
 * next journal commit (the ext4-ordered model). */
PL_EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags)
{
	unsigned int wait = SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	int r = REAL(sync_file_range)(fd, off, n, flags);

	if (r == 0 && (flags & wait) == wait && off == 0 && n == 0 && ct_active())
		ct_writeout(fd);
	return r;
}

static void *mapped(void *p, size_t len, int prot, int flags, int fd, long long off)
{
	if (p != MAP_FAILED && (prot & PROT_WRITE) && (flags & MAP_SHARED) && fd >= 0)
		ct_image_hold(fd, p, len, off);
	return p;
}

PL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mapped(REAL(mmap)(addr, len, prot, flags, fd, off), len, prot, flags, fd, off);
}

PL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return mapped(REAL(mmap64)(addr, len, prot, flags, fd, off), len, prot, flags, fd, off);
}

PL_EXPORT int munmap(void *addr, size_t len)
{
	int r = REAL(munmap)(addr, len);

	if (r == 0)
		ct_image_free_range(addr, len);
	return r;
}
