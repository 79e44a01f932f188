/* SPDX-License-Identifier: MIT */
/* html.c -- `syncstat --html FILE`: the report as one self-contained page
 * (inline CSS and SVG, no script, nothing fetched).  Names in the records
 * are the tree's, and a hostile one (a file named "<script>...") must stay
 * text: every one goes through html_text, and the page's Content Security
 * Policy forbids scripts, should anything slip by. */
#include "html.h"
#include "common/json.h"

#include <string.h>

#define GROUPS_DRAWN 40
#define TOP_ROWS 20
#define ARG_MAX_SHOWN 1000

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}"
	"h3{font-size:15px;margin:18px 0 4px}code{background:#f3f3f3;padding:1px 3px}"
	"table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #eee;"
	"text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"svg text{font:11px sans-serif;fill:#444}svg.hist rect{fill:#4a7ab8}"
	".pts circle{fill:#c0392b;fill-opacity:.55}.heat rect{fill:#c0392b}"
	".axis{stroke:#888}.note{color:#666;font-size:12px;margin:2px 0 12px}"
	".bar{display:inline-block;height:10px;background:#e67e22}"
	".warn{color:#a04000}";

void html_text(FILE *out, const char *str, size_t max)
{
	size_t len = strnlen(str, max);
	const unsigned char *s = (const unsigned char *)str, *end = s + len;
	int n;

	while (s < end) {
		if (*s == '&' || *s == '<' || *s == '>' || *s == '"' || *s == '\'')
			fprintf(out, "&#%d;", *s++);
		else if (*s == '\\' || *s == '\n' || *s == '\t') {
			fprintf(out, "\\%c", *s == '\n' ? 'n' : *s == '\t' ? 't' : '\\');
			s++;
		} else if (*s < 0x20 || *s == 0x7f)
			fprintf(out, "\\x%02x", *s++);
		else if (*s < 0x80)
			fputc(*s++, out);
		else if ((n = json_utf8_length(s)) > 0 && s + n <= end) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fputs("&#xfffd;", out);
			s++;
		}
	}
	if (len == max) /* (never so for a fixed array, which holds its NUL) */
		fputs("&#x2026;", out);
}

static void head(FILE *out, const struct run *run)
{
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'unsafe-inline'\">\n<title>syncstat: ");
	for (char **a = run->argv; a && *a; a++) {
		html_text(out, *a, ARG_MAX_SHOWN);
		fputc(a[1] ? ' ' : '\n', out);
	}
	fprintf(out, "</title>\n<style>%s</style></head>\n<body>\n<h1>syncstat</h1>\n"
		"<p>Command: <code class=\"cmd\">", style);
	for (char **a = run->argv; a && *a; a++) {
		html_text(out, *a, ARG_MAX_SHOWN);
		fputc(a[1] ? ' ' : '\n', out);
	}
	fprintf(out, "</code></p>\n");
}

static void summary(FILE *out, const struct run *run)
{
	fprintf(out, "<ul class=\"summary\">\n");
	if (run->status >= 0)
		fprintf(out, "<li>exit status %d, wall time %.3f s</li>\n", run->status, run->wall);
	else
		fprintf(out, "<li class=\"warn\">the run did not finish (no exit status)</li>\n");
	fprintf(out, "<li id=\"calls\">%s",
		report_n(run->calls, "durability call", "durability calls"));
	if (run->eaten)
		fprintf(out, "%s%s", run->left ? ": " : ", ", report_eaten(run));
	else
		fprintf(out, "%s; the process tree spent %s in %s (summed over its threads)",
			report_untimed(run), report_duration(run->total), report_spent(run));
	fprintf(out, "</li>\n");
	if (!run->eaten)
		fprintf(out, "<li id=\"save\">%s</li>\n", report_would_save(run));
	if (run->incomplete)
		fprintf(out, "<li>%s</li>\n", report_incomplete(run));
	if (run->lost)
		fprintf(out, "<li class=\"warn\">%s</li>\n", report_lost(run));
	for (size_t i = 0; i < run->nunobserved; i++) {
		fprintf(out, "<li class=\"warn\">not observed: ");
		html_text(out, run->unobserved[i]->path, sizeof(run->unobserved[i]->path));
		fprintf(out, ": ");
		html_text(out, run->unobserved[i]->site, sizeof(run->unobserved[i]->site));
		fprintf(out, "; its durability calls are in no count here</li>\n");
	}
	fprintf(out, "</ul>\n");
}

