/* SPDX-License-Identifier: MIT */
/* report_json.c -- the report for programs, schema "eatmydata.syncstat/2"
 * (documented in syncstat(1) and the README). */
#include "report_data.h"

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or 0. */
int report_utf8_length(const unsigned char *s)
{
	unsigned c = s[0], n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (unsigned i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return (int)n;
}

/* A file name is bytes, JSON text is Unicode: a byte that is not part of
 * valid UTF-8 becomes U+FFFD, so the document always parses. */
static void json_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	fputc('"', out);
	while (*s) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s++);
		else if (*s < 0x20)
			fprintf(out, "\\u%04x", *s++);
		else if (*s < 0x80)
			fputc(*s++, out);
		else if ((n = report_utf8_length(s)) > 0) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fputs("\\ufffd", out);
			s++;
		}
	}
	fputc('"', out);
}

static void histogram(FILE *out, const struct group *g)
{
	unsigned long long counts[66];
	int lo, hi;

	fprintf(out, "\"histogram\": [");
	if (report_histogram(g, counts, &lo, &hi))
		for (int b = lo; b <= hi; b++)
			fprintf(out, "%s{\"value\": %llu, \"count\": %llu}",
				b > lo ? ", " : "", report_bucket_value(b), counts[b]);
	fprintf(out, "]");
}

static void counts(FILE *out, const struct group *g)
{
	fprintf(out, "\"count\": %llu, \"timed\": %llu, \"errors\": %llu, "
		"\"total_ns\": %llu", g->count, g->timed, g->errors, g->total);
}

static void kinds(FILE *out, const struct groups *gs)
{
	fprintf(out, "  \"groups\": [");
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		fprintf(out, "%s\n    {\"program\": ", i ? "," : "");
		json_string(out, g->key);
		fprintf(out, ", \"kind\": ");
		json_string(out, report_kind_names[g->kind]);
		fprintf(out, ", ");
		counts(out, g);
		fprintf(out, ", \"min_ns\": %llu, \"median_ns\": %llu, \"p99_ns\": %llu, "
			"\"max_ns\": %llu, ", g->timed ? g->lat[0] : 0,
			report_percentile(g, 50), report_percentile(g, 99),
			g->timed ? g->lat[g->timed - 1] : 0);
		histogram(out, g);
		fprintf(out, "}");
	}
	fprintf(out, "\n  ],\n");
}

static void keyed(FILE *out, const char *name, const char *field,
		  const struct groups *gs)
{
	fprintf(out, "  \"%s\": [", name);
	for (size_t i = 0; i < gs->n; i++) {
		fprintf(out, "%s\n    {\"%s\": ", i ? "," : "", field);
		json_string(out, gs->g[i].key);
		fprintf(out, ", ");
		counts(out, &gs->g[i]);
		fprintf(out, "}");
	}
	fprintf(out, "\n  ],\n");
}

static void processes(FILE *out, const struct groups *gs)
{
	fprintf(out, "  \"processes\": [");
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		fprintf(out, "%s\n    {\"pid\": %d, \"ppid\": %d, \"program\": ",
			i ? "," : "", g->pid, g->ppid);
		json_string(out, g->program);
		fprintf(out, ", ");
		counts(out, g);
		fprintf(out, "}");
	}
	fprintf(out, "\n  ]");
}

static void findings(FILE *out, const struct findings *fs)
{
	fprintf(out, ",\n  \"findings\": [");
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->f[i];

		fprintf(out, "%s\n    {\"pattern\": \"%s\", \"program\": ", i ? "," : "",
			audit_names[f->pattern]);
		json_string(out, f->program);
		fprintf(out, ", \"site\": ");
		json_string(out, f->site);
		fprintf(out, ", \"count\": %llu, \"example\": ", f->count);
		json_string(out, f->example);
		fprintf(out, "}");
	}
	fprintf(out, "\n  ]");
}

static void disk(FILE *out, const struct disk *d)
{
	double share = device_flush_share(d);

	fprintf(out, "{\"name\": \"%s\", \"dev\": \"%u:%u\", \"write_cache\": %s, "
		"\"fua\": %s, \"from_start\": %s, \"flushes\": %llu, \"flush_ns\": %llu, "
		"\"writes\": %llu, \"write_sectors\": %llu, \"write_ns\": %llu, "
		"\"busy_ns\": %llu, \"tree_calls\": %llu, \"tree_total_ns\": %llu, "
		"\"flush_share_pct\": ", d->name, d->major, d->minor,
		d->write_cache < 0 ? "null" : d->write_cache ? "\"write back\"" : "\"write through\"",
		d->fua < 0 ? "null" : d->fua ? "true" : "false", d->from_start ? "true" : "false",
		d->fields < 17 ? 0 : d->delta[DEV_FLUSHES], device_flush_ns(d),
		d->delta[DEV_WRITES], d->delta[DEV_WRITE_SECTORS], device_ns(d->delta[DEV_WRITE_MS]),
		device_ns(d->delta[DEV_BUSY_MS]), d->calls, d->total_ns);
	if (share < 0)
		fprintf(out, "null}");
	else
		fprintf(out, "%.1f}", share);
}

