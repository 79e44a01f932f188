/* SPDX-License-Identifier: MIT */
/* report_json.c -- the report as JSON, written point by point as the text
 * report is (common/json.h).  Strings are the report's escaped text
 * (text.c): names with control characters or bytes that are not UTF-8 read
 * the same as in the text report.
 */
#define _GNU_SOURCE 1
#include "crashtest/report_json.h"
#include "crashtest/text.h"
#include "common/common.h"
#include "common/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define SCHEMA "eatmydata.crashtest/1" /* doc/crashtest.schema.json */
#define SCHEMA_VERSION 1

static struct jw w;
static const struct report_head *heads;
static const char *const verdict_name[NVERDICTS] = {"ok", "failed", "unknown", "unchecked",
						    "other_shard"};

static void text(const char *key, const char *s)
{
	char *e = escape1(s);

	jw_string(&w, key, e);
	free(e);
}

static void texts(const char *key, const struct problems *p)
{
	jw_array(&w, key);
	for (size_t i = 0; p && i < p->n; i++)
		text(NULL, p->v[i]);
	jw_end(&w);
}

/* A number that may be missing (0: null). */
static void maybe(const char *key, int present, long long v)
{
	if (present)
		jw_int(&w, key, v);
	else
		jw_null(&w, key);
}

/* How the command ended: its exit status or the signal that killed it,
 * or the point where --at stopped it (each null when not so). */
static void command_status(const struct command_end *c)
{
	int own = !c->stopped_at && !c->interrupted;
	char name[32];

	jw_object(&w, "command_status");
	maybe("exit", own && WIFEXITED(c->status), WEXITSTATUS(c->status));
	if (own && WIFSIGNALED(c->status))
		jw_string(&w, "signal", signal_name(WTERMSIG(c->status), name, sizeof(name)));
	else
		jw_null(&w, "signal");
	maybe("stopped_at_point", c->stopped_at != 0, c->stopped_at);
	jw_bool(&w, "failed", command_failed(c));
	jw_end(&w);
}

/* crashtest check: the bundle, and which shard of it this is. */
static void shard(const struct report_head *h)
{
	jw_string(&w, "bundle", h->bundle);
	jw_object(&w, "shard");
	jw_int(&w, "index", h->shard + 1);
	jw_int(&w, "count", h->shards);
	if (h->shard_from)
		jw_string(&w, "from", h->shard_from);
	else
		jw_null(&w, "from");
	jw_end(&w);
}

void json_start(const struct report_head *h)
{
	heads = h;
	jw_start(&w, h->json, 1);
	jw_object(&w, NULL);
	jw_string(&w, "schema", SCHEMA);
	jw_int(&w, "version", SCHEMA_VERSION);
	jw_array(&w, "command");
	for (char **c = h->command; *c; c++)
		text(NULL, *c);
	jw_end(&w);
	text("dir", h->dir);
	jw_string(&w, "model", h->model);
	jw_array(&w, "models");
	for (size_t k = 0; k < h->shown; k++)
		jw_string(&w, NULL, h->models[k]);
	jw_end(&w);
	jw_bool(&w, "writes_are_points", h->writes);
	maybe("seed", h->seed != NULL, h->seed ? (long long)*h->seed : 0);
	jw_count(&w, "states_bound", h->bound);
	texts("unexplored", h->unexplored);
	command_status(&h->end);
	if (h->bundle)
		shard(h);
	jw_array(&w, "points");
}

static void state_json(const struct state_result *s)
{
	jw_object(&w, NULL);
	text("what", s->what);
	jw_array(&w, "lost_changes");
	for (int k = 0; k < 3 && s->changes[k]; k++)
		text(NULL, s->changes[k]);
	jw_end(&w);
	jw_string(&w, "verdict", verdict_name[s->v]);
	maybe("check_status", s->status >= 0, s->status);
	jw_string(&w, "check_output", s->output ? s->output : "");
	maybe("same_as_point", s->checked_before && s->same_as, s->same_as); /* the end: null */
	jw_array(&w, "lost");
	for (size_t i = 0; i < s->nlost; i++) {
		jw_object(&w, NULL);
		text("file", s->lost[i].file);
		jw_int(&w, "changes", s->lost[i].changes);
		jw_end(&w);
	}
	jw_end(&w);
	jw_end(&w);
}

