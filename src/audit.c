/* SPDX-License-Identifier: MIT */
/* audit.c -- syncstat --audit: the mistakes of "Eat My Data: How Everybody
 * Gets File IO Wrong", found in a run's records.
 *
 * A file is known by device, inode and birth time; whether its contents
 * changed since a sync is told by its modification time and size, however
 * it changed (write, stdio, mmap, another process).  sync(2) and syncfs(2)
 * count as syncs of everything (on that file system) before them.
 */
#include "common.h"
#include "audit.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const audit_names[] = {"rename-unsynced", "dir-not-synced",
				   "tail-not-synced"};
const char *const audit_explanations[] = {
	"renamed over an existing name while its new contents were not synced: "
	"a crash can leave the name empty or with neither version",
	"synced, but the directory entry that makes it reachable (create, "
	"rename, link) was never made durable by an fsync of its directory",
	"written after its last sync by a program that syncs it: the tail is "
	"not durable at exit",
};

static int same_file(const struct emd_rec_file *a, const struct emd_rec_file *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->btime_ns == b->btime_ns;
}

static int data_sync(const struct emd_rec_slot *s)
{
	return s->state == EMD_REC_DONE && s->result >= 0 && S_ISREG(s->file.mode) &&
	       (s->kind == EMD_K_FSYNC || s->kind == EMD_K_FDATASYNC ||
		s->kind == EMD_K_WRITE_SYNC || s->kind == EMD_K_PWRITEV2_SYNC);
}

static int dir_sync(const struct emd_rec_slot *s)
{
	return s->result == 0 && S_ISDIR(s->file.mode) &&
	       (s->kind == EMD_K_FSYNC || s->kind == EMD_K_FDATASYNC);
}

/* sync(2) covers every file system, syncfs(2) the one of its descriptor. */
static int barrier(const struct emd_rec_slot *s, unsigned long long dev)
{
	return s->result == 0 &&
	       (s->kind == EMD_K_SYNC || (s->kind == EMD_K_SYNCFS && s->file.dev == dev));
}

static void add(struct findings *out, enum audit_pattern p, const char *program,
		const char *site, const char *path)
{
	struct finding *f;

	for (size_t i = 0; i < out->n; i++) {
		f = &out->f[i];
		if (f->pattern == p && !strcmp(f->program, program) && !strcmp(f->site, site)) {
			f->count++;
			return;
		}
	}
	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 16;
		if (!(out->f = realloc(out->f, out->cap * sizeof(*out->f))))
			die("out of memory");
	}
	f = &out->f[out->n++];
	*f = (struct finding){.pattern = p, .count = 1};
	snprintf(f->program, sizeof(f->program), "%s", program);
	snprintf(f->site, sizeof(f->site), "%s", site);
	snprintf(f->example, sizeof(f->example), "%s", path);
}

/* The last data sync of s's file before index `before`, or NULL. */
static const struct emd_rec_slot *last_sync(const struct emd_rec_slot *slots,
					    size_t before, const struct emd_rec_file *f)
{
	while (before-- > 0)
		if (data_sync(&slots[before]) && same_file(&slots[before].file, f))
			return &slots[before];
	return NULL;
}

/* Is there a sync of everything on dev between indexes from and to? */
static int barrier_between(const struct emd_rec_slot *slots, size_t from,
			   size_t to, unsigned long long dev)
{
	for (size_t i = from; i < to; i++)
		if (barrier(&slots[i], dev))
			return 1;
	return 0;
}

/* 1. A rename over an existing name of a file whose contents are not those
 * of its last sync (or that was never synced). */
static void renames(const struct emd_rec_slot *slots, size_t n, struct findings *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct emd_rec_slot *r = &slots[i], *s;

		if (r->kind != EMD_K_RENAME || !(r->flags & EMD_REC_EXISTED))
			continue;
		s = last_sync(slots, i, &r->file);
		if (s && s->file.mtime_ns == r->file.mtime_ns && s->file.size == r->file.size)
			continue;
		if (barrier_between(slots, s ? (size_t)(s - slots) : 0, i, r->file.dev))
			continue;
		add(out, AUDIT_RENAME_UNSYNCED, r->program, r->site, r->path);
	}
}

/* Is the file given another name after index i?  Then the entry at i is
 * not how it is reached in the end. */