/* The span the timelines share: the first call's start to the last's end. */
static void span(const struct run *run, unsigned long long *t0, unsigned long long *t1)
{
	*t0 = ~0ULL;
	*t1 = 0;
	for (size_t i = 0; i < run->nslots; i++) {
		const struct emd_rec_slot *s = &run->slots[i];
		unsigned long long end = s->start_ns + s->latency_ns;

		if (s->state != EMD_REC_DONE || s->kind >= EMD_K_FIRST_EVENT)
			continue;
		*t0 = s->start_ns < *t0 ? s->start_ns : *t0;
		*t1 = end > *t1 && end >= s->start_ns ? end : *t1;
	}
	if (*t0 > *t1)
		*t0 = *t1 = 0;
}

static void groups(FILE *out, const struct run *run)
{
	unsigned long long t0, t1;

	span(run, &t0, &t1);
	fprintf(out, "<h2>Programs and kinds of call</h2>\n");
	for (size_t i = 0; i < run->by_kind.n && i < GROUPS_DRAWN; i++) {
		const struct group *g = &run->by_kind.g[i];

		fprintf(out, "<section class=\"group\"><h3>");
		html_text(out, g->key, sizeof(g->key));
		fprintf(out, " %s: %s", report_kind_names[g->kind], report_n(g->count, "call", "calls"));
		if (g->errors)
			fprintf(out, ", %llu failed", g->errors);
		if (g->timed && !run->eaten)
			fprintf(out, ", total %s, min %s, median %s, p99 %s, max %s",
				report_duration(g->total), report_duration(g->lat[0]),
				report_duration(report_percentile(g, 50)),
				report_duration(report_percentile(g, 99)),
				report_duration(g->lat[g->timed - 1]));
		fprintf(out, "</h3>\n");
		html_histogram(out, g);
		html_timeline(out, run, g, t0, t1);
		fprintf(out, "</section>\n");
	}
	if (run->by_kind.n > GROUPS_DRAWN)
		fprintf(out, "<p class=\"note\">and %zu more programs and kinds (in the text "
			"and JSON reports)</p>\n", run->by_kind.n - GROUPS_DRAWN);
}

/* A top list; the call sites' with where each is, when known; the
 * threads' each by its number and its process's. */
static void top(FILE *out, const char *title, const char *id, const struct run *run,
		const struct groups *gs)
{
	int sites = gs == &run->by_site, threads = gs == &run->by_thread;

	fprintf(out, "<h2>%s</h2>\n<table id=\"%s\"><tr><th>time</th><th>calls</th>"
		"<th>name</th>%s</tr>\n", title, id, sites ? "<th>where</th>" : "");
	for (size_t i = 0; i < gs->n && i < TOP_ROWS; i++) {
		const char *where = sites ? report_site_where(run, &gs->g[i]) : NULL;

		fprintf(out, "<tr><td class=\"n\">%s</td><td class=\"n\">%llu</td><td>",
			report_duration(gs->g[i].total), gs->g[i].count);
		html_text(out, threads ? report_thread_name(&gs->g[i]) : gs->g[i].key,
			  sizeof(gs->g[i].key));
		if (sites) {
			fprintf(out, "</td><td>");
			html_text(out, where ? where : "", 600);
		}
		fprintf(out, "</td></tr>\n");
	}
	fprintf(out, "</table>\n");
	if (gs->n > TOP_ROWS)
		fprintf(out, "<p class=\"note\">and %zu more</p>\n", gs->n - TOP_ROWS);
}

static void findings(FILE *out, const struct run *run)
{
	const struct findings *fs = &run->findings;

	if (!run->calls)
		fprintf(out, "<h2>Audit</h2>\n<p id=\"audit\">%s</p>\n", report_audit_nothing(run));
	if (!run->calls && !fs->n)
		return;
	fprintf(out, "<h2>Audit: %s</h2>\n<table id=\"findings\">"
		"<tr><th>pattern</th><th>program</th><th>site</th><th>times</th>"
		"<th>example</th><th>what it means</th></tr>\n",
		report_n(fs->n, "finding", "findings"));
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->f[i];

		fprintf(out, "<tr><td>%s</td><td>", audit_names[f->pattern]);
		html_text(out, f->program, sizeof(f->program));
		fprintf(out, "</td><td>");
		html_text(out, f->site, sizeof(f->site));
		fprintf(out, "</td><td class=\"n\">%llu</td><td>", f->count);
		html_text(out, f->example, sizeof(f->example));
		fprintf(out, "</td><td>%s</td></tr>\n", audit_explanations[f->pattern]);
	}
	fprintf(out, "</table>\n");
}

