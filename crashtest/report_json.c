/* SPDX-License-Identifier: MIT */
/* report_json.c -- the report as JSON, built with jansson.  Strings are the
 * report's escaped text (text.c): names with control characters or bytes
 * that are not UTF-8 read the same as in the text report, and the document
 * is valid JSON whatever the command named its files.
 */
#define _GNU_SOURCE 1
#include "crashtest/report_json.h"
#include "crashtest/text.h"
#include "common/common.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#define SCHEMA "eatmydata.crashtest/1" /* doc/crashtest.schema.json */
#define SCHEMA_VERSION 1

static json_t *doc, *points;
static const char *const verdict_name[] = {"ok", "failed", "unknown", "unchecked"};

static json_t *text(const char *s)
{
	char *e = escape1(s);
	json_t *j = json_string(e);

	free(e);
	if (!j)
		die("out of memory");
	return j;
}

static void set(json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set_new(o, key, v) != 0)
		die("out of memory");
}

static json_t *texts(const struct problems *p)
{
	json_t *a = json_array();

	for (size_t i = 0; p && i < p->n; i++)
		json_array_append_new(a, text(p->v[i]));
	return a;
}

void json_start(const struct report_head *h)
{
	json_t *cmd = json_array();

	doc = json_object();
	points = json_array();
	for (char **c = h->command; *c; c++)
		json_array_append_new(cmd, text(*c));
	set(doc, "schema", json_string(SCHEMA));
	set(doc, "version", json_integer(SCHEMA_VERSION));
	set(doc, "command", cmd);
	set(doc, "dir", text(h->dir));
	set(doc, "model", json_string(h->model));
	set(doc, "writes_are_points", json_boolean(h->writes));
	set(doc, "seed", h->seed ? json_integer((json_int_t)*h->seed) : json_null());
	set(doc, "states_bound", json_integer((json_int_t)h->bound));
	set(doc, "unexplored", texts(h->unexplored));
	set(doc, "points", points);
}

static json_t *state_json(const struct state_result *s)
{
	json_t *o = json_object(), *lost = json_array(), *changes = json_array();

	for (size_t i = 0; i < s->nlost; i++) {
		json_t *f = json_object();

		set(f, "file", text(s->lost[i].file));
		set(f, "changes", json_integer(s->lost[i].changes));
		json_array_append_new(lost, f);
	}
	for (int k = 0; k < 3 && s->changes[k]; k++)
		json_array_append_new(changes, text(s->changes[k]));
	set(o, "what", text(s->what));
	set(o, "lost_changes", changes);
	set(o, "verdict", json_string(verdict_name[s->v]));
	set(o, "check_status", s->status >= 0 ? json_integer(s->status) : json_null());
	set(o, "check_output", json_string(s->output ? s->output : ""));
	set(o, "same_as_point", s->checked_before ? json_integer(s->same_as) : json_null());
	set(o, "lost", lost);
	return o;
}

void json_point(const struct point_result *p)
{
	json_t *o = json_object(), *states = json_array();

	set(o, "point", p->number ? json_integer(p->number) : json_null());
	set(o, "after", p->number ? text(p->after) : json_string("end"));
	set(o, "durability_calls", json_integer(p->syncs));
	set(o, "changes", json_integer(p->changes));
	set(o, "output_bytes", json_integer((json_int_t)p->output));
	set(o, "unsynced", json_integer((json_int_t)p->unsynced));
	set(o, "states_allowed", json_integer((json_int_t)p->allowed));
	set(o, "states_built", json_integer((json_int_t)p->built));
	set(o, "states_distinct", json_integer((json_int_t)p->distinct));
	set(o, "states_checked", json_integer((json_int_t)p->checked));
	set(o, "cut", json_boolean(p->cut));
	set(o, "verdict", json_string(verdict_name[p->v]));
	set(o, "unknown", texts(&p->unknown));
	for (size_t i = 0; i < p->ns; i++)
		json_array_append_new(states, state_json(&p->s[i]));
	set(o, "states", states);
	json_array_append_new(points, o);
}

void json_end(size_t npoints, size_t states, size_t distinct, size_t checked,
	      const size_t count[4], double seconds)
{
	json_t *t = json_object();

	set(t, "points", json_integer((json_int_t)npoints));
	set(t, "states", json_integer((json_int_t)states));
	set(t, "distinct", json_integer((json_int_t)distinct));
	set(t, "checked", json_integer((json_int_t)checked));
	for (int v = 0; v < 4; v++)
		set(t, verdict_name[v], json_integer((json_int_t)count[v]));
	set(t, "seconds", json_real(seconds));
	set(doc, "totals", t);
	if (json_dumpf(doc, stdout, JSON_INDENT(1)) != 0)
		die("cannot write the report: out of memory or space");
	putchar('\n');
	json_decref(doc);
}
