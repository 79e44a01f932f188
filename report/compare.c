/* SPDX-License-Identifier: MIT */
/* compare.c -- `syncstat compare OLD NEW`: per program and kind of call,
 * and per file, the calls and time of two runs and their change; fails
 * (COMPARE_FAIL) when the whole run's or a program and kind's calls or time
 * grew past the user's limit.  The files are listed, not gated: their names
 * change from run to run (temporary files, git's objects).
 *
 * Either side is a kept directory or a --json report of this schema; both
 * are untrusted input, and whatever is wrong in them stops the comparison
 * with exit 125, never a pass.
 */
#include "common/common.h"
#include "compare.h"
#include "common/json.h"
#include "common/junit.h"
#include "report_data.h"
#include "run.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FILES_SHOWN 20

struct side {
	unsigned long long calls, ns;
};

/* A program and kind (kind < EMD_K_COUNT) or a file (kind EMD_K_COUNT). */
struct row {
	struct group_key key;
	struct side s[2];
	int over; /* beyond a limit: 1 calls, 2 time */
};

struct table {
	struct row *r;
	size_t n, cap;
	struct keymap index;
	struct side total[2];
	char **command[2]; /* what each run ran */
};

static unsigned long long add_sat(unsigned long long a, unsigned long long b)
{
	return a + b < a ? ~0ULL : a + b;
}

static void add_row(struct table *t, int kind, const char *name, int side,
		    unsigned long long calls, unsigned long long ns)
{
	struct group_key k = {.kind = kind};
	size_t *place;

	snprintf(k.key, sizeof(k.key), "%s", name);
	if (!t->index.key_size)
		t->index = (struct keymap)KEYMAP_INIT(struct group_key, size_t);
	place = keymap_get(&t->index, &k, 1);
	if (!*place) {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 64;
			if (!(t->r = realloc(t->r, t->cap * sizeof(*t->r))))
				die("out of memory");
		}
		t->r[t->n] = (struct row){.key = k};
		*place = ++t->n;
	}
	t->r[*place - 1].s[side].calls = add_sat(t->r[*place - 1].s[side].calls, calls);
	t->r[*place - 1].s[side].ns = add_sat(t->r[*place - 1].s[side].ns, ns);
}

static const struct compare_options *patterns;

void compare_add_pattern(const char *option, const char *glob, const char **list, int *n)
{
	if (*n == COMPARE_PATTERNS)
		die("%s=%s: at most %d of them", option, glob, COMPARE_PATTERNS);
	if (!*glob)
		die("%s: expected a pattern such as '/tmp/tmp.*'", option);
	list[(*n)++] = glob;
}

/* A file's row: its name, the first --group-files glob that matches it,
 * or NULL for one --skip-files leaves out. */
static const char *file_row(const char *name)
{
	for (int i = 0; i < patterns->nskip; i++)
		if (fnmatch(patterns->skip[i], name, 0) == 0)
			return NULL;
	for (int i = 0; i < patterns->ngroup; i++)
		if (fnmatch(patterns->group[i], name, 0) == 0)
			return patterns->group[i];
	return name;
}

static void add_file(struct table *t, const char *name, int side,
		     unsigned long long calls, unsigned long long ns)
{
	if ((name = file_row(name)))
		add_row(t, EMD_K_COUNT, name, side, calls, ns);
}

/* A kept directory, loaded as the report loads it. */
static void load_dir(struct table *t, const char *dir, int side)
{
	struct run run;

	report_load(dir, &run);
	if (run.nunobserved)
		die("%s: %s ran unobserved (%s): the run's durability calls are unknown", dir,
		    report_one_line(run.unobserved[0]->path), report_one_line(run.unobserved[0]->site));
	t->total[side] = (struct side){run.calls, run.total};
	t->command[side] = run.argv;
	for (size_t i = 0; i < run.by_kind.n; i++)
		add_row(t, run.by_kind.g[i].kind, run.by_kind.g[i].key, side,
			run.by_kind.g[i].count, run.by_kind.g[i].total);
	for (size_t i = 0; i < run.by_file.n; i++)
		add_file(t, run.by_file.g[i].key, side, run.by_file.g[i].count,
			 run.by_file.g[i].total);
}

static const char *json_file;

static noreturn void bad(const char *what)
{
	die("%s: not a syncstat report: %s", json_file, what);
}

