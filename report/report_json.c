/* SPDX-License-Identifier: MIT */
/* report_json.c -- the report for programs, schema REPORT_SCHEMA
 * (doc/syncstat.schema.json), written as it is made (common/json.h): a
 * report of a million records is never a tree in memory.  Names from the
 * records are bytes, written as JSON text (bytes outside UTF-8 as U+FFFD). */
#include "common/common.h"
#include "common/json.h"
#include "report_data.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* A name, or null when there is none. */
void report_json_name(struct jw *w, const char *key, const char *name)
{
	if (name)
		jw_string(w, key, name);
	else
		jw_null(w, key);
}

static void histogram(struct jw *w, const struct group *g)
{
	unsigned long long counts[66];
	int lo, hi;

	jw_array(w, "histogram");
	if (report_histogram(g, counts, &lo, &hi))
		for (int b = lo; b <= hi; b++) {
			jw_object(w, NULL);
			jw_count(w, "value", report_bucket_value(b));
			jw_count(w, "count", counts[b]);
			jw_end(w);
		}
	jw_end(w);
}

/* The counts every group has. */
void report_json_counts(struct jw *w, const struct group *g)
{
	jw_count(w, "count", g->count);
	jw_count(w, "timed", g->timed);
	jw_count(w, "errors", g->errors);
	jw_count(w, "total_ns", g->total);
}

static void kinds(struct jw *w, const struct groups *gs)
{
	jw_array(w, "groups");
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		jw_object(w, NULL);
		jw_string(w, "program", g->key);
		jw_string(w, "kind", report_kind_names[g->kind]);
		report_json_counts(w, g);
		jw_count(w, "min_ns", g->timed ? g->lat[0] : 0);
		jw_count(w, "median_ns", report_percentile(g, 50));
		jw_count(w, "p99_ns", report_percentile(g, 99));
		jw_count(w, "max_ns", g->timed ? g->lat[g->timed - 1] : 0);
		histogram(w, g);
		jw_end(w);
	}
	jw_end(w);
}

static void files(struct jw *w, const struct groups *gs)
{
	jw_array(w, "files");
	for (size_t i = 0; i < gs->n; i++) {
		jw_object(w, NULL);
		jw_string(w, "path", gs->g[i].key);
		report_json_counts(w, &gs->g[i]);
		jw_end(w);
	}
	jw_end(w);
}

/* The processes, or the threads (`threads`: each with its tid). */
static void processes(struct jw *w, const struct groups *gs, int threads)
{
	jw_array(w, threads ? "threads" : "processes");
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		jw_object(w, NULL);
		jw_int(w, "pid", g->pid);
		if (threads)
			jw_int(w, "tid", g->tid);
		jw_int(w, "ppid", g->ppid);
		jw_string(w, "program", g->program);
		report_json_counts(w, g);
		jw_end(w);
	}
	jw_end(w);
}

static void findings(struct jw *w, const struct findings *fs)
{
	jw_array(w, "findings");
	for (size_t i = 0; i < fs->n; i++) {
		const struct finding *f = &fs->f[i];

		jw_object(w, NULL);
		jw_string(w, "pattern", audit_names[f->pattern]);
		jw_string(w, "program", f->program);
		jw_string(w, "site", f->site);
		jw_count(w, "count", f->count);
		jw_string(w, "example", f->example);
		jw_end(w);
	}
	jw_end(w);
}

static void disk(struct jw *w, const struct disk *d)
{
	double share = device_share(d);
	char dev[32];

	snprintf(dev, sizeof(dev), "%u:%u", d->major, d->minor);
	jw_object(w, NULL);
	jw_string(w, "name", d->name);
	jw_string(w, "dev", dev);
	report_json_name(w, "write_cache", d->write_cache < 0 ? NULL :
			 d->write_cache ? "write back" : "write through");
	if (d->fua < 0)
		jw_null(w, "fua");
	else
		jw_bool(w, "fua", d->fua);
	jw_bool(w, "from_start", d->from_start);
	jw_count(w, "flushes", d->fields < 17 ? 0 : d->delta[DEV_FLUSHES]);
	jw_count(w, "flush_ns", device_flush_ns(d));
	jw_count(w, "writes", d->delta[DEV_WRITES]);
	jw_count(w, "write_sectors", d->delta[DEV_WRITE_SECTORS]);
	jw_count(w, "write_ns", device_ns(d->delta[DEV_WRITE_MS]));
	jw_count(w, "busy_ns", device_ns(d->delta[DEV_BUSY_MS]));
	jw_count(w, "tree_calls", d->calls);
	jw_count(w, "tree_total_ns", d->total_ns);
	/* Four significant digits: a share in percent, to a tenth. */
	jw_real(w, "device_share_pct", share < 0 ? NAN : share, 4);
	jw_end(w);
}

