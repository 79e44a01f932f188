/* SPDX-License-Identifier: MIT */
/* report.c -- reads a record directory and prints what the run's durability
 * requests cost: per program and kind of call, per file, per call site,
 * per process and per thread. */
#include "common/common.h"
#include "run.h"
#include "report_data.h"
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KIND_NAME(id, name) name,
const char *const report_kind_names[] = {EMD_REC_KINDS(KIND_NAME)};

/* Runs of records share their program, file and site: the group last
 * asked for is tried first, before hashing a 300-byte key. */
static struct group *group_of(struct groups *gs, const char *key, int kind)
{
	struct group_key k = {.kind = kind};
	size_t *place;
	struct group *g;

	if (gs->last && (g = &gs->g[gs->last - 1])->kind == kind &&
	    strncmp(g->key, key, sizeof(k.key) - 1) == 0)
		return g;
	snprintf(k.key, sizeof(k.key), "%s", key);
	if (!gs->index.key_size)
		gs->index = (struct keymap)KEYMAP_INIT(struct group_key, size_t);
	place = keymap_get(&gs->index, &k, 1);
	if (*place)
		return &gs->g[(gs->last = *place) - 1];
	if (gs->n == gs->cap) {
		gs->cap = gs->cap ? 2 * gs->cap : 64;
		gs->g = realloc(gs->g, gs->cap * sizeof(*gs->g));
		if (!gs->g)
			die("out of memory");
	}
	g = &gs->g[gs->n++];
	*place = gs->last = gs->n;
	*g = (struct group){.kind = kind};
	memcpy(g->key, k.key, sizeof(g->key));
	return g;
}

/* Sums of crafted latencies stop at the largest value, never wrap. */
static unsigned long long sum(unsigned long long a, unsigned long long b)
{
	return a + b < a ? ~0ULL : a + b;
}

static void add(struct group *g, const struct emd_rec_slot *s)
{
	g->count++;
	if (s->state != EMD_REC_DONE)
		return;
	g->errors += s->error != 0;
	g->left += (s->flags & EMD_REC_LEFT) != 0;
	if (s->flags & EMD_REC_UNTIMED) { /* counted, its time unknown */
		g->untimed++;
		return;
	}
	if ((g->timed & (g->timed - 1)) == 0 || g->timed == 0) {
		g->lat = realloc(g->lat, (g->timed ? 2 * g->timed : 1) * sizeof(*g->lat));
		if (!g->lat)
			die("out of memory");
	}
	g->lat[g->timed++] = s->latency_ns;
	g->total = sum(g->total, s->latency_ns);
}

/* A process's or thread's group: named as its last call found it (an exec
 * keeps the numbers, not the name). */
static void add_process(struct group *p, const struct emd_rec_slot *s)
{
	p->pid = s->pid;
	p->ppid = s->ppid;
	p->tid = s->tid;
	snprintf(p->program, sizeof(p->program), "%s", s->program);
	add(p, s);
}

/* Bad input: name the file and stop. */
static noreturn void corrupt(const char *file, const char *why)
{
	die("%s: %s", file, why);
}

/* Map DIR/records and check its header. */
static const struct emd_rec_header *map_records(const char *file)
{
	const struct emd_rec_header *h;
	struct stat st;
	int fd = records_open_input(file);

	if (fd < 0 || fstat(fd, &st) != 0)
		corrupt(file, strerror(errno));
	if (st.st_size < EMD_REC_HEADER)
		corrupt(file, "too short for a record file");
	h = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		corrupt(file, strerror(errno));
	if (memcmp(h->magic, EMD_REC_MAGIC, 8) != 0)
		corrupt(file, "not an eatmydata record file (bad magic)");
	records_check_version(file, h->version);
	/* Divided, not multiplied: a crafted count must not wrap. */
	if (h->slot_size != sizeof(struct emd_rec_slot) ||
	    h->slots > ((unsigned long long)st.st_size - EMD_REC_HEADER) / h->slot_size)
		corrupt(file, "truncated or corrupt header");
	return h;
}

