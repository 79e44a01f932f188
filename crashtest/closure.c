/* SPDX-License-Identifier: MIT */
/* closure.c -- what cannot happen apart, applied to each subset of a
 * point's unsynced changes (U) before it is built as a state:
 *
 * - a sector holds its contents as of one moment of its write history: a
 *   write kept where it covers a sector in part keeps the write before it
 *   that last wrote that sector (the six zero bytes then "rec 11" of two
 *   appends to one sector, the first lost, are no disk's);
 * - a name is removed or moved only after the change that made it;
 * - a journal commits its metadata in order, and a write past a file's end
 *   lands with the metadata before it (ext4-ordered, xfs);
 * - ext4's auto_da_alloc: a rename over an existing file starts writing the
 *   renamed file's data back before the rename's transaction begins, and
 *   the release of a file emptied through it (a rewrite with O_TRUNC, then
 *   close) writes back what was written since, so a commit that holds the
 *   rename, or metadata changed after the release, holds that data
 *   (ext4-ordered; xfs has the release's rule too: doc/crashtest.md has
 *   the kernel's functions).
 *
 * A class that keeps changes (one alone, a pair) closes by adding what they
 * need; the others (all but one, a journal's prefix) by dropping what lost
 * changes leave standing alone.
 */
#define _GNU_SOURCE 1
#include "crashtest/states.h"
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

/* The bytes of record rec that sectors hold: a write's or a picture's. */
static int written(const struct run_model *m, uint32_t rec, uint64_t *lo, uint64_t *hi)
{
	const struct rec *r = &m->j->r[rec];

	if ((r->h.kind != CT_WRITE && r->h.kind != CT_IMAGE) || r->h.off < 0 || !r->h.len ||
	    !m->node[rec])
		return 0;
	*lo = (uint64_t)r->h.off;
	*hi = *lo + r->h.len;
	return 1;
}

static int partial(uint64_t lo, uint64_t hi, uint64_t sector)
{
	return lo > sector * SECTOR || hi < (sector + 1) * SECTOR;
}

/* A sector of a file that some write of U covers in part. */
struct query {
	uint32_t node, last; /* the last write of U to it so far (a place) */
	uint64_t sector;
};

static int by_sector(const void *x, const void *y)
{
	const struct query *a = x, *b = y;

	if (a->node != b->node)
		return (a->node > b->node) - (a->node < b->node);
	return (a->sector > b->sector) - (a->sector < b->sector);
}

/* The sectors writes of U cover in part, sorted, each once. */
static struct query *queries(const struct building *b, size_t *n)
{
	const struct point_states *ps = b->ps;
	struct query *q = malloc((2 * ps->nu + 1) * sizeof(*q));
	uint64_t lo, hi;
	size_t k = 0, w = 0;

	if (!q)
		die("out of memory");
	for (size_t u = 0; u < ps->nu; u++) {
		if (!written(b->m, ps->u[u], &lo, &hi))
			continue;
		if (partial(lo, hi, lo / SECTOR))
			q[k++] = (struct query){b->m->node[ps->u[u]], NONE, lo / SECTOR};
		if ((hi - 1) / SECTOR != lo / SECTOR && partial(lo, hi, (hi - 1) / SECTOR))
			q[k++] = (struct query){b->m->node[ps->u[u]], NONE, (hi - 1) / SECTOR};
	}
	qsort(q, k, sizeof(*q), by_sector);
	for (size_t i = 0; i < k; i++)
		if (!w || by_sector(&q[w - 1], &q[i]))
			q[w++] = q[i];
	*n = w;
	return q;
}

