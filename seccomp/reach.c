/* SPDX-License-Identifier: MIT */
/* reach.c -- how much of a caller's buffers, in order, its mappings reach:
 * the bytes the kernel's own copy to or from the caller would take before
 * its first fault (up to the first byte in no mapping, or in one without
 * the permission).
 *
 * One pass over /proc/TID/maps, whatever the number of buffers (a preadv
 * of 1024 in a process of 60,000 mappings read the maps 1024 times, 35 s a
 * call): the buffers are taken in address order, and those whose start
 * lies in a run of mappings with the permission and no gap between them
 * all reach as far as the run does (or their own end).
 */
#include "common/common.h"
#include "supervisor.h"
#include "maps.h"

#include <stdlib.h>
#include <string.h>

struct buffer {
	unsigned long base, end, reach;
	int next;  /* the next buffer of its run, or -1 */
	int wraps; /* past the end of the address space: the kernel takes none of it */
};

struct sweep {
	struct buffer *b;
	const int *order; /* the buffers by base */
	int n, at;        /* buffers, the next to place */
	int run;          /* the first buffer of the run, or -1 */
	unsigned long run_end; /* where the run's mappings reach (0: no run) */
	char perm;        /* 'r' or 'w' */
};

/* The run ends where its mappings do: each buffer of it reaches that far. */
static void end_run(struct sweep *s)
{
	for (int i = s->run; i >= 0; i = s->b[i].next)
		s->b[i].reach = s->b[i].end < s->run_end ? s->b[i].end : s->run_end;
	s->run = -1;
	s->run_end = 0;
}

static int map_one(const struct emd_map *m, void *arg)
{
	struct sweep *s = arg;
	int with = (s->perm == 'r' ? m->perms[0] : m->perms[1]) == s->perm &&
		   strcmp(m->path, "[vsyscall]") != 0;

	if (s->run_end && (m->lo != s->run_end || !with))
		end_run(s);
	for (; s->at < s->n && s->b[s->order[s->at]].base < m->hi; s->at++) {
		struct buffer *b = &s->b[s->order[s->at]];

		if (b->base < m->lo || !with) {
			b->reach = b->base; /* in a gap, or a mapping without it */
			continue;
		}
		b->next = s->run;
		s->run = s->order[s->at];
	}
	if (with)
		s->run_end = m->hi;
	return s->at == s->n && s->run < 0;
}

static int by_base(const void *x, const void *y, void *buffers)
{
	const struct buffer *b = buffers;
	unsigned long l = b[*(const int *)x].base, r = b[*(const int *)y].base;

	return l < r ? -1 : l > r;
}

/* Sum of the lengths, in order, up to the first buffer not reached whole,
 * and what is reached of that one. */
static size_t prefix(const struct buffer *b, int n)
{
	size_t room = 0;

	for (int i = 0; i < n && !b[i].wraps; i++) {
		room += b[i].reach - b[i].base;
		if (b[i].reach < b[i].end)
			break;
	}
	return room;
}

size_t mapped_prefix(int maps, const struct iovec *remote, int n, char perm)
{
	struct buffer *b = calloc((size_t)n + 1, sizeof(*b));
	int *order = calloc((size_t)n + 1, sizeof(*order));
	struct sweep s = {b, order, n, 0, -1, 0, perm};
	size_t room = 0;

	for (int i = 0; b && order && i < n; i++) {
		unsigned long base = (unsigned long)remote[i].iov_base;
		int wraps = base + remote[i].iov_len < base;

		b[i] = (struct buffer){base, wraps ? base : base + remote[i].iov_len, base, -1, wraps};
		order[i] = i;
	}
	if (b && order) {
		qsort_r(order, (size_t)n, sizeof(*order), by_base, b);
		emd_maps_each(maps, map_one, &s);
		if (s.run >= 0)
			end_run(&s);
		room = prefix(b, n);
	}
	free(b);
	free(order);
	return room;
}
