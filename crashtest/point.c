/* SPDX-License-Identifier: MIT */
/* point.c -- one crash point: its states, each new one given to a worker
 * to build and check (check.c), or to another shard; a state the same as
 * one checked before, with the same output, takes its verdict.  Once its
 * checks are done, the point's verdict.
 */
#define _GNU_SOURCE 1
#include "crashtest/build.h"
#include "crashtest/check.h"
#include "crashtest/merge.h"
#include "crashtest/run.h"
#include "crashtest/text.h"
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The call a crash point followed, its file named as it was. */
static char *after(const struct run *run, uint32_t rec)
{
	const struct run_model *m = &run->m;
	const struct ct_record *h = &run->j.r[rec].h;
	const char *p = m->file[rec], *failed = h->flags & CT_F_FAILED ? ", failed" : "";
	const char *call = h->kind == CT_SYNC ? (h->flags & CT_F_RANGE ? "msync" :
						 h->flags & CT_F_DATA ? "fdatasync" : "fsync")
			   : h->kind == CT_SYNC_ALL
				? (h->flags & CT_F_OUTSIDE ? "syncfs of another file system" : "sync")
			   : h->kind == CT_CLAIM ? (h->ino ? "a write to a pipe or socket" : "output")
			   : h->kind == CT_DURING ? (h->flags & CT_F_RANGE ? "during msync" :
						     h->ino ? "during fsync" : "during sync")
			   : "a change";
	char *text;
	int r;

	if (h->kind == CT_WRITE && (h->flags & (CT_F_DSYNC | CT_F_SYNC)))
		r = asprintf(&text, "%s %s", h->flags & CT_F_SYNC ? "O_SYNC" : "O_DSYNC",
			     m->text[rec] ? m->text[rec] : "write");
	else if (h->kind != CT_CLAIM && (m->flags[rec] & R_CHANGE))
		r = asprintf(&text, "%s", m->text[rec] ? m->text[rec] : "a change");
	else
		r = p ? asprintf(&text, "%s(%s)%s", call, *p ? p : ".", failed)
		      : asprintf(&text, "%s%s", call, failed);
	if (r < 0)
		die("out of memory");
	return text;
}

/* The durability calls and changes before record rec (inclusive). */
static void counts(const struct run *run, uint32_t rec, struct point_result *p)
{
	for (uint32_t i = 0; rec != NEVER && i <= rec; i++) {
		const struct ct_record *h = &run->j.r[i].h;

		if (h->kind == CT_SYNC || h->kind == CT_SYNC_ALL ||
		    (h->kind == CT_WRITE && (h->flags & (CT_F_DSYNC | CT_F_SYNC))))
			p->syncs++;
		else if ((run->m.flags[i] & R_CHANGE) && h->kind != CT_IMAGE)
			p->changes++; /* a picture is no call of the program's */
	}
}

/* The changes a state lost, named, when there are three at most. */
static void lost_changes(const struct run *run, const struct point_states *ps,
			 const struct state *s, struct state_result *r)
{
	size_t n = 0;

	for (size_t u = 0; u < ps->nu; u++)
		n += !s->in[u] || s->torn == ps->u[u];
	for (size_t u = 0, k = 0; n <= 3 && u < ps->nu; u++)
		if ((!s->in[u] || s->torn == ps->u[u]) &&
		    !(r->changes[k++] = strdup(run->m.text[ps->u[u]] ? run->m.text[ps->u[u]] : "?")))
			die("out of memory");
}

/* Per state, the files whose unsynced changes it lost, with how many. */
static void lost(const struct run *run, const struct point_states *ps, const struct state *s,
		 struct state_result *r)
{
	lost_changes(run, ps, s, r);
	for (size_t u = 0; u < ps->nu; u++) {
		char *f;
		size_t k;

		if (s->in[u] && s->torn != ps->u[u])
			continue;
		if (!(f = strdup(run->m.file[ps->u[u]] ? run->m.file[ps->u[u]] : "?")))
			die("out of memory");
		for (k = 0; k < r->nlost && strcmp(r->lost[k].file, f); k++)
			;
		if (k < r->nlost) {
			r->lost[k].changes++;
			free(f);
			continue;
		}
		if (!(r->lost = realloc(r->lost, (r->nlost + 1) * sizeof(*r->lost))))
			die("out of memory");
		r->lost[r->nlost++] = (struct lost){f, 1};
	}
}

