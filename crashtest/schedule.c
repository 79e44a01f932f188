/* SPDX-License-Identifier: MIT */
/* schedule.c -- the crash points asked for, in order: each point's states
 * met one after another (their hashes, which of them are new), the new
 * ones' checks run by the workers as they free up, and each point reported
 * as soon as it and every point before it are done -- in the order and with
 * the verdicts of a run with one worker.
 *
 * A signal to crashtest kills the workers; the budget lets them end.
 * Either way no state is started after it, and the points not done are
 * dropped: the report has every point before them, whole.
 */
#define _GNU_SOURCE 1
#include "crashtest/check.h"
#include "crashtest/run.h"
#include "crashtest/schedule.h"
#include "common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A point met, its results one per model, waiting for its checks. */
struct pending {
	struct point_result p[NMODELS];
	int meeting; /* its states are being met: not done, whatever they say */
};

struct schedule {
	struct run *run;
	const struct options *o;
	struct pending *q; /* points met and not yet reported, in order */
	size_t head, n, cap;
	long total, done;
	size_t built, failed;
	double start, shown;
};

/* ---- the points asked for ------------------------------------------------ */

/* A step of splitmix64: the draw of --random, the same for the same seed. */
static unsigned long long next_random(unsigned long long *state)
{
	unsigned long long z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int by_number(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The crash points to build, of the n the run passed, ascending. */
static long *choose(const struct options *o, long n, long *count)
{
	long k = o->at ? 1 : o->each ? (o->max && o->max < n ? o->max : n) :
		 o->random < n ? o->random : n;
	long *v = calloc((size_t)k + 1, sizeof(*v)), got = 0;
	unsigned long long state = o->seed;

	if (!v)
		die("out of memory");
	if (o->at)
		v[got++] = o->at;
	if (o->each || (o->random && k == n))
		for (got = 0; got < k; got++)
			v[got] = got + 1;
	/* Floyd's draw: k distinct points, each set of k equally likely. */
	for (long j = n - k + 1; got < k; j++) {
		long t = 1 + (long)(next_random(&state) % (unsigned long long)j);
		int seen = 0;

		for (long i = 0; i < got; i++)
			seen |= v[i] == t;
		v[got++] = seen ? j : t;
	}
	qsort(v, (size_t)k, sizeof(*v), by_number);
	*count = k;
	return v;
}

/* ---- progress ------------------------------------------------------------ */

static void clear_progress(void)
{
	if (isatty(2))
		fprintf(stderr, "\r%*s\r", 78, "");
}

/* On a terminal, how far a long run is: points done, states met, checked
 * and failed, the time, and how long the rest may take. */
static void progress(struct schedule *s)
{
	double now = monotonic_seconds(), spent = now - s->start;
	size_t checked = 0;

	if (!isatty(2) || spent < 2 || now - s->shown < 0.25 || s->total < 2)
		return;
	s->shown = now;
	for (size_t i = 0; i < s->run->nchecked; i++)
		checked += s->run->checked[i].state == CHECK_DONE;
	fprintf(stderr, "\rcrashtest: %ld/%ld points, %zu states, %zu checked, %zu failed, %.0f s",
		s->done, s->total, s->built, checked, s->failed, spent);
	if (s->done)
		fprintf(stderr, ", about %.0f s left",
			spent / (double)s->done * (double)(s->total - s->done));
	fprintf(stderr, "  ");
}

/* ---- the queue ----------------------------------------------------------- */

static void free_pending(struct schedule *s, struct pending *x)
{
	for (size_t k = 0; k < s->run->nmodels; k++)
		point_result_free(&x->p[k]);
}

static int ready(const struct schedule *s, const struct pending *x)
{
	if (x->meeting)
		return 0;
	for (size_t k = 0; k < s->run->nmodels; k++)
		if (!point_ready(s->run, &x->p[k]))
			return 0;
	return 1;
}

/* Report the points at the head of the queue that are done. */
static void drain(void *arg)
{
	struct schedule *s = arg;

	while (s->head < s->n && ready(s, &s->q[s->head])) {
		struct pending *x = &s->q[s->head++];

		for (size_t k = 0; k < s->run->nmodels; k++) {
			point_finish(s->run, s->o, &x->p[k]);
			for (size_t i = 0; i < x->p[k].ns; i++)
				s->failed += x->p[k].s[i].v == FAILED && !x->p[k].s[i].checked_before;
		}
		report_point(x->p);
		free_pending(s, x);
		s->done++;
	}
	progress(s);
}

static struct pending *push(struct schedule *s)
{
	if (s->head && s->n == s->cap) {
		memmove(s->q, s->q + s->head, (s->n - s->head) * sizeof(*s->q));
		s->n -= s->head;
		s->head = 0;
	}
	if (s->n == s->cap &&
	    !(s->q = realloc(s->q, (s->cap = s->cap ? 2 * s->cap : 16) * sizeof(*s->q))))
		die("out of memory");
	return memset(&s->q[s->n++], 0, sizeof(*s->q));
}

/* Point `number` (0: the end) under every model; 0 if it was met whole,
 * -1 if crashtest stopped while it was met (it is dropped). */
static int meet(struct schedule *s, long number)
{
	size_t at = (push(s), s->n - 1), k;
	struct pending *x = &s->q[at];

	x->meeting = 1;
	for (k = 0; k < s->run->nmodels; k++) {
		run_point(s->run, s->o, k, number, &x->p[k]);
		s->built += x->p[k].built;
		if (x->p[k].stopped)
			break;
	}
	x->meeting = 0;
	if (k == s->run->nmodels)
		return 0;
	for (size_t i = 0; i <= k; i++)
		point_result_free(&x->p[i]);
	s->n--;
	return -1;
}

/* The end of the run: with a signal, every worker and what it ran killed;
 * else the workers' last checks waited for. */
static void finish(struct schedule *s)
{
	struct workers *w = s->run->workers;

	while (w->running && !run_caught())
		workers_reap(w, s->run, 1);
	if (run_caught()) {
		power_off(0);
		w->running = 0;
		memset(w->w, 0, sizeof(w->w));
	}
	drain(s);
	clear_progress();
	while (s->head < s->n)
		free_pending(s, &s->q[s->head++]);
	free(s->q);
}

void run_points(struct run *run, const struct options *o, double start,
		struct report_tail *tail)
{
	struct schedule s = {.run = run, .o = o, .start = start};
	long n = 0, *at = choose(o, (long)run->m.npoints, &n);
	struct workers w;

	s.total = n + !o->at;
	tail->planned = (size_t)s.total;
	workers_init(&w, run, o->check && !run->merge ? o->jobs : 1);
	w.done = drain;
	w.arg = &s;
	for (long i = 0; i < s.total && !run_stopping(); i++) {
		if (meet(&s, i < n ? at[i] : 0) != 0)
			break;
		while (workers_reap(&w, run, 0))
			;
		drain(&s);
	}
	finish(&s);
	tail->reported = (size_t)s.done;
	tail->budget_spent |= !run_caught() && s.done < s.total && run_budget_spent();
	free(at);
}
