/* SPDX-License-Identifier: MIT */
/* findings.c -- syncstat --audit: the mistakes of "Eat My Data: How Everybody
 * Gets File IO Wrong", found in a run's records.
 *
 * A file is known by device, inode and birth time; whether its contents
 * changed since a sync is told by its modification time and size, however
 * it changed (write, stdio, mmap, another process).  sync(2) and syncfs(2)
 * count as syncs of everything (on that file system) before them.
 */
#include "common/common.h"
#include "findings.h"
#include "keymap.h"
#include "platform.h"
#include "run.h"

#include <errno.h>
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
		s->kind == EMD_K_WRITE_SYNC || s->kind == EMD_K_WRITE_DSYNC ||
		s->kind == EMD_K_PWRITEV2_SYNC || s->kind == EMD_K_PWRITEV2_DSYNC);
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

/* What one pass over the records learns; every index is stored plus one, so
 * that 0 means "none". */
struct file_key {
	unsigned long long dev, ino, btime_ns;
};
struct file_state {
	size_t last_sync;  /* its last data sync */
	size_t last_move;  /* its last rename or link */
	size_t last_over;  /* the same, over an existing name */
};
struct synced_key {
	struct file_key file;
	long long pid;
};
struct dir_key {
	unsigned long long dev, ino;
};
struct pass {
	struct keymap files, synced, dirs, syncfs;
	size_t sync_all; /* the last sync(2) */
};

struct finding_key {
	int pattern;
	char program[32], site[112];
};

static void add(struct findings *out, enum audit_pattern p, const char *program,
		const char *site, const char *path)
{
	struct finding_key k = {.pattern = p};
	struct finding *f;
	size_t *place;

	snprintf(k.program, sizeof(k.program), "%s", program);
	snprintf(k.site, sizeof(k.site), "%s", site);
	if (!out->index.key_size)
		out->index = (struct keymap)KEYMAP_INIT(struct finding_key, size_t);
	place = keymap_get(&out->index, &k, 1);
	if (*place) {
		out->f[*place - 1].count++;
		return;
	}
	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 16;
		if (!(out->f = realloc(out->f, out->cap * sizeof(*out->f))))
			die("out of memory");
	}
	f = &out->f[out->n++];
	*place = out->n;
	*f = (struct finding){.pattern = p, .count = 1};
	memcpy(f->program, k.program, sizeof(f->program));
	memcpy(f->site, k.site, sizeof(f->site));
	snprintf(f->example, sizeof(f->example), "%s", path);
}

static struct file_state *file_state(struct pass *ps, const struct emd_rec_file *f,
				     int create)
{
	struct file_key k = {f->dev, f->ino, f->btime_ns};

	return keymap_get(&ps->files, &k, create);
}

static int synced_by(struct pass *ps, const struct emd_rec_slot *s)
{
	struct synced_key k = {{s->file.dev, s->file.ino, s->file.btime_ns}, s->pid};

	return keymap_get(&ps->synced, &k, 0) != NULL;
}

/* The last sync of everything on dev so far (plus one), or 0. */
static size_t last_barrier(struct pass *ps, unsigned long long dev)
{
	size_t *fs = keymap_get(&ps->syncfs, &dev, 0);

	return fs && *fs > ps->sync_all ? *fs : ps->sync_all;
}

/* Slot i, learnt. */
static void learn(struct pass *ps, const struct emd_rec_slot *s, size_t i)
{
	struct synced_key k = {{s->file.dev, s->file.ino, s->file.btime_ns}, s->pid};
	struct dir_key d = {s->file.dev, s->file.ino};

	if (data_sync(s)) {
		file_state(ps, &s->file, 1)->last_sync = i + 1;
		*(char *)keymap_get(&ps->synced, &k, 1) = 1;
	}
	if (s->kind == EMD_K_RENAME || s->kind == EMD_K_LINK) {
		struct file_state *f = file_state(ps, &s->file, 1);

		f->last_move = i + 1;
		if (s->flags & EMD_REC_EXISTED)
			f->last_over = i + 1;
	}
	if (dir_sync(s))
		*(size_t *)keymap_get(&ps->dirs, &d, 1) = i + 1;
	if (barrier(s, s->file.dev))
		*(s->kind == EMD_K_SYNC ? &ps->sync_all
					: (size_t *)keymap_get(&ps->syncfs, &s->file.dev, 1)) = i + 1;
}

/* 1. A rename over an existing name of a file whose contents are not those
 * of its last sync (or that was never synced), with no sync of everything
 * since: judged on what the pass has learnt before it. */
static void rename_over(struct pass *ps, const struct emd_rec_slot *slots,
			size_t i, struct findings *out)
{
	const struct emd_rec_slot *r = &slots[i], *s = NULL;
	struct file_state *f = file_state(ps, &r->file, 0);
	size_t since;

	if (r->kind != EMD_K_RENAME || !(r->flags & EMD_REC_EXISTED))
		return;
	if (f && f->last_sync)
		s = &slots[f->last_sync - 1];
	if (s && s->file.mtime_ns == r->file.mtime_ns && s->file.size == r->file.size)
		return;
	since = last_barrier(ps, r->file.dev);
	if (since && (!s || since > f->last_sync))
		return;
	add(out, AUDIT_RENAME_UNSYNCED, r->program, r->site, r->path);
}

