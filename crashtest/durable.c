/* SPDX-License-Identifier: MIT */
/* durable.c -- when each change became durable, per model (doc/crashtest.md
 * gives each rule its source).  A durability call covers the changes
 * recorded before it began (its record's `begin`), not those another thread
 * made while it ran; one that failed covers nothing.
 *
 * posix: a file's contents are durable once an fsync or fdatasync of it
 * follows; a name once one of its directory follows (of both directories,
 * for a rename); sync, and syncfs of the copy's file system, make all
 * durable.
 *
 * ext4-ordered and xfs: contents as posix.  Names and truncations are
 * metadata, written by a journal commit, all of a commit's or none, commits
 * in order: a commit makes every metadata change up to some point durable.
 * A commit certainly happens at sync and syncfs (up to the call); at an
 * fsync of a file whose metadata changed (up to its last change the library
 * saw: its making, a truncation, a write past its end, a link or unlink of
 * it; fdatasync: the truncations and writes past the end only); at an fsync
 * of a directory (ext4: everything, a forced commit; xfs: up to the
 * directory's last change).  Commits at other moments (every few seconds)
 * are a prefix in the states.  ext4 writes a file's data before a rename
 * that replaces another file commits (auto_da_alloc).  What
 * sync_file_range wrote and waited for is on the disk, and durable at the
 * next cache flush (any fsync) -- a write past the end only once a commit
 * covers it.
 *
 * ext4's auto_da_alloc starts writing a file's data back when a rename makes
 * it replace another, but the rename's commit does not wait for that write:
 * the kernel-reference test saw a directory fsynced after the rename hold
 * the new name and an empty file.  No rule here counts on it.
 */
#define _GNU_SOURCE 1
#include "crashtest/model.h"
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

/* A list of records per node, in order, consumed from the front. */
struct queue {
	uint32_t *v;
	uint32_t head, n, cap;
};

static void push(struct queue *q, uint32_t rec)
{
	if (q->n == q->cap && !(q->v = realloc(q->v, (q->cap = q->cap ? 2 * q->cap : 8) *
							sizeof(*q->v))))
		die("out of memory");
	q->v[q->n++] = rec;
}

struct sweep {
	struct run_model *m;
	struct queue *data;   /* per node: its contents not yet durable */
	struct queue *names;  /* per directory: its names not yet durable */
	struct queue all;     /* every change not yet durable */
	struct queue meta;    /* metadata not yet committed, in order */
	uint8_t *halves;      /* a rename's directories synced so far */
	/* Per node: 1 + its last metadata change (fsync), 0 for none; the
	 * journal's first record is a change like any other. */
	uint32_t *last_sync;
	uint32_t *last_data;  /* ... that fdatasync commits */
	struct queue flushes; /* writeouts not yet flushed */
	struct queue allocs;  /* writeouts whose appends no commit covers yet */
};

static int covered(const struct run_model *m, uint32_t rec, uint32_t sync)
{
	uint64_t begin = m->j->r[sync].h.begin;

	return begin == 0 || m->j->r[rec].at < begin - 1;
}

static void make_durable(struct sweep *s, uint32_t rec, uint32_t at)
{
	if (s->m->durable_at[rec] > at)
		s->m->durable_at[rec] = at;
}

/* The contents of node n covered by the sync at `at` (appends only when
 * `appends`). */
static void flush_node(struct sweep *s, uint32_t n, uint32_t at, uint32_t upto, int appends)
{
	struct queue *q = &s->data[n];

	for (uint32_t k = q->head; k < q->n; k++) {
		uint32_t rec = q->v[k];

		if (rec >= upto || !covered(s->m, rec, at))
			break;
		if (appends || !(s->m->flags[rec] & R_APPEND))
			make_durable(s, rec, at);
	}
	while (q->head < q->n && s->m->durable_at[q->v[q->head]] != NEVER)
		q->head++;
}

