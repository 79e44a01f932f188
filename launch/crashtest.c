/* SPDX-License-Identifier: MIT */
/* crashtest.c -- run a command once on a copy of a directory under
 * libcrashtest, then build, for each crash point asked for, the states a
 * power failure could have left there (crashtest/model.h) and run a checker
 * on each.  DIR is only read.
 */
#define _GNU_SOURCE 1
#include "crashtest/bundle.h"
#include "crashtest/check.h"
#include "crashtest/merge.h"
#include "crashtest/run.h"
#include "crashtest/schedule.h"
#include "crashtest/text.h"
#include "common/common.h"
#include "seccomp/seccomp.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"Usage: crashtest [OPTION]... DIR [--] COMMAND [ARG]...\n"
	"       crashtest record --bundle=FILE [OPTION]... DIR [--] COMMAND [ARG]...\n"
	"       crashtest check [--shard=I/N] [-j N] [--budget=D] [--json[=FILE]] BUNDLE\n"
	"       crashtest merge [--json[=FILE]] [--junit=FILE] BUNDLE REPORT...\n"
	"Run COMMAND once in a copy of DIR, then, for each crash point (a durability\n"
	"call: fsync, fdatasync, sync, syncfs, msync, an O_SYNC write; a claim: what\n"
	"COMMAND printed, a write to a pipe or socket; with --writes, every change),\n"
	"build the states a power failure could leave there, as the model allows,\n"
	"and run a checker on each.  DIR is not changed.\n"
	"\n"
	"      --at=N       the Nth crash point only (COMMAND is stopped there)\n"
	"      --each       each crash point in turn, then the end\n"
	"      --max=M      with --each, the first M points only\n"
	"      --random=K   K crash points drawn at random, then the end\n"
	"      --seed=S     the draw of --random and of states past --states\n"
	"                   (default: from the clock; the report gives it)\n"
	"      --writes     every write and change of names is a crash point too\n"
	"      --model=M    posix (default): what no fsync or sync covers may be\n"
	"                   lost, sector by sector; ext4-ordered, xfs: those file\n"
	"                   systems' guarantees on top (ext4-noauto_da_alloc: ext4\n"
	"                   mounted so); all: posix, ext4-ordered and xfs side by\n"
	"                   side (doc/crashtest.md)\n"
	"      --states=N   at most N states per crash point (default 64)\n"
	"      --outside-ok=GLOB  a file outside DIR that GLOB names (an absolute\n"
	"                   path; * matches / too) is no part of any state: writing\n"
	"                   it does not make the run unknown (always: the JVM's\n"
	"                   /tmp/hsperfdata_*, /dev/shm/sem.*, /proc/*)\n"
	"      --check=CMD  run CMD with sh -c in each state: its exit status is the\n"
	"                   verdict (CRASHTEST_OUTPUT names a file holding what\n"
	"                   COMMAND printed up to the crash point)\n"
	"  -j, --jobs=N     check N states at once (default: the CPUs crashtest may\n"
	"                   use), each checker in namespaces of its own\n"
	"      --budget=D   start no state after D (90s, 10m, 1.5h): the report\n"
	"                   has the points done, and says it was cut short\n"
	"      --json[=FILE]  the report in JSON (to FILE: the text as well)\n"
	"      --junit=FILE the report as JUnit XML too: a test case per point\n"
	"      --first-failure  under a failed point, its first failed state only\n"
	"      --seccomp=S  auto (default): a program the library cannot enter\n"
	"                   (static, Go) is followed by a seccomp supervisor; off:\n"
	"                   it is not, and the run is unknown\n"
	"\n"
	"record: run COMMAND and write what checking it needs to one file, the\n"
	"bundle.  check: build and check the bundle's states (on any machine with\n"
	"the checker), or one shard of them:\n"
	"      --shard=I/N  the Ith of N shards (default: from GitLab's, CircleCI's\n"
	"                   or Buildkite's variables of a parallel job)\n"
	"      --shards=N   N shards, the index from JOB_COMPLETION_INDEX (a\n"
	"                   Kubernetes Indexed Job)\n"
	"      --check=CMD  another checker than the one the bundle was recorded with\n"
	"merge: the report and status of the whole run, from each shard's --json.\n"
	"\n"
	"  -h, --help       show this help and exit\n"
	"  -V, --version    show the version and exit\n"
	"\n"
	"Without --at, --each or --random, the crash is at the end of COMMAND.\n"
	"Exit status: 4 if COMMAND failed on its own (an exit status other than 0,\n"
	"a signal); else 0 if every state was checked ok, 1 if a check failed, 2 if\n"
	"some point was unknown (and none failed), 3 if nothing was checked (no\n"
	"--check), 5 if --budget cut it short; 125 for an error of crashtest itself,\n"
	"126 or 127 if COMMAND could not be run or found.  Interrupted (SIGINT,\n"
	"SIGTERM, SIGHUP), it ends its report with what it built, then dies of the\n"
	"signal.\n";

