/* SPDX-License-Identifier: MIT */
/* image.c -- files the library loses sight of (written through stdio, whose
 * glibc-internal writes pass the preload, or through a shared writable
 * mapping), and their images.
 *
 * While a file is held so, each durability call appends an image of it
 * (CT_IMAGE): its bytes as the page cache holds them -- marked durable when
 * the call covers the file, a picture of the cache otherwise -- and so does
 * its release (fclose, munmap).  A stream's file is read through a
 * descriptor of the library's own, opened when the stream is and closed
 * with it: closing one at each image would drop the process's POSIX locks
 * on the file.  A mapping is read from its own memory.
 *
 * The table is per process, small, and guarded by ct_lock; a child of fork
 * inherits it, and says so (CT_HOLD under its own pid).  At exit, before
 * glibc flushes what streams still buffer, the library flushes the streams
 * it holds and takes their last pictures, and its mappings'.
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
	int fd;               /* the stream's descriptor, or -1 for a mapping */
	FILE *stream;         /* NULL once fclose let it go */
	int std;              /* standard output or error, a shell's redirection */
	int wrote;            /* the stream was written through before fclose */
	int rfd;              /* read (stream) or O_PATH (mapping): ours */
	uintptr_t start, end; /* the mapping, of the file's bytes from off */
	long long off;
	uint64_t *hash; /* a mapping's pages as last pictured: only those that
	                 * changed are pictured again, each alone */
	size_t npages;
} held[HELD];
static int nheld; /* so that munmap and fclose cost nothing when none is held */

/* Is fd one of the library's own, reading a held file? */
int ct_image_ours(int fd)
{
	for (int i = 0; nheld && i < HELD; i++)
		if (held[i].used && held[i].rfd == fd)
			return 1;
	return 0;
}

static struct held *find_held(uint64_t dev, uint64_t ino)
{
	for (int i = 0; i < HELD; i++)
		if (held[i].used && held[i].dev == dev && held[i].ino == ino)
			return &held[i];
	return NULL;
}

/* A stream glibc never wrote through has no buffer yet (fclose frees it:
 * what it was is kept from just before). */
static int unused(const struct held *e)
{
	return e->std && !e->wrote && !(e->stream && EMD_STREAM_WROTE(e->stream));
}

static void mark(const struct held *e, enum ct_kind kind)
{
	struct ct_record h = {.kind = (uint16_t)kind, .dev = e->dev, .ino = e->ino,
			      .flags = (e->fd < 0 ? CT_F_MAPPED : 0) |
				       (kind == CT_FREE && unused(e) ? CT_F_UNUSED : 0)};

	ct_record(&h, NULL, 0);
}

/* Bytes [off, off + n) of e's file: from the mapping's memory, or read
 * through rd. */
static ssize_t bytes(const struct held *e, int rd, char *buf, size_t n, long long off)
{
	if (e->fd >= 0)
		return pread64(rd, buf, n, off);
	memcpy(buf, (const char *)e->start + (off - e->off), n);
	return (ssize_t)n;
}

/* An image of [off, off + n) of e's file (a stream's, read through rd), in
 * records of CT_CHUNK bytes; size: the file's size for an image of it
 * whole, else -1. */
static void image(struct held *e, int rd, long long off, long long n, long long size, int flags)
{
	static char buf[CT_CHUNK]; /* under ct_lock */
	struct ct_record h = {.kind = CT_IMAGE, .flags = (uint16_t)flags, .dev = e->dev,
			      .ino = e->ino, .size = size};

	do {
		size_t want = n > CT_CHUNK ? CT_CHUNK : n > 0 ? (size_t)n : 0;
		ssize_t got = want ? bytes(e, rd, buf, want, off) : 0;
		struct iovec v = {buf, want};

		if (got < 0 || (size_t)got != want) {
			ct_note(CT_UNKNOWN, NULL, "a file changed past the library shrank as it was read");
			return;
		}
		h.off = off;
		ct_record(&h, &v, 1);
		off += got;
		n -= got;
	} while (n > 0);
}

#define PAGE 4096
/* Past this, a mapping is pictured whole, not page by page. */
#define DIFFED (256u << 20)

static uint64_t page_hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h | 1; /* never 0: a page not hashed yet */
}

/* The pages of mapping e in [lo, hi) whose bytes changed since its last
 * picture, each pictured alone; how many. */
static int take_pages(struct held *e, int flags, uintptr_t lo, uintptr_t hi, long long size)
{
	int n = 0;

	for (size_t k = (lo - e->start) / PAGE; k < e->npages && e->start + k * PAGE < hi; k++) {
		long long at = e->off + (long long)(k * PAGE);
		size_t valid = size - at >= PAGE ? PAGE : size > at ? (size_t)(size - at) : 0;
		uint64_t h = valid ? page_hash((const char *)e->start + k * PAGE, valid) : 0;

		if (h && h != e->hash[k]) {
			image(e, -1, at, (long long)valid, -1, flags);
			e->hash[k] = h;
			n++;
		}
	}
	return n;
}