/* Has a state with this hash been seen at this point?  Then not again. */
static int seen_before(uint64_t (**seen)[2], size_t *n, const uint64_t h[2])
{
	for (size_t i = 0; i < *n; i++)
		if ((*seen)[i][0] == h[0] && (*seen)[i][1] == h[1])
			return 1;
	if (!(*seen = realloc(*seen, (*n + 1) * sizeof(**seen))))
		die("out of memory");
	(*seen)[*n][0] = h[0];
	(*seen)[(*n)++][1] = h[1];
	return 0;
}

static size_t slot_of(const uint64_t h[2], uint64_t out, uint64_t err, size_t cap)
{
	return (size_t)((h[0] ^ (h[1] * 31) ^ (out * 0x9e3779b97f4a7c15ULL) ^ err) & (cap - 1));
}

/* The check of this state with this output, if it has one: 1 + its
 * number, else 0. */
static size_t check_of(const struct run *run, const uint64_t h[2], uint64_t out, uint64_t err)
{
	for (size_t i = run->capindex ? slot_of(h, out, err, run->capindex) : 0;
	     run->capindex && run->check_index[i]; i = (i + 1) & (run->capindex - 1)) {
		const struct checked *c = &run->checked[run->check_index[i] - 1];

		if (c->h[0] == h[0] && c->h[1] == h[1] && c->out == out && c->err == err)
			return run->check_index[i];
	}
	return 0;
}

/* Check c (from 1) into the index, which grows to stay half empty. */
static void index_check(struct run *run, size_t c)
{
	const struct checked *x = &run->checked[c - 1];
	size_t i;

	if (2 * c > run->capindex) {
		free(run->check_index);
		run->capindex = run->capindex ? 2 * run->capindex : 256;
		if (!(run->check_index = calloc(run->capindex, sizeof(*run->check_index))))
			die("out of memory");
		for (size_t k = 1; k < c; k++)
			index_check(run, k);
	}
	for (i = slot_of(x->h, x->out, x->err, run->capindex); run->check_index[i];
	     i = (i + 1) & (run->capindex - 1))
		;
	run->check_index[i] = c;
}

/* A new check of state h, first met at this point: 1 + its number. */
static size_t new_check(struct run *run, const uint64_t h[2], long point, uint64_t out,
			uint64_t err)
{
	if (run->nchecked == run->capchecked &&
	    !(run->checked = realloc(run->checked, (run->capchecked = run->capchecked ?
						    2 * run->capchecked : 64) *
							   sizeof(*run->checked))))
		die("out of memory");
	run->checked[run->nchecked++] = (struct checked){{h[0], h[1]}, out, err, point,
							 CHECK_PENDING, UNCHECKED, -1, NULL, {0}};
	index_check(run, run->nchecked);
	return run->nchecked;
}

/* State r, to be checked: a check of its own, given to a worker (or left
 * to another shard), or the one of the same state with the same output
 * at an earlier point (or under another model), whose verdict holds here
 * too.  0, or -1 if crashtest is stopping and did not start it. */
static int to_check(struct run *run, const struct options *o, const struct built *b,
		    const uint64_t h[2], uint64_t err, const struct point_result *p,
		    struct state_result *r)
{
	size_t c = check_of(run, h, p->output, err);

	if (c) {
		r->check = c;
		r->checked_before = 1;
		r->same_as = run->checked[c - 1].point;
		return 0;
	}
	r->check = c = new_check(run, h, p->number, p->output, err);
	if (run->merge)
		return merge_take(run->merge, run, c - 1);
	if (!run_owns(run, c - 1)) {
		run->checked[c - 1].state = CHECK_ELSEWHERE;
		return 0;
	}
	return workers_start(run->workers, run, o, &(struct job){b, p->output, err, p->number,
								 r->what, c}, run_stopping);
}

/* State s of the point: its hash, and its check if it is to have one.  1
 * if it is a new state of the point (its result in p), 0 if it is one
 * already there; -1 if crashtest is stopping. */
static int one_state(struct run *run, const struct options *o, const struct run_model *m,
		     const struct point_states *ps, size_t i, struct point_result *p,
		     uint64_t (**seen)[2], uint64_t err)
{
	struct listing l;
	uint64_t h[2];
	struct built b = {.m = m, .ps = ps, .s = &ps->s[i], .t = &run->t, .l = &l,
			  .base = &run->base};
	struct state_result *r = &p->s[i];
	int fresh, stopped = 0;

	p->built++;
	state_names(m, ps, b.s, &run->t);
	tree_list(&run->t, &l);
	state_hash(&b, h);
	r->status = -1;
	r->v = UNCHECKED;
	/* At an unknown point, the states are not what a crash would leave:
	 * no checker runs in them. */
	if ((fresh = !seen_before(seen, &p->distinct, h)) && o->check && p->unknown.n)
		r->v = UNKNOWN;
	else if (fresh && o->check)
		stopped = to_check(run, o, &b, h, err, p, r);
	listing_free(&l);
	tree_undo(&run->t, run->base_mark);
	return stopped ? -1 : fresh;
}

