/* SPDX-License-Identifier: MIT */
/* report.c -- the report in text, as points are done, and the totals that
 * decide crashtest's exit status.  Every name is escaped as it is printed
 * (text.c); the checker's output was escaped when it was read.
 */
#define _GNU_SOURCE 1
#include "crashtest/report.h"
#include "crashtest/report_json.h"
#include "crashtest/report_junit.h"
#include "crashtest/text.h"
#include "platform.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *const verdict_name[NVERDICTS] = {"ok", "FAILED", "unknown", "unchecked",
						    "in other shards"};

#define MODELS 8 /* at most, of report_head.shown */

static struct {
	struct report_head h;
	size_t points, states, distinct, checked, count[NVERDICTS];
	size_t by_model[MODELS][NVERDICTS];
} r;

int command_failed(const struct command_end *c)
{
	return !c->stopped_at && !c->interrupted &&
	       (WIFSIGNALED(c->status) || (WIFEXITED(c->status) && WEXITSTATUS(c->status)));
}

const char *signal_name(int sig, char *buf, size_t size)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else
		snprintf(buf, size, "signal %d", sig);
	return buf;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* Print fmt with one string, escaped. */
static void shown(const char *fmt, const char *s)
{
	char *e = escape1(s);

	printf(fmt, e);
	free(e);
}

/* crashtest check --shard: which part of the run this is. */
static void shard_text(void)
{
	printf("crashtest: shard %ld of %ld", r.h.shard + 1, r.h.shards);
	if (r.h.shard_from)
		printf(" (%s)", r.h.shard_from);
	printf(" of bundle %s: the other shards check the other states; crashtest merge puts "
	       "their --json reports together\n", r.h.bundle);
}

void report_start(const struct report_head *h)
{
	r.h = *h;
	if (h->json)
		json_start(&r.h);
	if (h->junit)
		junit_start(&r.h);
	if (!h->text)
		return;
	if (h->shards > 1)
		shard_text();
	printf("crashtest: ");
	for (size_t k = 0; k < h->shown; k++)
		printf("%s%s", k ? k + 1 == h->shown ? " and " : ", " : "", h->models[k]);
	printf(" model%s, crash points after durability calls and claims%s; "
	       "at most %zu states each; seed %llu\n", h->shown > 1 ? "s" : "",
	       h->writes ? " and every change" : "", h->bound, *h->seed);
}

/* Does ext4-ordered's ok at this point hold only by auto_da_alloc's rule? */
static int only_by_ada(const struct point_result *p)
{
	return r.h.ext4 >= 0 && r.h.noada >= 0 && p[r.h.ext4].v == OK && p[r.h.noada].v == FAILED;
}

/* A state that failed or is unknown: what it was, what it lost, what the
 * checker printed (indented). */
