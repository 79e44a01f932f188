/* SPDX-License-Identifier: MIT */
/* report_junit.c -- the report as JUnit XML: a point ok passes, FAILED
 * fails (a failure per failed state, or the first with --first-failure),
 * unknown is in error (crashtest could not see all it needed), unchecked
 * or checked by another shard is skipped.  The names are the report's,
 * escaped as in the text (text.c); the checker's output was escaped when
 * it was read.
 */
#define _GNU_SOURCE 1
#include "crashtest/report_junit.h"
#include "crashtest/text.h"
#include "common/common.h"
#include "common/junit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct junit j;
static const struct report_head *head;

void junit_start(const struct report_head *h)
{
	head = h;
	junit_init(&j);
}

/* What a failed state lost, and what its checker said, as text. */
static char *failure_text(const struct state_result *s)
{
	char *text = NULL, *e;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		die("out of memory");
	for (int k = 0; k < 3 && s->changes[k]; k++) {
		e = escape1(s->changes[k]);
		fprintf(f, "%s%s", k ? ", " : "lost: ", e);
		free(e);
	}
	for (size_t i = 0; !s->changes[0] && i < s->nlost; i++) {
		e = escape1(s->lost[i].file);
		fprintf(f, "%s%s (%u changes)", i ? ", " : "lost: ", e, s->lost[i].changes);
		free(e);
	}
	if (s->changes[0] || s->nlost)
		fputc('\n', f);
	if (s->checked_before)
		fprintf(f, "as at point %ld: the same files and output\n", s->same_as);
	fprintf(f, "check exit %d\n%s", s->status, s->output ? s->output : "");
	fclose(f);
	return text;
}

static void failures(const struct point_result *p, int first_failure)
{
	for (size_t i = 0, shown = 0; i < p->ns; i++) {
		char *what, *text;

		if (p->s[i].v != FAILED || (first_failure && shown++))
			continue;
		what = escape1(p->s[i].what);
		text = failure_text(&p->s[i]);
		junit_outcome(&j, "failure", what, text);
		free(what);
		free(text);
	}
}

/* Why the point is unknown: the first reason as the message, all as text. */
static void unknown(const struct point_result *p)
{
	char *text = NULL, *e;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		die("out of memory");
	for (size_t i = 0; i < p->unknown.n; i++) {
		e = escape1(p->unknown.v[i]);
		fprintf(f, "unknown: %s\n", e);
		free(e);
	}
	fclose(f);
	e = p->unknown.n ? escape1(p->unknown.v[0]) : strdup("");
	junit_outcome(&j, "error", e, text);
	free(e);
	free(text);
}

void junit_point(const struct point_result *p, const char *model, int first_failure)
{
	char classname[64], *name, *after = p->number ? escape1(p->after) : NULL;

	snprintf(classname, sizeof(classname), "crashtest.%s", model);
	if ((p->number ? asprintf(&name, "point %ld %s%s", p->number,
				  strncmp(after, "during ", 7) ? "after " : "", after)
		       : asprintf(&name, "end")) < 0)
		die("out of memory");
	junit_case(&j, classname, name);
	if (p->v == FAILED)
		failures(p, first_failure);
	else if (p->v == UNKNOWN)
		unknown(p);
	else if (p->v == UNCHECKED)
		junit_outcome(&j, "skipped", "nothing was checked: give --check=CMD", NULL);
	else if (p->v == ELSEWHERE)
		junit_outcome(&j, "skipped", "checked by another shard", NULL);
	junit_case_end(&j);
	free(name);
	free(after);
}

/* A case of the run itself, in error. */
static void run_error(const char *name, const char *message)
{
	junit_case(&j, "crashtest", name);
	junit_outcome(&j, "error", message, NULL);
	junit_case_end(&j);
}

void junit_end(const struct report_tail *t, int command_failed, const char *interrupted)
{
	char *suite = NULL, seed[32], shard[48];
	size_t len = 0;
	FILE *f = open_memstream(&suite, &len);
	const char *props[12] = {"dir", head->dir, "model", head->model, "seed", seed};
	size_t n = 6;

	if (!f)
		die("out of memory");
	if (command_failed)
		run_error("command", "the command failed on its own (crashtest exits 4)");
	if (interrupted)
		run_error("run", interrupted);
	fprintf(f, "crashtest");
	for (char **c = head->command; *c; c++) {
		char *e = escape1(*c);

		fprintf(f, " %s", e);
		free(e);
	}
	fclose(f);
	snprintf(seed, sizeof(seed), "%llu", head->seed ? *head->seed : 0);
	if (head->bundle) {
		snprintf(shard, sizeof(shard), "%ld of %ld", head->shard + 1, head->shards);
		props[n++] = "bundle", props[n++] = head->bundle;
		props[n++] = "shard", props[n++] = shard;
	}
	if (junit_write(&j, head->junit, suite, t->seconds, props) != 0)
		die("cannot write %s: %s", head->junit, strerror(errno));
	free(suite);
}