/* The first query at or after (node, sector). */
static size_t lookup(const struct query *q, size_t n, uint32_t node, uint64_t sector)
{
	struct query key = {node, 0, sector};
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (by_sector(&q[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Per write of U: the write before it that last wrote each sector it
 * covers in part.  The dependency is transitive through that write, so
 * one per sector is enough. */
static void sector_deps(struct building *b)
{
	const struct point_states *ps = b->ps;
	size_t n, k;
	struct query *q = queries(b, &n);
	uint64_t lo, hi;

	if (!(b->dep = malloc((2 * ps->nu + 1) * sizeof(*b->dep))))
		die("out of memory");
	for (size_t u = 0; u < 2 * ps->nu; u++)
		b->dep[u] = NONE;
	for (uint32_t u = 0; u < ps->nu; u++) {
		uint32_t node = b->m->node[ps->u[u]];
		int slot = 0;

		if (!written(b->m, ps->u[u], &lo, &hi))
			continue;
		for (k = lookup(q, n, node, lo / SECTOR);
		     k < n && q[k].node == node && q[k].sector <= (hi - 1) / SECTOR; k++) {
			if (partial(lo, hi, q[k].sector) && slot < 2)
				b->dep[2 * u + slot++] = q[k].last;
			q[k].last = u;
		}
	}
	free(q);
}

/* How many of the n records of v (in order) come before record rec. */
static size_t before_rec(const uint32_t *v, size_t n, uint32_t rec)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid] < rec)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long state_place(const struct point_states *ps, uint32_t rec)
{
	size_t lo = before_rec(ps->u, ps->nu, rec);

	return lo < ps->nu && ps->u[lo] == rec ? (long)lo : -1;
}

/* The data of U by file, each file's in order, for auto_da_alloc's
 * flushes; `next`, at each file's first entry, the first one no flush
 * carried yet: a flush carries what was written since the last one, whose
 * carrier every later one implies. */
struct datum {
	uint32_t node, place;
};
struct by_file {
	struct datum *d;
	size_t *next, n;
};

static int datum_order(const void *x, const void *y)
{
	const struct datum *a = x, *b = y;

	if (a->node != b->node)
		return (a->node > b->node) - (a->node < b->node);
	return (a->place > b->place) - (a->place < b->place);
}

static void by_file_make(const struct building *b, struct by_file *f)
{
	const struct run_model *m = b->m;

	f->d = malloc((b->ps->nu + 1) * sizeof(*f->d));
	f->next = malloc((b->ps->nu + 1) * sizeof(*f->next));
	if (!f->d || !f->next)
		die("out of memory");
	f->n = 0;
	for (uint32_t v = 0; v < b->ps->nu; v++) {
		uint32_t d = b->ps->u[v];

		if (kind_is_data(m->j->r[d].h.kind) && !(m->flags[d] & R_META))
			f->d[f->n++] = (struct datum){m->node[d], v};
	}
	qsort(f->d, f->n, sizeof(*f->d), datum_order);
	for (size_t k = 0; k < f->n; k++)
		f->next[k] = k;
}

/* The data of node in U before place `before` that auto_da_alloc's flush
 * writes, appended to b->ada: none unless some of it had blocks still to
 * allocate (i_reserved_data_blocks, which ext4_alloc_da_blocks asks for
 * before it flushes): a write past the end, or anything written to a file
 * `emptied` since (a picture of a stream's writes too). */
static void flushed(struct building *b, struct by_file *f, size_t *n, size_t *cap, uint32_t node,
		    uint32_t before, int emptied)
{
	size_t lo = 0, hi = f->n, start = *n, k;
	int delayed = 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->d[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo < f->n ? f->next[lo] : lo; k < f->n && f->d[k].node == node &&
					       f->d[k].place < before; k++) {
		if (*n == *cap && !(b->ada = realloc(b->ada, (*cap *= 2) * sizeof(*b->ada))))
			die("out of memory");
		b->ada[(*n)++] = f->d[k].place;
		delayed |= emptied || (b->m->flags[b->ps->u[f->d[k].place]] & R_APPEND);
	}
	if (!delayed)
		*n = start;
	else
		f->next[lo] = k;
}

/* Per metadata change of U, the data a commit that holds it holds too
 * (CSR: ada_first).  ext4-ordered: a rename that replaced a file (R_ADA)
 * carries its file's data of U before it.  ext4-ordered and xfs: a release
 * of a file emptied through it (CT_RELEASE) carries that file's data of U
 * before the release, with the first metadata change of U after it. */
static void ada_deps(struct building *b)
{
	const struct run_model *m = b->m;
	const struct point_states *ps = b->ps;
	size_t n = 0, cap = ps->nu + 1, k;
	uint32_t since = 0; /* the record after the last metadata of U */
	struct by_file f;

	b->ada_first = calloc(ps->nu + 1, sizeof(*b->ada_first));
	b->ada = malloc(cap * sizeof(*b->ada));
	if (!b->ada_first || !b->ada)
		die("out of memory");
	by_file_make(b, &f);
	for (uint32_t u = 0; u < ps->nu; u++) {
		uint32_t rec = ps->u[u];

		if ((m->flags[rec] & R_ADA) && m->model == MODEL_EXT4_ORDERED)
			flushed(b, &f, &n, &cap, m->node[rec], u, 0);
		for (k = before_rec(m->release, m->nrelease, since);
		     (m->flags[rec] & R_META) && k < m->nrelease && m->release[k] < rec; k++)
			flushed(b, &f, &n, &cap, m->node[m->release[k]],
				(uint32_t)before_rec(ps->u, ps->nu, m->release[k]), 1);
		if (m->flags[rec] & R_META)
			since = rec + 1;
		b->ada_first[u + 1] = (uint32_t)n;
	}
	free(f.d);
	free(f.next);
}

void closure_prepare(struct building *b)
{
	sector_deps(b);
	if (b->m->model == MODEL_EXT4_ORDERED || b->m->model == MODEL_XFS)
		ada_deps(b);
}

void closure_free(struct building *b)
{
	free(b->dep);
	free(b->ada_first);
	free(b->ada);
}

/* A write kept in part of a sector keeps the write that last wrote it. */
static void sectors_add(const struct building *b, struct state *s)
{
	for (size_t u = b->ps->nu; u-- > 0;)
		for (int k = 0; s->in[u] && k < 2; k++)
			if (b->dep[2 * u + k] != NONE)
				s->in[b->dep[2 * u + k]] = 1;
}

/* ... or it is lost too. */
static void sectors_drop(const struct building *b, struct state *s)
{
	for (size_t u = 0; u < b->ps->nu; u++)
		for (int k = 0; s->in[u] && k < 2; k++)
			if (b->dep[2 * u + k] != NONE && !s->in[b->dep[2 * u + k]])
				s->in[u] = 0;
}

/* A journal commits its metadata in order: a metadata change kept keeps
 * those before it, and a write past a file's end (allocated, its size
 * updated, in some later commit) keeps the metadata before it. */
static void in_order(const struct building *b, struct state *s)
{
	const struct run_model *m = b->m;
	const struct point_states *ps = b->ps;
	long meta = -1, append = -1;

	for (size_t u = 0; u < ps->nu; u++) {
		if (s->in[u] && (m->flags[ps->u[u]] & R_META))
			meta = (long)u;
		if (s->in[u] && (m->flags[ps->u[u]] & R_APPEND))
			append = (long)u;
	}
	for (size_t k = 0; k < b->nmeta; k++)
		if ((long)b->meta[k] <= meta || (long)b->meta[k] < append)
			s->in[b->meta[k]] = 1;
}

/* A commit that holds a replacing rename, or metadata after it, holds the
 * data its auto_da_alloc flush wrote: all of it, none torn. */
static void auto_da_alloc(const struct building *b, struct state *s)
{
	const struct point_states *ps = b->ps;
	long meta = -1;

	for (size_t u = 0; u < ps->nu; u++)
		if (s->in[u] && (b->m->flags[ps->u[u]] & R_META))
			meta = (long)u;
	for (long u = 0; u <= meta; u++)
		for (uint32_t k = b->ada_first[u]; k < b->ada_first[u + 1]; k++) {
			s->in[b->ada[k]] = 1;
			if (s->torn == ps->u[b->ada[k]])
				s->torn = NEVER, s->keep = 0;
		}
}


/* A name is removed or moved only after the change that made it. */
static void makers(const struct building *b, struct state *s)
{
	const struct run_model *m = b->m;
	const struct point_states *ps = b->ps;

	for (size_t u = ps->nu; u-- > 0;) {
		long p = s->in[u] && m->maker[ps->u[u]] ? state_place(ps, m->maker[ps->u[u]] - 1) : -1;

		if (p >= 0)
			s->in[p] = 1;
	}
}

void closure(const struct building *b, int class, struct state *s)
{
	if (class == CLASS_ALONE || class == CLASS_PAIR)
		sectors_add(b, s);
	else
		sectors_drop(b, s);
	if (b->m->model != MODEL_POSIX)
		in_order(b, s);
	if (b->ada_first)
		auto_da_alloc(b, s);
	makers(b, s);
}
