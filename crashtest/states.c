/* SPDX-License-Identifier: MIT */
/* states.c -- the states of one crash point: the durable changes, plus a
 * subset of the unsynced ones (U, in program order) that the model allows.
 *
 * The subsets built: none of U (all lost), all of U (what the page cache
 * held), each prefix of U, U without one change, one change alone, a write
 * of several sectors kept in part (after the changes before it), under
 * posix each pair of writes alone, and, for a journaling file system, each
 * prefix of its uncommitted metadata with and without the unsynced data.
 * Each subset is closed under what cannot happen apart (closure.c).  Past
 * `bound` subsets, a seeded sample is built, always with all lost and all
 * kept.
 */
#define _GNU_SOURCE 1
#include "crashtest/states.h"
#include "common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void candidate(struct building *b, int class, uint32_t a, uint64_t x)
{
	if (!(class & b->classes))
		return;
	if (b->nc == b->capc && !(b->c = realloc(b->c, (b->capc = b->capc ? 2 * b->capc : 64) *
							sizeof(*b->c))))
		die("out of memory");
	b->c[b->nc++] = (struct candidate){class, a, x};
}

/* The cuts of a torn write at sector boundaries: at most three of them. */
static void torn_candidates(struct building *b, uint32_t u)
{
	const struct rec *r = &b->m->j->r[b->ps->u[u]];
	uint64_t first = ((uint64_t)r->h.off / SECTOR + 1) * SECTOR - (uint64_t)r->h.off;
	uint64_t cuts = ((uint64_t)r->h.off + r->h.len - 1) / SECTOR - (uint64_t)r->h.off / SECTOR;
	uint64_t picks[3] = {first, first + (cuts - 1) / 2 * SECTOR, first + (cuts - 1) * SECTOR};

	for (int k = 0; k < 3; k++)
		if (picks[k] < r->h.len && (k == 0 || picks[k] != picks[k - 1]))
			candidate(b, CLASS_TORN, u, picks[k]);
}

