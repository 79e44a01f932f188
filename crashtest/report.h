/* SPDX-License-Identifier: MIT */
/* report.h -- crashtest's report: a line per crash point with its verdict,
 * the states that failed with what their checker printed, a summary; or
 * the same as JSON (doc/crashtest.schema.json).
 */
#ifndef CT_REPORT_H
#define CT_REPORT_H

#include "crashtest/problems.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ELSEWHERE: checked by another shard (crashtest check --shard). */
enum verdict { OK, FAILED, UNKNOWN, UNCHECKED, ELSEWHERE, NVERDICTS };

/* A file and how many of its unsynced changes a state lost. */
struct lost {
	char *file;
	unsigned changes;
};

struct state_result {
	char *what;
	enum verdict v;
	int status;   /* the checker's exit status, 128 + its signal; -1: none */
	char *output; /* what it printed (its end, if long), escaped */
	long same_as; /* checked already at this earlier point */
	int checked_before;
	size_t check; /* 1 + its check (run.h), 0: none */
	struct lost *lost;
	size_t nlost;
	char *changes[3]; /* the changes it lost, when no more than three */
};

struct point_result {
	long number;  /* 0: the end of the command */
	char *after;  /* the call it followed */
	long syncs, changes; /* before it */
	uint64_t output; /* bytes the command had printed */
	size_t unsynced, allowed, built, distinct, checked;
	int cut;
	int stopped; /* crashtest stopped before its states were all met */
	enum verdict v;
	struct problems unknown;
	struct state_result *s; /* each distinct state built */
	size_t ns;
};

/* How the command ended: its wait status, unless crashtest stopped it --
 * at the point --at asked for, or because crashtest itself was
 * interrupted before the command ended. */
struct command_end {
	int status;        /* the command's wait status, if none of these */
	long stopped_at;   /* --at's point, where the library stopped the tree */
	int interrupted;   /* the signal crashtest caught while it ran */
};

/* Did the command fail on its own: a status other than 0, or a signal
 * crashtest did not send? */
int command_failed(const struct command_end *c);

struct report_head {
	char **command;
	const char *dir, *model; /* model: its name, or "all" */
	/* Each point's results come one per model: the first `shown` are
	 * reported, the one at `noada` (-1: none) is ext4-noauto_da_alloc,
	 * the control of ext4-ordered's (at `ext4`, -1: none). */
	const char *const *models;
	size_t shown;
	long ext4, noada;
	int writes;
	int text;          /* the text report on standard output */
	FILE *json;        /* the JSON report goes there, or NULL */
	const char *junit; /* the JUnit XML goes there, or NULL */
	int first_failure; /* text: only the first failed state of a point */
	const unsigned long long *seed; /* of --random and of the states' sample */
	size_t bound;
	struct problems *unexplored;
	struct command_end end;
	/* crashtest check: the bundle's name, this shard of how many, and
	 * where that came from (--shard, a CI's variable); NULL: a whole run. */
	const char *bundle, *shard_from;
	long shard, shards;
};

/* A check a shard made, for crashtest merge: the state (its hash and the
 * output lengths it was checked with), its result. */
struct report_check {
	size_t id;
	uint64_t key[4];
	enum verdict v;
	int status;
	const char *output;
	const struct problems *why;
};

/* How the report ends: the time it took, and if a signal interrupted the
 * run, which, and how many points it was to build. */
struct report_tail {
	double seconds;
	int interrupted;
	int budget_spent; /* --budget stopped it (interrupted is 0) */
	double budget;
	size_t planned, reported;
	const struct report_check *checks; /* crashtest check: this shard's */
	size_t nchecks;
};

void report_start(const struct report_head *h);
/* A crash point's results, one per model (report_head.models). */
void report_point(const struct point_result *p);
/* The summary; crashtest's exit status (4 the command failed on its own,
 * else 1 a check failed, 2 a point unknown, 3 nothing checked, 0 ok). */
int report_end(const struct report_tail *t);

/* "SIGSEGV", or "signal N" for one with no name, into buf. */
const char *signal_name(int sig, char *buf, size_t size);

void point_result_free(struct point_result *p);

#endif