static void state_text(const char *model, long point, const struct state_result *s)
{
	printf("  %s%s", model ? model : "", model ? ": " : "");
	shown("state: %s\n", s->what);
	if (s->checked_before && s->same_as == point)
		printf("    (as under a model before: the same files and output)\n");
	else if (s->checked_before)
		printf("    (as at point %ld: the same files and output)\n", s->same_as);
	for (int k = 0; k < 3 && s->changes[k]; k++)
		shown(k ? ", %s" : "    lost: %s", s->changes[k]);
	for (size_t i = 0; !s->changes[0] && i < s->nlost; i++) {
		printf("%s", i ? ", " : "    lost: ");
		shown("%s", s->lost[i].file);
		printf(" (%u change%s)", s->lost[i].changes, plural(s->lost[i].changes, "", "s"));
	}
	if (s->nlost)
		putchar('\n');
	if (s->status >= 0)
		printf("    check exit %d%s\n", s->status, s->output && *s->output ? ":" : "");
	for (char *line = s->output, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		printf("    | %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
	}
}

/* With --first-failure: how many failed states of the point are not shown. */
static void more_failed(const struct point_result *p)
{
	size_t failed = 0;

	for (size_t i = 0; i < p->ns; i++)
		failed += p->s[i].v == FAILED;
	if (failed > 1)
		printf("  and %zu more state%s failed (not shown: --first-failure)\n", failed - 1,
		       plural(failed - 1, "", "s"));
}

/* "point N after CALL (...)": what every model's result of it shares. */
static void point_head(const struct point_result *p)
{
	if (p->number) {
		printf("point %ld %s", p->number, strncmp(p->after, "during ", 7) ? "after " : "");
		shown("%s", p->after);
	} else
		printf("end");
	printf(" (%ld durability call%s, %ld change%s before): ", p->syncs,
	       plural((size_t)p->syncs, "", "s"), p->changes, plural((size_t)p->changes, "", "s"));
}

static void states_text(const struct point_result *p)
{
	size_t seen = 0, other = 0;

	for (size_t i = 0; i < p->ns; i++) {
		seen += p->s[i].checked_before;
		other += p->s[i].v == ELSEWHERE && !p->s[i].checked_before;
	}
	printf("%zu state%s", p->distinct, plural(p->distinct, "", "s"));
	if (p->built > p->distinct)
		printf(" (%zu alike)", p->built - p->distinct);
	if (p->v != UNCHECKED && seen)
		printf(", %zu seen %s", seen, r.h.shown > 1 ? "before" : "at earlier points");
	if (other)
		printf(", %zu in other shards", other);
	if (p->cut)
		printf(", %zu of %zu the model allows", p->built, p->allowed);
}

/* Under the point: why it is unknown, the states that failed. */
static void details(const char *model, const struct point_result *p)
{
	for (size_t i = 0; i < p->unknown.n; i++) {
		printf("  %s%s", model ? model : "", model ? ": " : "");
		shown("unknown: %s\n", p->unknown.v[i]);
	}
	for (size_t i = 0, before = 0; i < p->ns; i++)
		if (p->s[i].v == FAILED && (!r.h.first_failure || !before++))
			state_text(model, p->number, &p->s[i]);
	if (r.h.first_failure)
		more_failed(p);
}

/* ext4-ordered ok only by auto_da_alloc: the first state that fails
 * without it. */
static void without_ada(const struct point_result *p)
{
	const struct point_result *n = &p[r.h.noada];

	for (size_t i = 0; i < n->ns; i++)
		if (n->s[i].v == FAILED) {
			state_text("with noauto_da_alloc", n->number, &n->s[i]);
			return;
		}
}

static void point_text(const struct point_result *p)
{
	point_head(p);
	for (size_t k = 0; k < r.h.shown; k++) {
		if (r.h.shown > 1)
			printf("%s%s %s (", k ? ", " : "", r.h.models[k], verdict_name[p[k].v]);
		states_text(&p[k]);
		if (r.h.shown == 1)
			printf(": %s", verdict_name[p[k].v]);
		if ((long)k == r.h.ext4 && only_by_ada(p))
			printf("%s on ext4 with auto_da_alloc; with noauto_da_alloc: FAILED",
			       r.h.shown > 1 ? ";" : "");
		if (r.h.shown > 1)
			printf(")");
	}
	printf("\n");
	for (size_t k = 0; k < r.h.shown; k++)
		details(r.h.shown > 1 ? r.h.models[k] : NULL, &p[k]);
	if (only_by_ada(p))
		without_ada(p);
}

void report_point(const struct point_result *p)
{
	r.points++;
	for (size_t k = 0; k < r.h.shown; k++) {
		r.states += p[k].built;
		r.distinct += p[k].distinct;
		r.checked += p[k].checked;
		r.count[p[k].v]++;
		if (k < MODELS)
			r.by_model[k][p[k].v]++;
	}
	for (size_t k = 0; k < r.h.shown; k++) {
		if (r.h.json)
			json_point(&p[k], r.h.shown > 1 ? r.h.models[k] : NULL,
				   (long)k == r.h.ext4 && only_by_ada(p));
		if (r.h.junit)
			junit_point(&p[k], r.h.models[k], r.h.first_failure);
	}
	if (r.h.text)
		point_text(p);
	fflush(stdout);
	if (r.h.json)
		fflush(r.h.json);
}

/* How the command ended, in words. */
static void command_text(const struct command_end *c)
{
	char name[32];

	printf("command: ");
	if (c->interrupted)
		printf("stopped by %s to crashtest before it ended\n",
		       signal_name(c->interrupted, name, sizeof(name)));
	else if (c->stopped_at)
		printf("stopped at point %ld (--at)\n", c->stopped_at);
	else if (WIFSIGNALED(c->status))
		printf("killed by %s%s", signal_name(WTERMSIG(c->status), name, sizeof(name)),
		       WCOREDUMP(c->status) ? " (core dumped)" : "");
	else
		printf("exit status %d", WEXITSTATUS(c->status));
	if (!c->interrupted && !c->stopped_at)
		printf("%s\n", command_failed(c) ? ": it failed on its own (crashtest exits 4)" : "");
}

/* What the interrupted run's last line says, into buf (JUnit's error). */
static const char *interrupted_words(const struct report_tail *t, char *buf, size_t size)
{
	char name[32];
	size_t n = t->budget_spent && !t->budget ? (size_t)snprintf(buf, size, "stopped by --budget ")
		 : t->budget_spent ? (size_t)snprintf(buf, size, "stopped by --budget=%gs ", t->budget)
				   : (size_t)snprintf(buf, size, "interrupted by %s ",
						      signal_name(t->interrupted, name,
								  sizeof(name)));

	if (n >= size)
		return buf;
	if (r.h.end.interrupted)
		snprintf(buf + n, size - n, "while the command ran: no point was built");
	else if (!t->planned)
		snprintf(buf + n, size - n, "before any point was built");
	else
		snprintf(buf + n, size - n, "after %zu of %zu points: the others were not built",
			 r.points, t->planned);
	return buf;
}

int report_end(const struct report_tail *t)
{
	char words[256];

	if (r.h.json)
		json_end(r.points, r.states, r.distinct, r.checked, r.count, r.by_model, t);
	if (r.h.junit)
		junit_end(t, command_failed(&r.h.end),
			  t->interrupted || t->budget_spent ? interrupted_words(t, words, sizeof(words))
							    : NULL);
	if (r.h.text) {
		for (size_t i = 0; r.h.unexplored && i < r.h.unexplored->n; i++)
			shown("not explored: %s\n", r.h.unexplored->v[i]);
		command_text(&r.h.end);
		printf("%zu point%s, %zu state%s (%zu distinct, %zu checked): %zu failed, "
		       "%zu unknown, %zu ok, %zu unchecked, %.1f s\n", r.points,
		       plural(r.points, "", "s"), r.states, plural(r.states, "", "s"), r.distinct,
		       r.checked, r.count[FAILED], r.count[UNKNOWN], r.count[OK], r.count[UNCHECKED],
		       t->seconds);
		for (size_t k = 0; r.h.shown > 1 && k < r.h.shown && k < MODELS; k++)
			printf("%s%s: %zu failed, %zu unknown, %zu ok%s", k ? "; " : "", r.h.models[k],
			       r.by_model[k][FAILED], r.by_model[k][UNKNOWN], r.by_model[k][OK],
			       k + 1 == r.h.shown ? "\n" : "");
		if (r.count[UNCHECKED])
			printf("nothing was checked: give --check=CMD, a command that tells whether "
			       "the directory is as it should be\n");
		if (t->interrupted || t->budget_spent)
			printf("%s\n", interrupted_words(t, words, sizeof(words)));
	}
	fflush(stdout);
	return command_failed(&r.h.end) ? 4 : r.count[FAILED] ? 1 : r.count[UNKNOWN] ? 2 :
	       t->budget_spent ? 5 : r.count[UNCHECKED] ? 3 : 0;
}

void point_result_free(struct point_result *p)
{
	for (size_t i = 0; i < p->ns; i++) {
		for (int k = 0; k < 3; k++)
			free(p->s[i].changes[k]);
		free(p->s[i].what);
		free(p->s[i].output);
		for (size_t k = 0; k < p->s[i].nlost; k++)
			free(p->s[i].lost[k].file);
		free(p->s[i].lost);
	}
	free(p->s);
	free(p->after);
	problems_free(&p->unknown);
}
