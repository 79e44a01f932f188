/* SPDX-License-Identifier: MIT */
/* report_text.c -- the report for people: a summary, then per program and
 * kind of call its latencies with a histogram in DTrace's quantize() layout,
 * then the files, call sites and threads that cost the most. */
#include "report_data.h"

#include <string.h>

#define TOP 10

const char *report_n(unsigned long long n, const char *one, const char *many)
{
	static char buf[8][64];
	static int next;
	char *b = buf[next++ % 8];

	snprintf(b, 64, "%llu %s", n, n == 1 ? one : many);
	return b;
}

const char *report_ms(unsigned long long ms)
{
	static char buf[4][32];
	static int next;
	char *b = buf[next++ % 4];

	if (ms == 0)
		snprintf(b, 32, "under 1 ms");
	else if (ms < 10000)
		snprintf(b, 32, "%llu ms", ms);
	else
		snprintf(b, 32, "%.2f s", ms / 1e3);
	return b;
}

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

void report_command_line(FILE *out, char *const *argv)
{
	for (char *const *a = argv; a && *a; a++) {
		if (a != argv)
			fputc(' ', out);
		shell_word(out, *a);
	}
}

static void summary(FILE *out, const struct run *run, int eaten)
{
	fprintf(out, "%s:%s", eaten ? "eatmydata --stats" : "syncstat",
		run->argv && *run->argv ? " " : "");
	report_command_line(out, run->argv);
	fputc('\n', out);
	if (run->status >= 0)
		fprintf(out, "  exit status %d, wall time %.3f s\n", run->status,
			run->wall);
	else
		fprintf(out, "  the run did not finish (no exit status recorded)\n");
	fprintf(out, "  %s", report_n(run->calls, "durability call", "durability calls"));
	if (eaten) {
		fprintf(out, "%s%s\n", run->left ? ": " : ", ", report_eaten(run));
	} else {
		fprintf(out, "%s; the process tree spent %.3f s in %s", report_untimed(run),
			run->total / 1e9, report_spent(run));
		/* A sum over every thread: parallel calls add up past 100%. */
		if (run->wall > 0)
			fprintf(out, " (summed over its threads: %.1f%% of the wall time)",
				100 * run->total / 1e9 / run->wall);
		fprintf(out, "\n  %s\n", report_would_save(run));
	}
	if (run->incomplete)
		fprintf(out, "  %s\n", report_incomplete(run));
	if (run->lost)
		fprintf(out, "  %s\n", report_lost(run));
	for (size_t i = 0; i < run->nunobserved; i++) {
		const struct emd_rec_slot *s = run->unobserved[i];

		fprintf(out, "  NOT OBSERVED: %s (pid %d): %s%s%s; its durability calls are in "
			"no count here\n", report_one_line(s->path), s->pid, report_one_line(s->site),
			s->error ? ": " : "", s->error ? strerror(s->error) : "");
	}
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
 * in it is written as C would (\n, \\, \x7f).  A longer name than a
 * record holds (a report's JSON, which is anyone's) is cut, ending "...". */
const char *report_one_line(const char *name)
{
	static char buf[4][4 * 300 + 1];
	static int next;
	char *b = buf[next++ % 4], *p = b;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		if (p - b > (ptrdiff_t)sizeof(buf[0]) - 8) { /* room for \xNN, "..." */
			p += sprintf(p, "...");
			break;
		}
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

		fprintf(out, "\n%s %s: %s", report_one_line(g->key), report_kind_names[g->kind],
			report_n(g->count, "call", "calls"));
		if (g->errors)
			fprintf(out, ", %llu failed", g->errors);
		if (g->untimed && !eaten)
			fprintf(out, ", %llu counted, not timed (left to the kernel: an io_uring "
				"or AIO submission, an msync, an O_SYNC open or write, a file on "
				"FUSE or NFS)", g->untimed);
		if (g->left && eaten)
			fprintf(out, ", %llu not eaten (left to the disk)", g->left);
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

/* The threads, when the tree ran more than one: which of them waited. */
static void threads(FILE *out, const struct groups *gs, int eaten)
{
	if (gs->n < 2)
		return;
	fprintf(out, "\nTop threads by %s:\n%12s %8s  %s\n",
		eaten ? "calls" : "time in durability calls", eaten ? "" : "total", "calls",
		"thread");
	for (size_t i = 0; i < gs->n && i < TOP; i++)
		fprintf(out, "%12s %8llu  %s\n", eaten ? "" : report_duration(gs->g[i].total),
			gs->g[i].count, report_one_line(report_thread_name(&gs->g[i])));
}

/* The call sites, each with its function and source line where the
 * debug information names them. */
static void sites(FILE *out, const struct run *run)
{
	const struct groups *gs = &run->by_site;

	top(out, "call sites", "site", gs, run->eaten);
	for (size_t i = 0; i < gs->n && i < TOP; i++) {
		const char *where = report_site_where(run, &gs->g[i]);

		if (where)
			fprintf(out, "%s%s: %s\n", i ? "" : "\n", report_one_line(gs->g[i].key),
				report_one_line(where));
	}
}

static void findings(FILE *out, const struct run *run)
{
	const struct findings *fs = &run->findings;

	if (!run->calls)
		fprintf(out, "\nAudit: %s\n", report_audit_nothing(run));
	if (!run->calls && !fs->n)
		return;
	fprintf(out, "\nAudit: %s\n", report_n(fs->n, "finding", "findings"));
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->f[i];

		fprintf(out, "  [%s] %s at %s: %s, e.g. %s\n    %s\n",
			audit_names[f->pattern], report_one_line(f->program), report_one_line(f->site),
			report_n(f->count, "time", "times"), report_one_line(f->example),
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

/* The counters count milliseconds: so do the figures made of them. */
const char *report_flushes(const struct disk *d)
{
	static char b[200];
	unsigned long long flushes = d->delta[DEV_FLUSHES], ms = d->delta[DEV_FLUSH_MS];

	if (d->fields < 17)
		return "counted no flushes (a kernel before Linux 5.5)";
	snprintf(b, sizeof(b), "completed %s, %s in all", report_n(flushes, "cache flush",
		 "cache flushes"), report_ms(ms));
	if (flushes > 1 && ms >= 10)
		snprintf(b + strlen(b), sizeof(b) - strlen(b), " (%.2f ms each on average)",
			 (double)ms / (double)flushes);
	return b;
}

const char *report_share(const struct disk *d)
{
	static char b[200];
	double share = device_share(d);

	if (device_busier(d))
		return "its share of that cannot be told: the device spent longer in writes and "
		       "cache flushes than the tree in those calls, so others' work is in its "
		       "counters";
	if (share < 0)
		return NULL;
	snprintf(b, sizeof(b), "up to %.0f%% in the device (its writes and cache flushes), the rest "
		 "in the kernel (journal commits, queueing)", share);
	return b;
}

/* One disk: what it did during the run, beside what the tree spent. */
static void disk(FILE *out, const struct disk *d)
{
	const char *share = report_share(d);

	fprintf(out, "  %s (%u:%u, %s)%s:\n    %s\n", d->name, d->major, d->minor,
		cache_setting(d), d->from_start ? "" :
		" [not sampled from the start: mounted during the run]", report_flushes(d));
	fprintf(out, "    %s (%.1f MiB) taking %s; busy %s of the run\n",
		report_n(d->delta[DEV_WRITES], "write", "writes"),
		d->delta[DEV_WRITE_SECTORS] / 2048.0, report_ms(d->delta[DEV_WRITE_MS]),
		report_ms(d->delta[DEV_BUSY_MS]));
	fprintf(out, "    the tree spent %s in %s on files here%s\n",
		report_duration(d->total_ns),
		report_n(d->calls, "durability call", "durability calls"), share ? ":" : "");
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
		if (ds->m[i].calls && report_mount_line(ds, &ds->m[i]))
			fprintf(out, "  %s\n", report_mount_line(ds, &ds->m[i]));
	if (ds->nofile_calls)
		fprintf(out, "  %s\n", report_nofile_line(ds));
	if (ds->unknown_calls)
		fprintf(out, "  %s\n", report_unknown_line(ds));
}

void report_text(FILE *out, const struct run *run)
{
	summary(out, run, run->eaten);
	kind_groups(out, &run->by_kind, run->eaten);
	if (run->calls) {
		top(out, "files", "file", &run->by_file, run->eaten);
		sites(out, run);
		threads(out, &run->by_thread, run->eaten);
	}
	if (run->devices.present && !run->eaten)
		devices(out, run);
	if (run->audit)
		findings(out, run);
}
