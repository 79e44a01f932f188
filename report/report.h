/* SPDX-License-Identifier: MIT */
/* report.h -- the report of a run's durability requests, from its record
 * directory: as text (DTrace-style histograms) or JSON. */
#ifndef EMD_REPORT_H
#define EMD_REPORT_H

struct report_options {
	int json;           /* --json: the report as JSON */
	const char *json_file; /* --json=FILE: JSON to FILE, the text as well */
	const char *output; /* --output FILE, else stderr */
	const char *html;   /* --html FILE: the page, instead of the text
			     * report unless --json or --output asks too */
};

/* Print the report of `dir`; dies (exit 125) naming the file when a record
 * is missing, unreadable or corrupt. */
void report_dir(const char *dir, const struct report_options *opt);

/* Right after an audited run: compare each synced file with how it is now. */
void report_finish_audit(const char *dir);

#endif
