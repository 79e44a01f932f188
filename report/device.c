/* SPDX-License-Identifier: MIT */
/* device.c -- DIR/devices read back (the format is in device_sample.c),
 * and the tree's calls counted against the disks under their files.
 *
 * A kept directory is untrusted input: every line is checked and a bad one
 * stops the report naming the file, as a bad record does; counters that go
 * backwards (a wrapped 32-bit millisecond count, a new medium, a forged
 * file) never make a negative or wrapped figure.
 */
#include "common/common.h"
#include "device.h"
#include "run.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *file_name;
static size_t line_no;

static noreturn void bad(const char *why)
{
	die("%s: line %zu: %s", file_name, line_no, why);
}

static unsigned long long add_sat(unsigned long long a, unsigned long long b)
{
	return a + b < a ? ~0ULL : a + b;
}

/* The kernel keeps the times as 32-bit milliseconds, which wrap. */
static int is_ms(int field)
{
	return field == DEV_READ_MS || field == DEV_WRITE_MS || field == DEV_BUSY_MS ||
	       field == DEV_QUEUE_MS || field == DEV_DISCARD_MS || field == DEV_FLUSH_MS;
}

static unsigned long long step(int field, unsigned long long was, unsigned long long now)
{
	if (now >= was)
		return now - was;
	if (is_ms(field) && was <= UINT32_MAX && now <= UINT32_MAX)
		return now + (1ULL << 32) - was;
	return now; /* counted again from zero */
}

static const char *check_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= DEV_NAME || strspn(name, "abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+!-") != n)
		bad("a device's name is not a kernel's");
	return name;
}

static struct disk *disk_named(struct devices *ds, const char *name)
{
	check_name(name);
	for (size_t i = 0; i < ds->nd; i++)
		if (strcmp(ds->d[i].name, name) == 0)
			return &ds->d[i];
	if (ds->nd == DEV_MAX_DISKS)
		bad("too many disks");
	ds->d[ds->nd] = (struct disk){.write_cache = -1, .fua = -1};
	snprintf(ds->d[ds->nd].name, DEV_NAME, "%s", name);
	return &ds->d[ds->nd++];
}

/* "MAJ:MIN" as the kernel writes it. */
static void parse_dev(const char *t, unsigned *maj, unsigned *min)
{
	char end;

	if (!t || sscanf(t, "%u:%u%c", maj, min, &end) != 2 || *maj > 0xfffff ||
	    *min > 0xfffff)
		bad("expected a device number MAJ:MIN");
}

static unsigned long long number(const char *t)
{
	unsigned long long v;
	char *end;

	if (!t || *t < '0' || *t > '9')
		bad("expected a number");
	v = strtoull(t, &end, 10);
	if (*end || v == ULLONG_MAX)
		bad("expected a number");
	return v;
}

/* "mount MAJ:MIN FSTYPE VIA DISK...": a file system and its disks. */
static void parse_mount(struct devices *ds, char **save)
{
	struct dev_mount *m;
	unsigned maj, min;
	char *t;

	parse_dev(strtok_r(NULL, " ", save), &maj, &min);
	for (size_t i = 0; i < ds->nm; i++)
		if (ds->m[i].dev == ((unsigned long long)maj << 32 | min))
			return;
	if (ds->nm == DEV_MAX_MOUNTS)
		bad("too many file systems");
	m = &ds->m[ds->nm++];
	*m = (struct dev_mount){.dev = (unsigned long long)maj << 32 | min};
	t = strtok_r(NULL, " ", save);
	if (!t || strlen(t) >= DEV_NAME)
		bad("expected a file system type");
	snprintf(m->fstype, DEV_NAME, "%s", t);
	if (!(t = strtok_r(NULL, " ", save)))
		bad("expected the device on the way, or -");
	if (strcmp(t, "-") != 0)
		snprintf(m->via, DEV_NAME, "%s", check_name(t));
	while ((t = strtok_r(NULL, " ", save)) && m->nleaves < DEV_MAX_LEAVES)
		m->leaves[m->nleaves++] = (int)(disk_named(ds, t) - ds->d);
	if (t)
		bad("too many disks under one file system");
}

/* A disk's counters now, against the last sample: a new device number or
 * medium (diskseq) counts from zero again. */
static void account(struct disk *d, unsigned maj, unsigned min,
		    unsigned long long seq, const unsigned long long *v, int n)
{
	int same = d->seen && d->major == maj && d->minor == min && d->seq == seq &&
		   d->fields == n;

	for (int i = 0; i < n; i++) {
		if (i != DEV_IN_FLIGHT && d->seen)
			d->delta[i] = add_sat(d->delta[i],
					      same ? step(i, d->last[i], v[i]) : v[i]);
		d->last[i] = v[i];
	}
	d->major = maj;
	d->minor = min;
	d->seq = seq;
	d->fields = n;
	d->seen = 1;
}

/* A cache setting: -1 (unknown), 0 or 1. */
static int setting(const char *t)
{
	if (!t || (strcmp(t, "-1") != 0 && strcmp(t, "0") != 0 && strcmp(t, "1") != 0))
		bad("expected a cache setting: -1, 0 or 1");
	return atoi(t);
}