static void drop_result(struct state_result *r)
{
	for (int k = 0; k < 3; k++)
		free(r->changes[k]);
	free(r->what);
	free(r->output);
	for (size_t k = 0; k < r->nlost; k++)
		free(r->lost[k].file);
	free(r->lost);
}

/* What the point is; its states, described, and what each lost. */
static void describe(struct run *run, const struct options *o, const struct run_model *m,
		     uint32_t rec, struct point_states *ps, struct point_result *p)
{
	if (p->number)
		p->after = after(run, rec);
	model_states(m, rec, o->states, o->seed, o->classes, ps);
	if (!(p->s = calloc(ps->ns ? ps->ns : 1, sizeof(*p->s))))
		die("out of memory");
	for (size_t i = 0; i < ps->ns; i++) {
		if (!(p->s[i].what = strdup(ps->s[i].what)))
			die("out of memory");
		lost(run, ps, &ps->s[i], &p->s[i]);
	}
}

void run_point(struct run *run, const struct options *o, size_t k, long number,
	       struct point_result *p)
{
	const struct run_model *m = run_view(run, k);
	uint32_t rec = number ? m->point_rec[number - 1] : run->j.n ? (uint32_t)run->j.n - 1 : NEVER;
	uint64_t (*seen)[2] = NULL, err;
	struct point_states ps;
	int fresh = 0;

	*p = (struct point_result){.number = number};
	counts(run, rec, p);
	p->output = number ? run->j.r[rec].h.out : run->out_size;
	for (size_t i = 0; i < m->unknown.n; i++)
		problem(&p->unknown, "%s", m->unknown.v[i]);
	for (size_t i = 0; rec != NEVER && m->unknown_from <= rec && i < m->unknown_at.n; i++)
		problem(&p->unknown, "%s", m->unknown_at.v[i]);
	describe(run, o, m, rec, &ps, p);
	p->unsynced = ps.nu;
	p->allowed = ps.candidates;
	p->cut = ps.cut;
	err = number ? run->j.r[rec].h.err : run->err_size;
	/* Stopping (a signal, the budget): the states not started are
	 * dropped, and so is the point (schedule.c). */
	for (size_t i = 0; i < ps.ns; i++)
		if (fresh >= 0 && (fresh = one_state(run, o, m, &ps, i, p, &seen, err)) > 0)
			p->s[p->ns++] = p->s[i];
		else
			drop_result(&p->s[i]);
	p->stopped = fresh < 0;
	free(seen);
	point_states_free(&ps);
}

int point_ready(const struct run *run, const struct point_result *p)
{
	for (size_t i = 0; i < p->ns; i++)
		if (p->s[i].check && run->checked[p->s[i].check - 1].state == CHECK_PENDING)
			return 0;
	return !p->stopped;
}

/* The point's verdict: unknown if the run was not all seen up to it (or a
 * state could not be built), never failed then; else failed if a state
 * failed; else ok once checked -- unless another shard checks them all. */
static enum verdict verdict(const struct point_result *p, const struct options *o)
{
	size_t elsewhere = 0;

	if (p->unknown.n)
		return UNKNOWN;
	for (size_t i = 0; i < p->ns; i++)
		if (p->s[i].v == FAILED)
			return FAILED;
	for (size_t i = 0; i < p->ns; i++)
		elsewhere += p->s[i].v == ELSEWHERE;
	return !o->check ? UNCHECKED : elsewhere && elsewhere == p->ns ? ELSEWHERE : OK;
}

/* State r takes its check's verdict; one that could not be built makes
 * its point unknown. */
static void take_verdict(const struct checked *c, struct point_result *p, struct state_result *r)
{
	if (c->state == CHECK_ELSEWHERE) {
		r->v = ELSEWHERE;
		return;
	}
	r->v = c->v;
	r->status = c->status;
	if (!(r->output = strdup(c->output ? c->output : "")))
		die("out of memory");
	for (size_t i = 0; i < c->why.n; i++)
		problem(&p->unknown, "%s", c->why.v[i]);
	if (c->v != UNKNOWN && !r->checked_before)
		p->checked++;
}

void point_finish(const struct run *run, const struct options *o, struct point_result *p)
{
	for (size_t i = 0; i < p->ns; i++)
		if (p->s[i].check)
			take_verdict(&run->checked[p->s[i].check - 1], p, &p->s[i]);
	p->v = verdict(p, o);
}