/* Count one call in every grouping. */
static void tally(struct run *run, const struct emd_rec_slot *s)
{
	struct group *site;
	char key[32];

	run->calls++;
	run->incomplete += s->state != EMD_REC_DONE;
	run->untimed += s->state == EMD_REC_DONE && (s->flags & EMD_REC_UNTIMED);
	if (s->flags & EMD_REC_LEFT) {
		run->left++;
		run->left_not_eating += (s->flags & EMD_REC_NOT_EATING) != 0;
		run->left_eatable += (s->flags & (EMD_REC_NEEDS_ON_BEHALF |
						  EMD_REC_NEEDS_SECCOMP_ON)) != 0;
		run->left_needs |= s->flags & (EMD_REC_NEEDS_ON_BEHALF | EMD_REC_NEEDS_SECCOMP_ON);
	}
	run->total = sum(run->total, s->state == EMD_REC_DONE ? s->latency_ns : 0);
	add(group_of(&run->by_kind, s->program, s->kind), s);
	add(group_of(&run->by_file, s->path, 0), s);
	site = group_of(&run->by_site, s->site, 0);
	site->slot = site->slot ? site->slot : s;
	add(site, s);
	snprintf(key, sizeof(key), "%d", s->pid);
	add_process(group_of(&run->by_process, key, 0), s);
	snprintf(key, sizeof(key), "%d/%d", s->pid, s->tid);
	add_process(group_of(&run->by_thread, key, 0), s);
	if (run->devices.present)
		device_count(&run->devices, s);
}

static void note_unobserved(struct run *run, const struct emd_rec_slot *s)
{
	run->unobserved = realloc(run->unobserved, (run->nunobserved + 1) * sizeof(*run->unobserved));
	if (!run->unobserved)
		die("out of memory");
	run->unobserved[run->nunobserved++] = s;
}

static void load_records(struct run *run)
{
	char file[PATH_MAX + 16];
	const struct emd_rec_header *h;

	snprintf(file, sizeof(file), "%s/records", run->dir);
	h = map_records(file);
	run->lost = h->next > h->slots ? h->next - h->slots : 0;
	run->eaten = (h->flags & EMD_REC_EATEN) != 0;
	run->audit = (h->flags & EMD_REC_AUDIT) != 0;
	run->slots = (const void *)((const char *)h + EMD_REC_HEADER);
	run->nslots = h->next < h->slots ? h->next : h->slots;
	for (size_t i = 0; i < run->nslots; i++) {
		const struct emd_rec_slot *s = &run->slots[i];

		if (s->state == EMD_REC_FREE) {
			run->incomplete++; /* claimed as its process died */
			continue;
		}
		/* Beyond 2^62 ns (146 years) a latency is garbage, and its
		 * histogram row would not fit 64 bits. */
		if (s->state > EMD_REC_DONE || s->kind >= EMD_K_COUNT ||
		    s->latency_ns > 1ULL << 62 ||
		    !memchr(s->program, 0, sizeof(s->program)) ||
		    !memchr(s->path, 0, sizeof(s->path)) || !memchr(s->site, 0, sizeof(s->site)))
			corrupt(file, "corrupt record");
		if (s->kind < EMD_K_FIRST_EVENT) /* --audit's events are not calls */
			tally(run, s);
		else if (s->kind == EMD_K_UNOBSERVED)
			note_unobserved(run, s);
	}
}

/* DIR/command: the arguments, each NUL-terminated (any other byte may be
 * in one); a directory from before the command started has none. */
static void load_command(struct run *run)
{
	char file[PATH_MAX + 16], *text;
	size_t len, n = 0;

	snprintf(file, sizeof(file), "%s/command", run->dir);
	if (!(text = records_read_input(file, (size_t)16 << 20, &len)))
		len = 0;
	if (len && text[len - 1] != '\0')
		corrupt(file, "an argument cut short");
	run->argv = calloc(len + 1, sizeof(char *));
	if (!run->argv)
		die("out of memory");
	for (size_t at = 0; at < len; at += strlen(text + at) + 1)
		run->argv[n++] = text + at;
}

/* DIR/run, written when the command ended: a directory from a killed run
 * has none, and the report says so. */
static void load_run(struct run *run)
{
	char file[PATH_MAX + 16], *text, end;
	size_t len;

	run->status = -1;
	run->wall = -1;
	load_command(run);
	snprintf(file, sizeof(file), "%s/run", run->dir);
	if (!(text = records_read_input(file, 4096, &len)))
		return;
	if (sscanf(text, "status %d\nwall %lf%c", &run->status, &run->wall, &end) != 3 ||
	    end != '\n' || run->status < 0 || run->status > 255 ||
	    !isfinite(run->wall) || run->wall < 0)
		corrupt(file, "expected \"status N\" (0 to 255) and \"wall SECONDS\"");
	free(text);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a,
			   y = *(const unsigned long long *)b;

	return (x > y) - (x < y);
}

static int cmp3(unsigned long long x1, unsigned long long y1,
		unsigned long long x2, unsigned long long y2, const char *kx,
		const char *ky)
{
	if (x1 != y1)
		return x1 < y1 ? 1 : -1;
	if (x2 != y2)
		return x2 < y2 ? 1 : -1;
	return strcmp(kx, ky);
}

