/* SPDX-License-Identifier: MIT */
/* state.c -- what libnocache knows of each descriptor, and dropping behind.
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

enum { KIND_UNKNOWN, KIND_OTHER, KIND_FILE };

struct nc_file {
	unsigned char kind;
	unsigned char mode;
	unsigned char *resident; /* a byte a page, from mincore; NULL: none */
	size_t resident_pages;
	size_t pending; /* bytes brought in since the last drop */
	off64_t end;    /* how far the command has touched the file */
};

#define CHUNK 1024
#define CHUNKS 4096 /* descriptors up to 4M */
static struct nc_file *chunks[CHUNKS];

struct nc_file *nc_file(int fd)
{
	struct nc_file *chunk, *fresh;

	if (fd < 0 || fd / CHUNK >= CHUNKS)
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

/* NOCACHE_NO_DONTCACHE=1 takes the posix_fadvise path everywhere: for a
 * kernel whose RWF_DONTCACHE misbehaves, and for the tests. */
static int dontcache_disabled(void)
{
	static int disabled = -1;

	if (PL_UNLIKELY(disabled < 0)) {
		const char *v = getenv("NOCACHE_NO_DONTCACHE");

		disabled = v && *v && strcmp(v, "0") != 0;
	}
	return disabled;
}

/* Record which pages of the file are cached now: they are to stay.  Returns
 * 0 if that cannot be known, and then nothing is ever dropped. */
static int snapshot(int fd, struct nc_file *f)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	size_t pages;
	void *map;
	int ok;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	pages = (st.st_size + page - 1) / page;
	if (pages == 0)
		return 1;
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

/* One cachestat tells a file with a page cache from anything else, and
 * whether any of it is cached; without cachestat (before Linux 6.5), a
 * regular file is recorded page by page. */
static void classify(int fd, struct nc_file *f)
{
	struct nc_cachestat_range all = {0, 0};
	struct nc_cachestat cs;
	long r = syscall(SYS_cachestat, fd, &all, &cs, 0);

	f->kind = KIND_OTHER;
	f->mode = NC_PLAIN;
	if (r == 0 && cs.nr_cache == 0) {
		f->kind = KIND_FILE;
		f->mode = dontcache_disabled() ? NC_DROP : NC_DONTCACHE;
	} else if ((r == 0 || errno == ENOSYS) && snapshot(fd, f)) {
		f->kind = KIND_FILE;
		f->mode = NC_DROP;
	}
}

int nc_mode(int fd, struct nc_file *f)
{
	int saved = errno;

	if (!f)
		return NC_PLAIN;
	if (PL_UNLIKELY(f->kind == KIND_UNKNOWN))
		classify(fd, f);
	errno = saved;
	return f->mode;
}

void nc_dontcache_refused(struct nc_file *f)
{
	/* Nothing was cached when the file was classified, nor since. */
	f->mode = NC_DROP;
}

/* posix_fadvise DONTNEED over [0, end), skipping the pages that were
 * cached before.  It starts writeback of dirty pages and never waits. */
static void drop(int fd, struct nc_file *f)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = (f->end + page - 1) / page, i = 0, run;

	while (i < pages) {
		while (i < pages && i < f->resident_pages && (f->resident[i] & 1))
			i++;
		for (run = i; run < pages && !(run < f->resident_pages &&
					       (f->resident[run] & 1));)
			run++;
		if (run > i)
			posix_fadvise(fd, (off_t)i * page, (off_t)(run - i) * page,
				      POSIX_FADV_DONTNEED);
		i = run;
	}
	f->pending = 0;
}

void nc_touched(int fd, struct nc_file *f, ssize_t n, off64_t end)
{
	int saved = errno;

	if (n <= 0 || f->mode == NC_PLAIN)
		return;
	if (end < 0)
		end = lseek64(fd, 0, SEEK_CUR);
	if (end > f->end)
		f->end = end;
	f->pending += n;
	if (f->pending >= NC_DROP_EVERY)
		drop(fd, f);
	errno = saved;
}

void nc_forget(int fd)
{
	struct nc_file *f = nc_file(fd);
	int saved = errno;

	if (!f)
		return;
	if (f->mode != NC_PLAIN && f->pending)
		drop(fd, f);
	if (f->resident)
		munmap(f->resident, f->resident_pages);
	*f = (struct nc_file){0};
	errno = saved;
}