/* 2. The last entry made for a file its process syncs, in a directory
 * nobody syncs afterwards. */
static void entry_not_durable(struct pass *ps, const struct emd_rec_slot *e,
			      size_t i, struct findings *out)
{
	struct file_state *f = file_state(ps, &e->file, 0);
	struct dir_key d = {e->dir_dev, e->dir_ino};
	size_t *dir;

	if (e->kind != EMD_K_CREATE && e->kind != EMD_K_RENAME && e->kind != EMD_K_LINK)
		return;
	if ((f && f->last_move > i + 1) || !synced_by(ps, e))
		return;
	dir = keymap_get(&ps->dirs, &d, 0);
	if ((dir && *dir > i + 1) || last_barrier(ps, e->dir_dev) > i + 1)
		return;
	add(out, AUDIT_DIR_NOT_SYNCED, e->program, e->site, e->path);
}

static void pass_free(struct pass *ps)
{
	keymap_free(&ps->files);
	keymap_free(&ps->synced);
	keymap_free(&ps->dirs);
	keymap_free(&ps->syncfs);
}

static void pass_run(struct pass *ps, const struct emd_rec_slot *slots, size_t n,
		     struct findings *out)
{
	*ps = (struct pass){.files = KEYMAP_INIT(struct file_key, struct file_state),
			    .synced = KEYMAP_INIT(struct synced_key, char),
			    .dirs = KEYMAP_INIT(struct dir_key, size_t),
			    .syncfs = KEYMAP_INIT(unsigned long long, size_t)};
	for (size_t i = 0; i < n; i++) {
		if (out)
			rename_over(ps, slots, i, out);
		learn(ps, &slots[i], i);
	}
}

void audit_records(const struct emd_rec_slot *slots, size_t n, struct findings *out)
{
	struct pass ps;

	pass_run(&ps, slots, n, out);
	for (size_t i = 0; i < n; i++)
		entry_not_durable(&ps, &slots[i], i, out);
	pass_free(&ps);
}

/* The file s synced as it is now, if it is still that file under the name
 * it was last given; 0 if it is gone. */
static int now_of(const char *path, struct emd_rec_file *now)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
		  STATX_INO | STATX_BTIME | STATX_MTIME | STATX_SIZE, &stx) != 0)
		return 0;
	*now = (struct emd_rec_file){
		.dev = (unsigned long long)stx.stx_dev_major << 32 | stx.stx_dev_minor,
		.ino = stx.stx_ino,
		.btime_ns = stx.stx_btime.tv_sec * 1000000000ULL + stx.stx_btime.tv_nsec,
		.mtime_ns = stx.stx_mtime.tv_sec * 1000000000ULL + stx.stx_mtime.tv_nsec,
		.size = stx.stx_size};
	return 1;
}

/* 3. A file as it is now, unlike at its last sync; not one renamed over a
 * name since, which pattern 1 reports.  DIR/tails holds one finding per
 * three NUL-terminated fields (program, site, path): a name may hold any
 * byte but NUL. */
void audit_tails(const char *dir, const struct emd_rec_slot *slots, size_t n)
{
	char file[PATH_MAX + 16];
	struct emd_rec_file now;
	struct pass ps;
	FILE *out;
	int fd;

	snprintf(file, sizeof(file), "%s/tails", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(out = fdopen(fd, "w")))
		die("cannot write %s: %s", file, strerror(errno));
	pass_run(&ps, slots, n, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct emd_rec_slot *s = &slots[i];
		struct file_state *f = file_state(&ps, &s->file, 0);
		const char *path;

		if (!data_sync(s) || f->last_sync != i + 1 || f->last_over > i + 1 ||
		    last_barrier(&ps, s->file.dev) > i + 1)
			continue;
		path = f->last_move > i + 1 ? slots[f->last_move - 1].path : s->path;
		if (now_of(path, &now) && same_file(&now, &s->file) &&
		    (now.mtime_ns != s->file.mtime_ns || now.size != s->file.size))
			fprintf(out, "%s%c%s%c%s%c", s->program, 0, s->site, 0, path, 0);
	}
	pass_free(&ps);
	if (fclose(out) != 0)
		die("cannot write %s", file);
}

void audit_load_tails(const char *dir, struct findings *out)
{
	char file[PATH_MAX + 16], *text, *field[3];
	size_t len, at = 0;

	snprintf(file, sizeof(file), "%s/tails", dir);
	if (!(text = records_read_input(file, (size_t)1 << 30, &len)))
		return; /* the run did not finish: nothing to compare */
	while (at < len) {
		for (int k = 0; k < 3; k++) {
			size_t end = at + strnlen(text + at, len - at);

			if (end == len)
				die("%s: corrupt (a finding cut short)", file);
			field[k] = text + at;
			at = end + 1;
		}
		add(out, AUDIT_TAIL_NOT_SYNCED, field[0], field[1], field[2]);
	}
	free(text);
}
