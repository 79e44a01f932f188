/* SPDX-License-Identifier: MIT */
/* merge.c -- the shards' results, read from their --json reports. */
#define _GNU_SOURCE 1
#include "crashtest/merge.h"
#include "common/common.h"
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most a report may hold: a shard of a large run is large. */
#define REPORT_MAX (1ULL << 32)

struct result {
	long shard; /* 1 + the shard whose report has it, 0: none */
	int taken;
	uint64_t key[4];
	enum verdict v;
	int status;
	char *output;
	struct problems why;
};

struct merge {
	long shards;
	char **cut;        /* per shard: what cut it short, or NULL */
	struct result *r;  /* by check */
	size_t n;
	struct report_tail *tail;
};

static char *read_report(const char *path, size_t *len)
{
	int fd = open_regular(path);
	struct stat st;
	char *text;

	if (fstat(fd, &st) != 0 || (unsigned long long)st.st_size > REPORT_MAX ||
	    !(text = malloc((size_t)st.st_size + 1)))
		die("cannot read %s: %s", path, strerror(errno ? errno : EFBIG));
	*len = 0;
	while (*len < (size_t)st.st_size) {
		ssize_t k = read(fd, text + *len, (size_t)st.st_size - *len);

		if (k <= 0)
			die("cannot read %s: %s", path, k < 0 ? strerror(errno) : "it shrank");
		*len += (size_t)k;
	}
	close(fd);
	return text;
}

static const struct json *member(const char *path, const struct json *obj, const char *name,
				 enum json_type type)
{
	const struct json *v = json_get(obj, name);

	if (!v || (v->type != type && !(type == JSON_REAL && v->type == JSON_INT)))
		die("%s: not a report of crashtest check --json (no %s)", path, name);
	return v;
}

static enum verdict verdict_named(const char *path, const char *s)
{
	static const char *const names[] = {"ok", "failed", "unknown"};

	for (int v = 0; v < 3; v++)
		if (!strcmp(s, names[v]))
			return (enum verdict)v;
	die("%s: a check with no verdict ('%s')", path, s);
}

/* One check of shard `shard`'s report. */
static void take_check(struct merge *m, const char *path, long shard, const struct json *c)
{
	const struct json *id = member(path, c, "check", JSON_INT), *why;
	const struct json *status = json_get(c, "check_status");
	struct result *r;

	if (id->i < 0 || id->i > (long long)(1u << 30))
		die("%s: a check numbered %lld", path, id->i);
	if ((size_t)id->i >= m->n) {
		if (!(m->r = realloc(m->r, ((size_t)id->i + 1) * sizeof(*m->r))))
			die("out of memory");
		memset(m->r + m->n, 0, ((size_t)id->i + 1 - m->n) * sizeof(*m->r));
		m->n = (size_t)id->i + 1;
	}
	r = &m->r[id->i];
	if (r->shard)
		die("check %lld is in the reports of shards %ld and %ld: they are not the shards of "
		    "one partition", id->i, r->shard, shard);
	if (id->i % m->shards != shard - 1)
		die("%s: check %lld is shard %lld's, not shard %ld's", path, id->i,
		    id->i % m->shards + 1, shard);
	r->shard = shard;
	if (sscanf(member(path, c, "state", JSON_STRING)->s, "%16llx%16llx %llu %llu",
		   (unsigned long long *)&r->key[0], (unsigned long long *)&r->key[1],
		   (unsigned long long *)&r->key[2], (unsigned long long *)&r->key[3]) != 4)
		die("%s: check %lld names no state", path, id->i);
	r->v = verdict_named(path, member(path, c, "verdict", JSON_STRING)->s);
	r->status = status && status->type == JSON_INT ? (int)status->i : -1;
	if (!(r->output = strdup(member(path, c, "check_output", JSON_STRING)->s)))
		die("out of memory");
	why = member(path, c, "unknown", JSON_ARRAY);
	for (size_t i = 0; i < why->n; i++)
		if (why->v[i]->type == JSON_STRING)
			problem(&r->why, "%s", why->v[i]->s);
}

