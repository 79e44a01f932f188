/* SPDX-License-Identifier: MIT */
/* report_json.c -- the report for programs, schema REPORT_SCHEMA
 * (doc/syncstat.schema.json), made and written by jansson (doc/design.md
 * says why that library).  Names from the records are bytes; JSON text is
 * Unicode: a byte that is not part of valid UTF-8 becomes U+FFFD. */
#include "common/common.h"
#include "report_data.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

static json_t *checked(json_t *v)
{
	if (!v)
		die("out of memory");
	return v;
}

/* A name as a JSON string: each byte outside valid UTF-8 as U+FFFD (three
 * bytes for one: the copy is at most three times as long). */
json_t *report_json_string(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	char *copy = malloc(3 * strlen(str) + 1), *o = copy;
	json_t *v;
	int n;

	if (!copy)
		die("out of memory");
	while (*s) {
		if (*s < 0x80) {
			*o++ = (char)*s++;
		} else if ((n = report_utf8_length(s)) > 0) {
			memcpy(o, s, n);
			o += n;
			s += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			s++;
		}
	}
	v = checked(json_stringn(copy, (size_t)(o - copy)));
	free(copy);
	return v;
}

/* A count: sums saturate at 2^64 - 1, JSON's integers here stop at 2^63 - 1. */
json_t *report_json_count(unsigned long long v)
{
	return checked(json_integer(v > LLONG_MAX ? LLONG_MAX : (json_int_t)v));
}

/* Set obj[key] to v, which it takes; dies if either could not be made. */
void report_json_set(json_t *obj, const char *key, json_t *v)
{
	if (json_object_set_new(obj, key, checked(v)) != 0)
		die("out of memory");
}

static void append(json_t *array, json_t *v)
{
	if (json_array_append_new(array, checked(v)) != 0)
		die("out of memory");
}

static json_t *histogram(const struct group *g)
{
	unsigned long long counts[66];
	json_t *rows = checked(json_array()), *row;
	int lo, hi;

	if (report_histogram(g, counts, &lo, &hi))
		for (int b = lo; b <= hi; b++) {
			row = checked(json_object());
			report_json_set(row, "value", report_json_count(report_bucket_value(b)));
			report_json_set(row, "count", report_json_count(counts[b]));
			append(rows, row);
		}
	return rows;
}

/* The counts every group has. */
static void add_counts(json_t *o, const struct group *g)
{
	report_json_set(o, "count", report_json_count(g->count));
	report_json_set(o, "timed", report_json_count(g->timed));
	report_json_set(o, "errors", report_json_count(g->errors));
	report_json_set(o, "total_ns", report_json_count(g->total));
}

static json_t *kinds(const struct groups *gs)
{
	json_t *list = checked(json_array()), *o;

	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		o = checked(json_object());
		report_json_set(o, "program", report_json_string(g->key));
		report_json_set(o, "kind", report_json_string(report_kind_names[g->kind]));
		add_counts(o, g);
		report_json_set(o, "min_ns", report_json_count(g->timed ? g->lat[0] : 0));
		report_json_set(o, "median_ns", report_json_count(report_percentile(g, 50)));
		report_json_set(o, "p99_ns", report_json_count(report_percentile(g, 99)));
		report_json_set(o, "max_ns", report_json_count(g->timed ? g->lat[g->timed - 1] : 0));
		report_json_set(o, "histogram", histogram(g));
		append(list, o);
	}
	return list;
}

static json_t *keyed(const char *field, const struct groups *gs)
{
	json_t *list = checked(json_array()), *o;

	for (size_t i = 0; i < gs->n; i++) {
		o = checked(json_object());
		report_json_set(o, field, report_json_string(gs->g[i].key));
		add_counts(o, &gs->g[i]);
		append(list, o);
	}
	return list;
}

/* The processes, or the threads (`threads`: each with its tid). */
static json_t *processes(const struct groups *gs, int threads)
{
	json_t *list = checked(json_array()), *o;

	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		o = checked(json_object());
		report_json_set(o, "pid", json_integer(g->pid));
		if (threads)
			report_json_set(o, "tid", json_integer(g->tid));
		report_json_set(o, "ppid", json_integer(g->ppid));
		report_json_set(o, "program", report_json_string(g->program));
		add_counts(o, g);
		append(list, o);
	}
	return list;
}

static json_t *findings(const struct findings *fs)
{
	json_t *list = checked(json_array()), *o;

	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->f[i];

		o = checked(json_object());
		report_json_set(o, "pattern", json_string(audit_names[f->pattern]));
		report_json_set(o, "program", report_json_string(f->program));
		report_json_set(o, "site", report_json_string(f->site));
		report_json_set(o, "count", report_json_count(f->count));
		report_json_set(o, "example", report_json_string(f->example));
		append(list, o);
	}
	return list;
}

static json_t *disk(const struct disk *d)
{
	double share = device_share(d);
	json_t *o = checked(json_object());

	report_json_set(o, "name", report_json_string(d->name));
	report_json_set(o, "dev", json_sprintf("%u:%u", d->major, d->minor));
	report_json_set(o, "write_cache", d->write_cache < 0 ? json_null() :
			json_string(d->write_cache ? "write back" : "write through"));
	report_json_set(o, "fua", d->fua < 0 ? json_null() : json_boolean(d->fua));
	report_json_set(o, "from_start", json_boolean(d->from_start));
	report_json_set(o, "flushes", report_json_count(d->fields < 17 ? 0 : d->delta[DEV_FLUSHES]));
	report_json_set(o, "flush_ns", report_json_count(device_flush_ns(d)));
	report_json_set(o, "writes", report_json_count(d->delta[DEV_WRITES]));
	report_json_set(o, "write_sectors", report_json_count(d->delta[DEV_WRITE_SECTORS]));
	report_json_set(o, "write_ns", report_json_count(device_ns(d->delta[DEV_WRITE_MS])));
	report_json_set(o, "busy_ns", report_json_count(device_ns(d->delta[DEV_BUSY_MS])));
	report_json_set(o, "tree_calls", report_json_count(d->calls));
	report_json_set(o, "tree_total_ns", report_json_count(d->total_ns));
	report_json_set(o, "device_share_pct", share < 0 ? json_null() : json_real(share));
	return o;
}