void json_point(const struct point_result *p, const char *model, int only_by_ada)
{
	jw_object(&w, NULL);
	if (model)
		jw_string(&w, "model", model);
	else
		jw_null(&w, "model");
	maybe("point", p->number != 0, p->number);
	if (p->number)
		text("after", p->after);
	else
		jw_string(&w, "after", "end");
	jw_int(&w, "durability_calls", p->syncs);
	jw_int(&w, "changes", p->changes);
	jw_count(&w, "output_bytes", p->output);
	jw_count(&w, "unsynced", p->unsynced);
	jw_count(&w, "states_allowed", p->allowed);
	jw_count(&w, "states_built", p->built);
	jw_count(&w, "states_distinct", p->distinct);
	jw_count(&w, "states_checked", p->checked);
	jw_bool(&w, "cut", p->cut);
	jw_string(&w, "verdict", verdict_name[p->v]);
	jw_bool(&w, "ok_only_with_auto_da_alloc", only_by_ada);
	texts("unknown", &p->unknown);
	jw_array(&w, "states");
	for (size_t i = 0; i < p->ns; i++)
		state_json(&p->s[i]);
	jw_end(&w);
	jw_end(&w);
}

/* Each model's verdicts, if the report has several. */
static void by_models(const size_t (*by_model)[NVERDICTS])
{
	jw_object(&w, "by_model");
	for (size_t k = 0; heads && k < heads->shown && heads->shown > 1; k++) {
		jw_object(&w, heads->models[k]);
		for (int v = 0; v < NVERDICTS; v++)
			jw_count(&w, verdict_name[v], by_model[k][v]);
		jw_end(&w);
	}
	jw_end(&w);
}

/* The checks this shard made, with what crashtest merge needs of each:
 * the state's hash and output lengths, the verdict, the checker's status
 * and output, why it could not be built (not escaped: merge reports them
 * as a run would). */
static void checks(const struct report_tail *tail)
{
	char key[80];

	jw_array(&w, "checks");
	for (size_t i = 0; i < tail->nchecks; i++) {
		const struct report_check *c = &tail->checks[i];

		jw_object(&w, NULL);
		jw_count(&w, "check", c->id);
		snprintf(key, sizeof(key), "%016llx%016llx %llu %llu",
			 (unsigned long long)c->key[0], (unsigned long long)c->key[1],
			 (unsigned long long)c->key[2], (unsigned long long)c->key[3]);
		jw_string(&w, "state", key);
		jw_string(&w, "verdict", verdict_name[c->v]);
		maybe("check_status", c->status >= 0, c->status);
		jw_string(&w, "check_output", c->output ? c->output : "");
		jw_array(&w, "unknown");
		for (size_t k = 0; c->why && k < c->why->n; k++)
			jw_string(&w, NULL, c->why->v[k]);
		jw_end(&w);
		jw_end(&w);
	}
	jw_end(&w);
}

void json_end(size_t npoints, size_t states, size_t distinct, size_t checked,
	      const size_t count[NVERDICTS], const size_t (*by_model)[NVERDICTS],
	      const struct report_tail *tail)
{
	char name[32];

	jw_end(&w); /* the points */
	jw_object(&w, "totals");
	jw_count(&w, "points", npoints);
	jw_count(&w, "states", states);
	jw_count(&w, "distinct", distinct);
	jw_count(&w, "checked", checked);
	for (int v = 0; v < NVERDICTS; v++)
		jw_count(&w, verdict_name[v], count[v]);
	jw_real(&w, "seconds", tail->seconds, 17);
	by_models(by_model);
	jw_end(&w);
	if (tail->budget_spent)
		jw_string(&w, "interrupted", "budget");
	else if (tail->interrupted)
		jw_string(&w, "interrupted", signal_name(tail->interrupted, name, sizeof(name)));
	else
		jw_null(&w, "interrupted");
	if (heads && heads->bundle)
		checks(tail);
	if (jw_finish(&w) != 0)
		die("cannot write the report: %s", strerror(errno));
}