/* A member that must be a count: a whole number, 0 to 2^63 - 1. */
static unsigned long long count(const struct json *obj, const char *key)
{
	const struct json *v = json_get(obj, key);

	if (!v || v->type != JSON_INT || v->i < 0)
		bad(key);
	return (unsigned long long)v->i;
}

static const char *string(const struct json *obj, const char *key)
{
	const struct json *v = json_get(obj, key);

	if (!v || v->type != JSON_STRING)
		bad(key);
	return v->s;
}

static const struct json *array(const struct json *obj, const char *key)
{
	const struct json *v = json_get(obj, key);

	if (!v || v->type != JSON_ARRAY)
		bad(key);
	return v;
}

/* The report's command, its strings copied out of the document. */
static char **command(const struct json *doc)
{
	const struct json *a = array(doc, "command"), *arg;
	char **argv = calloc(a->n + 1, sizeof(*argv));

	if (!argv)
		die("out of memory");
	for (size_t i = 0; (arg = json_at(a, i)); i++)
		if (arg->type != JSON_STRING || !(argv[i] = strdup(arg->s)))
			bad("command");
	return argv;
}

static int kind_named(const char *name)
{
	for (int k = 0; k < EMD_K_FIRST_EVENT; k++)
		if (strcmp(report_kind_names[k], name) == 0)
			return k;
	bad("a kind of call this syncstat does not know");
}

/* The report's own schema, and no other: a field's meaning may change
 * with its number. */
static void check_schema(const struct json *doc)
{
	const struct json *v = json_get(doc, "schema");

	if (doc->type != JSON_OBJECT || !v || v->type != JSON_STRING)
		bad("no \"schema\"");
	if (strcmp(v->s, REPORT_SCHEMA) != 0)
		die("%s: a report of schema %s; this syncstat compares %s", json_file,
		    report_one_line(v->s), REPORT_SCHEMA);
}

static void load_json(struct table *t, const char *file, int side)
{
	const struct json *groups, *files, *unobserved, *g;
	struct json *doc;
	size_t len, i;
	char *text = records_read_input(file, (size_t)1 << 30, &len), why[256];

	json_file = file;
	if (!text)
		die("%s: %s", file, strerror(ENOENT));
	if (!(doc = json_parse(text, len, why, sizeof(why))))
		die("%s: not a JSON report (%s)", file, why);
	check_schema(doc);
	unobserved = json_get(doc, "unobserved");
	if (unobserved && unobserved->type != JSON_ARRAY)
		bad("unobserved");
	if (unobserved && unobserved->n)
		die("%s: %s ran unobserved (%s): the run's durability calls are unknown", file,
		    report_one_line(string(json_at(unobserved, 0), "path")),
		    report_one_line(string(json_at(unobserved, 0), "why")));
	t->total[side] = (struct side){count(doc, "calls"), count(doc, "total_ns")};
	t->command[side] = command(doc);
	groups = array(doc, "groups");
	for (i = 0; (g = json_at(groups, i)); i++)
		add_row(t, kind_named(string(g, "kind")), string(g, "program"), side,
			count(g, "count"), count(g, "total_ns"));
	files = array(doc, "files");
	for (i = 0; (g = json_at(files, i)); i++)
		add_file(t, string(g, "path"), side, count(g, "count"), count(g, "total_ns"));
	json_free(doc);
	free(text);
}

static void load(struct table *t, const char *name, int side)
{
	struct stat st;

	if (stat(name, &st) != 0)
		die("%s: %s", name, strerror(errno));
	if (S_ISDIR(st.st_mode))
		load_dir(t, name, side);
	else
		load_json(t, name, side);
}

