/* SPDX-License-Identifier: MIT */
/* report_text.c -- the report for people: a summary, then per program and
 * kind of call its latencies with a histogram in DTrace's quantize() layout,
 * then the files and call sites that cost the most. */
#include "report_data.h"

#include <string.h>

#define TOP 10

const char *report_duration(unsigned long long ns)
{
	static char buf[8][32];
	static int next;
	char *b = buf[next++ % 8];

	if (ns < 10000)
		snprintf(b, 32, "%llu ns", ns);
	else if (ns < 10000000)
		snprintf(b, 32, "%.1f us", ns / 1e3);
	else if (ns < 10000000000ULL)
		snprintf(b, 32, "%.1f ms", ns / 1e6);
	else
		snprintf(b, 32, "%.2f s", ns / 1e9);
	return b;
}

/* An argument as a shell would take it back: bare when it is plain, in
 * single quotes when it holds no control character, else in bash's $'...'
 * (a newline in a name must not start a line of the report). */
static void shell_word(FILE *out, const char *a)
{
	int plain = *a != '\0', control = 0;

	for (const unsigned char *c = (const unsigned char *)a; *c; c++) {
		plain &= !!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				  "0123456789_@%+=:,./-", *c);
		control |= *c < 0x20 || *c == 0x7f;
	}
	if (plain) {
		fputs(a, out);
		return;
	}
	fputs(control ? "$'" : "'", out);
	for (const unsigned char *c = (const unsigned char *)a; *c; c++) {
		if (!control && *c == '\'')
			fputs("'\\''", out);
		else if (control && (*c == '\'' || *c == '\\'))
			fprintf(out, "\\%c", *c);
		else if (control && (*c < 0x20 || *c == 0x7f))
			fprintf(out, "\\x%02x", *c);
		else
			fputc(*c, out);
	}
	fputc('\'', out);
}

static void summary(FILE *out, const struct run *run, int eaten)
{
	fprintf(out, "%s:", eaten ? "eatmydata --stats" : "syncstat");
	for (char **a = run->argv; a && *a; a++) {
		fputc(' ', out);
		shell_word(out, *a);
	}
	fputc('\n', out);
	if (run->status >= 0)
		fprintf(out, "  exit status %d, wall time %.3f s\n", run->status,
			run->wall);
	else
		fprintf(out, "  the run did not finish (no exit status recorded)\n");
	fprintf(out, "  %llu durability calls", run->calls);
	if (eaten) {
		fprintf(out, ", all eaten\n");
	} else {
		fprintf(out, "; the process tree spent %.3f s in them", run->total / 1e9);
		/* A sum over every thread: parallel calls add up past 100%. */
		if (run->wall > 0)
			fprintf(out, " (summed over its threads: %.1f%% of the wall time)",
				100 * run->total / 1e9 / run->wall);
		fprintf(out, "\n  eatmydata would answer them in about %s: %.3f s saved\n",
			report_duration(run->calls * EATEN_NS),
			run->total > run->calls * EATEN_NS
				? (run->total - run->calls * EATEN_NS) / 1e9 : 0.0);
	}
	if (run->incomplete)
		fprintf(out, "  %llu calls had not returned when their process ended\n",
			run->incomplete);
	if (run->lost)
		fprintf(out, "  %llu calls were not recorded: the record file was full\n",
			run->lost);
}

static void quantize(FILE *out, const struct group *g)
{
	unsigned long long counts[66];
	int lo, hi;

	if (!report_histogram(g, counts, &lo, &hi))
		return;
	fprintf(out, "%16s  ------------- Distribution ------------- count\n",
		"value (ns)");
	for (int b = lo; b <= hi; b++) {
		int bar = (int)((40 * counts[b] + g->timed / 2) / g->timed);
		char at[41];

		memset(at, '@', bar);
		at[bar] = '\0';
		fprintf(out, "%16llu |%-40s %llu\n", report_bucket_value(b), at, counts[b]);
	}
}

/* A name from the records, on one line: a control character or a backslash
 * in it is written as C would (\n, \\, \x7f). */
const char *report_one_line(const char *name)
{
	static char buf[4][4 * 300 + 1];
	static int next;
	char *b = buf[next++ % 4], *p = b;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		if (*c == '\\' || *c == '\n' || *c == '\t')
			p += sprintf(p, "\\%c", *c == '\n' ? 'n' : *c == '\t' ? 't' : '\\');
		else if (*c < 0x20 || *c == 0x7f)
			p += sprintf(p, "\\x%02x", *c);
		else
			*p++ = (char)*c;
	}
	*p = '\0';
	return b;
}

static void kind_groups(FILE *out, const struct groups *gs, int eaten)
{
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		fprintf(out, "\n%s %s: %llu calls", report_one_line(g->key), report_kind_names[g->kind],
			g->count);
		if (g->errors)
			fprintf(out, ", %llu failed", g->errors);
		if (eaten || !g->timed) {
			fputc('\n', out);
			continue;
		}
		fprintf(out, ", total %s, min %s, median %s, p99 %s, max %s\n",
			report_duration(g->total), report_duration(g->lat[0]),
			report_duration(report_percentile(g, 50)),
			report_duration(report_percentile(g, 99)),
			report_duration(g->lat[g->timed - 1]));
		quantize(out, g);
	}
}