/* posix: the names of directory d covered by the sync at `at`. */
static void sync_names(struct sweep *s, uint32_t d, uint32_t at)
{
	struct queue *q = &s->names[d];
	const struct run_model *m = s->m;

	while (q->head < q->n && covered(m, q->v[q->head], at)) {
		uint32_t rec = q->v[q->head++];
		int both = m->j->r[rec].h.kind == CT_RENAME && m->dir[rec] != m->dir2[rec];

		if (!both || ++s->halves[rec] == 2)
			make_durable(s, rec, at);
	}
}

/* A commit at record `at` of the metadata up to record `upto`. */
static void commit(struct sweep *s, uint32_t upto, uint32_t at)
{
	struct run_model *m = s->m;
	struct queue *q = &s->meta;

	while (q->head < q->n && q->v[q->head] <= upto && covered(m, q->v[q->head], at)) {
		uint32_t rec = q->v[q->head++];

		make_durable(s, rec, at);
	}
	/* Writeouts it covers: what they wrote past the end was allocated
	 * then, and is on the disk. */
	for (q = &s->allocs; q->head < q->n && q->v[q->head] <= upto; q->head++)
		flush_node(s, m->node[q->v[q->head]], at, q->v[q->head], 1);
}

/* A cache flush at `at`: what writeouts wrote in place is durable. */
static void flush_writeouts(struct sweep *s, uint32_t at)
{
	for (struct queue *q = &s->flushes; q->head < q->n; q->head++)
		flush_node(s, s->m->node[q->v[q->head]], at, q->v[q->head], 0);
}

/* Everything recorded before the sync at `at` began. */
static void sync_all(struct sweep *s, uint32_t at)
{
	struct queue *q = &s->all;

	while (q->head < q->n && covered(s->m, q->v[q->head], at))
		make_durable(s, q->v[q->head++], at);
}

/* How far the commit of an fsync (fdatasync: data) of node n at `at`
 * reaches: 1 + the last record it commits, 0 for none. */
static uint32_t commit_reach(const struct sweep *s, uint32_t n, int data, uint32_t at)
{
	const struct run_model *m = s->m;

	if (m->t->node[n].type == NODE_DIR && model_is_ext4(m->model))
		return at + 1; /* ext4_sync_file: a forced commit */
	return data ? s->last_data[n] : s->last_sync[n];
}

/* A durability call at record `at`. */
static void synced(struct sweep *s, uint32_t at, const struct rec *r)
{
	struct run_model *m = s->m;
	uint32_t n = m->node[at];
	int posix = m->model == MODEL_POSIX;

	if (r->h.flags & (CT_F_FAILED | CT_F_RANGE | CT_F_OUTSIDE))
		return;
	if (!posix)
		flush_writeouts(s, at);
	if (r->h.kind == CT_SYNC_ALL) {
		sync_all(s, at);
		if (!posix)
			commit(s, at, at);
		return;
	}
	if (!n)
		return;
	flush_node(s, n, at, at, 1);
	if (posix)
		sync_names(s, n, at);
	else if (commit_reach(s, n, r->h.flags & CT_F_DATA, at))
		commit(s, commit_reach(s, n, r->h.flags & CT_F_DATA, at) - 1, at);
}

/* Node n's metadata changed at record i (fsync reaches it; fdatasync too
 * when `data`). */
static void changed(struct sweep *s, uint32_t n, uint32_t i, int data)
{
	if (!n)
		return;
	s->last_sync[n] = i + 1;
	if (data)
		s->last_data[n] = i + 1;
}

/* A change at record i: pending where its model makes it durable. */
static void pending(struct sweep *s, uint32_t i, const struct rec *r)
{
	struct run_model *m = s->m;
	int meta = m->model != MODEL_POSIX && (m->flags[i] & R_META);

	push(&s->all, i);
	if (meta)
		push(&s->meta, i);
	if (kind_is_data(r->h.kind) && r->h.kind != CT_TRUNC)
		push(&s->data[m->node[i]], i);
	else if (kind_is_data(r->h.kind) && m->model == MODEL_POSIX)
		push(&s->data[m->node[i]], i);
	if (kind_is_name(r->h.kind) && m->model == MODEL_POSIX) {
		push(&s->names[m->dir[i]], i);
		if (r->h.kind == CT_RENAME && m->dir2[i] != m->dir[i])
			push(&s->names[m->dir2[i]], i);
	}
	if (r->h.kind == CT_TRUNC || (m->flags[i] & R_APPEND))
		changed(s, m->node[i], i, 1);
	if (kind_is_name(r->h.kind)) {
		changed(s, m->dir[i], i, 1);
		changed(s, m->dir2[i], i, 1);
		changed(s, m->node[i], i, 0);
	}
}