static void parse_model(const char *arg, struct options *o)
{
	o->all_models = !strcmp(arg, "all");
	for (int i = 0; i < NMODELS; i++)
		if (!strcmp(arg, model_names[i]))
			o->model = (enum model)i;
	if (!o->all_models && strcmp(arg, model_names[o->model]))
		die("--model: '%s' is not posix, ext4-ordered, ext4-noauto_da_alloc, xfs or all "
		    "(try 'crashtest --help')", arg);
}

/* --classes=lost,kept,...: which states to build (the tests show what each
 * kind catches by building it alone). */
static int parse_classes(const char *arg)
{
	static const char *const names[] = {"lost", "kept", "prefix", "omit", "alone", "torn",
					    "journal", "pair"};
	char *copy = strdup(arg), *save = NULL;
	int classes = 0;

	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i = 0;

		while (i < sizeof(names) / sizeof(*names) && strcmp(w, names[i]))
			i++;
		if (i == sizeof(names) / sizeof(*names))
			die("--classes: '%s' is not a kind of state", w);
		classes |= 1 << i;
	}
	free(copy);
	return classes;
}

/* Files outside DIR that programs write and no state depends on: the
 * JVM's performance counters (a shared mapping it rewrites as it runs),
 * glibc's POSIX semaphores (sem_open's files), procfs (the JVM writes its
 * coredump_filter): none is on a disk. */
static const char outside_ok_default[] = "/tmp/hsperfdata_*\n/dev/shm/sem.*\n/proc/*";

/* --outside-ok=GLOB, added to the globs the library is given. */
static void outside_ok(const char *glob, struct options *o)
{
	char *more;

	if (glob[0] != '/' || strchr(glob, '\n'))
		die("--outside-ok: '%s' is not an absolute path (try 'crashtest --help')", glob);
	if (asprintf(&more, "%s\n%s", o->outside_ok, glob) < 0)
		die("out of memory");
	free(o->outside_ok);
	o->outside_ok = more;
}

/* "90s", "10m", "1.5h", "2d", or seconds; dies naming the option if it
 * is none of those. */
