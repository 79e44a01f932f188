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

enum verdict { OK, FAILED, UNKNOWN, UNCHECKED };

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
	enum verdict v;
	struct problems unknown;
	struct state_result *s; /* each distinct state built */
	size_t ns;
};

struct report_head {
	char **command;
	const char *dir, *model;
	int writes, json;
	const unsigned long long *seed; /* of --random and of the states' sample */
	size_t bound;
	struct problems *unexplored;
};

void report_start(const struct report_head *h);
void report_point(const struct point_result *p);
/* The summary; crashtest's exit status (0 ok, 1 a check failed, 2 a state
 * unknown, 3 nothing checked). */
int report_end(double seconds);

void point_result_free(struct point_result *p);

#endif