static void disk_row(FILE *out, const struct disk *d)
{
	double share = device_share(d);

	fprintf(out, "<tr><td>%s</td><td>%s, FUA %s%s</td><td class=\"n\">%llu</td>"
		"<td class=\"n\">%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td>"
		"<td class=\"n\">%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td>",
		d->name, d->write_cache < 0 ? "?" : d->write_cache ? "write back" : "write through",
		d->fua < 0 ? "?" : d->fua ? "yes" : "no",
		d->from_start ? "" : " (sampled from its mount on)",
		d->fields < 17 ? 0 : d->delta[DEV_FLUSHES], report_ms(d->delta[DEV_FLUSH_MS]),
		d->delta[DEV_WRITES], report_ms(d->delta[DEV_WRITE_MS]),
		report_ms(d->delta[DEV_BUSY_MS]), d->calls, report_duration(d->total_ns));
	if (share >= 0)
		fprintf(out, "<span class=\"bar\" style=\"width:%.0fpx\"></span> up to %.0f%%",
			share, share);
	else
		fprintf(out, device_busier(d) ? "cannot be told" : "n/a");
	fprintf(out, "</td></tr>\n");
}

/* The attribution in words, as the text report gives it. */
static void disk_sentence(FILE *out, const struct disk *d)
{
	const char *share = report_share(d);

	fprintf(out, "<li>%s %s; %s (%.1f MiB) taking %s; ", d->name, report_flushes(d),
		report_n(d->delta[DEV_WRITES], "write", "writes"),
		d->delta[DEV_WRITE_SECTORS] / 2048.0, report_ms(d->delta[DEV_WRITE_MS]));
	fprintf(out, "the tree spent %s in %s on its files%s%s.</li>\n",
		report_duration(d->total_ns),
		report_n(d->calls, "durability call", "durability calls"),
		share ? ": " : "", share ? share : "");
}

static void other_devices(FILE *out, const struct devices *ds)
{
	for (size_t i = 0; i < ds->nm; i++)
		if (ds->m[i].calls && report_mount_line(ds, &ds->m[i])) {
			fprintf(out, "<li>");
			html_text(out, report_mount_line(ds, &ds->m[i]), 300);
			fprintf(out, "</li>\n");
		}
	if (ds->nofile_calls)
		fprintf(out, "<li>%s</li>\n", report_nofile_line(ds));
	if (ds->unknown_calls)
		fprintf(out, "<li>%s</li>\n", report_unknown_line(ds));
}

static void devices(FILE *out, const struct run *run)
{
	const struct devices *ds = &run->devices;
	const char *missing = report_devices_missing(run);

	fprintf(out, "<h2>Devices</h2>\n<div id=\"devices\">\n");
	if (missing) {
		fprintf(out, "<p class=\"warn\">Attribution unavailable: %s.</p>\n</div>\n", missing);
		return;
	}
	fprintf(out, "<p class=\"note\">Each disk's own counters (/sys/block/DEV/stat) over "
		"the %.3f s of the run: they are device-wide, and what others did with the disk "
		"is in them too.  The share is the part of the tree's time in durability calls "
		"on the disk's files that its writes and cache flushes could account for; the "
		"rest went in the kernel (journal commits, queueing).  The disk counts "
		"milliseconds.</p>\n"
		"<table><tr><th>disk</th><th>cache</th><th>flushes</th><th>flushing</th>"
		"<th>writes</th><th>writing</th><th>busy</th><th>tree's calls</th>"
		"<th>tree's time</th><th>device's share</th></tr>\n",
		(ds->t1_ns - ds->t0_ns) / 1e9);
	for (size_t i = 0; i < ds->nd; i++)
		if (ds->d[i].calls)
			disk_row(out, &ds->d[i]);
	fprintf(out, "</table>\n<ul>\n");
	for (size_t i = 0; i < ds->nd; i++)
		if (ds->d[i].calls)
			disk_sentence(out, &ds->d[i]);
	other_devices(out, ds);
	fprintf(out, "</ul>\n</div>\n");
}

void report_html(FILE *out, const struct run *run)
{
	head(out, run);
	summary(out, run);
	groups(out, run);
	if (run->calls) {
		top(out, "Top files", "files", run, &run->by_file);
		top(out, "Top call sites", "sites", run, &run->by_site);
		if (run->by_thread.n > 1) /* as in the text */
			top(out, "Top threads", "threads", run, &run->by_thread);
	}
	if (run->devices.present && !run->eaten)
		devices(out, run);
	if (run->audit)
		findings(out, run);
	fprintf(out, "<p class=\"note\">Made by syncstat.</p>\n</body></html>\n");
}