static double parse_duration(const char *what, const char *arg)
{
	static const struct { char unit; double seconds; } units[] = {
		{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
	char *end;
	double v = strtod(arg, &end);

	for (size_t i = 0; *end && i < sizeof(units) / sizeof(*units); i++)
		if (end[0] == units[i].unit && !end[1]) {
			v *= units[i].seconds;
			end++;
		}
	if (end == arg || *end || !(v > 0) || v > 1e9)
		die("%s: '%s' is not a duration (90s, 10m, 1.5h) (try 'crashtest --help')", what, arg);
	return v;
}

/* The CPUs this process may run on: -j's default. */
static int cpus(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0 || (n = CPU_COUNT(&set)) < 1)
		return 1;
	return n > MAX_JOBS ? MAX_JOBS : n;
}

/* One option of the crash points; 0 if c is not one. */
static int point_option(int c, struct options *o)
{
	if (c == 'a')
		o->at = parse_number("--at", optarg, 1, 1L << 40);
	else if (c == 'm')
		o->max = parse_number("--max", optarg, 1, 1L << 40);
	else if (c == 'r')
		o->random = parse_number("--random", optarg, 1, 1L << 20);
	else if (c == 's')
		o->seed = (unsigned long long)parse_number("--seed", optarg, 0, LONG_MAX),
		o->seeded = 1;
	else if (c == 'n')
		o->states = (size_t)parse_number("--states", optarg, 1, 1L << 20);
	else if (c == 'e')
		o->each = 1;
	else if (c == 'w')
		o->writes = 1;
	else if (c == 'J')
		o->jobs = (int)parse_number("-j", optarg, 1, MAX_JOBS);
	else if (c == 'B')
		o->budget = parse_duration("--budget", optarg);
	else
		return 0;
	return 1;
}

/* --shard=I/N: I from 1 to N. */
static void parse_shard(const char *arg, struct options *o)
{
	long i, n;
	char end;

	if (sscanf(arg, "%ld/%ld%c", &i, &n, &end) != 2 || n < 1 || n > 1 << 20 || i < 1 || i > n)
		die("--shard: '%s' is not I/N, 1 <= I <= N (try 'crashtest --help')", arg);
	o->shard = i - 1;
	o->shards = n;
	o->shard_from = "--shard";
}

/* The options each subcommand takes (the codes of parse's table). */
static const char *const allowed[] = {
	[MODE_RUN] = "aemcrswMnCQSFOJBU",
	[MODE_RECORD] = "aemcrswMnCSOb",
	[MODE_CHECK] = "cQFJBUHN",
	[MODE_MERGE] = "QFU",
};
static const char *const mode_names[] = {"", "record", "check", "merge"};

/* The positional arguments: DIR and COMMAND, or BUNDLE (and REPORTs). */
static void check_options(int argc, char **argv, struct options *o)
{
	if (!!o->at + o->each + !!o->random > 1)
		die("--at, --each and --random exclude each other (try 'crashtest --help')");
	if (o->max && !o->each)
		die("--max goes with --each (try 'crashtest --help')");
	if (o->mode == MODE_RECORD && !o->bundle)
		die("record: --bundle=FILE says where the bundle goes (try 'crashtest --help')");
	if (optind >= argc)
		die("no %s given (try 'crashtest --help')", o->mode >= MODE_CHECK ? "bundle" : "directory");
	if (o->mode >= MODE_CHECK) {
		o->bundle = argv[optind++];
		o->reports = argv + optind;
		if (o->mode == MODE_CHECK ? optind < argc : optind >= argc)
			die("%s: %s (try 'crashtest --help')", mode_names[o->mode], o->mode == MODE_CHECK ?
			    "one bundle, no more" : "no report given: the shards' --json reports");
		return;
	}
	o->dir = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc)
		die("no command given (try 'crashtest --help')");
	o->cmd = argv + optind;
}

/* An option of the report or of crashtest check; 0 if c is none. */
static int report_option(int c, struct options *o)
{
	if (c == 'Q')
		o->json = 1, o->json_file = optarg;
	else if (c == 'F')
		o->first_failure = 1;
	else if (c == 'U')
		o->junit = optarg;
	else if (c == 'b')
		o->bundle = optarg;
	else if (c == 'H')
		parse_shard(optarg, o);
	else if (c == 'N')
		o->shards = parse_number("--shards", optarg, 1, 1 << 20), o->shard = -1;
	else
		return 0;
	return 1;
}

