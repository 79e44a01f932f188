/* SPDX-License-Identifier: MIT */
/* residency.c -- what of a file the page cache held when nocache first
 * touched it (residency.h): built into libnocache and the supervisor.
 *
 * The kernel answers cachestat, and mincore on a mapping of the file, only
 * for a user who owns the file or may write it (a guard against a side
 * channel: what other users read): anyone else gets EPERM from cachestat
 * and "every page cached" from mincore.  Such a file is "blind": what was
 * cached before cannot be known, though posix_fadvise(DONTNEED) still
 * drops its pages.
 */
#define _GNU_SOURCE 1
#include "residency.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct cachestat_range {
	unsigned long long off, len;
};
struct cachestat {
	unsigned long long nr_cache, nr_dirty, nr_writeback, nr_evicted,
		nr_recently_evicted;
};

/* A regular file or a block device: cachestat answers for a pipe or a
 * character device too (nothing cached), which have none to drop. */
static int has_page_cache(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
}

int nc_residency_kind(int fd, unsigned long long *nr_cache)
{
	struct cachestat_range all = {0, 0};
	struct cachestat cs;
	int saved = errno, kind = NC_RES_OTHER;
	int err = syscall(SYS_cachestat, fd, &all, &cs, 0) == 0 ? 0 : errno;

	*nr_cache = err ? 0 : cs.nr_cache;
	if ((!err || err == ENOSYS || err == EPERM) && has_page_cache(fd))
		kind = err == EPERM ? NC_RES_BLIND
		       : err == 0 && cs.nr_cache == 0 ? NC_RES_NONE : NC_RES_SOME;
	errno = saved;
	return kind;
}

/* fd's file mapped to be read: through fd, or one opened afresh for a
 * descriptor open only for writing (`sort -o FILE` writes FILE through
 * one), if its user may read the file. */
static void *map_file(int fd, off_t size)
{
	void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	char self[32];
	int again;

	if (map != MAP_FAILED || errno != EACCES)
		return map;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	again = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (again < 0)
		return MAP_FAILED;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, again, 0);
	syscall(SYS_close, again);
	return map;
}

/* A file all of whose `nr_cache` pages are cached needs no map (cp's
 * source, mostly). */
int nc_residency_take(int fd, unsigned long long nr_cache, struct nc_residency *r)
{
	long page = sysconf(_SC_PAGESIZE);
	int saved = errno, ok;
	struct stat st;
	size_t pages;
	void *map;

	*r = (struct nc_residency){0};
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	pages = (st.st_size + page - 1) / page;
	if (pages == 0 || nr_cache >= pages) {
		r->cached_below = pages;
		return 1;
	}
	map = map_file(fd, st.st_size);
	r->map = mmap(NULL, pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = map != MAP_FAILED && r->map != MAP_FAILED && mincore(map, st.st_size, r->map) == 0;
	if (map != MAP_FAILED)
		munmap(map, st.st_size);
	if (r->map != MAP_FAILED && !ok)
		munmap(r->map, pages);
	r->map = ok ? r->map : NULL;
	r->map_pages = ok ? pages : 0;
	errno = saved;
	return ok;
}

void nc_residency_free(struct nc_residency *r)
{
	if (r->map)
		munmap(r->map, r->map_pages);
	*r = (struct nc_residency){0};
}

static int was_cached(const struct nc_residency *r, size_t i)
{
	return i < r->cached_below || (i < r->map_pages && (r->map[i] & 1));
}

int nc_uncached_run(const struct nc_residency *r, size_t *first, size_t *last, size_t end)
{
	size_t i = *first;

	while (i < end && was_cached(r, i))
		i++;
	*first = *last = i;
	while (*last < end && !was_cached(r, *last))
		++*last;
	return *last > *first;
}

int nc_residency_slice(const struct nc_residency *r, size_t first, size_t pages,
		       struct nc_residency *out)
{
	size_t n = r->map_pages > first ? r->map_pages - first : 0;

	*out = (struct nc_residency){0};
	out->cached_below = r->cached_below > first ? r->cached_below - first : 0;
	if (n > pages)
		n = pages;
	if (!n)
		return 1;
	out->map = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (out->map == MAP_FAILED) {
		out->map = NULL;
		return 0;
	}
	memcpy(out->map, r->map + first, n);
	out->map_pages = n;
	return 1;
}

void nc_residency_cut(struct nc_residency *r, size_t pages)
{
	if (r->cached_below > pages)
		r->cached_below = pages;
	if (r->map_pages > pages)
		memset(r->map + pages, 0, r->map_pages - pages);
}

int nc_none_cached_from(const struct nc_residency *r, size_t page)
{
	return page >= r->cached_below && page >= r->map_pages;
}

/* Pages of [lo, hi) in the page cache now, those still being read in too
 * (which mincore does not count); 0 if that cannot be known. */
static unsigned long long cached_now(int fd, size_t lo, size_t hi, long page)
{
	struct cachestat_range range = {(unsigned long long)lo * page,
					(unsigned long long)(hi - lo) * page};
	struct cachestat cs;

	return syscall(SYS_cachestat, fd, &range, &cs, 0) == 0 ? cs.nr_cache : 0;
}

/* The last page of [lo, hi) in the page cache, some of which is. */
static size_t last_cached(int fd, size_t lo, size_t hi, long page)
{
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (cached_now(fd, mid, hi, page))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Wait until page i, in the page cache, has been read in: a fault on it
 * waits for its lock.  The mapping is MADV_RANDOM, so the fault reads
 * nothing ahead (a read(2) of a page marked for readahead would start the
 * next window), and MADV_POPULATE_READ says EFAULT where a touch would be
 * SIGBUS (the file cut short meanwhile). */
static void wait_for(int fd, size_t i, long page)
{
	void *p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, (off_t)i * page);

	if (p == MAP_FAILED)
		return;
	madvise(p, page, MADV_RANDOM);
	madvise(p, page, MADV_POPULATE_READ);
	munmap(p, page);
}

unsigned long long nc_residency_settle(int fd, const struct nc_residency *was, size_t first)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i = first, run, end, last = 0;
	unsigned long long left = 0, here;
	int saved = errno;
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	end = (st.st_size + page - 1) / page;
	while (nc_uncached_run(was, &i, &run, end)) {
		if ((here = cached_now(fd, i, run, page))) {
			last = last_cached(fd, i, run, page);
			left += here;
		}
		i = run;
	}
	if (left)
		wait_for(fd, last, page);
	errno = saved;
	return left;
}
