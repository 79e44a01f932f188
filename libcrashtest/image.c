/* SPDX-License-Identifier: MIT */
/* image.c -- files the library loses sight of (written through stdio, whose
 * glibc-internal writes pass the preload, or through a shared writable
 * mapping), and their images.
 *
 * When a file is first held so, its whole contents go to the journal as undo
 * (CT_DATA), as for an O_TRUNC open; then each durability call that covers it
 * appends its bytes as they are (CT_IMAGE, redo), read back through a private
 * descriptor: the page cache holds what stdio flushed and what the mapping
 * wrote.  The rollback undoes, then replays the images of the last sync.
 * Records CT_IMAGE_HELD and CT_IMAGE_FREED tell it which process held a file
 * when: a sync by a process that could not image the file is unknown.
 *
 * The table is per process, small, and guarded by ct_lock; a child of fork
 * inherits it, and says so.  A held file is reached again by its FILE's
 * descriptor or by its path, and only if it is still the same inode.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HELD 64
static struct held {
	int used;
	uint64_t dev, ino;
	int fd;                /* the FILE's descriptor, or -1 for a mapping */
	uintptr_t start, end;  /* the mapping, of the file's bytes from off */
	long long off;
	char path[PATH_MAX];
} held[HELD];
static int nheld; /* so that munmap and fclose cost nothing when none is held */

static struct held *find_held(uint64_t dev, uint64_t ino)
{
	for (int i = 0; i < HELD; i++)
		if (held[i].used && held[i].dev == dev && held[i].ino == ino)
			return &held[i];
	return NULL;
}

static void mark(const struct held *e, int64_t what)
{
	struct ct_record h = {.kind = CT_IMAGE, .dev = e->dev, .ino = e->ino, .size = what};

	ct_record(&h, NULL, 0);
}

/* A private read-only descriptor on e's file, or -1. */
static int reach(const struct held *e)
{
	char link[64];
	struct stat st;
	int fd = -1;

	if (e->fd >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", e->fd);
		fd = (int)ct_sys(SYS_openat, AT_FDCWD, link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != e->dev || st.st_ino != e->ino) {
		if (fd >= 0)
			close(fd);
		fd = (int)ct_sys(SYS_openat, AT_FDCWD, e->path,
				  O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	}
	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != e->dev || st.st_ino != e->ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Bytes [off, off + n) of file fd, in records like h of at most CT_CHUNK.
 * Called under ct_lock: one buffer serves every thread, and no thread's
 * stack pays for it in static TLS. */
static void record_bytes(int fd, struct ct_record *h, const struct stat *st, long long off,
			 long long n)
{
	static char buf[CT_CHUNK];

	do {
		size_t want = n > CT_CHUNK ? CT_CHUNK : n > 0 ? (size_t)n : 0;
		ssize_t got = want ? pread64(fd, buf, want, off) : 0;

		if (got < 0 || (size_t)got != want) {
			ct_note(CT_UNKNOWN, st, "a file changed past the library shrank as it was read");
			return;
		}
		h->off = off;
		ct_record(h, buf, want);
		off += got;
		n -= got;
	} while (n > 0);
}

/* Bytes [off, off + n) of e's file as they are now (no further than its
 * end); the whole file, its size with it, when whole. */
static void image(const struct held *e, long long off, long long n, int whole)
{
	struct ct_record h = {.kind = CT_IMAGE, .dev = e->dev, .ino = e->ino,
			      .size = CT_IMAGE_RANGE};
	int fd = reach(e);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0) {
		ct_note(CT_UNKNOWN, NULL, "a file changed past the library cannot be read back");
		if (fd >= 0)
			close(fd);
		return;
	}
	if (whole) {
		off = 0;
		n = h.size = st.st_size;
	} else if (off + n > st.st_size) {
		n = st.st_size > off ? st.st_size - off : 0;
	}
	record_bytes(fd, &h, &st, off, n);
	close(fd);
}

/* A free slot for (dev, ino); the first for this file saves its contents. */
static struct held *slot(int fd, const struct stat *st)
{
	struct held *e = NULL;
	int first = !find_held(st->st_dev, st->st_ino);

	for (int i = 0; i < HELD && !e; i++)
		if (!held[i].used)
			e = &held[i];
	if (!e) {
		ct_note(CT_UNKNOWN, st, "too many files changed past the library");
		return NULL;
	}
	*e = (struct held){1, st->st_dev, st->st_ino, -1, 0, 0, 0, ""};
	__atomic_add_fetch(&nheld, 1, __ATOMIC_RELAXED);
	if (first) {
		ct_save_whole(fd);
		mark(e, CT_IMAGE_HELD);
	}
	return e;
}

/* A child of fork holds what its parent held, under its own pid. */
static void forked(void)
{
	for (int i = 0; i < HELD; i++)
		if (held[i].used && find_held(held[i].dev, held[i].ino) == &held[i])
			mark(&held[i], CT_IMAGE_HELD);
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forked);
}

void ct_image_hold(int fd, void *addr, size_t len, long long off)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	struct stat st;
	char path[PATH_MAX];
	struct held *e;
	int saved = errno;

	if (!ct_active() || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    ct_fd_path(fd, path, sizeof(path)) != 0 || !ct_in_root(path))
		return;
	pthread_once(&once, watch_forks);
	ct_lock();
	if ((e = slot(fd, &st))) {
		strcpy(e->path, path);
		e->fd = addr ? -1 : fd;
		e->start = (uintptr_t)addr;
		e->end = addr ? (uintptr_t)addr + len : 0;
		e->off = off;
	}
	ct_unlock();
	errno = saved;
}