/* The options of crashtest and its subcommands (allowed[] says whose). */
static const struct option longs[] = {
	{"at", required_argument, 0, 'a'},     {"each", no_argument, 0, 'e'},
	{"max", required_argument, 0, 'm'},    {"check", required_argument, 0, 'c'},
	{"random", required_argument, 0, 'r'}, {"seed", required_argument, 0, 's'},
	{"writes", no_argument, 0, 'w'},       {"model", required_argument, 0, 'M'},
	{"states", required_argument, 0, 'n'}, {"classes", required_argument, 0, 'C'},
	{"json", optional_argument, 0, 'Q'},   {"seccomp", required_argument, 0, 'S'},
	{"first-failure", no_argument, 0, 'F'}, {"outside-ok", required_argument, 0, 'O'},
	{"jobs", required_argument, 0, 'J'},   {"budget", required_argument, 0, 'B'},
	{"junit", required_argument, 0, 'U'},  {"bundle", required_argument, 0, 'b'},
	{"shard", required_argument, 0, 'H'},  {"shards", required_argument, 0, 'N'},
	{"help", no_argument, 0, 'h'},         {"version", no_argument, 0, 'V'},
	{0, 0, 0, 0},
};

static void parse(int argc, char **argv, struct options *o)
{
	int c, index;

	while ((c = getopt_long(argc, argv, "+hVj:", longs, &index)) != -1) {
		c = c == 'j' ? 'J' : c;
		if (c != 'h' && c != 'V' && c != '?' && !strchr(allowed[o->mode], c))
			die("%s%s is not an option of crashtest%s%s (try 'crashtest --help')",
			    c == 'J' ? "-j" : "--", c == 'J' ? "" : longs[index].name,
			    o->mode ? " " : "", mode_names[o->mode]);
		if (point_option(c, o) || report_option(c, o))
			continue;
		if (c == 'c')
			o->check = o->check_given = optarg;
		else if (c == 'M')
			parse_model(optarg, o);
		else if (c == 'C')
			o->classes = parse_classes(optarg);
		else if (c == 'O')
			outside_ok(optarg, o);
		else if (c == 'S' && (!strcmp(optarg, "auto") || !strcmp(optarg, "off")))
			o->seccomp = optarg;
		else if (c == 'S')
			die("--seccomp takes auto or off, not '%s'", optarg);
		else
			common_option(c, argv, usage);
	}
	check_options(argc, argv, o);
}

/* DIR, a directory: a symlink to one is followed, so that the copy is of
 * the directory. */
static const char *real_dir(const char *dir)
{
	struct stat st;
	char *real;

	if (stat(dir, &st) != 0)
		die("cannot use %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("cannot use %s: it is not a directory", dir);
	if (!(real = realpath(dir, NULL)))
		die("cannot use %s: %s", dir, strerror(errno));
	return real;
}

/* COMMAND did not run (not found, not runnable, crashtest's own error in
 * the child) when it exits so having counted nothing. */
static void exit_if_not_run(struct run *run)
{
	int s = run->status;

	if (!WIFEXITED(s) || WEXITSTATUS(s) < EXIT_TOOL || WEXITSTATUS(s) > EXIT_NOT_FOUND ||
	    run->count.syncs || run->count.changes)
		return;
	run_show_errors(run);
	run_remove();
	exit(WEXITSTATUS(s));
}

/* How the command ended (report.h). */
static struct command_end command_end(const struct run *run, const struct options *o)
{
	struct command_end c = {.status = run->status, .interrupted = run->caught};

	if (!c.interrupted && o->at && WIFSIGNALED(run->status) && WTERMSIG(run->status) == SIGKILL &&
	    run->count.points >= (uint64_t)o->at)
		c.stopped_at = o->at;
	return c;
}

/* --at=N past the run's last point built nothing but the end: an error. */
static void check_at(const struct run *run, const struct options *o)
{
	char how[64], name[32];

	if (!o->at || o->at <= (long)run->m.npoints)
		return;
	if (WIFSIGNALED(run->status))
		snprintf(how, sizeof(how), "was killed by %s",
			 signal_name(WTERMSIG(run->status), name, sizeof(name)));
	else
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(run->status));
	run_show_errors(run);
	die("--at=%ld: the command passed %u crash point%s, then %s (try --each)", o->at,
	    run->m.npoints, run->m.npoints == 1 ? "" : "s", how);
}