static void top(FILE *out, const char *title, const char *what,
		const struct groups *gs, int eaten)
{
	fprintf(out, "\nTop %s by %s:\n%12s %8s  %s\n", title,
		eaten ? "calls" : "time in durability calls",
		eaten ? "" : "total", "calls", what);
	for (size_t i = 0; i < gs->n && i < TOP; i++)
		fprintf(out, "%12s %8llu  %s\n",
			eaten ? "" : report_duration(gs->g[i].total), gs->g[i].count,
			report_one_line(gs->g[i].key));
}

static void findings(FILE *out, const struct findings *fs)
{
	fprintf(out, "\nAudit: %zu finding%s\n", fs->n, fs->n == 1 ? "" : "s");
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->f[i];

		fprintf(out, "  [%s] %s at %s: %llu time%s, e.g. %s\n    %s\n",
			audit_names[f->pattern], report_one_line(f->program), report_one_line(f->site),
			f->count, f->count == 1 ? "" : "s", report_one_line(f->example),
			audit_explanations[f->pattern]);
	}
}

static const char *cache_setting(const struct disk *d)
{
	static char b[64];

	snprintf(b, sizeof(b), "write cache %s, FUA %s",
		 d->write_cache < 0 ? "unknown" : d->write_cache ? "write back" : "write through",
		 d->fua < 0 ? "unknown" : d->fua ? "yes" : "no");
	return b;
}

const char *report_flushes(const struct disk *d)
{
	static char b[160];
	unsigned long long flushes = d->delta[DEV_FLUSHES], flush_ns = device_flush_ns(d);

	if (d->fields < 17)
		return "counted no flushes (a kernel before Linux 5.5)";
	snprintf(b, sizeof(b), "completed %llu cache flushes, %s each on average, %s in all",
		 flushes, report_duration(flushes ? flush_ns / flushes : 0),
		 report_duration(flush_ns));
	return b;
}

const char *report_share(const struct disk *d)
{
	static char b[160];
	double share = device_flush_share(d);

	if (share < 0)
		return NULL;
	snprintf(b, sizeof(b), "%s%.0f%% in the device's flushes, the rest in the kernel "
		 "(journal commits, waiting for writeback)", share >= 100 ? "up to " : "", share);
	return b;
}

/* One disk: what it did during the run, beside what the tree spent. */
static void disk(FILE *out, const struct disk *d)
{
	const char *share = report_share(d);

	fprintf(out, "  %s (%u:%u, %s)%s:\n    %s\n", d->name, d->major, d->minor,
		cache_setting(d), d->from_start ? "" :
		" [not sampled from the start: mounted during the run]", report_flushes(d));
	fprintf(out, "    %llu writes (%.1f MiB) taking %s; busy %s of the run\n",
		d->delta[DEV_WRITES], d->delta[DEV_WRITE_SECTORS] / 2048.0,
		report_duration(device_ns(d->delta[DEV_WRITE_MS])),
		report_duration(device_ns(d->delta[DEV_BUSY_MS])));
	fprintf(out, "    the tree spent %s in %llu durability calls on files here%s\n",
		report_duration(d->total_ns), d->calls, share ? ":" : "");
	if (share)
		fprintf(out, "    %s\n", share);
}

static void devices(FILE *out, const struct run *run)
{
	const struct devices *ds = &run->devices;
	const char *missing = report_devices_missing(run);

	if (missing) {
		fprintf(out, "\nDevices: attribution unavailable: %s\n", missing);
		return;
	}
	fprintf(out, "\nDevices over %.3f s (each device's own counters, /sys/block/DEV/stat:\n"
		"what others did with it during the run is in them too):\n",
		(ds->t1_ns - ds->t0_ns) / 1e9);
	for (size_t i = 0; i < ds->nd; i++)
		if (ds->d[i].calls)
			disk(out, &ds->d[i]);
	for (size_t i = 0; i < ds->nm; i++)
		if (ds->m[i].calls && ds->m[i].nleaves == 0)
			fprintf(out, "  no block device: %llu calls (%s) on %s (%llu:%llu)\n",
				ds->m[i].calls, report_duration(ds->m[i].total_ns),
				report_one_line(ds->m[i].fstype), ds->m[i].dev >> 32, ds->m[i].dev & 0xffffffff);
		else if (ds->m[i].calls && ds->m[i].via[0])
			fprintf(out, "  (%llu calls on files on %s, counted on the disks under it)\n",
				ds->m[i].calls, ds->m[i].via);
	if (ds->nofile_calls)
		fprintf(out, "  no file: %llu call%s (%s) named none (sync)\n", ds->nofile_calls,
			ds->nofile_calls == 1 ? "" : "s", report_duration(ds->nofile_ns));
	if (ds->unknown_calls)
		fprintf(out, "  unknown device: %llu calls (%s) on file systems mounted after the "
			"run started\n", ds->unknown_calls, report_duration(ds->unknown_ns));
}

void report_text(FILE *out, const struct run *run)
{
	summary(out, run, run->eaten);
	kind_groups(out, &run->by_kind, run->eaten);
	if (run->calls) {
		top(out, "files", "file", &run->by_file, run->eaten);
		top(out, "call sites", "site", &run->by_site, run->eaten);
	}
	if (run->devices.present && !run->eaten)
		devices(out, run);
	if (run->audit)
		findings(out, &run->findings);
}
