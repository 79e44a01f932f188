/* SPDX-License-Identifier: MIT */
/* mmap.c -- files read through a mapping (git reads each object and the
 * files it adds so, then closes the descriptor before the munmap): no read
 * wrapper sees the pages its faults bring in, and no DONTNEED drops a page
 * while it is mapped.  The mapping is recorded with what of its file was
 * cached at the descriptor's first use (residency.h) and the file's path;
 * after the munmap, the file is opened again by that path (an O_PATH
 * descriptor first, then only if it is still the same file) and what the
 * mapping held that was not cached is written back (a shared mapping's
 * dirty pages) and dropped.  At exit and exec, when the mappings go
 * without a munmap, their pages are unmapped first (MADV_DONTNEED: a page
 * touched again is faulted in again, as from the file).  A file with no
 * path (removed since its mapping) gets MADV_PAGEOUT before the munmap
 * instead, which drops a clean page no other process maps.
 *
 * A private writable mapping (or one made so by mprotect) holds copies of
 * its own, which neither may touch: it is left alone, as are the library's
 * own mappings (nc_own_maps) and those ld.so makes (no wrapper sees them).
 * A mapping moved or resized (mremap) is forgotten: a record must never
 * name memory that is no longer the file's.
 *
 * The records are slots claimed with compare-and-swap: a munmap in one
 * thread and an mmap in another never wait on each other; a slot being
 * dropped is no longer matched.  Only the process that mapped drops at
 * exit or exec: a vfork child shares its parent's memory, and its exec
 * leaves the parent's mappings as they are.
 */
#include "nocache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

__thread int nc_own_maps;

enum { FREE, FILLING, USED, TAKEN };

struct mapped {
	int state;
	char *start;
	size_t pages, first; /* its length and the file page it starts at */
	dev_t dev;
	ino_t ino;
	struct nc_residency was; /* from the mapping's first page on */
};

#define MAPS 64
static struct mapped maps[MAPS];
static char paths[MAPS][PATH_MAX]; /* "": none */
static int used; /* slots not FREE: munmap looks at none while 0 */
static pid_t owner;

static void release(struct mapped *m)
{
	nc_residency_free(&m->was);
	__atomic_store_n(&m->state, FREE, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&used, 1, __ATOMIC_RELAXED);
}

/* Does [addr, addr + len) meet m? */
static int overlap(const struct mapped *m, uintptr_t addr, size_t len)
{
	uintptr_t start = (uintptr_t)m->start, end = start + m->pages * sysconf(_SC_PAGESIZE);
	uintptr_t last = len > UINTPTR_MAX - addr ? UINTPTR_MAX : addr + len;

	return addr < end && last > start;
}

/* The records that [addr, addr + len) meets, taken into taken[]: how
 * many. */