/* Drop entry e; the journal hears when no entry holds its file any more. */
static void drop(struct held *e)
{
	e->used = 0;
	__atomic_sub_fetch(&nheld, 1, __ATOMIC_RELAXED);
	if (!find_held(e->dev, e->ino))
		mark(e, CT_IMAGE_FREED);
}

void ct_image_free_fd(int fd)
{
	int saved = errno;

	if (!__atomic_load_n(&nheld, __ATOMIC_RELAXED) || !ct_active())
		return;
	ct_lock();
	for (int i = 0; i < HELD; i++)
		if (held[i].used && held[i].fd == fd && fd >= 0)
			drop(&held[i]);
	ct_unlock();
	errno = saved;
}

void ct_image_free_range(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = a + len;
	int saved = errno;

	if (!__atomic_load_n(&nheld, __ATOMIC_RELAXED) || !ct_active())
		return;
	ct_lock();
	for (int i = 0; i < HELD; i++)
		if (held[i].used && held[i].fd < 0 && held[i].start >= a && held[i].end <= b)
			drop(&held[i]);
	ct_unlock();
	errno = saved;
}

/* Standard output or error may be a file of the copy that the shell opened
 * and the program writes through stdio: held from the first durability call
 * that covers it (st, or all with st NULL), so that what it writes after is
 * imaged, not taken for durable. */
static void hold_std(const struct stat *st)
{
	struct stat now;

	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
		if (fstat(fd, &now) == 0 && S_ISREG(now.st_mode) &&
		    (!st || (now.st_dev == st->st_dev && now.st_ino == st->st_ino)) &&
		    !find_held(now.st_dev, now.st_ino) && (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY)
			ct_image_hold(fd, NULL, 0, 0);
}

void ct_image_synced(const struct stat *st)
{
	struct held *e;
	int saved = errno;

	ct_lock();
	hold_std(st);
	if ((e = find_held(st->st_dev, st->st_ino)))
		image(e, 0, 0, 1);
	ct_unlock();
	errno = saved;
}

void ct_image_all(void)
{
	int saved = errno;

	ct_lock();
	hold_std(NULL);
	for (int i = 0; i < HELD; i++)
		if (held[i].used && find_held(held[i].dev, held[i].ino) == &held[i])
			image(&held[i], 0, 0, 1);
	ct_unlock();
	errno = saved;
}

/* msync: only the bytes of the range, wherever a mapping held covers it. */
void ct_image_range(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = a + len;
	int saved = errno;

	ct_lock();
	for (int i = 0; i < HELD; i++) {
		const struct held *e = &held[i];
		uintptr_t lo = e->start > a ? e->start : a, hi = e->end < b ? e->end : b;

		if (e->used && e->fd < 0 && lo < hi)
			image(e, e->off + (long long)(lo - e->start), (long long)(hi - lo), 0);
	}
	ct_unlock();
	errno = saved;
}