static int renamed_later(const struct emd_rec_slot *slots, size_t n, size_t i,
			 int existed)
{
	for (size_t j = i + 1; j < n; j++)
		if ((slots[j].kind == EMD_K_RENAME || slots[j].kind == EMD_K_LINK) &&
		    same_file(&slots[j].file, &slots[i].file) &&
		    (!existed || (slots[j].flags & EMD_REC_EXISTED)))
			return 1;
	return 0;
}

/* 2. The last entry made for a file its process syncs, in a directory
 * nobody syncs afterwards. */
static void entries(const struct emd_rec_slot *slots, size_t n, struct findings *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct emd_rec_slot *e = &slots[i];
		int synced = 0, durable = 0;

		if ((e->kind != EMD_K_CREATE && e->kind != EMD_K_RENAME &&
		     e->kind != EMD_K_LINK) || renamed_later(slots, n, i, 0))
			continue;
		for (size_t j = 0; j < n && !synced; j++)
			synced = data_sync(&slots[j]) && slots[j].pid == e->pid &&
				 same_file(&slots[j].file, &e->file);
		for (size_t j = i + 1; j < n && synced && !durable; j++)
			durable = (dir_sync(&slots[j]) && slots[j].file.dev == e->dir_dev &&
				   slots[j].file.ino == e->dir_ino) ||
				  barrier(&slots[j], e->dir_dev);
		if (synced && !durable)
			add(out, AUDIT_DIR_NOT_SYNCED, e->program, e->site, e->path);
	}
}

void audit_records(const struct emd_rec_slot *slots, size_t n, struct findings *out)
{
	renames(slots, n, out);
	entries(slots, n, out);
}

/* The newest name a file had in the records (a rename or link moves it). */
static const char *newest_path(const struct emd_rec_slot *slots, size_t n,
			       const struct emd_rec_slot *s)
{
	const char *path = s->path;

	for (size_t i = s - slots + 1; i < n; i++)
		if ((slots[i].kind == EMD_K_RENAME || slots[i].kind == EMD_K_LINK) &&
		    same_file(&slots[i].file, &s->file))
			path = slots[i].path;
	return path;
}

/* 3. A file as it is now, unlike at its last sync; not one renamed over a
 * name since, which pattern 1 reports. */
void audit_tails(const char *dir, const struct emd_rec_slot *slots, size_t n)
{
	char file[PATH_MAX + 16];
	struct emd_rec_file now;
	FILE *out;

	snprintf(file, sizeof(file), "%s/tails", dir);
	if (!(out = fopen(file, "we")))
		die("cannot write %s", file);
	for (size_t i = 0; i < n; i++) {
		const struct emd_rec_slot *s = &slots[i];
		const char *path;
		struct statx stx;

		if (!data_sync(s) || last_sync(slots + i + 1, n - i - 1, &s->file) ||
		    barrier_between(slots, i + 1, n, s->file.dev) ||
		    renamed_later(slots, n, i, 1))
			continue;
		path = newest_path(slots, n, s);
		if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
			  STATX_INO | STATX_BTIME | STATX_MTIME | STATX_SIZE, &stx) != 0)
			continue;
		now = (struct emd_rec_file){
			.dev = (unsigned long long)stx.stx_dev_major << 32 | stx.stx_dev_minor,
			.ino = stx.stx_ino,
			.btime_ns = stx.stx_btime.tv_sec * 1000000000ULL + stx.stx_btime.tv_nsec,
			.mtime_ns = stx.stx_mtime.tv_sec * 1000000000ULL + stx.stx_mtime.tv_nsec,
			.size = stx.stx_size};
		if (same_file(&now, &s->file) &&
		    (now.mtime_ns != s->file.mtime_ns || now.size != s->file.size))
			fprintf(out, "%s\t%s\t%s\n", s->program, s->site, path);
	}
	if (fclose(out) != 0)
		die("cannot write %s", file);
}

void audit_load_tails(const char *dir, struct findings *out)
{
	char file[PATH_MAX + 16], line[1024], *site, *path;
	FILE *in;

	snprintf(file, sizeof(file), "%s/tails", dir);
	if (!(in = fopen(file, "re")))
		return; /* the run did not finish: nothing to compare */
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		if (!(site = strchr(line, '\t')) || !(path = strchr(site + 1, '\t')))
			die("%s: corrupt line \"%s\"", file, line);
		*site++ = '\0';
		*path++ = '\0';
		add(out, AUDIT_TAIL_NOT_SYNCED, line, site, path);
	}
	fclose(in);
}
