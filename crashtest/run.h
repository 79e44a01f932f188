/* SPDX-License-Identifier: MIT */
/* run.h -- one crashtest run: the private directory, the base copied from
 * DIR, the command run once in a copy under libcrashtest, its journal
 * resolved by the model; then each crash point's states built and checked.
 */
#ifndef CT_RUN_H
#define CT_RUN_H

#include "crashtest.h"
#include "crashtest/files.h"
#include "crashtest/journal.h"
#include "crashtest/model.h"
#include "crashtest/report.h"
#include "crashtest/tree.h"

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/* crashtest, crashtest record, check and merge. */
enum mode { MODE_RUN, MODE_RECORD, MODE_CHECK, MODE_MERGE };

struct options {
	enum mode mode;
	long at, max, random;
	unsigned long long seed;
	int each, json, writes, seeded, classes, first_failure;
	int jobs;      /* -j: states built and checked at once */
	double budget; /* --budget: no state started past it (seconds; 0: none) */
	size_t states;
	enum model model;
	int all_models; /* --model=all: posix, ext4-ordered and xfs */
	const char *check, *dir, *preload, *seccomp;
	char *outside_ok; /* globs, one a line: the defaults and --outside-ok's */
	char **cmd;
	const char *bundle;      /* record: where it goes; check, merge: which */
	const char *json_file;   /* --json=FILE: the JSON there, the text as well */
	const char *junit;       /* --junit=FILE */
	const char *check_given; /* check --check: the checker, not the bundle's */
	long shard, shards;      /* check: shard `shard` (from 0) of `shards` */
	const char *shard_from;  /* where that came from */
	char **reports;          /* merge: the shards' reports */
};

/* A state to check, once: by its hash and the output the checker is
 * given.  The same state at a later point, or under another model, takes
 * its verdict.  They are numbered in the order the points' states are met,
 * the same in every run of one journal with the same options: the shards
 * divide them by that number. */
enum check_state { CHECK_PENDING, CHECK_DONE, CHECK_ELSEWHERE };
struct checked {
	uint64_t h[2], out, err;
	long point;          /* where it was first built */
	enum check_state state;
	enum verdict v;      /* OK, FAILED; UNKNOWN: it could not be built */
	int status;
	char *output;
	struct problems why; /* why it could not be built */
};

struct workers;
struct merge;

struct run {
	char dir[PATH_MAX]; /* the run directory */
	char id[33];        /* the bundle's name (bundle.h), if read from one */
	int fd;
	struct base base;
	struct tree t;      /* the base's names; states are applied and undone */
	size_t base_mark;
	uint32_t *base_node; /* per base entry */
	uint64_t *work_ino;  /* per base entry: its inode in the copy run */
	uint64_t dev;        /* the copy's file system */
	struct journal j;
	struct run_model m; /* the first model's, and the resolution all share */
	/* The models: the first `shown` reported, then ext4-noauto_da_alloc
	 * if ext4-ordered is one of them (what holds only by auto_da_alloc). */
	enum model models[NMODELS];
	size_t nmodels, shown;
	struct run_model alt[NMODELS]; /* views of m, from the second on */
	struct ct_counters count;
	uint64_t out_size, err_size; /* what the command printed in all */
	int status;          /* the command's wait status */
	int caught;          /* the signal to crashtest that stopped it, or 0 */
	char *unreached;     /* why the library cannot enter COMMAND, or NULL */
	struct problems compared; /* what the copy and the journal differ in */
	int recorded;        /* read from a bundle: the copy is gone */
	struct checked *checked;
	size_t nchecked, capchecked;
	size_t *check_index; /* open addressing by hash: 1 + a check, 0: free */
	size_t capindex;
	struct workers *workers;
	long shard, shards; /* this run checks the checks c with c % shards == shard */
	struct merge *merge; /* crashtest merge: the results come from the shards */
};

/* The run directory, the base and the copy the command runs in. */
void run_prepare(struct run *run, const struct options *o);

/* A new private run directory, with an empty base/ in it (bundle.c). */
void run_directory(struct run *run);

/* For a run read from a bundle: the models, the tree of its base. */
void run_prepare_recorded(struct run *run, const struct options *o);

/* Run the command in the copy under the library (stopped after crash point
 * `at`, 0: at its end); every process of its tree is gone when it returns. */
void run_command(struct run *run, const struct options *o, long at);

/* Read the journal, resolve it, and compare what the run left with what the
 * journal says it did. */
void run_analyse(struct run *run);

/* Model k of the run (run->models[k]). */
struct run_model *run_view(struct run *run, size_t k);

/* Crash point `number` (0: the end): its states under model k, each new
 * one given to a worker to build and check (check.h) -- or to another
 * shard; point_finish gives the states and the point their verdicts once
 * point_ready says their checks are done. */
void run_point(struct run *run, const struct options *o, size_t k, long number,
	       struct point_result *p);
int point_ready(const struct run *run, const struct point_result *p);
void point_finish(const struct run *run, const struct options *o, struct point_result *p);

/* Check c (from 0) is this run's, not another shard's. */
static inline int run_owns(const struct run *run, size_t c)
{
	return run->shards <= 1 || (long)(c % (size_t)run->shards) == run->shard;
}

void run_free(struct run *run);

/* Pass on what the command printed on its standard error. */
void run_show_errors(const struct run *run);

/* The run directory, removed once: at the end, on an error or a signal. */
void run_remove(void);
extern char *current_run;

/* Kill every process of the command's tree (group, and the children
 * crashtest inherited as their subreaper), and wait until all are gone. */
void power_off(pid_t group);

/* Wait for pid, killing it if crashtest catches a signal meanwhile. */
int wait_for(pid_t pid);
void catch_signals(void);

/* The run ends as if crashtest had caught sig (a worker was killed). */
void run_interrupt(int sig);

/* A worker (check.c) that a signal to crashtest kills at once, or no
 * longer one. */
void watch_worker(pid_t pid, int on);

/* The signal crashtest caught (SIGINT, SIGTERM, SIGHUP), or 0: the run
 * stops at the next point and its report ends saying so. */
int run_caught(void);

/* No state is started past this time (monotonic_seconds; --budget). */
void run_stop_at(double deadline);
/* No new state is started from now on (merge: a shard was cut short). */
void run_stop(void);
/* A signal caught, the budget spent, run_stop: no new state is started. */
int run_stopping(void);
int run_budget_spent(void);

/* Once the report is out: the tree killed, the run directory removed, and
 * crashtest dies of the signal it caught (if it caught one). */
void die_of_caught(void);

#endif
