/* SPDX-License-Identifier: MIT */
/* html.h -- what html.c (the page) and html_chart.c (its SVG charts)
 * share. */
#ifndef EMD_HTML_H
#define EMD_HTML_H

#include "report_data.h"

/* Bytes from the records as HTML text: markup characters as entities,
 * control characters as C escapes, bytes that are not UTF-8 as U+FFFD;
 * at most `max` bytes of s, never reading past them, then an ellipsis if
 * there were that many (so an array's size is a safe `max`). */
void html_text(FILE *out, const char *s, size_t max);

/* A group's latency histogram, as DTrace's quantize() draws it. */
void html_histogram(FILE *out, const struct group *g);

/* A group's calls over the run, t0 to t1 (CLOCK_MONOTONIC ns): each call a
 * point, or past HTML_POINTS calls a heat map of time by latency. */
#define HTML_POINTS 2000
void html_timeline(FILE *out, const struct run *run, const struct group *g,
		   unsigned long long t0, unsigned long long t1);

#endif