/* After the command ran (unless a signal stopped it): its journal read,
 * and what could not go on. */
static void analyse(struct run *run, const struct options *o)
{
	if (run_caught())
		return;
	run_analyse(run);
	exit_if_not_run(run);
	check_at(run, o);
}

/* A CI's parallel job: the variables that say which of how many this
 * one is, and whether the index counts from 1. */
static const struct {
	const char *index, *count;
	int from_one;
} ci[] = {
	{"CI_NODE_INDEX", "CI_NODE_TOTAL", 1},                     /* GitLab, parallel: */
	{"CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0},             /* CircleCI */
	{"BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0}, /* Buildkite */
	{"JOB_COMPLETION_INDEX", NULL, 0},                         /* Kubernetes: --shards */
};

/* crashtest check's shard: --shard, else the CI's variables (with
 * --shards=N for Kubernetes, which names no count), else the whole run. */
static void choose_shard(struct options *o)
{
	static char from[96];

	for (size_t k = 0; o->shard_from == NULL && k < sizeof(ci) / sizeof(*ci); k++) {
		const char *i = getenv(ci[k].index), *n = ci[k].count ? getenv(ci[k].count) : NULL;

		if (!i || (ci[k].count && !n))
			continue;
		if (!ci[k].count && !o->shards)
			die("%s is set: --shards=N says how many shards there are", ci[k].index);
		o->shards = n ? parse_number(ci[k].count, n, 1, 1 << 20) : o->shards;
		o->shard = parse_number(ci[k].index, i, ci[k].from_one, o->shards - !ci[k].from_one) -
			   ci[k].from_one;
		snprintf(from, sizeof(from), "%s=%s%s%s%s%s", ci[k].index, i, n ? ", " : "",
			 n ? ci[k].count : "", n ? "=" : "", n ? n : "");
		o->shard_from = from;
	}
	if (o->shard < 0)
		die("--shards=%ld: JOB_COMPLETION_INDEX is not set (or give --shard=I/N)", o->shards);
	if (!o->shards)
		o->shards = 1;
}

/* The place of model x among the run's, or -1. */
static long index_of(const struct run *run, enum model x)
{
	for (size_t k = 0; k < run->nmodels; k++)
		if (run->models[k] == x)
			return (long)k;
	return -1;
}

/* This shard's checks, for crashtest merge (report.h). */
static struct report_check *shard_checks(const struct run *run, size_t *n)
{
	struct report_check *v = calloc(run->nchecked + 1, sizeof(*v));

	if (!v)
		die("out of memory");
	*n = 0;
	for (size_t c = 0; c < run->nchecked; c++) {
		const struct checked *x = &run->checked[c];

		if (x->state == CHECK_DONE)
			v[(*n)++] = (struct report_check){c, {x->h[0], x->h[1], x->out, x->err}, x->v,
							  x->status, x->output, &x->why};
	}
	return v;
}

/* The report of the run, its points built and checked (or, merging,
 * taken from the shards' reports); crashtest's exit status. */
static int report(struct run *run, const struct options *o, double start,
		  struct report_tail *tail)
{
	const char *names[NMODELS];
	FILE *json = o->json_file ? fopen(o->json_file, "we") : o->json ? stdout : NULL;
	int status, caught;

	if (o->json_file && !json)
		die("cannot write %s: %s", o->json_file, strerror(errno));
	for (size_t k = 0; k < run->nmodels; k++)
		names[k] = model_names[run->models[k]];
	report_start(&(struct report_head){
		.command = o->cmd, .dir = o->dir, .model = o->all_models ? "all" :
		model_names[o->model], .models = names, .shown = run->shown,
		.ext4 = index_of(run, MODEL_EXT4_ORDERED), .noada = index_of(run, MODEL_EXT4_NOADA),
		.writes = o->writes, .text = !o->json || o->json_file, .json = json,
		.junit = o->junit, .first_failure = o->first_failure, .seed = &o->seed,
		.bound = o->states, .unexplored = &run->m.unexplored, .end = command_end(run, o),
		.bundle = o->mode == MODE_CHECK ? run->id : NULL, .shard = run->shard,
		.shards = run->shards, .shard_from = o->shard_from});
	if (o->budget)
		run_stop_at(start + o->budget);
	tail->budget = o->budget;
	if (!run_caught())
		run_points(run, o, start, tail);
	if (run->merge)
		merge_done(run->merge);
	if (o->mode == MODE_CHECK)
		tail->checks = shard_checks(run, &tail->nchecks);
	if (!run->merge)
		tail->seconds = monotonic_seconds() - start;
	caught = run_caught();
	tail->interrupted = caught ? caught : tail->interrupted;
	status = report_end(tail);
	if (json && json != stdout && fclose(json) != 0)
		die("cannot write %s: %s", o->json_file, strerror(errno));
	return status;
}

/* crashtest record: the command run and analysed, the bundle written. */
static int record(struct run *run, const struct options *o)
{
	struct stat st;

	if (run_caught())
		return 0; /* interrupted: no bundle of half a run; it dies of the signal */
	bundle_write(o->bundle, run, o);
	if (stat(o->bundle, &st) != 0)
		die("cannot write %s: %s", o->bundle, strerror(errno));
	printf("crashtest: recorded %u crash point%s in %s (%.1f MiB); ", run->m.npoints,
	       run->m.npoints == 1 ? "" : "s", o->bundle, (double)st.st_size / 1048576);
	if (WIFSIGNALED(run->status))
		printf("the command was killed by signal %d\n", WTERMSIG(run->status));
	else
		printf("the command's exit status %d\n", WEXITSTATUS(run->status));
	return 0;
}

/* The run: the command run under the library now, or read from a bundle
 * (check: with its files, to build states; merge: its names alone). */
static void prepare(struct run *run, struct options *o)
{
	if (o->mode <= MODE_RECORD) {
		o->dir = real_dir(o->dir);
		if (!o->seeded)
			o->seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
		o->preload = preload_entry("libcrashtest.so");
		run_prepare(run, o);
		run_command(run, o, o->at);
		analyse(run, o);
		run_show_errors(run);
		return;
	}
	bundle_read(o->bundle, run, o, o->mode == MODE_CHECK);
	if (o->check_given)
		o->check = o->check_given;
	run_prepare_recorded(run, o);
	run_analyse(run);
}

int main(int argc, char **argv)
{
	struct options o = {.states = 64, .classes = CLASS_ALL, .seccomp = "auto", .jobs = cpus(),
			    .outside_ok = strdup(outside_ok_default)};
	struct run run = {.fd = -1, .j.fd = -1, .base.fd = -1};
	double start = monotonic_seconds();
	struct report_tail tail = {0};
	int status;

	tool_name = "crashtest";
	seccomp_hidden_modes(argc, argv);
	atexit(run_remove); /* die() after the run directory was made */
	catch_signals();
	for (int m = MODE_RECORD; m <= MODE_MERGE && argc > 1; m++)
		if (!strcmp(argv[1], mode_names[m]))
			o.mode = (enum mode)m, argc--, argv++;
	parse(argc, argv, &o);
	if (o.mode == MODE_CHECK)
		choose_shard(&o);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		die("cannot become a subreaper: %s", strerror(errno));
	prepare(&run, &o);
	run.shard = o.shard;
	run.shards = o.shards;
	if (o.mode == MODE_MERGE)
		run.merge = merge_read(&run, o.reports, &tail);
	status = o.mode == MODE_RECORD ? record(&run, &o) : report(&run, &o, start, &tail);
	run_free(&run);
	run_remove();
	die_of_caught();
	return status;
}
