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
#define REPORT_SCHEMA "eatmydata.syncstat/2"

/* What an eaten call costs: the one validating system call. */
#define EATEN_NS 200

/* Calls sharing a key (program and kind, file, call site, process). */
struct group {
	char key[300];
	int kind, pid, ppid;
	char program[32];
	unsigned long long count, timed, errors, total;
	unsigned long long *lat; /* the timed calls' latencies */
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
};

struct run {
	const char *dir;
	int eaten; /* the calls were eaten: counts, no latency */
	int audit; /* syncstat --audit: findings */
	const struct emd_rec_slot *slots;
	size_t nslots;
	struct findings findings;
	struct groups by_kind, by_file, by_site, by_process;
	unsigned long long calls, incomplete, lost, total;
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

/* "12 ns", "3.4 us", "5.6 ms", "7.89 s"; lasts until the eighth call after. */
const char *report_duration(unsigned long long ns);

/* The length of the well-formed UTF-8 sequence at s, or 0. */
int report_utf8_length(const unsigned char *s);

/* A name from the records on one line: control characters and backslash
 * escaped as in C.  The result lasts until the fourth call after. */
const char *report_one_line(const char *name);

/* A disk's flushes during the run ("completed 200 cache flushes, 60.0 us
 * each on average, 12.0 ms in all"), and the share of the tree's time they
 * could account for ("39% in the device's flushes, the rest in the
 * kernel..."; NULL if there is none to give).  Each lasts until its next
 * call. */
const char *report_flushes(const struct disk *d);
const char *report_share(const struct disk *d);

void report_text(FILE *out, const struct run *run);
void report_json(FILE *out, const struct run *run);
void report_html(FILE *out, const struct run *run);

#endif
