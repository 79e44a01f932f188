/* SPDX-License-Identifier: MIT */
/* compare.h -- `syncstat compare OLD NEW`: two runs (kept directories or
 * --json reports) side by side, and a gate for CI. */
#ifndef EMD_COMPARE_H
#define EMD_COMPARE_H

/* The statuses of `syncstat compare`: within the limits, beyond one. */
enum { COMPARE_PASS = 0, COMPARE_FAIL = 1 };

/* How much a count may grow: by a percentage or by an amount. */
struct compare_limit {
	int set, relative;
	double percent;
	unsigned long long amount; /* calls, or ns */
};

#define COMPARE_PATTERNS 32

struct compare_options {
	struct compare_limit calls, time;
	const char *output; /* --output FILE, else stdout */
	const char *junit;  /* --junit FILE: a case per limit and row, or NULL */
	/* --group-files=GLOB: the files a glob matches (fnmatch(3), '*' across
	 * '/'), counted as one row named by it (temporary names with random
	 * suffixes); --skip-files=GLOB: left out of the file rows. */
	const char *group[COMPARE_PATTERNS], *skip[COMPARE_PATTERNS];
	int ngroup, nskip;
	int any_command; /* --any-command: runs of different commands compared */
};

/* Add GLOB to a list of --group-files or --skip-files; dies (125) naming
 * the option when there are too many. */
void compare_add_pattern(const char *option, const char *glob, const char **list, int *n);

/* "10%", or an amount: calls ("50") or a duration ("20ms", "1.5s", "300us",
 * "100ns"); dies (125) naming the option if it is neither. */
void compare_parse_limit(const char *option, const char *text, int duration,
			 struct compare_limit *out);

/* Print the comparison and return COMPARE_PASS or COMPARE_FAIL; dies (125)
 * if either side cannot be read. */
int compare_runs(const char *old, const char *new_, const struct compare_options *opt);

#endif