static int take(const void *addr, size_t len, struct mapped **taken)
{
	int n = 0;

	for (int i = 0; i < MAPS && __atomic_load_n(&used, __ATOMIC_RELAXED); i++) {
		struct mapped *m = &maps[i];
		int state = USED;

		if (__atomic_load_n(&m->state, __ATOMIC_ACQUIRE) == USED &&
		    overlap(m, (uintptr_t)addr, len) &&
		    __atomic_compare_exchange_n(&m->state, &state, TAKEN, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			taken[n++] = m;
	}
	return n;
}

/* `advice` over the pages of m that were not cached before. */
static void advise(const struct mapped *m, int advice)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i = 0, run;

	while (nc_uncached_run(&m->was, &i, &run, m->pages)) {
		madvise(m->start + i * page, (run - i) * page, advice);
		i = run;
	}
}

/* m's file, opened to be read by its path if it is still the same file;
 * -1 if not. */
static int reopen(const struct mapped *m)
{
	const char *path = paths[m - maps];
	int look = *path ? open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1, fd = -1;
	char self[32];
	struct stat st;

	if (look < 0)
		return -1;
	if (fstat(look, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == m->dev &&
	    st.st_ino == m->ino) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", look);
		fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	NC_REAL(close)(look);
	return fd;
}

/* m's pages, unmapped now: written back (a shared mapping's) and dropped,
 * but those cached before; the record freed. */
static void drop(struct mapped *m)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = reopen(m);
	size_t i = 0, run;

	if (fd >= 0) {
		sync_file_range(fd, (off64_t)m->first * page, (off64_t)m->pages * page,
				SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
					SYNC_FILE_RANGE_WAIT_AFTER);
		while (nc_uncached_run(&m->was, &i, &run, m->pages)) {
			posix_fadvise(fd, (off64_t)(m->first + i) * page, (off64_t)(run - i) * page,
				      POSIX_FADV_DONTNEED);
			i = run;
		}
		NC_REAL(close)(fd);
	}
	release(m);
}

/* What [addr, addr + len) maps is about to go (munmap, or a mapping put
 * over it): what no path can reach is paged out now; the rest is dropped
 * once `unmap` (the real call, whose result this returns) has run. */
static long unmapping(const void *addr, size_t len, long (*unmap)(void *arg), void *arg)
{
	struct mapped *taken[MAPS];
	int n = take(addr, len, taken), saved;
	long r;

	for (int i = 0; i < n; i++)
		if (!*paths[taken[i] - maps])
			advise(taken[i], MADV_PAGEOUT);
	r = unmap(arg);
	saved = errno;
	for (int i = 0; i < n; i++)
		drop(taken[i]);
	errno = saved;
	return r;
}

/* A slot for m's mapping of `pages` from file page `first` of fd's file,
 * with the part of the file's record that it maps; NULL if none is free,
 * or none of those pages is to go. */
static struct mapped *claim(int fd, const struct nc_file *f, size_t first, size_t pages)
{
	size_t lo = 0, hi;
	struct stat st;

	for (int i = 0; i < MAPS; i++) {
		struct mapped *m = &maps[i];
		int state = FREE;

		if (!__atomic_compare_exchange_n(&m->state, &state, FILLING, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		__atomic_fetch_add(&used, 1, __ATOMIC_RELAXED);
		*m = (struct mapped){.state = FILLING, .pages = pages, .first = first};
		if (fstat(fd, &st) == 0 && nc_residency_slice(&f->was, first, pages, &m->was) &&
		    nc_uncached_run(&m->was, &lo, &hi, pages)) {
			m->dev = st.st_dev;
			m->ino = st.st_ino;
			return m;
		}
		release(m);
		return NULL;
	}
	return NULL;
}

/* fd's path, into m's; "" for none (a file removed since). */
static void note_path(const struct mapped *m, int fd)
{
	char self[32], *path = paths[m - maps];
	ssize_t n;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, path, PATH_MAX - 1);
	path[n > 0 && path[0] == '/' ? n : 0] = '\0';
	if (strstr(path, " (deleted)"))
		path[0] = '\0';
}

/* The command mapped fd's file at p: recorded, if any of what it maps was
 * not cached at the descriptor's first use and may be dropped. */
static void mapped(char *p, size_t len, int prot, int flags, int fd, off64_t off)
{
	long page = sysconf(_SC_PAGESIZE);
	struct nc_file *f = nc_file(fd);
	struct mapped *m;
	int saved = errno;

	if ((prot & PROT_WRITE) && !(flags & MAP_SHARED))
		return;
	nc_own_maps++;
	if (nc_mode(fd, f) != NC_PLAIN &&
	    (m = claim(fd, f, (size_t)(off / page), (len + page - 1) / page))) {
		m->start = p;
		note_path(m, fd);
		owner = getpid();
		__atomic_store_n(&m->state, USED, __ATOMIC_RELEASE);
	}
	nc_own_maps--;
	errno = saved;
}

struct map_args {
	void *addr;
	size_t len;
	int prot, flags, fd;
	off64_t off;
};

static long real_mmap(void *arg)
{
	const struct map_args *a = arg;

	return (long)NC_REAL(mmap64)(a->addr, a->len, a->prot, a->flags, a->fd, a->off);
}

PL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	struct map_args a = {addr, len, prot, flags, fd, off};
	void *p;

	if ((flags & MAP_FIXED) && !nc_own_maps && __atomic_load_n(&used, __ATOMIC_RELAXED))
		p = (void *)unmapping(addr, len, real_mmap, &a);
	else
		p = (void *)real_mmap(&a);
	if (p != MAP_FAILED && fd >= 0 && !(flags & MAP_ANONYMOUS) && !nc_own_maps)
		mapped(p, len, prot, flags, fd, off);
	return p;
}

#ifdef EMD_LFS_ALIASES /* mmap64 is mmap (platform.h) */
PL_EXPORT void *mmap(void *, size_t, int, int, int, off_t) __attribute__((alias("mmap64")));
#else
PL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap64(addr, len, prot, flags, fd, off);
}
#endif

struct unmap_args {
	void *addr;
	size_t len;
};

static long real_munmap(void *arg)
{
	const struct unmap_args *a = arg;

	return NC_REAL(munmap)(a->addr, a->len);
}

PL_EXPORT int munmap(void *addr, size_t len)
{
	struct unmap_args a = {addr, len};

	if (__atomic_load_n(&used, __ATOMIC_RELAXED) && !nc_own_maps)
		return (int)unmapping(addr, len, real_munmap, &a);
	return NC_REAL(munmap)(addr, len);
}

/* Records of [addr, addr + len) forgotten, nothing dropped: the command
 * goes on using the memory. */
static void forget(const void *addr, size_t len)
{
	struct mapped *taken[MAPS];
	int n = take(addr, len, taken);

	for (int i = 0; i < n; i++)
		release(taken[i]);
}

/* Moved or resized: forgotten. */
PL_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *to = NULL;
	va_list ap;

	va_start(ap, flags);
	if (flags & MREMAP_FIXED)
		to = va_arg(ap, void *);
	va_end(ap);
	if (__atomic_load_n(&used, __ATOMIC_RELAXED)) {
		forget(old, old_len);
		if (flags & MREMAP_FIXED)
			forget(to, new_len);
	}
	return NC_REAL(mremap)(old, old_len, new_len, flags, to);
}

/* Made writable: forgotten (a private mapping's pages would become copies
 * of its own). */
PL_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	if ((prot & PROT_WRITE) && __atomic_load_n(&used, __ATOMIC_RELAXED))
		forget(addr, len);
	return NC_REAL(mprotect)(addr, len, prot);
}

void nc_unmap_all(void)
{
	struct mapped *taken[MAPS];
	int n, saved = errno;

	if (!__atomic_load_n(&used, __ATOMIC_RELAXED) || owner != getpid())
		return;
	n = take(NULL, (size_t)-1, taken);
	for (int i = 0; i < n; i++) {
		advise(taken[i], *paths[taken[i] - maps] ? MADV_DONTNEED : MADV_PAGEOUT);
		drop(taken[i]);
	}
	errno = saved;
}
