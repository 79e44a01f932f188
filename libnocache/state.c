/* SPDX-License-Identifier: MIT */
/* state.c -- what libnocache knows of each descriptor: the table, and how
 * a file is classified on its first use.
 *
 * The table grows in chunks on first use of a descriptor, so start-up costs
 * nothing whatever RLIMIT_NOFILE is.  Two threads using one descriptor at
 * once can at worst drop a little late or twice.
 */
#include "nocache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

void *nc_real_fn[NC_NREAL];
const char *const nc_real_name[NC_NREAL] = {NC_REAL_SYMBOLS(PL_NAME)};

#define CHUNK 1024
#define CHUNKS 4096 /* descriptors up to 4M */
static struct nc_file *chunks[CHUNKS];

struct nc_file *nc_file(int fd)
{
	struct nc_file *chunk, *fresh;

	if (fd < 0 || fd / CHUNK >= CHUNKS || fd >= nc_config()->max_fds)
		return NULL;
	chunk = __atomic_load_n(&chunks[fd / CHUNK], __ATOMIC_ACQUIRE);
	if (PL_UNLIKELY(!chunk)) {
		fresh = mmap(NULL, CHUNK * sizeof(*fresh), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fresh == MAP_FAILED)
			return NULL;
		chunk = NULL;
		if (__atomic_compare_exchange_n(&chunks[fd / CHUNK], &chunk, fresh,
						0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			chunk = fresh;
		else
			munmap(fresh, CHUNK * sizeof(*fresh));
	}
	return &chunk[fd % CHUNK];
}

/* Record which pages of the file are cached now: they are to stay.  Returns
 * 0 if that cannot be known, and then nothing is ever dropped.  A file all
 * of whose `nr_cache` pages are cached needs no map (cp's source, mostly). */
static int snapshot(int fd, struct nc_file *f, unsigned long long nr_cache)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	size_t pages;
	void *map;
	int ok;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	pages = (st.st_size + page - 1) / page;
	if (pages == 0 || nr_cache >= pages) {
		f->cached_below = pages;
		return 1;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	f->resident = mmap(NULL, pages, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = map != MAP_FAILED && f->resident != MAP_FAILED &&
	     mincore(map, st.st_size, f->resident) == 0;
	if (map != MAP_FAILED)
		munmap(map, st.st_size);
	if (f->resident != MAP_FAILED && !ok)
		munmap(f->resident, pages);
	f->resident = ok ? f->resident : NULL;
	f->resident_pages = ok ? pages : 0;
	return ok;
}

static int is_regular(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* One cachestat tells a file with a page cache from anything else, and
 * whether any of it is cached; without cachestat (before Linux 6.5), a
 * regular file is recorded page by page. */
static void classify(int fd, struct nc_file *f)
{
	struct nc_cachestat_range all = {0, 0};
	struct nc_cachestat cs;
	long r = syscall(SYS_cachestat, fd, &all, &cs, 0);

	f->kind = NC_KIND_OTHER;
	f->mode = NC_PLAIN;
	if (r == 0 && cs.nr_cache == 0) {
		f->kind = NC_KIND_FILE;
		f->mode = nc_config()->no_dontcache ? NC_DROP : NC_DONTCACHE;
	} else if ((r == 0 || errno == ENOSYS) && nc_config()->flushall &&
		   is_regular(fd)) {
		/* -f: what was cached goes too, as upstream's does. */
		f->kind = NC_KIND_FILE;
		f->mode = NC_DROP;
	} else if ((r == 0 || errno == ENOSYS) &&
		   snapshot(fd, f, r == 0 ? cs.nr_cache : 0)) {
		f->kind = NC_KIND_FILE;
		f->mode = NC_DROP;
	}
}

int nc_mode(int fd, struct nc_file *f)
{
	int saved = errno;

	if (!f)
		return NC_PLAIN;
	if (PL_UNLIKELY(f->kind == NC_KIND_UNKNOWN))
		classify(fd, f);
	errno = saved;
	return f->mode;
}

void nc_dontcache_refused(struct nc_file *f)
{
	/* Nothing was cached when the file was classified, nor since. */
	f->mode = NC_DROP;
}


void nc_each_file(void (*fn)(int fd, struct nc_file *f))
{
	for (int c = 0; c < CHUNKS; c++) {
		struct nc_file *chunk = __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE);

		for (int i = 0; chunk && i < CHUNK; i++)
			if (chunk[i].mode != NC_PLAIN)
				fn(c * CHUNK + i, &chunk[i]);
	}
}