/* "disk NAME MAJ:MIN SEQ WC FUA N F1 ... FN" */
static void parse_disk(struct devices *ds, char **save)
{
	struct disk *d = disk_named(ds, strtok_r(NULL, " ", save) ?: "");
	unsigned long long v[DEV_FIELDS], seq;
	unsigned maj, min;
	long long n;
	int wc, fua;

	parse_dev(strtok_r(NULL, " ", save), &maj, &min);
	seq = number(strtok_r(NULL, " ", save));
	wc = setting(strtok_r(NULL, " ", save));
	fua = setting(strtok_r(NULL, " ", save));
	n = (long long)number(strtok_r(NULL, " ", save));
	if (n < 11 || n > DEV_FIELDS)
		bad("expected 11 to 17 counters");
	for (int i = 0; i < n; i++)
		v[i] = number(strtok_r(NULL, " ", save));
	if (strtok_r(NULL, " ", save))
		bad("more counters than announced");
	if (!d->seen)
		d->from_start = ds->samples == 1;
	d->write_cache = wc;
	d->fua = fua;
	account(d, maj, min, seq, v, (int)n);
}

static void parse_line(struct devices *ds, char *line)
{
	char *save, *word = strtok_r(line, " ", &save);

	if (!word)
		bad("an empty line");
	if (strcmp(word, "nosys") == 0 && !strtok_r(NULL, " ", &save)) {
		ds->unavailable = 1;
	} else if (strcmp(word, "mount") == 0) {
		parse_mount(ds, &save);
	} else if (strcmp(word, "sample") == 0) {
		unsigned long long t = number(strtok_r(NULL, " ", &save));

		if (ds->samples && t < ds->t1_ns)
			bad("a sample older than the one before");
		ds->t0_ns = ds->samples ? ds->t0_ns : t;
		ds->t1_ns = t;
		ds->samples++;
	} else if (strcmp(word, "disk") == 0 && ds->samples) {
		parse_disk(ds, &save);
	} else {
		bad("not a line of a device sample file");
	}
}

void device_load(const char *dir, struct devices *ds)
{
	static char file[PATH_MAX + 16];
	char *text, *line, *nl;
	size_t len;

	*ds = (struct devices){0};
	snprintf(file, sizeof(file), "%s/devices", dir);
	file_name = file;
	line_no = 1;
	if (!(text = records_read_input(file, (size_t)64 << 20, &len)))
		return;
	ds->present = 1;
	if (strlen(text) != len)
		bad("a NUL byte");
	if (strncmp(text, "syncstat-devices 1\n", 19) != 0)
		bad("not a syncstat device sample file, version 1");
	for (line = text + 19; *line; line = nl + 1) {
		line_no++;
		if (!(nl = strchr(line, '\n')))
			bad("the last line is cut short");
		*nl = '\0';
		parse_line(ds, line);
	}
	free(text);
}

void device_count(struct devices *ds, const struct emd_rec_slot *s)
{
	static size_t last;
	unsigned long long ns = s->state == EMD_REC_DONE ? s->latency_ns : 0;
	struct dev_mount *m = NULL;

	if (s->file.dev == 0 && strcmp(s->path, "-") == 0) {
		ds->nofile_calls++;
		ds->nofile_ns = add_sat(ds->nofile_ns, ns);
		return;
	}
	if (last < ds->nm && ds->m[last].dev == s->file.dev)
		m = &ds->m[last];
	for (size_t i = 0; !m && i < ds->nm; i++)
		if (ds->m[i].dev == s->file.dev)
			m = &ds->m[last = i];
	if (!m) {
		ds->unknown_calls++;
		ds->unknown_ns = add_sat(ds->unknown_ns, ns);
		return;
	}
	m->calls++;
	m->total_ns = add_sat(m->total_ns, ns);
	for (int i = 0; i < m->nleaves; i++) {
		ds->d[m->leaves[i]].calls++;
		ds->d[m->leaves[i]].total_ns = add_sat(ds->d[m->leaves[i]].total_ns, ns);
	}
}

unsigned long long device_ns(unsigned long long ms)
{
	return ms > ~0ULL / 1000000 ? ~0ULL : ms * 1000000;
}

unsigned long long device_flush_ns(const struct disk *d)
{
	return device_ns(d->delta[DEV_FLUSH_MS]);
}

/* The time the disk spent writing and flushing, against the tree's time in
 * durability calls on it: the calls wait for the writes they start and the
 * flush that makes them durable, so the disk's time is at most all of the
 * tree's -- when only the tree used it.  The counters are device-wide:
 * what others did is in them too, so the share is an upper bound, and past
 * 100% it bounds nothing (any share fits: others' writeback ran). */
static double device_ratio(const struct disk *d)
{
	unsigned long long ms = add_sat(d->delta[DEV_WRITE_MS],
					 d->fields < 17 ? 0 : d->delta[DEV_FLUSH_MS]);

	if (d->total_ns == 0 || !d->from_start)
		return -1;
	return 100.0 * (double)device_ns(ms) / (double)d->total_ns;
}

double device_share(const struct disk *d)
{
	double share = device_ratio(d);

	return share > 100 ? -1 : share;
}

int device_busier(const struct disk *d)
{
	return device_ratio(d) > 100;
}