static json_t *file_system(const struct devices *ds, const struct dev_mount *m)
{
	json_t *o = checked(json_object()), *disks = checked(json_array());

	report_json_set(o, "dev", json_sprintf("%llu:%llu", m->dev >> 32, m->dev & 0xffffffff));
	report_json_set(o, "fstype", report_json_string(m->fstype));
	report_json_set(o, "via", m->via[0] ? report_json_string(m->via) : json_null());
	for (int j = 0; j < m->nleaves; j++)
		append(disks, report_json_string(ds->d[m->leaves[j]].name));
	report_json_set(o, "disks", disks);
	report_json_set(o, "calls", report_json_count(m->calls));
	report_json_set(o, "total_ns", report_json_count(m->total_ns));
	return o;
}

static json_t *calls_and_ns(unsigned long long calls, unsigned long long ns)
{
	json_t *o = checked(json_object());

	report_json_set(o, "calls", report_json_count(calls));
	report_json_set(o, "total_ns", report_json_count(ns));
	return o;
}

/* The disks under the tree's files, when syncstat sampled them. */
static json_t *devices(const struct run *run)
{
	const struct devices *ds = &run->devices;
	const char *missing = report_devices_missing(run);
	json_t *o = checked(json_object()), *disks, *fss;

	report_json_set(o, "available", json_boolean(!missing));
	report_json_set(o, "reason", missing ? json_string(missing) : json_null());
	if (missing)
		return o;
	report_json_set(o, "device_wide", json_true());
	report_json_set(o, "samples", report_json_count(ds->samples));
	report_json_set(o, "span_ns", report_json_count(ds->t1_ns - ds->t0_ns));
	disks = checked(json_array());
	for (size_t i = 0; i < ds->nd; i++)
		if (ds->d[i].calls)
			append(disks, disk(&ds->d[i]));
	report_json_set(o, "disks", disks);
	fss = checked(json_array());
	for (size_t i = 0; i < ds->nm; i++)
		if (ds->m[i].calls)
			append(fss, file_system(ds, &ds->m[i]));
	report_json_set(o, "file_systems", fss);
	report_json_set(o, "no_file", calls_and_ns(ds->nofile_calls, ds->nofile_ns));
	report_json_set(o, "unknown_device", calls_and_ns(ds->unknown_calls, ds->unknown_ns));
	return o;
}

/* The command, how it ended, and the sums. */
static void summary(json_t *o, const struct run *run)
{
	unsigned long long eaten_ns = run->calls * EATEN_NS;
	json_t *argv = checked(json_array()), *estimate = checked(json_object());

	report_json_set(o, "schema", json_string(REPORT_SCHEMA));
	for (char **a = run->argv; a && *a; a++)
		append(argv, report_json_string(*a));
	report_json_set(o, "command", argv);
	report_json_set(o, "exit_status", run->status >= 0 ? json_integer(run->status) : json_null());
	report_json_set(o, "wall_ns", run->status >= 0 ?
			report_json_count((unsigned long long)(run->wall * 1e9)) : json_null());
	report_json_set(o, "eaten", json_boolean(run->eaten));
	report_json_set(o, "calls", report_json_count(run->calls));
	report_json_set(o, "incomplete", report_json_count(run->incomplete));
	report_json_set(o, "lost", report_json_count(run->lost));
	report_json_set(o, "total_ns", report_json_count(run->total));
	report_json_set(estimate, "eatmydata_ns", report_json_count(eaten_ns));
	report_json_set(estimate, "saved_ns", report_json_count(
		run->eaten || run->total < eaten_ns ? 0 : run->total - eaten_ns));
	report_json_set(o, "estimate", estimate);
}

/* The programs that ran unobserved, and why. */
static json_t *unobserved(const struct run *run)
{
	json_t *list = checked(json_array());

	for (size_t i = 0; i < run->nunobserved; i++) {
		const struct emd_rec_slot *s = run->unobserved[i];
		json_t *u = checked(json_object());

		report_json_set(u, "program", report_json_string(s->program));
		report_json_set(u, "path", report_json_string(s->path));
		report_json_set(u, "pid", json_integer(s->pid));
		report_json_set(u, "why", report_json_string(s->site));
		report_json_set(u, "errno", json_integer(s->error));
		append(list, u);
	}
	return list;
}

void report_json(FILE *out, const struct run *run)
{
	json_t *o = checked(json_object());

	summary(o, run);
	report_json_set(o, "groups", kinds(&run->by_kind));
	report_json_set(o, "files", keyed("path", &run->by_file));
	report_json_set(o, "sites", report_json_sites(run));
	report_json_set(o, "processes", processes(&run->by_process, 0));
	report_json_set(o, "threads", processes(&run->by_thread, 1));
	report_json_set(o, "unobserved", unobserved(run));
	if (run->audit)
		report_json_set(o, "findings", findings(&run->findings));
	if (run->devices.present && !run->eaten)
		report_json_set(o, "devices", devices(run));
	/* Four significant digits: a share in percent, to a tenth. */
	if (json_dumpf(o, out, JSON_INDENT(2) | JSON_REAL_PRECISION(4)) != 0 ||
	    fputc('\n', out) == EOF)
		die("cannot write the JSON report: %s", strerror(errno));
	json_decref(o);
}