/* Most time first (then most calls, then by name): the order of the
 * report's lists when calls were timed. */
static int by_total(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return cmp3(x->total, y->total, x->count, y->count, x->key, y->key);
}

/* Most calls first: when they were eaten, their time says nothing. */
static int by_count(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return cmp3(x->count, y->count, x->total, y->total, x->key, y->key);
}

unsigned long long report_percentile(const struct group *g, int pct)
{
	size_t i = (g->timed * pct + 99) / 100;

	return g->timed ? g->lat[i ? i - 1 : 0] : 0;
}

static void sort_all(struct run *run)
{
	struct groups *all[] = {&run->by_kind, &run->by_file, &run->by_site,
				&run->by_process, &run->by_thread};

	/* qsort is never given a NULL array, even of no elements. */
	for (size_t k = 0; k < sizeof(all) / sizeof(*all); k++) {
		for (size_t i = 0; i < all[k]->n; i++)
			if (all[k]->g[i].timed > 1)
				qsort(all[k]->g[i].lat, all[k]->g[i].timed,
				      sizeof(unsigned long long), cmp_ull);
		if (all[k] != &run->by_process && all[k]->n > 1)
			qsort(all[k]->g, all[k]->n, sizeof(struct group),
			      run->eaten ? by_count : by_total);
		all[k]->last = 0; /* its place, like the index's, is stale */
	}
}

/* A power-of-two bucket: 0 holds 0 ns, b holds [2^(b-1), 2^b). */
static int bucket(unsigned long long v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

unsigned long long report_bucket_value(int b)
{
	return b ? 1ULL << (b - 1) : 0;
}

int report_histogram(const struct group *g, unsigned long long counts[66],
		     int *lo, int *hi)
{
	memset(counts, 0, 66 * sizeof(*counts));
	if (!g->timed)
		return 0;
	for (size_t i = 0; i < g->timed; i++)
		counts[bucket(g->lat[i])]++;
	*lo = bucket(g->lat[0]);
	*hi = bucket(g->lat[g->timed - 1]) + 1;
	*lo = *lo > 0 ? *lo - 1 : 0;
	return 1;
}

/* What the user named must be a record directory: say so in those words,
 * not with the name of a file inside it. */
static void check_dir(const char *dir)
{
	char file[PATH_MAX + 16];
	struct stat st;

	if (stat(dir, &st) != 0)
		die("%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("%s: not a record directory (one kept with syncstat --keep): "
		    "not a directory", dir);
	snprintf(file, sizeof(file), "%s/records", dir);
	if (lstat(file, &st) != 0 && errno == ENOENT)
		die("%s: not a record directory (one kept with syncstat --keep): "
		    "it holds no records", dir);
}

void report_load(const char *dir, struct run *run)
{
	check_dir(dir);
	*run = (struct run){.dir = dir};
	device_load(dir, &run->devices);
	load_records(run);
	load_run(run);
	sort_all(run);
	if (run->audit) {
		audit_records(run->slots, run->nslots, &run->findings);
		audit_load_tails(dir, &run->findings);
	}
}

/* --html FILE, --json=FILE: never through a symbolic link (a shared /tmp). */
static void write_file(const char *file, const struct run *run,
		       void (*report)(FILE *, const struct run *))
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	FILE *out = fd < 0 ? NULL : fdopen(fd, "w");

	if (!out)
		die("cannot write %s: %s", file, strerror(errno));
	report(out, run);
	if (fclose(out) != 0)
		die("cannot write %s: %s", file, strerror(errno));
}

void report_dir(const char *dir, const struct report_options *opt)
{
	struct run run;
	FILE *out = stderr;

	report_load(dir, &run);
	if (opt->html)
		write_file(opt->html, &run, report_html);
	if (opt->json_file)
		write_file(opt->json_file, &run, report_json);
	if (opt->html && !opt->json && !opt->output)
		return;
	if (opt->output && !(out = fopen(opt->output, "we")))
		die("cannot write %s: %s", opt->output, strerror(errno));
	if (opt->json)
		report_json(out, &run);
	else
		report_text(out, &run);
	if (out != stderr && fclose(out) != 0)
		die("cannot write %s: %s", opt->output, strerror(errno));
}

const char *report_devices_missing(const struct run *run)
{
	const struct devices *ds = &run->devices;

	if (ds->unavailable)
		return "/sys/dev/block could not be read when the run started";
	if (ds->samples < 2)
		return "the disks were not sampled at the start and the end of the run";
	return NULL;
}

void report_finish_audit(const char *dir)
{
	struct run run = {.dir = dir};

	load_records(&run);
	audit_tails(dir, run.slots, run.nslots);
}