/* A descriptor that reads e's file: ours, or, if the program closed it (a
 * child that closes every descriptor before it execs), a new one from the
 * stream's own, closed after (*temp); -1 if neither is the file now. */
static int reader(const struct held *e, struct stat *st, int *temp)
{
	char link[64];

	*temp = -1;
	if (fstat(e->rfd, st) == 0 && st->st_dev == e->dev && st->st_ino == e->ino)
		return e->rfd;
	if (e->fd < 0)
		return -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", e->fd);
	*temp = (int)ct_sys(SYS_openat, AT_FDCWD, link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (*temp >= 0 && fstat(*temp, st) == 0 && st->st_dev == e->dev && st->st_ino == e->ino)
		return *temp;
	return -1;
}

/* e's file as it is now: a stream's whole, a mapping's bytes within the
 * file (the range [lo, hi) of the mapping only, when hi > lo); how many
 * pictures it took.  A durability call pictures a standard stream this
 * process never wrote through too: another may have, and this call makes
 * what the cache holds of it durable. */
static int take(struct held *e, int flags, uintptr_t lo, uintptr_t hi)
{
	struct stat st;
	long long from = e->off, n;
	int temp, rd;

	if (unused(e) && !(flags & CT_F_DURABLE))
		return 0; /* nothing written past the library yet */
	if ((rd = reader(e, &st, &temp)) < 0) {
		ct_note(CT_UNKNOWN, NULL, "a file changed past the library cannot be read back");
		n = 0;
	} else if (e->fd >= 0) {
		image(e, rd, 0, st.st_size, st.st_size, flags);
		n = 1;
	} else if (e->hash) {
		n = take_pages(e, flags, hi > lo ? lo : e->start, hi > lo ? hi : e->end, st.st_size);
	} else {
		if (hi > lo)
			from = e->off + (long long)(lo - e->start);
		n = (long long)((hi > lo ? hi : e->end) - (hi > lo ? lo : e->start));
		if (from + n > st.st_size)
			n = st.st_size > from ? st.st_size - from : 0;
		image(e, -1, from, n, from == 0 && n == st.st_size && hi <= lo ? st.st_size : -1, flags);
		n = 1;
	}
	if (temp >= 0)
		ct_sys(SYS_close, temp);
	return (int)n;
}

/* A mapping's pages hashed as they are when it is first held. */
static void hash_pages(struct held *e)
{
	struct stat st;

	e->npages = (e->end - e->start + PAGE - 1) / PAGE;
	if (e->end - e->start > DIFFED || fstat(e->rfd, &st) != 0 ||
	    !(e->hash = calloc(e->npages, sizeof(*e->hash))))
		return;
	for (size_t k = 0; k < e->npages; k++) {
		long long at = e->off + (long long)(k * PAGE);

		if (at < st.st_size)
			e->hash[k] = page_hash((const char *)e->start + k * PAGE,
					       st.st_size - at >= PAGE ? PAGE : (size_t)(st.st_size - at));
	}
}

/* A free slot for (dev, ino); the first for this file says so. */
static struct held *slot(const struct stat *st)
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
	*e = (struct held){1, st->st_dev, st->st_ino, -1, NULL, 0, 0, -1, 0, 0, 0, NULL, 0};
	__atomic_add_fetch(&nheld, 1, __ATOMIC_RELAXED);
	e->used = first ? 2 : 1; /* 2: say so once filled in */
	return e;
}

/* A child of fork holds what its parent held, under its own pid. */
static void forked(void)
{
	for (int i = 0; i < HELD; i++)
		if (held[i].used && find_held(held[i].dev, held[i].ino) == &held[i])
			mark(&held[i], CT_HOLD);
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forked);
}

void ct_image_hold(int fd, FILE *stream, void *addr, size_t len, long long off)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	char link[64];
	struct stat st;
	struct held *e;
	int saved = errno;

	if (ct_where_fd(fd, &st) != CT_FILE)
		return;
	pthread_once(&once, watch_forks);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ct_lock();
	if ((e = slot(&st))) {
		e->fd = addr ? -1 : fd;
		e->stream = stream;
		e->rfd = (int)ct_sys(SYS_openat, AT_FDCWD, link,
				     (addr ? O_PATH : O_RDONLY) | O_CLOEXEC | O_NONBLOCK);
		e->start = (uintptr_t)addr;
		e->end = addr ? (uintptr_t)addr + len : 0;
		e->off = off;
		if (e->used == 2)
			mark(e, CT_HOLD);
		e->used = 1;
		if (e->rfd < 0)
			ct_note(CT_UNKNOWN, &st, "a file changed past the library cannot be read back");
		else if (addr)
			hash_pages(e);
	}
	ct_unlock();
	errno = saved;
}

/* Let e go: its last picture, then the journal hears when no entry holds
 * its file any more. */