/* A shard's report: of this bundle, its shard not seen yet. */
static void read_one(struct merge *m, const struct run *run, const char *path)
{
	char why[256], *text;
	size_t len;
	struct json *doc;
	const struct json *shard, *cut, *checks;
	long index, count;

	text = read_report(path, &len);
	if (!(doc = json_parse(text, len, why, sizeof(why))))
		die("%s: not a JSON report: %s", path, why);
	free(text);
	if (strcmp(member(path, doc, "schema", JSON_STRING)->s, "eatmydata.crashtest/1"))
		die("%s: not a report of crashtest", path);
	if (strcmp(member(path, doc, "bundle", JSON_STRING)->s, run->id))
		die("%s: a report of bundle %s, not of this one (%s)", path, json_get(doc, "bundle")->s,
		    run->id);
	shard = member(path, doc, "shard", JSON_OBJECT);
	index = (long)member(path, shard, "index", JSON_INT)->i;
	count = (long)member(path, shard, "count", JSON_INT)->i;
	if (!m->shards && count >= 1 && count <= 1 << 20 && (m->shards = count))
		m->cut = calloc((size_t)count + 1, sizeof(char *));
	if (count != m->shards || index < 1 || index > count)
		die("%s: shard %ld of %ld, where the first report is of %ld shards", path, index, count,
		    m->shards);
	if (m->cut[index])
		die("%s: shard %ld's report a second time", path, index);
	cut = json_get(doc, "interrupted");
	m->cut[index] = strdup(cut && cut->type == JSON_STRING ? cut->s : "");
	m->tail->seconds += member(path, member(path, doc, "totals", JSON_OBJECT), "seconds",
				   JSON_REAL)->real;
	checks = member(path, doc, "checks", JSON_ARRAY);
	for (size_t i = 0; i < checks->n; i++)
		take_check(m, path, index, checks->v[i]);
	json_free(doc);
}

struct merge *merge_read(const struct run *run, char *const *reports, struct report_tail *tail)
{
	struct merge *m = calloc(1, sizeof(*m));

	if (!m)
		die("out of memory");
	m->tail = tail;
	for (char *const *r = reports; *r; r++)
		read_one(m, run, *r);
	for (long s = 1; s <= m->shards; s++)
		if (!m->cut[s])
			die("shard %ld of %ld has no report: merge them all", s, m->shards);
	return m;
}

/* The cause a shard's report gave for stopping, into the tail. */
static void cut_short(struct merge *m, const char *cause)
{
	char name[32];

	if (!strcmp(cause, "budget")) {
		m->tail->budget_spent = 1;
		return;
	}
	for (int sig = 1; sig < 65; sig++)
		if (!strcmp(cause, signal_name(sig, name, sizeof(name))))
			m->tail->interrupted = sig;
	if (!m->tail->interrupted)
		m->tail->interrupted = SIGTERM;
}

int merge_take(struct merge *m, struct run *run, size_t c)
{
	struct checked *x = &run->checked[c];
	struct result *r = c < m->n ? &m->r[c] : NULL;
	long shard = (long)(c % (size_t)m->shards) + 1;

	if (!r || !r->shard) {
		if (!*m->cut[shard])
			die("check %zu (point %ld) is in no report: shard %ld of %ld should have it",
			    c, x->point, shard, m->shards);
		cut_short(m, m->cut[shard]);
		run_stop();
		return -1;
	}
	if (r->key[0] != x->h[0] || r->key[1] != x->h[1] || r->key[2] != x->out ||
	    r->key[3] != x->err)
		die("shard %ld's check %zu is of another state than this bundle's: a report of "
		    "another run", r->shard, c);
	x->v = r->v;
	x->status = r->status;
	x->output = r->output;
	r->output = NULL;
	x->why = r->why;
	r->why = (struct problems){0};
	x->state = CHECK_DONE;
	r->taken = 1;
	return 0;
}

void merge_done(const struct merge *m)
{
	for (size_t c = 0; c < m->n; c++)
		if (m->r[c].shard && !m->r[c].taken && !run_stopping())
			die("shard %ld's report has check %zu, which is none of this bundle's run",
			    m->r[c].shard, c);
}

void merge_free(struct merge *m)
{
	for (size_t c = 0; c < m->n; c++) {
		free(m->r[c].output);
		problems_free(&m->r[c].why);
	}
	for (long s = 0; s <= m->shards; s++)
		free(m->cut[s]);
	free(m->cut);
	free(m->r);
	free(m);
}