static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int by_value(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* posix: each pair of unsynced writes kept, the rest lost (LazyFS's
 * torn-seq), in what room the bound leaves; past it, pairs drawn with the
 * seed.  Returns how many pairs there are in all. */
static uint64_t pair_candidates(struct building *b, size_t bound, uint64_t seed)
{
	uint32_t *w = malloc((b->ps->nu + 1) * sizeof(*w)), nw = 0;
	uint64_t pairs, room = bound > b->nc ? bound - b->nc : 0, *pick, n = 0;
	uint64_t state = seed ^ b->ps->rec ^ 0x70616972ULL;

	if (!w)
		die("out of memory");
	for (uint32_t u = 0; u < b->ps->nu; u++)
		if (b->m->j->r[b->ps->u[u]].h.kind == CT_WRITE)
			w[nw++] = u;
	pairs = (uint64_t)nw * (nw ? nw - 1 : 0) / 2;
	if (!(pick = malloc((room < pairs ? room : pairs) * sizeof(*pick) + 1)))
		die("out of memory");
	for (uint32_t i = 0; pairs <= room && i < nw; i++)
		for (uint32_t j = i + 1; j < nw; j++)
			pick[n++] = (uint64_t)i * nw + j;
	for (; pairs > room && n < room; n++) {
		uint64_t i = next_random(&state) % nw, j = next_random(&state) % (nw - 1);

		j += j >= i;
		pick[n] = i < j ? i * nw + j : j * nw + i;
	}
	qsort(pick, n, sizeof(*pick), by_value);
	for (uint64_t k = 0; k < n; k++)
		if (!k || pick[k] != pick[k - 1])
			candidate(b, CLASS_PAIR, w[pick[k] / nw], w[pick[k] % nw]);
	free(pick);
	free(w);
	return pairs;
}

/* Every candidate the classes asked for; how many the model allows in all
 * (the pairs not drawn too). */
static size_t enumerate(struct building *b, int classes, size_t bound, uint64_t seed)
{
	size_t nu = b->ps->nu, before;
	uint64_t pairs = 0;

	b->classes = classes;
	candidate(b, CLASS_LOST, 0, 0);
	if (nu)
		candidate(b, CLASS_KEPT, 0, 0);
	for (uint32_t k = 1; k < nu; k++)
		candidate(b, CLASS_PREFIX, k, 0);
	for (uint32_t u = 0; nu > 1 && u < nu; u++)
		candidate(b, CLASS_OMIT, u, 0);
	for (uint32_t u = 0; nu > 1 && u < nu; u++)
		candidate(b, CLASS_ALONE, u, 0);
	for (uint32_t u = 0; (classes & CLASS_TORN) && u < nu; u++)
		if (b->m->flags[b->ps->u[u]] & R_TORN)
			torn_candidates(b, u);
	for (uint32_t k = 0; b->m->model != MODEL_POSIX && k <= b->nmeta; k++) {
		candidate(b, CLASS_JOURNAL, k, 0);
		candidate(b, CLASS_JOURNAL, k, 1);
	}
	before = b->nc;
	if (b->m->model == MODEL_POSIX && (classes & CLASS_PAIR))
		pairs = pair_candidates(b, bound, seed);
	return before + (size_t)pairs;
}

/* The subset of candidate c, before its closure. */
static void subset(const struct building *b, const struct candidate *c, struct state *s)
{
	size_t nu = b->ps->nu;

	for (size_t u = 0; u < nu; u++) {
		int in = c->class == CLASS_KEPT || (c->class == CLASS_PREFIX && u < c->a) ||
			 (c->class == CLASS_OMIT && u != c->a) || (c->class == CLASS_ALONE && u == c->a) ||
			 (c->class == CLASS_TORN && u < c->a) ||
			 (c->class == CLASS_PAIR && (u == c->a || u == c->b));

		s->in[u] = (uint8_t)in;
	}
	if (c->class == CLASS_TORN) {
		s->in[c->a] = 1;
		s->torn = b->ps->u[c->a];
		s->keep = c->b;
	}
	if (c->class == CLASS_JOURNAL) {
		uint32_t cut = c->a < b->nmeta ? b->meta[c->a] : (uint32_t)nu;

		for (size_t k = 0; k < c->a; k++)
			s->in[b->meta[k]] = 1;
		for (size_t u = 0; c->b && u < nu; u++)
			if (!(b->m->flags[b->ps->u[u]] & R_META) &&
			    (u < cut || !(b->m->flags[b->ps->u[u]] & R_APPEND)))
				s->in[u] = 1;
	}
}

static size_t kept(const struct state *s, size_t nu)
{
	size_t n = 0;

	for (size_t u = 0; u < nu; u++)
		n += s->in[u];
	return n;
}

/* Change u of U, described. */
static char *change_of(const struct building *b, size_t u)
{
	char *t = strdup(b->m->text[b->ps->u[u]] ? b->m->text[b->ps->u[u]] : "?");

	if (!t)
		die("out of memory");
	return t;
}

static char *describe(const struct building *b, const struct candidate *c, const struct state *s)
{
	size_t nu = b->ps->nu, k = kept(s, nu);
	char *what = NULL, *ch = c->class == CLASS_LOST || c->class == CLASS_KEPT ||
					 (c->class == CLASS_JOURNAL && !c->a)
				 ? NULL
				 : change_of(b, c->class == CLASS_PREFIX ? c->a - 1 :
						c->class == CLASS_JOURNAL ? b->meta[c->a - 1] : c->a);
	int r = -1;

	if (c->class == CLASS_LOST)
		r = asprintf(&what, "all %zu unsynced change%s lost", nu, nu == 1 ? "" : "s");
	else if (c->class == CLASS_KEPT)
		r = asprintf(&what, "all %zu unsynced change%s kept, as the page cache held them", nu,
			     nu == 1 ? "" : "s");
	else if (c->class == CLASS_PREFIX)
		r = asprintf(&what, "the first %u of %zu unsynced changes kept, up to: %s", c->a, nu, ch);
	else if (c->class == CLASS_OMIT)
		r = asprintf(&what, "all %zu unsynced changes kept but: %s", nu, ch);
	else if (c->class == CLASS_ALONE)
		r = asprintf(&what, "of %zu unsynced changes, only this one kept: %s", nu, ch);
	else if (c->class == CLASS_TORN)
		r = asprintf(&what, "the %u unsynced changes before it kept, then %s torn after %llu bytes",
			     c->a, ch, (unsigned long long)c->b);
	else if (c->class == CLASS_PAIR)
		r = asprintf(&what, "of %zu unsynced changes, only two kept: %s, and %s", nu, ch,
			     b->m->text[b->ps->u[c->b]] ? b->m->text[b->ps->u[c->b]] : "?");
	else if (c->class == CLASS_JOURNAL)
		r = asprintf(&what, "the journal committed %s%s, %s the unsynced data (%zu of %zu "
			     "changes kept)", c->a ? "up to: " : "no unsynced metadata",
			     c->a ? ch : "", c->b ? "with" : "without", k, nu);
	free(ch);
	if (r < 0)
		die("out of memory");
	return what;
}

static int by_order(const void *x, const void *y)
{
	const struct candidate *a = x, *b = y;

	if (a->class != b->class)
		return (a->class > b->class) - (a->class < b->class);
	if (a->a != b->a)
		return (a->a > b->a) - (a->a < b->a);
	return (a->b > b->b) - (a->b < b->b);
}

/* Past the bound: all lost and all kept, and a seeded draw of the rest. */
static void sample(struct building *b, size_t bound, uint64_t seed)
{
	size_t fixed = 0;
	uint64_t state = seed ^ b->ps->rec;

	for (size_t i = 0; i < b->nc; i++)
		if (b->c[i].class == CLASS_LOST || b->c[i].class == CLASS_KEPT) {
			struct candidate t = b->c[fixed];

			b->c[fixed++] = b->c[i];
			b->c[i] = t;
		}
	if (bound < fixed)
		bound = fixed;
	for (size_t i = fixed; i < bound && i < b->nc; i++) {
		size_t j = i + (size_t)(next_random(&state) % (b->nc - i));
		struct candidate t = b->c[i];

		b->c[i] = b->c[j];
		b->c[j] = t;
	}
	if (b->nc > bound)
		b->nc = bound;
	if (b->nc)
		qsort(b->c, b->nc, sizeof(*b->c), by_order);
}

/* U: the changes up to record `rec` that are not durable there; and the
 * places in U of its metadata, in order. */
static void unsynced(struct building *b)
{
	const struct run_model *m = b->m;
	struct point_states *ps = b->ps;

	ps->u = malloc((ps->rec == NEVER ? 1 : ps->rec + 1) * sizeof(*ps->u));
	b->meta = malloc((ps->rec == NEVER ? 1 : ps->rec + 1) * sizeof(*b->meta));
	if (!ps->u || !b->meta)
		die("out of memory");
	for (uint32_t i = 0; ps->rec != NEVER && i <= ps->rec; i++) {
		if (!(m->flags[i] & R_CHANGE) || m->durable_at[i] <= ps->rec)
			continue;
		if (m->model != MODEL_POSIX && (m->flags[i] & R_META))
			b->meta[b->nmeta++] = (uint32_t)ps->nu;
		ps->u[ps->nu++] = i;
	}
}

/* A subset already built (after its closure): the same set of changes. */
static int seen(const struct point_states *ps, const struct state *s)
{
	for (size_t i = 0; i < ps->ns; i++)
		if (ps->s[i].torn == s->torn && ps->s[i].keep == s->keep &&
		    !memcmp(ps->s[i].in, s->in, ps->nu ? ps->nu : 1))
			return 1;
	return 0;
}

void model_states(const struct run_model *m, uint32_t rec, size_t bound, uint64_t seed,
		  int classes, struct point_states *ps)
{
	struct building b = {.m = m, .ps = ps};

	*ps = (struct point_states){.rec = rec};
	unsynced(&b);
	closure_prepare(&b);
	ps->candidates = enumerate(&b, classes, bound, seed);
	sample(&b, bound, seed);
	ps->cut = ps->candidates > b.nc;
	if (!(ps->s = calloc(b.nc ? b.nc : 1, sizeof(*ps->s))))
		die("out of memory");
	for (size_t i = 0; i < b.nc; i++) {
		struct state *s = &ps->s[ps->ns];

		if (!(s->in = calloc(ps->nu ? ps->nu : 1, 1)))
			die("out of memory");
		s->torn = NEVER;
		subset(&b, &b.c[i], s);
		closure(&b, b.c[i].class, s);
		if (seen(ps, s)) {
			free(s->in);
			continue;
		}
		s->what = describe(&b, &b.c[i], s);
		ps->ns++;
	}
	free(b.c);
	free(b.meta);
	closure_free(&b);
}

void point_states_free(struct point_states *ps)
{
	for (size_t i = 0; i < ps->ns; i++) {
		free(ps->s[i].in);
		free(ps->s[i].what);
	}
	free(ps->s);
	free(ps->u);
	*ps = (struct point_states){0};
}

int state_has(const struct run_model *m, const struct point_states *ps, const struct state *s,
	      uint32_t rec, uint64_t *keep)
{
	long p;

	*keep = UINT64_MAX;
	if (ps->rec == NEVER || rec > ps->rec || !(m->flags[rec] & R_CHANGE))
		return 0;
	if (m->durable_at[rec] <= ps->rec)
		return 1;
	if ((p = state_place(ps, rec)) < 0 || !s->in[p])
		return 0;
	if (s->torn == rec)
		*keep = s->keep;
	return 1;
}

/* One name change of the journal, applied to the tree. */
static void apply_name(const struct run_model *m, uint32_t i, struct tree *t)
{
	const struct rec *r = &m->j->r[i];
	uint32_t d = m->dir[i], n = m->node[i];

	if (r->h.kind == CT_UNLINK || r->h.kind == CT_RMDIR) {
		if (tree_get(t, d, r->name) == n)
			tree_set(t, d, r->name, 0);
	} else if (r->h.kind == CT_RENAME && (r->h.flags & CT_F_EXCHANGE)) {
		uint32_t a = tree_get(t, d, r->name), b = tree_get(t, m->dir2[i], r->name2);

		tree_set(t, d, r->name, b);
		tree_set(t, m->dir2[i], r->name2, a);
	} else if (r->h.kind == CT_RENAME) {
		if (tree_get(t, d, r->name) == n)
			tree_set(t, d, r->name, 0);
		tree_set(t, m->dir2[i], r->name2, n);
	} else if (r->name) {
		tree_set(t, d, r->name, n);
	}
}

void state_names(const struct run_model *m, const struct point_states *ps,
		 const struct state *s, struct tree *t)
{
	uint64_t keep;

	for (uint32_t i = 0; ps->rec != NEVER && i <= ps->rec; i++)
		if (kind_is_name(m->j->r[i].h.kind) && state_has(m, ps, s, i, &keep) && m->node[i])
			apply_name(m, i, t);
}


void model_names_at(const struct run_model *m, uint32_t rec, struct tree *t)
{
	for (uint32_t i = 0; rec != NEVER && i <= rec && i < m->j->n; i++)
		if (kind_is_name(m->j->r[i].h.kind) && (m->flags[i] & R_CHANGE) && m->node[i])
			apply_name(m, i, t);
}
