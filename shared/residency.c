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
	map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
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

int nc_none_cached_from(const struct nc_residency *r, size_t page)
{
	return page >= r->cached_below && page >= r->map_pages;
}
