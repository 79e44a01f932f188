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

/* One cachestat tells a file with a page cache from anything else, and
 * whether any of it is cached; what is, is recorded page by page. */
static void classify(int fd, struct nc_file *f)
{
	unsigned long long nr_cache;

	f->kind = NC_KIND_FILE;
	f->mode = NC_DROP;
	switch (nc_residency_kind(fd, &nr_cache)) {
	case NC_RES_OTHER:
		f->kind = NC_KIND_OTHER;
		f->mode = NC_PLAIN;
		break;
	case NC_RES_NONE:
		if (!nc_config()->no_dontcache)
			f->mode = NC_DONTCACHE;
		break;
	case NC_RES_SOME:
		/* -f: what was cached goes too, as upstream's does. */
		nc_own_maps++;
		if (!nc_config()->flushall && !nc_residency_take(fd, nr_cache, &f->was))
			f->mode = NC_PLAIN;
		nc_own_maps--;
		break;
	case NC_RES_BLIND:
		/* What was cached is unknown: what the command reads goes. */
		nc_debug("fd %d: its user may only read it: all it reads is dropped", fd);
		break;
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