void compare_parse_limit(const char *option, const char *text, int duration,
			 struct compare_limit *out)
{
	static const struct { const char *unit; double ns; } units[] = {
		{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	*out = (struct compare_limit){.set = 1};
	if (end != text && !errno && v >= 0 && v < 1e15 && strcmp(end, "%") == 0) {
		out->relative = 1;
		out->percent = v;
		return;
	}
	for (size_t i = 0; duration && end != text && !errno && v >= 0 && i < 4; i++)
		if (strcmp(end, units[i].unit) == 0 && v * units[i].ns < 9e18) {
			out->amount = (unsigned long long)(v * units[i].ns);
			return;
		}
	if (!duration && end != text && !*end && !errno && v >= 0 && v < 9e18 &&
	    v == (double)(unsigned long long)v) {
		out->amount = (unsigned long long)v;
		return;
	}
	die("%s=%s: expected a percentage (10%%) or %s", option, text,
	    duration ? "a duration (20ms, 1.5s, 300us, 100ns)" : "a number of calls");
}

/* Whether `was` -> `now` grew past the limit; from nothing, any growth
 * is past a percentage. */
static int over(const struct compare_limit *l, unsigned long long was,
		unsigned long long now)
{
	if (!l->set || now <= was)
		return 0;
	if (l->relative)
		return (double)(now - was) * 100 > l->percent * (double)was;
	return now - was > l->amount;
}

static int judge(const struct compare_options *opt, const struct side *s)
{
	return over(&opt->calls, s[0].calls, s[1].calls) |
	       over(&opt->time, s[0].ns, s[1].ns) << 1;
}

/* "+12 (+20.0%)", "-3 (-1.5%)", "+4 (new)", "0". */
static const char *change(unsigned long long was, unsigned long long now, int ns)
{
	static char buf[4][64];
	static int next;
	char *b = buf[next++ % 4];
	double d = (double)now - (double)was;

	if (now == was)
		return "0";
	if (ns)
		snprintf(b, 64, "%+.3f ms", d / 1e6);
	else
		snprintf(b, 64, "%+.0f", d);
	if (was)
		snprintf(b + strlen(b), 64 - strlen(b), " (%+.1f%%)", 100 * d / (double)was);
	else
		snprintf(b + strlen(b), 64 - strlen(b), " (new)");
	return b;
}

static void print_row(FILE *out, const char *name, const struct side *s, int verdict)
{
	fprintf(out, "%-36s %9llu %9llu %-18s %11.3f %11.3f %-22s%s\n", name,
		s[0].calls, s[1].calls, change(s[0].calls, s[1].calls, 0), s[0].ns / 1e6,
		s[1].ns / 1e6, change(s[0].ns, s[1].ns, 1),
		verdict == 3 ? " FAIL: calls, time" : verdict == 2 ? " FAIL: time"
		: verdict == 1 ? " FAIL: calls" : "");
}

static void print_header(FILE *out, const char *title)
{
	fprintf(out, "\n%-36s %9s %9s %-18s %11s %11s %s\n", title, "old calls",
		"new calls", "change", "old ms", "new ms", "change");
}

/* Most growth in time first, then in calls. */
static int by_growth(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double dx = (double)x->s[1].ns - x->s[0].ns, dy = (double)y->s[1].ns - y->s[0].ns;
	double cx = (double)x->s[1].calls - x->s[0].calls,
	       cy = (double)y->s[1].calls - y->s[0].calls;

	if ((x->key.kind == EMD_K_COUNT) != (y->key.kind == EMD_K_COUNT))
		return x->key.kind == EMD_K_COUNT ? 1 : -1; /* the kinds first */
	if (dx != dy)
		return dx < dy ? 1 : -1;
	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(x->key.key, y->key.key);
}

static void limit_cases(const struct compare_options *opt, const char *row, const struct side *s);

/* The kinds, each judged; then the files that changed most. */
static int print_rows(FILE *out, const struct table *t, const struct compare_options *opt)
{
	char name[400];
	size_t i, shown = 0;
	int failed = 0, v;

	print_header(out, "program and kind");
	for (i = 0; i < t->n && t->r[i].key.kind < EMD_K_COUNT; i++) {
		snprintf(name, sizeof(name), "%s %s", report_one_line(t->r[i].key.key),
			 report_kind_names[t->r[i].key.kind]);
		failed |= v = judge(opt, t->r[i].s);
		limit_cases(opt, name, t->r[i].s);
		print_row(out, name, t->r[i].s, v);
	}
	print_header(out, "files (most grown first; not judged)");
	for (; i < t->n && shown < FILES_SHOWN; i++)
		if (t->r[i].s[0].calls != t->r[i].s[1].calls || t->r[i].s[0].ns != t->r[i].s[1].ns) {
			print_row(out, report_one_line(t->r[i].key.key), t->r[i].s, 0);
			shown++;
		}
	if (i < t->n)
		fprintf(out, "... and %zu more files\n", t->n - i);
	return failed;
}

static const char *limit_text(const struct compare_limit *l, int ns)
{
	static char buf[2][48];
	static int next;
	char *b = buf[next++ % 2];

	if (!l->set)
		return "none";
	if (l->relative)
		snprintf(b, 48, "+%g%%", l->percent);
	else if (ns)
		snprintf(b, 48, "+%.3f ms", l->amount / 1e6);
	else
		snprintf(b, 48, "+%llu", l->amount);
	return b;
}

/* --junit: a case for each limit set, of each row judged. */
static struct junit *junit;

static void limit_case(const char *row, const char *what, const struct compare_limit *l,
		       unsigned long long was, unsigned long long now, int ns)
{
	char name[512], message[256];

	if (!junit || !l->set)
		return;
	snprintf(name, sizeof(name), "%s: %s", row, what);
	junit_case(junit, "syncstat.compare", name);
	if (over(l, was, now)) {
		snprintf(message, sizeof(message), "%s grew past %s: %s", what, limit_text(l, ns),
			 change(was, now, ns));
		junit_outcome(junit, "failure", message, NULL);
	}
	junit_case_end(junit);
}

static void limit_cases(const struct compare_options *opt, const char *row, const struct side *s)
{
	limit_case(row, "calls", &opt->calls, s[0].calls, s[1].calls, 0);
	limit_case(row, "time", &opt->time, s[0].ns, s[1].ns, 1);
}

/* The cases, as the suite "syncstat compare OLD -> NEW". */
static void write_junit(const struct compare_options *opt, const char *old, const char *new_)
{
	char suite[1024], calls[48], time[48];
	const char *props[] = {"calls limit", calls, "time limit", time, NULL};

	snprintf(suite, sizeof(suite), "syncstat compare %s -> %s", report_one_line(old),
		 report_one_line(new_));
	snprintf(calls, sizeof(calls), "%s", limit_text(&opt->calls, 0));
	snprintf(time, sizeof(time), "%s", limit_text(&opt->time, 1));
	if (junit_write(junit, opt->junit, suite, 0, props) != 0)
		die("cannot write %s: %s", opt->junit, strerror(errno));
	junit = NULL;
}

static int same_command(char *const *a, char *const *b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b) != 0)
			return 0;
	return !*a && !*b;
}

