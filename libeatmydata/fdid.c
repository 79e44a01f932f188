/* SPDX-License-Identifier: MIT */
/* fdid.c -- which file a descriptor is, for the record, without a system
 * call per durability call: looked up once (statx) at the first recorded
 * request on the descriptor, then kept until the library sees the number
 * change hands -- an open, fopen, mkstemp or syscall() returning it, or
 * close, fclose, pclose, closedir, close_range, closefrom, dup2 or dup3
 * letting it go.  A number is only ever reused once closed, so a kept
 * identity goes stale only if the library sees neither the close nor the
 * open: a system call made by the program's own code, not through libc,
 * or a descriptor of libc's own (a getpwent's, a syslog's) that the program
 * synced.  A request that fails looks again (record.c), which catches the
 * pipes and sockets such a route makes.
 *
 * Each entry is a seqlock whose counter every forget moves on, 64 bits
 * wide so that it never comes round again: a lookup racing a forget, or a
 * fill whose statx began before one, loses.
 */
#include "emd.h"

#include <sys/stat.h>

#define KEPT_FDS 65536 /* higher descriptors are looked up every time */

struct fd_id {
	unsigned long long gen;   /* odd: being filled; + 2 at each forget */
	unsigned long long valid; /* the gen the fill below left, or 0 */
	struct emd_rec_file file;
};

struct fd_id *emd_fd_ids;
/* Above every descriptor ever kept: close_range(3, ~0U), which a spawning
 * child makes, walks only that far. */
static unsigned kept_end;

void emd_fd_forget_range(unsigned lo, unsigned hi)
{
	struct fd_id *ids = __atomic_load_n(&emd_fd_ids, __ATOMIC_ACQUIRE);
	unsigned end;

	/* After the close the caller made: a fill that raised the end before
	 * it is seen (osync.c's states too). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	emd_sync_forget_range(lo, hi);
	end = __atomic_load_n(&kept_end, __ATOMIC_SEQ_CST);

	if (hi >= end)
		hi = end - 1; /* end 0: nothing kept, hi wraps, lo > hi */
	if (!end)
		return;
	for (unsigned fd = lo; ids && fd <= hi; fd++)
		__atomic_fetch_add(&ids[fd].gen, 2, __ATOMIC_RELEASE);
}

/* The table, mapped the first time a recording process asks: untouched
 * pages cost nothing, so its size is only address space. */
static struct fd_id *table(void)
{
	struct fd_id *ids = __atomic_load_n(&emd_fd_ids, __ATOMIC_ACQUIRE), *none = NULL;

	if (ids)
		return ids;
	ids = mmap(NULL, KEPT_FDS * sizeof(*ids), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ids == MAP_FAILED)
		return NULL;
	if (!__atomic_compare_exchange_n(&emd_fd_ids, &none, ids, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		munmap(ids, KEPT_FDS * sizeof(*ids));
		return none;
	}
	return ids;
}

int emd_fd_map(void)
{
	return table() ? 0 : -1;
}

static int kept(const struct fd_id *e, struct emd_rec_file *f)
{
	unsigned long long gen = __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE);

	/* valid 0: never filled. */
	if ((gen & 1) || !gen || __atomic_load_n(&e->valid, __ATOMIC_RELAXED) != gen)
		return 0;
	*f = e->file;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->gen, __ATOMIC_RELAXED) == gen;
}

int emd_fd_identity(int fd, struct emd_rec_file *f)
{
	struct fd_id *ids = (unsigned)fd < KEPT_FDS ? table() : NULL;
	struct fd_id *e = ids ? &ids[fd] : NULL;
	unsigned long long gen;

	if (e && kept(e, f))
		return 0;
	/* The end is raised before gen is read: a forget of a range that read
	 * the end before that came before the statx too. */
	for (unsigned end = __atomic_load_n(&kept_end, __ATOMIC_RELAXED); e && end <= (unsigned)fd;)
		__atomic_compare_exchange_n(&kept_end, &end, (unsigned)fd + 1, 1, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED);
	gen = e ? __atomic_load_n(&e->gen, __ATOMIC_SEQ_CST) : 1;
	if (emd_rec_stat(fd, "", AT_EMPTY_PATH, f) != 0)
		return -1;
	/* Kept only if no forget came since gen was read, before the statx. */
	if (!(gen & 1) && __atomic_compare_exchange_n(&e->gen, &gen, gen + 1, 0,
						      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		__atomic_thread_fence(__ATOMIC_RELEASE); /* odd before any field */
		e->file = *f;
		__atomic_store_n(&e->valid, gen + 2, __ATOMIC_RELAXED);
		__atomic_fetch_add(&e->gen, 1, __ATOMIC_RELEASE);
	}
	return 0;
}
