/* SPDX-License-Identifier: MIT */
/* crashtest_report.c -- crashtest's report, per crash point: where it was,
 * the durability calls and writes before it, what the rollback lost, and
 * the checker's verdict; in text or JSON.
 */
#include "launch/crashtest_rollback.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static const char *const verdict_name[] = {"ok", "failed", "unknown", "unchecked"};

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_list(const char *key, const struct strlist *l)
{
	printf(",\"%s\":[", key);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			putchar(',');
		json_string(l->v[i]);
	}
	putchar(']');
}

static void text_list(const char *what, const struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		printf("%s%s", i ? ", " : what, l->v[i]);
	if (l->n)
		putchar('\n');
}

/* The durability call is named by its path in the copy. */
static const char *after_what(const struct ct_run *run)
{
	static char buf[PATH_MAX + 32];
	char *at = strstr(run->after, run->work);

	snprintf(buf, sizeof(buf), "%s", run->after);
	if (at && (at[strlen(run->work)] == '/' || at[strlen(run->work)] == ')'))
		snprintf(buf + (at - run->after), sizeof(buf) - (size_t)(at - run->after), "%s%s",
			 at[strlen(run->work)] == '/' ? "" : ".",
			 at + strlen(run->work) + (at[strlen(run->work)] == '/'));
	return buf;
}

static int worst, points_shown;

void report_start(const char *model, int writes, const unsigned long long *seed, int json)
{
	if (json) {
		printf("{\"model\":\"%s\",\"writes_are_points\":%s", model,
		       writes ? "true" : "false");
		if (seed)
			printf(",\"seed\":%llu", *seed);
		printf(",\"points\":[\n");
	} else if (seed) {
		printf("random crash points, seed %llu\n", *seed);
	}
}

static void report_json(const struct point *p)
{
	const struct ct_run *run = &p->run;

	printf("%s{\"point\":", points_shown ? ",\n" : "");
	run->point ? printf("%ld", run->point) : printf("null");
	printf(",\"after\":");
	json_string(run->point ? after_what(run) : "end");
	printf(",\"durability_calls\":%ld,\"writes\":%ld,\"journal_bytes\":%ld", run->syncs,
	       run->writes, run->journal);
	printf(",\"verdict\":\"%s\",\"check_status\":%d", verdict_name[p->v], p->status);
	json_list("rolled_back", &run->rolled_back);
	json_list("undone", &run->undone);
	json_list("kept", &run->kept);
	json_list("unknown", &run->unknown);
	putchar('}');
}

static void report_text(const struct point *p)
{
	const struct ct_run *run = &p->run;

	if (run->point)
		printf("point %ld, after %s", run->point, after_what(run));
	else
		printf("end");
	printf(" (%ld durability call%s, %ld write%s): %s", run->syncs, run->syncs == 1 ? "" : "s",
	       run->writes, run->writes == 1 ? "" : "s", verdict_name[p->v]);
	p->v == FAILED ? printf(" (check exit %d)\n", p->status) : printf("\n");
	text_list("  rolled back: ", &run->rolled_back);
	text_list("  undone: ", &run->undone);
	text_list("  kept: ", &run->kept);
	text_list("  unknown: ", &run->unknown);
}

void report_point(const struct point *p, int json)
{
	json ? report_json(p) : report_text(p);
	points_shown++;
	if (p->v == FAILED)
		worst = 1;
	else if (p->v == UNKNOWN && !worst)
		worst = 2;
}

int report_end(int json)
{
	if (json)
		printf("\n]}\n");
	return worst;
}
