/* SPDX-License-Identifier: MIT */
/* report_data.h -- a loaded record directory, shared by report.c (which
 * loads it) and report_text.c / report_json.c (which print it). */
#ifndef EMD_REPORT_DATA_H
#define EMD_REPORT_DATA_H

#include <stdio.h>

#include "device.h"
#include "findings.h"
#include "keymap.h"
#include "report.h"

/* The JSON report's schema (doc/syncstat.schema.json): its number changes
 * with any change of the JSON's fields or their meaning. */
#define REPORT_SCHEMA "eatmydata.syncstat/4"

/* What an eaten call costs: the one validating system call. */
#define EATEN_NS 200

/* Calls sharing a key (program and kind, file, call site, process,
 * thread). */
struct group {
	char key[300];
	int kind, pid, ppid, tid;
	char program[32];
	unsigned long long count, timed, errors, total;
	unsigned long long untimed; /* counted, not timed: went on to the kernel */
	unsigned long long left;    /* eatmydata: went on to the kernel, not eaten */
	unsigned long long *lat; /* the timed calls' latencies */
	const struct emd_rec_slot *slot; /* its first call (a site's module) */
};

/* A group's key in the index: its kind and key, zero-padded. */
struct group_key {
	int kind;
	char key[300];
};

struct groups {
	struct group *g;
	size_t n, cap;
	struct keymap index; /* group_key -> 1 + its place in g */
	size_t last;         /* 1 + the place of the group last asked for */
};

struct run {
	const char *dir;
	int eaten; /* the calls were eaten: counts, no latency */
	int audit; /* syncstat --audit: findings */
	const struct emd_rec_slot *slots;
	size_t nslots;
	struct findings findings;
	struct groups by_kind, by_file, by_site, by_process;
	struct groups by_thread; /* keyed "pid/tid": a number may be reused */
	unsigned long long calls, incomplete, lost, total, untimed;
	/* eatmydata --stats: the requests left to the kernel (not eaten), in
	 * all; of them, those an option eats (needs: the options), of
	 * programs that do not eat, and those nothing eats. */
	unsigned long long left, left_eatable, left_not_eating;
	int left_needs;
	/* The programs that ran unobserved (EMD_K_UNOBSERVED records): their
	 * calls are in no count, and the report says so first. */
	const struct emd_rec_slot **unobserved;
	size_t nunobserved;
	char **argv;
	int status;   /* -1: unknown */
	double wall;  /* < 0: unknown */
	struct devices devices; /* syncstat's samples of the disks */
};

extern const char *const report_kind_names[];

/* The latency below which pct percent of g's timed calls fall. */
unsigned long long report_percentile(const struct group *g, int pct);

/* The histogram's rows, lo to hi, from one empty bucket below the lowest to
 * one above the highest, as DTrace's quantize() prints them; 0 if there are
 * no timed calls.  report_bucket_value(b) is the row's value. */
int report_histogram(const struct group *g, unsigned long long counts[66],
		     int *lo, int *hi);
unsigned long long report_bucket_value(int b);

/* Load DIR: its records grouped and sorted, its run, devices and findings;
 * dies (125) naming the file if one is corrupt. */
void report_load(const char *dir, struct run *run);

/* Why there is no device attribution, or NULL if there is one. */
const char *report_devices_missing(const struct run *run);

/* "1 call", "2 calls": n and the word that goes with it; lasts until the
 * eighth call after. */
const char *report_n(unsigned long long n, const char *one, const char *many);

/* A figure from a millisecond counter, at its resolution: "under 1 ms",
 * "12 ms", "12.35 s"; lasts until the fourth call after. */
const char *report_ms(unsigned long long ms);

/* The sentences the text and HTML share (words.c); each lasts until the
 * next call of the same function; report_mount_line is NULL for a file
 * system with nothing to say. */
const char *report_would_save(const struct run *run);
/* How many calls were eaten and how many went on to the kernel; what
 * would eat those; "all eaten" only when none went on. */
const char *report_eaten(const struct run *run);
/* What the time was spent in ("them", or the calls timed when some were
 * counted only), and how many were only counted (or ""). */
const char *report_spent(const struct run *run);
const char *report_untimed(const struct run *run);
const char *report_incomplete(const struct run *run);
const char *report_thread_name(const struct group *thread);
const char *report_lost(const struct run *run);
const char *report_audit_nothing(const struct run *run);
const char *report_mount_line(const struct devices *ds, const struct dev_mount *m);
const char *report_nofile_line(const struct devices *ds);
const char *report_unknown_line(const struct devices *ds);

/* Where a call site is, from the debug information of its module (by
 * build id, symbols.c): "unixSync at src/sqlite3.c:38544", or NULL if
 * nothing names it; lasts until the next call. */
const char *report_site_where(const struct run *run, const struct group *site);

/* "12 ns", "3.4 us", "5.6 ms", "7.89 s"; lasts until the eighth call after. */
const char *report_duration(unsigned long long ns);

/* A command line as a shell would take it back: each argument bare when it
 * is plain, else quoted (a newline in one never starts a line). */
void report_command_line(FILE *out, char *const *argv);

/* A name from the records on one line: control characters and backslash
 * escaped as in C.  The result lasts until the fourth call after. */
const char *report_one_line(const char *name);

/* A disk's flushes during the run ("completed 200 cache flushes, 12 ms in
 * all (0.06 ms each on average)"), and the share of the tree's time its
 * writes and flushes could account for ("39% in the device (its writes and
 * cache flushes), the rest in the kernel..."; NULL if there is none to
 * give).  Each lasts until its next call. */
const char *report_flushes(const struct disk *d);
const char *report_share(const struct disk *d);

/* For report_json.c and symbols.c: a name or null; a group's counts; the
 * sites with where each is. */
struct jw;
void report_json_name(struct jw *w, const char *key, const char *name);
void report_json_counts(struct jw *w, const struct group *g);
void report_json_sites(struct jw *w, const struct run *run);

void report_text(FILE *out, const struct run *run);
void report_json(FILE *out, const struct run *run);
void report_html(FILE *out, const struct run *run);

#endif