/* Two runs of different commands compared by mistake (the wrong baseline)
 * would pass or fail on nothing: refused unless asked for. */
static void check_commands(const struct table *t, const char *old, const char *new_)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (same_command(t->command[0], t->command[1]) || !(f = open_memstream(&text, &len)))
		return;
	fprintf(f, "\n  %s: ", report_one_line(old));
	report_command_line(f, t->command[0]);
	fprintf(f, "\n  %s: ", report_one_line(new_));
	report_command_line(f, t->command[1]);
	fclose(f);
	die("not the same command (--any-command compares them anyway):%s", text);
}

int compare_runs(const char *old, const char *new_, const struct compare_options *opt)
{
	struct table t = {0};
	FILE *out = stdout;
	int failed;

	patterns = opt;
	load(&t, old, 0);
	load(&t, new_, 1);
	if (!opt->any_command)
		check_commands(&t, old, new_);
	if (t.n > 1)
		qsort(t.r, t.n, sizeof(*t.r), by_growth);
	if (opt->output && !(out = fopen(opt->output, "we")))
		die("cannot write %s: %s", opt->output, strerror(errno));
	fprintf(out, "syncstat compare: %s -> %s\nlimits: calls %s, time %s\n",
		report_one_line(old), report_one_line(new_), limit_text(&opt->calls, 0),
		limit_text(&opt->time, 1));
	print_header(out, "whole run");
	junit = opt->junit ? &(struct junit){0} : NULL;
	if (junit)
		junit_init(junit);
	limit_cases(opt, "all durability calls", t.total);
	failed = judge(opt, t.total);
	print_row(out, "all durability calls", t.total, failed);
	failed |= print_rows(out, &t, opt);
	fprintf(out, "\n%s\n", failed ? "FAIL: grew past a limit" : "PASS");
	if (junit)
		write_junit(opt, old, new_);
	if (fflush(out) != 0 || (out != stdout && fclose(out) != 0))
		die("cannot write %s: %s", opt->output ? opt->output : "the output",
		    strerror(errno));
	return failed ? COMPARE_FAIL : COMPARE_PASS;
}