/* Durable at once: a write with O_DSYNC or RWF_DSYNC (its own range). */
static int durable_itself(const struct rec *r)
{
	return r->h.kind == CT_WRITE && (r->h.flags & (CT_F_DSYNC | CT_F_SYNC));
}

/* A picture a durability call took of a file it covers is durable once the
 * call's record follows (the call writes it while it runs: CT_DURING comes
 * between); a failed call makes nothing durable. */
static void pictured(struct sweep *s, uint32_t i)
{
	const struct journal *j = s->m->j;

	for (uint32_t k = i + 1; k < j->n; k++) {
		const struct ct_record *h = &j->r[k].h;

		if (h->pid != j->r[i].h.pid || (h->kind != CT_SYNC && h->kind != CT_SYNC_ALL))
			continue;
		if (!(h->flags & CT_F_FAILED))
			make_durable(s, i, k);
		return;
	}
}

/* A write with O_SYNC or O_DSYNC: its own range is flushed, and what its
 * file's metadata needs is committed (up to this write, if it extended the
 * file). */
static void dsynced(struct sweep *s, uint32_t i, const struct rec *r)
{
	struct run_model *m = s->m;
	uint32_t n = m->node[i], reach;

	make_durable(s, i, i);
	if (r->h.kind != CT_WRITE)
		return;
	if (m->flags[i] & R_APPEND)
		changed(s, n, i, 1);
	reach = r->h.flags & CT_F_SYNC ? s->last_sync[n] : s->last_data[n];
	if (m->model != MODEL_POSIX && reach)
		commit(s, reach - 1, i);
}

void model_durability(struct run_model *m, enum model model)
{
	const struct journal *j = m->j;
	uint32_t nodes = m->t->nnodes;
	struct sweep s = {.m = m};

	m->model = model;
	s.data = calloc(nodes, sizeof(*s.data));
	s.names = calloc(nodes, sizeof(*s.names));
	s.halves = calloc(j->n ? j->n : 1, 1);
	s.last_sync = calloc(nodes, sizeof(uint32_t));
	s.last_data = calloc(nodes, sizeof(uint32_t));
	if (!s.data || !s.names || !s.halves || !s.last_sync || !s.last_data)
		die("out of memory");
	for (uint32_t i = 0; i < j->n; i++)
		m->durable_at[i] = NEVER;
	for (uint32_t i = 0; i < j->n; i++) {
		const struct rec *r = &j->r[i];

		if (r->h.kind == CT_IMAGE && (r->h.flags & CT_F_DURABLE))
			pictured(&s, i);
		else if (m->flags[i] & R_CHANGE)
			durable_itself(r) ? dsynced(&s, i, r) : pending(&s, i, r);
		if (r->h.kind == CT_SYNC || r->h.kind == CT_SYNC_ALL)
			synced(&s, i, r);
		if (r->h.kind == CT_WRITEOUT && m->node[i] && model != MODEL_POSIX) {
			push(&s.flushes, i);
			push(&s.allocs, i);
		}
	}
	for (uint32_t n = 0; n < nodes; n++)
		free(s.data[n].v), free(s.names[n].v);
	free(s.data), free(s.names), free(s.halves), free(s.last_sync), free(s.last_data);
	free(s.all.v), free(s.meta.v), free(s.flushes.v), free(s.allocs.v);
}

/* Processes that change a file past the library (stdio, a mapping), as
 * (node, pid) pairs. */
struct holders {
	struct {
		uint32_t node, pid;
	} *v;
	size_t n;
};