static void file_system(struct jw *w, const struct devices *ds, const struct dev_mount *m)
{
	char dev[48];

	snprintf(dev, sizeof(dev), "%llu:%llu", m->dev >> 32, m->dev & 0xffffffff);
	jw_object(w, NULL);
	jw_string(w, "dev", dev);
	jw_string(w, "fstype", m->fstype);
	report_json_name(w, "via", m->via[0] ? m->via : NULL);
	jw_array(w, "disks");
	for (int j = 0; j < m->nleaves; j++)
		jw_string(w, NULL, ds->d[m->leaves[j]].name);
	jw_end(w);
	jw_count(w, "calls", m->calls);
	jw_count(w, "total_ns", m->total_ns);
	jw_end(w);
}

static void calls_and_ns(struct jw *w, const char *key, unsigned long long calls,
			 unsigned long long ns)
{
	jw_object(w, key);
	jw_count(w, "calls", calls);
	jw_count(w, "total_ns", ns);
	jw_end(w);
}

/* The disks under the tree's files, when syncstat sampled them. */
static void devices(struct jw *w, const struct run *run)
{
	const struct devices *ds = &run->devices;
	const char *missing = report_devices_missing(run);

	jw_object(w, "devices");
	jw_bool(w, "available", !missing);
	report_json_name(w, "reason", missing);
	if (missing) {
		jw_end(w);
		return;
	}
	jw_bool(w, "device_wide", 1);
	jw_count(w, "samples", ds->samples);
	jw_count(w, "span_ns", ds->t1_ns - ds->t0_ns);
	jw_array(w, "disks");
	for (size_t i = 0; i < ds->nd; i++)
		if (ds->d[i].calls)
			disk(w, &ds->d[i]);
	jw_end(w);
	jw_array(w, "file_systems");
	for (size_t i = 0; i < ds->nm; i++)
		if (ds->m[i].calls)
			file_system(w, ds, &ds->m[i]);
	jw_end(w);
	calls_and_ns(w, "no_file", ds->nofile_calls, ds->nofile_ns);
	calls_and_ns(w, "unknown_device", ds->unknown_calls, ds->unknown_ns);
	jw_end(w);
}

/* The command, how it ended, and the sums. */
static void summary(struct jw *w, const struct run *run)
{
	unsigned long long eaten_ns = run->calls * EATEN_NS;

	jw_string(w, "schema", REPORT_SCHEMA);
	jw_array(w, "command");
	for (char **a = run->argv; a && *a; a++)
		jw_string(w, NULL, *a);
	jw_end(w);
	if (run->status >= 0) {
		jw_int(w, "exit_status", run->status);
		jw_count(w, "wall_ns", (unsigned long long)(run->wall * 1e9));
	} else {
		jw_null(w, "exit_status");
		jw_null(w, "wall_ns");
	}
	jw_bool(w, "eaten", run->eaten);
	jw_count(w, "calls", run->calls);
	jw_count(w, "incomplete", run->incomplete);
	jw_count(w, "lost", run->lost);
	jw_count(w, "total_ns", run->total);
	jw_object(w, "estimate");
	jw_count(w, "eatmydata_ns", eaten_ns);
	jw_count(w, "saved_ns", run->eaten || run->total < eaten_ns ? 0 : run->total - eaten_ns);
	jw_end(w);
}

/* The programs that ran unobserved, and why. */
static void unobserved(struct jw *w, const struct run *run)
{
	jw_array(w, "unobserved");
	for (size_t i = 0; i < run->nunobserved; i++) {
		const struct emd_rec_slot *s = run->unobserved[i];

		jw_object(w, NULL);
		jw_string(w, "program", s->program);
		jw_string(w, "path", s->path);
		jw_int(w, "pid", s->pid);
		jw_string(w, "why", s->site);
		jw_int(w, "errno", s->error);
		jw_end(w);
	}
	jw_end(w);
}

void report_json(FILE *out, const struct run *run)
{
	struct jw w;

	jw_start(&w, out, 2);
	jw_object(&w, NULL);
	summary(&w, run);
	kinds(&w, &run->by_kind);
	files(&w, &run->by_file);
	report_json_sites(&w, run);
	processes(&w, &run->by_process, 0);
	processes(&w, &run->by_thread, 1);
	unobserved(&w, run);
	if (run->audit)
		findings(&w, &run->findings);
	if (run->devices.present && !run->eaten)
		devices(&w, run);
	if (jw_finish(&w) != 0)
		die("cannot write the JSON report: %s", strerror(errno));
}