static void file_systems(FILE *out, const struct devices *ds)
{
	int first = 1;

	fprintf(out, ", \"file_systems\": [");
	for (size_t i = 0; i < ds->nm; i++) {
		const struct dev_mount *m = &ds->m[i];

		if (!m->calls)
			continue;
		fprintf(out, "%s\n      {\"dev\": \"%llu:%llu\", \"fstype\": ", first ? "" : ",",
			m->dev >> 32, m->dev & 0xffffffff);
		json_string(out, m->fstype);
		fprintf(out, ", \"via\": ");
		if (m->via[0])
			json_string(out, m->via);
		else
			fprintf(out, "null");
		fprintf(out, ", \"disks\": [");
		for (int j = 0; j < m->nleaves; j++)
			fprintf(out, "%s\"%s\"", j ? ", " : "", ds->d[m->leaves[j]].name);
		fprintf(out, "], \"calls\": %llu, \"total_ns\": %llu}", m->calls, m->total_ns);
		first = 0;
	}
	fprintf(out, "]");
}

/* The disks under the tree's files, when syncstat sampled them. */
static void devices(FILE *out, const struct run *run)
{
	const struct devices *ds = &run->devices;
	const char *missing = report_devices_missing(run);
	int first = 1;

	fprintf(out, ",\n  \"devices\": {\"available\": %s, \"reason\": ",
		missing ? "false" : "true");
	if (missing) {
		json_string(out, missing);
		fprintf(out, "}");
		return;
	}
	fprintf(out, "null, \"device_wide\": true, \"samples\": %llu, \"span_ns\": %llu, "
		"\"disks\": [", ds->samples, ds->t1_ns - ds->t0_ns);
	for (size_t i = 0; i < ds->nd; i++)
		if (ds->d[i].calls) {
			fprintf(out, "%s\n      ", first ? "" : ",");
			disk(out, &ds->d[i]);
			first = 0;
		}
	fprintf(out, "]");
	file_systems(out, ds);
	fprintf(out, ", \"no_file\": {\"calls\": %llu, \"total_ns\": %llu}, "
		"\"unknown_device\": {\"calls\": %llu, \"total_ns\": %llu}}",
		ds->nofile_calls, ds->nofile_ns, ds->unknown_calls, ds->unknown_ns);
}

void report_json(FILE *out, const struct run *run)
{
	unsigned long long eaten_ns = run->calls * EATEN_NS;

	fprintf(out, "{\n  \"schema\": \"" REPORT_SCHEMA "\",\n  \"command\": [");
	for (char **a = run->argv; a && *a; a++) {
		fprintf(out, "%s", a == run->argv ? "" : ", ");
		json_string(out, *a);
	}
	fprintf(out, "],\n");
	if (run->status >= 0)
		fprintf(out, "  \"exit_status\": %d,\n  \"wall_ns\": %.0f,\n",
			run->status, run->wall * 1e9);
	else
		fprintf(out, "  \"exit_status\": null,\n  \"wall_ns\": null,\n");
	fprintf(out, "  \"eaten\": %s,\n  \"calls\": %llu,\n  \"incomplete\": %llu,\n"
		"  \"lost\": %llu,\n  \"total_ns\": %llu,\n",
		run->eaten ? "true" : "false", run->calls, run->incomplete,
		run->lost, run->total);
	fprintf(out, "  \"estimate\": {\"eatmydata_ns\": %llu, \"saved_ns\": %llu},\n",
		eaten_ns, run->eaten || run->total < eaten_ns ? 0 : run->total - eaten_ns);
	kinds(out, &run->by_kind);
	keyed(out, "files", "path", &run->by_file);
	keyed(out, "sites", "site", &run->by_site);
	processes(out, &run->by_process);
	if (run->audit)
		findings(out, &run->findings);
	if (run->devices.present && !run->eaten)
		devices(out, run);
	fprintf(out, "\n}\n");
}
