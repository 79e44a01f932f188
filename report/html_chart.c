/* SPDX-License-Identifier: MIT */
/* html_chart.c -- the report page's charts, as inline SVG drawn here: no
 * script, so nothing in a file name can run.  Every label from the records
 * goes through html_text.  A chart's size is bounded whatever the run's:
 * past HTML_POINTS calls the timeline is a heat map of fixed cells. */
#include "html.h"

#include <string.h>

#define W 720
#define LEFT 80
#define RIGHT 10
#define TOP 10
#define PLOT_H 180
#define COLS 120

/* log2(v) + 1, linear between powers of two (as the buckets are): no
 * libm for the launchers to load. */
static double log_scale(unsigned long long v)
{
	int b = v ? 64 - __builtin_clzll(v) : 0;
	double low = b ? (double)(1ULL << (b - 1)) : 1;

	return v ? b + ((double)v - low) / low : 0;
}

/* A latency's height on a log scale from bucket lo to hi. */
static double y_of(unsigned long long ns, int lo, int hi)
{
	double l = log_scale(ns);
	double f = hi > lo ? (l - lo) / (hi - lo) : 0.5;

	f = f < 0 ? 0 : f > 1 ? 1 : f;
	return TOP + PLOT_H * (1 - f);
}

static double x_of(unsigned long long t, unsigned long long t0, unsigned long long t1)
{
	double f = t1 > t0 ? (double)(t - t0) / (double)(t1 - t0) : 0;

	f = t < t0 ? 0 : f > 1 ? 1 : f;
	return LEFT + (W - LEFT - RIGHT) * f;
}

void html_histogram(FILE *out, const struct group *g)
{
	unsigned long long counts[66], most = 1;
	int lo, hi, rows;

	if (!report_histogram(g, counts, &lo, &hi))
		return;
	rows = hi - lo + 1;
	for (int b = lo; b <= hi; b++)
		most = counts[b] > most ? counts[b] : most;
	fprintf(out, "<svg class=\"hist\" width=\"%d\" height=\"%d\" role=\"img\" "
		"aria-label=\"latency histogram\">\n", W, rows * 16 + 8);
	for (int b = lo; b <= hi; b++) {
		int y = (b - lo) * 16 + 4;
		double w = (W - 200.0) * (double)counts[b] / (double)most;

		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>"
			"<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"12\"><title>%llu calls "
			"from %s</title></rect><text x=\"%.1f\" y=\"%d\">%llu</text>\n",
			LEFT + 30, y + 11, report_duration(report_bucket_value(b)), LEFT + 40,
			y, w, counts[b], report_duration(report_bucket_value(b)),
			LEFT + 46 + w, y + 11, counts[b]);
	}
	fprintf(out, "</svg>\n");
}

/* The axes: latencies on the left (a few powers of two), time below. */
static void axes(FILE *out, int lo, int hi, unsigned long long span)
{
	int step = (hi - lo) / 6 + 1;

	fprintf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
		"<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
		LEFT, TOP, LEFT, TOP + PLOT_H, LEFT, TOP + PLOT_H, W - RIGHT, TOP + PLOT_H);
	for (int b = lo; b <= hi; b += step)
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			LEFT - 4, y_of(report_bucket_value(b), lo, hi) + 4,
			report_duration(report_bucket_value(b)));
	fprintf(out, "<text x=\"%d\" y=\"%d\">0 s</text><text x=\"%d\" y=\"%d\" "
		"text-anchor=\"end\">%.3f s: the first call to the end of the last</text>\n",
		LEFT, TOP + PLOT_H + 16, W - RIGHT, TOP + PLOT_H + 16, span / 1e9);
}

static int is_of(const struct emd_rec_slot *s, const struct group *g)
{
	return s->state == EMD_REC_DONE && (int)s->kind == g->kind &&
	       strcmp(s->program, g->key) == 0;
}

static void points(FILE *out, const struct run *run, const struct group *g, int lo,
		   int hi, unsigned long long t0, unsigned long long t1)
{
	fprintf(out, "<g class=\"pts\">\n");
	for (size_t i = 0; i < run->nslots; i++)
		if (is_of(&run->slots[i], g))
			fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>\n",
				x_of(run->slots[i].start_ns, t0, t1),
				y_of(run->slots[i].latency_ns, lo, hi));
	fprintf(out, "</g>\n");
}

/* Time in COLS columns by latency bucket: each cell's shade is the log of
 * its calls, so a few slow calls among a million still show. */
static void heat_map(FILE *out, const struct run *run, const struct group *g, int lo,
		     int hi, unsigned long long t0, unsigned long long t1)
{
	static unsigned long long cells[COLS][66];
	unsigned long long most = 1;
	double cw = (double)(W - LEFT - RIGHT) / COLS, ch = (double)PLOT_H / (hi - lo + 1);

	memset(cells, 0, sizeof(cells));
	for (size_t i = 0; i < run->nslots; i++) {
		const struct emd_rec_slot *s = &run->slots[i];
		int c, b;

		if (!is_of(s, g))
			continue;
		c = (int)((x_of(s->start_ns, t0, t1) - LEFT) / cw);
		b = s->latency_ns ? 64 - __builtin_clzll(s->latency_ns) : 0;
		c = c >= COLS ? COLS - 1 : c;
		b = b < lo ? lo : b > hi ? hi : b;
		most = ++cells[c][b] > most ? cells[c][b] : most;
	}
	fprintf(out, "<g class=\"heat\">\n");
	for (int c = 0; c < COLS; c++)
		for (int b = lo; b <= hi; b++)
			if (cells[c][b])
				fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
					"height=\"%.1f\" fill-opacity=\"%.2f\"><title>%llu "
					"calls</title></rect>\n", LEFT + c * cw,
					TOP + (hi - b) * ch, cw, ch,
					0.15 + 0.85 * log_scale(cells[c][b] + 1) / log_scale(most + 1),
					cells[c][b]);
	fprintf(out, "</g>\n");
}

void html_timeline(FILE *out, const struct run *run, const struct group *g,
		   unsigned long long t0, unsigned long long t1)
{
	unsigned long long counts[66];
	int lo, hi, heat = g->timed > HTML_POINTS;

	if (!report_histogram(g, counts, &lo, &hi))
		return;
	fprintf(out, "<svg class=\"time\" width=\"%d\" height=\"%d\" role=\"img\" "
		"aria-label=\"latency over the run\">\n", W, TOP + PLOT_H + 24);
	axes(out, lo, hi, t1 - t0);
	if (heat)
		heat_map(out, run, g, lo, hi, t0, t1);
	else
		points(out, run, g, lo, hi, t0, t1);
	fprintf(out, "</svg>\n<p class=\"note\">%s</p>\n", heat
		? "Each cell: the calls that started in that slice of the run with a "
		  "latency in that power of two; darker is more (log scale)."
		: "Each point: one call, when it started and how long it took "
		  "(log scale).");
}