static void drop(struct held *e)
{
	struct stat st;

	if (e->rfd >= 0) {
		take(e, 0, 0, 0);
		/* Not if the program closed it and the number is its own now. */
		if (fstat(e->rfd, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino)
			close(e->rfd);
	}
	free(e->hash);
	e->hash = NULL;
	e->used = 0;
	__atomic_sub_fetch(&nheld, 1, __ATOMIC_RELAXED);
	if (!find_held(e->dev, e->ino))
		mark(e, CT_FREE);
}

/* fclose(f) is about to free its buffer: whether it was written through
 * is kept, and the stream is no longer looked at. */
void ct_image_closing(FILE *f)
{
	int saved = errno;

	if (!__atomic_load_n(&nheld, __ATOMIC_RELAXED) || !f)
		return;
	ct_lock();
	for (int i = 0; i < HELD; i++)
		if (held[i].used && held[i].stream == f) {
			held[i].wrote |= EMD_STREAM_WROTE(f);
			held[i].stream = NULL;
		}
	ct_unlock();
	errno = saved;
}

void ct_image_free_fd(int fd)
{
	int saved = errno;

	if (!__atomic_load_n(&nheld, __ATOMIC_RELAXED) || fd < 0)
		return;
	ct_lock();
	for (int i = 0; i < HELD; i++)
		if (held[i].used && held[i].fd == fd)
			drop(&held[i]);
	ct_unlock();
	errno = saved;
}

/* Before munmap of [addr, addr + len): the mappings inside it. */
void ct_image_free_range(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = a + len;
	int saved = errno;

	if (!__atomic_load_n(&nheld, __ATOMIC_RELAXED))
		return;
	ct_lock();
	for (int i = 0; i < HELD; i++)
		if (held[i].used && held[i].fd < 0 && held[i].start >= a && held[i].end <= b)
			drop(&held[i]);
	ct_unlock();
	errno = saved;
}

/* Standard output or error may be a file of the copy that a shell opened
 * and the program writes through stdio: held from the process's first
 * record, from a dup2 onto it, and at each durability call. */
void ct_hold_std(int fd)
{
	struct stat now;
	struct held *e;

	for (int i = STDOUT_FILENO; i <= STDERR_FILENO; i++)
		if ((fd < 0 || fd == i) && fstat(i, &now) == 0 && S_ISREG(now.st_mode) &&
		    !find_held(now.st_dev, now.st_ino) && (fcntl(i, F_GETFL) & O_ACCMODE) != O_RDONLY) {
			ct_image_hold(i, i == STDOUT_FILENO ? stdout : stderr, NULL, 0, 0);
			ct_lock();
			if ((e = find_held(now.st_dev, now.st_ino)))
				e->std = 1;
			ct_unlock();
		}
}

/* A durability call covering file st (all with st NULL) returned: every
 * file held, once, durable if covered; how many durable pictures. */
int ct_image_synced(const struct stat *st)
{
	int saved = errno, n = 0;

	ct_lock();
	ct_hold_std(-1);
	for (int i = 0; i < HELD; i++) {
		struct held *e = &held[i];
		int covered = !st || (e->dev == st->st_dev && e->ino == st->st_ino);

		if (e->used && e->rfd >= 0 && find_held(e->dev, e->ino) == e)
			n += covered * take(e, covered ? CT_F_DURABLE : 0, 0, 0);
	}
	ct_unlock();
	errno = saved;
	return n;
}

/* msync: only the bytes of the range, wherever a mapping held covers it;
 * how many pictures. */
int ct_image_range(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = a + len;
	int saved = errno, n = 0;

	ct_lock();
	for (int i = 0; i < HELD; i++) {
		struct held *e = &held[i];
		uintptr_t lo = e->start > a ? e->start : a, hi = e->end < b ? e->end : b;

		if (e->used && e->fd < 0 && e->rfd >= 0 && lo < hi)
			n += take(e, CT_F_DURABLE, lo, hi);
	}
	ct_unlock();
	errno = saved;
	return n;
}

/* The process exits: its streams' buffers flushed now (unless another
 * thread holds one: glibc's own flush at exit takes no lock), and every file
 * it holds pictured as the cache will have it. */
__attribute__((destructor)) static void at_exit(void)
{
	int saved = errno;

	if (!__atomic_load_n(&nheld, __ATOMIC_RELAXED))
		return;
	ct_lock();
	for (int i = 0; i < HELD; i++) {
		struct held *e = &held[i];

		if (!e->used || e->rfd < 0)
			continue;
		if (e->stream && ftrylockfile(e->stream) == 0) {
			fflush_unlocked(e->stream);
			funlockfile(e->stream);
		}
		if (find_held(e->dev, e->ino) == e) {
			take(e, 0, 0, 0);
			mark(e, CT_FREE);
		}
	}
	ct_unlock();
	errno = saved;
}

/* Not in a vfork child that finds the lock taken by its parent's thread:
 * such a child shares the parent's memory, and must not wait. */
void ct_image_exec(int failed)
{
	int saved = errno;

	if (!__atomic_load_n(&nheld, __ATOMIC_RELAXED) || !ct_trylock())
		return;
	for (int i = 0; i < HELD; i++) {
		struct held *e = &held[i];

		if (!e->used || find_held(e->dev, e->ino) != e)
			continue;
		if (!failed && e->rfd >= 0)
			take(e, 0, 0, 0);
		mark(e, failed ? CT_HOLD : CT_FREE);
	}
	ct_unlock();
	errno = saved;
}