/* Did durability call i picture node n as durable?  Its pictures come
 * right before its record, under the journal's lock. */
static int pictured_by(const struct run_model *m, uint32_t i, uint32_t n)
{
	const struct journal *j = m->j;
	uint32_t pid = j->r[i].h.pid;

	for (uint32_t k = i; k-- > 0 && j->r[k].h.pid == pid;) {
		if (j->r[k].h.kind == CT_IMAGE && (j->r[k].h.flags & CT_F_DURABLE) && m->node[k] == n)
			return 1;
		if (j->r[k].h.kind != CT_IMAGE && j->r[k].h.kind != CT_DURING)
			break;
	}
	return 0;
}

/* Is a file (node, or any with node 0) held by a process other than the
 * one that made durability call i, and not pictured by that call?  Each
 * picture is of the file as the page cache holds it, whoever wrote it. */
static int held_by_other(const struct holders *h, const struct run_model *m, uint32_t node,
			 uint32_t i)
{
	uint32_t pid = m->j->r[i].h.pid;

	for (size_t k = 0; k < h->n; k++)
		if ((!node || h->v[k].node == node) && h->v[k].pid != pid &&
		    !pictured_by(m, i, h->v[k].node))
			return 1;
	return 0;
}

static void hold(struct holders *h, const struct run_model *m, uint32_t i)
{
	const struct ct_record *r = &m->j->r[i].h;

	if (r->kind == CT_HOLD) {
		if (!(h->v = realloc(h->v, (h->n + 1) * sizeof(*h->v))))
			die("out of memory");
		h->v[h->n].node = m->node[i];
		h->v[h->n++].pid = r->pid;
	}
	for (size_t k = 0; r->kind == CT_FREE && k < h->n; k++)
		if (h->v[k].node == m->node[i] && h->v[k].pid == r->pid)
			h->v[k--] = h->v[--h->n];
}

/* Does record i make a held file durable without a picture of it?  A sync
 * by a process that did not picture it (each process pictures what it
 * holds at its own syncs); under a journaling model, a writeout of it. */
static int unpictured(const struct holders *h, const struct run_model *m, uint32_t i)
{
	const struct ct_record *r = &m->j->r[i].h;
	int ok = !(r->flags & (CT_F_FAILED | CT_F_RANGE | CT_F_OUTSIDE));

	if (r->kind == CT_SYNC && ok && m->node[i])
		return held_by_other(h, m, m->node[i], i);
	if (r->kind == CT_SYNC_ALL && ok)
		return held_by_other(h, m, 0, i);
	if (m->model == MODEL_POSIX || !m->node[i])
		return 0;
	for (size_t k = 0; r->kind == CT_WRITEOUT && k < h->n; k++)
		if (h->v[k].node == m->node[i])
			return 1;
	return 0;
}

/* A hold whose release says the stream was never written through held
 * nothing: found by its release, later in the journal. */
static uint8_t *void_holds(const struct run_model *m)
{
	uint8_t *gone = calloc(m->j->n + 1, 1);

	if (!gone)
		die("out of memory");
	for (uint32_t i = 0; i < m->j->n; i++) {
		const struct ct_record *f = &m->j->r[i].h;

		for (uint32_t k = i; f->kind == CT_FREE && (f->flags & CT_F_UNUSED) && k-- > 0;) {
			const struct ct_record *h = &m->j->r[k].h;

			if (h->pid == f->pid && m->node[k] == m->node[i] &&
			    (h->kind == CT_HOLD || h->kind == CT_FREE)) {
				gone[k] = h->kind == CT_HOLD;
				break;
			}
		}
	}
	return gone;
}

void model_pictures(struct run_model *m)
{
	struct holders h = {0};
	uint8_t *gone = void_holds(m);

	for (uint32_t i = 0; i < m->j->n; i++) {
		if (!gone[i])
			hold(&h, m, i);
		if (unpictured(&h, m, i))
			model_unknown_at(m, i, "a file changed past the library (a stream, a "
					 "mapping) was made durable with no picture of it");
	}
	free(h.v);
	free(gone);
}
