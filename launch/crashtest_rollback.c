/* SPDX-License-Identifier: MIT */
/* crashtest_rollback.c -- from the journal the library left, the state a
 * power failure would leave in the copy (the `posix` model).
 *
 * A write is durable when an fsync of its file, or a sync, follows it in the
 * journal; a directory operation when an fsync of its directory (both, for a
 * rename between two) or a sync follows it.  What is not durable is undone,
 * newest first: file contents first, by inode (the data does not depend on
 * names), then the names, by path.  Files changed past the library (stdio,
 * shared mappings) are then brought to the images their last sync took.  What
 * the library could not see (a file changed or gone with no record of it)
 * makes the state unknown.
 */
#define _GNU_SOURCE 1
#include "launch/common.h"
#include "launch/crashtest_rollback.h"
#include "crashtest.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct file {
	unsigned long long dev, ino;
	long long size;
	struct timespec mtime;
	char *path;
	mode_t mode;
};

/* Files by inode: an array, and an open-addressing index into it (slot
 * holds position + 1, 0 when free), so that a journal of a million records
 * about as many files rolls back in linear time. */
struct snapshot {
	struct file *f;
	size_t n, cap;
	size_t *slot, slots;
};

/* The journal's records, headers copied out (payloads are not aligned). */
struct rec {
	struct ct_record h;
	const char *payload;
	size_t at; /* its offset in the journal */
	int durable;
};

struct journal {
	char *buf;
	size_t len, n;
	struct rec *rec;
};

void strlist_add(struct strlist *l, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
	if (!l->v)
		die("out of memory");
	l->v[l->n++] = s;
}

void path_join(char *out, size_t size, const char *dir, const char *name)
{
	size_t n = strlen(dir);

	if (n + 1 + strlen(name) >= size)
		die("path too long: %s/%s", dir, name);
	memcpy(out, dir, n);
	out[n] = '/';
	strcpy(out + n + 1, name);
}

static struct snapshot *walking; /* nftw has no argument for its callback */

static size_t slot_of(const struct snapshot *s, unsigned long long dev, unsigned long long ino)
{
	unsigned long long h = (ino * 0x9e3779b97f4a7c15ULL) ^ (dev * 0xbf58476d1ce4e5b9ULL);

	return (size_t)(h ^ (h >> 29)) & (s->slots - 1);
}

static void index_one(struct snapshot *s, size_t i)
{
	size_t k = slot_of(s, s->f[i].dev, s->f[i].ino);

	while (s->slot[k])
		k = (k + 1) & (s->slots - 1);
	s->slot[k] = i + 1;
}

/* Room for one more file, in the array and at most half full in the index. */
static void grow(struct snapshot *s)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->f = realloc(s->f, s->cap * sizeof(*s->f));
		if (!s->f)
			die("out of memory");
	}
	if (2 * (s->n + 1) <= s->slots)
		return;
	free(s->slot);
	s->slots = s->slots ? 4 * s->slots : 256;
	s->slot = calloc(s->slots, sizeof(*s->slot));
	if (!s->slot)
		die("out of memory");
	for (size_t i = 0; i < s->n; i++)
		index_one(s, i);
}

/* Every entry below the top of a walk (directories, links and all: an entry
 * made or removed past the library is as unseen as a write). */
static int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct snapshot *s = walking;

	(void)type;
	if (ftw && ftw->level == 0)
		return 0;
	grow(s);
	s->f[s->n] = (struct file){st->st_dev, st->st_ino, st->st_size, st->st_mtim,
				   *path ? strdup(path) : NULL, st->st_mode};
	index_one(s, s->n++);
	return 0;
}

static void walk(struct snapshot *s, const char *dir)
{
	walking = s;
	if (nftw(dir, add_file, 16, FTW_PHYS) != 0)
		die("cannot read %s: %s", dir, strerror(errno));
}

void snapshot_free(struct snapshot *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		free(s->f[i].path);
	if (s) {
		free(s->f);
		free(s->slot);
	}
}

struct snapshot *snapshot_take(const char *work)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		die("out of memory");
	walk(s, work);
	return s;
}

/* The first file added with (dev, ino), or NULL. */
static const struct file *find(const struct snapshot *s, unsigned long long dev,
			       unsigned long long ino)
{
	for (size_t k = s->slots ? slot_of(s, dev, ino) : 0; s->slots && s->slot[k];
	     k = (k + 1) & (s->slots - 1)) {
		const struct file *f = &s->f[s->slot[k] - 1];

		if (f->dev == dev && f->ino == ino)
			return f;
	}
	return NULL;
}

/* The journal's bytes; 0 if it is gone (the command removed it). */
static int read_all(const char *path, struct journal *j)
{
	FILE *f = fopen(path, "re");
	size_t cap = 0, got;

	if (!f)
		return 0;
	for (j->len = 0;; j->len += got) {
		if (j->len == cap && !(j->buf = realloc(j->buf, cap = cap ? 2 * cap : 65536)))
			die("out of memory");
		if (!(got = fread(j->buf + j->len, 1, cap - j->len, f)))
			break;
	}
	fclose(f);
	return 1;
}

/* The records; a journal gone, or with bytes that are no record (the
 * command wrote into it), cannot be trusted: the state is unknown. */
static void load(struct ct_run *run, struct journal *j)
{
	char path[PATH_MAX];
	size_t off = 0, cap = 0;
	struct ct_record h;

	path_join(path, sizeof(path), run->dir, CT_JOURNAL);
	if (!read_all(path, j))
		strlist_add(&run->unknown, "the journal is gone: %s", strerror(errno));
	while (off + sizeof(h) <= j->len) {
		memcpy(&h, j->buf + off, sizeof(h));
		if (h.magic != CT_MAGIC || h.len > j->len - off - sizeof(h))
			break;
		if (j->n == cap && !(j->rec = realloc(j->rec, (cap = cap ? 2 * cap : 256) *
								 sizeof(*j->rec))))
			die("out of memory");
		j->rec[j->n++] = (struct rec){h, j->buf + off + sizeof(h), off, 0};
		off += sizeof(h) + h.len;
	}
	if (off != j->len)
		strlist_add(&run->unknown, "the journal is corrupt at byte %zu", off);
}
/* The k-th string of a record's payload, or "". */
static const char *str_at(const struct rec *r, int k)
{
	const char *p = r->payload, *end = r->payload + r->h.len;

	if (!r->h.len || end[-1] != '\0')
		return "";
	for (; k > 0 && p < end; k--)
		p += strlen(p) + 1;
	return p < end ? p : "";
}

static int is_dir_op(uint32_t kind)
{
	return kind >= CT_CREATE && kind <= CT_RENAME;
}

static int is_data(uint32_t kind)
{
	return kind == CT_DATA || kind == CT_TRUNC;
}

/* (dev, ino) in the set s, once. */
static void add_inode(struct snapshot *s, uint64_t dev, uint64_t ino)
{
	struct stat st = {.st_mode = S_IFREG, .st_dev = dev, .st_ino = ino};

	walking = s;
	if (!find(s, dev, ino))
		add_file("", &st, 0, NULL);
}

/* An inode's life began or ended here: a sync after it is of another file
 * that got the same number (a directory removed, a file made), and covers
 * nothing before. */
static void forget(struct snapshot *s, uint64_t dev, uint64_t ino)
{
	struct file *f;

	while (ino && (f = (struct file *)find(s, dev, ino)))
		f->ino = 0; /* stays in the index, where it matches nothing */
}

/* Does a later durability point of `synced` cover record r? */
static int covered(const struct snapshot *synced, const struct rec *r)
{
	return find(synced, r->h.dev, r->h.ino) &&
	       (r->h.kind != CT_RENAME || find(synced, r->h.dev2, r->h.ino2));
}

/* Newest first: what a later durability point covers.  posix: an fsync of
 * the file (of its directory, for a name), or a sync.  ext4-ordered adds:
 * every directory operation (the journal commits them in order, and the
 * crash points at them give each prefix; truncations likewise, see
 * redo_truncations); the data a file held when a rename made it replace
 * another (auto_da_alloc); what sync_file_range wrote back and waited for,
 * once any fsync follows (its journal commit flushes the disk's cache). */
/* A sync seen in the newest-first walk, covering what was recorded before
 * it began: it takes effect once the walk is back there. */
struct pending {
	uint64_t dev, ino;
	size_t begin;
	int all;
};

struct syncs {
	struct snapshot synced; /* files and directories a later sync covers */
	struct pending *p;
	size_t n;
	int all, any; /* a later sync covers everything; a later sync */
};

static void cover(struct syncs *s, uint64_t dev, uint64_t ino, int all)
{
	s->all |= all;
	if (!all)
		add_inode(&s->synced, dev, ino);
}

/* Record r (of the walk) is a sync: pending until the walk reaches what was
 * recorded before it began, or at once if it says nothing of its start. */
static void seen_sync(struct syncs *s, const struct rec *r)
{
	int all = r->h.kind == CT_SYNC_ALL;

	s->any = 1;
	if (r->h.size <= 0 || (size_t)r->h.size - 1 >= r->at) {
		cover(s, r->h.dev, r->h.ino, all);
		return;
	}
	s->p = realloc(s->p, (s->n + 1) * sizeof(*s->p));
	if (!s->p)
		die("out of memory");
	s->p[s->n++] = (struct pending){r->h.dev, r->h.ino, (size_t)r->h.size - 1, all};
}

/* Syncs that began after record r was appended cover it and all before. */
static void reach(struct syncs *s, const struct rec *r)
{
	for (size_t i = 0; i < s->n;)
		if (r->at < s->p[i].begin) {
			cover(s, s->p[i].dev, s->p[i].ino, s->p[i].all);
			s->p[i] = s->p[--s->n];
		} else {
			i++;
		}
}

static void mark_durable(struct journal *j, enum ct_model model)
{
	struct syncs s = {0};
	int ext4 = model == CT_EXT4_ORDERED;

	for (size_t i = j->n; i-- > 0;) {
		struct rec *r = &j->rec[i];
		uint32_t k = r->h.kind;

		reach(&s, r);
		if (k == CT_SYNC_ALL || k == CT_SYNC)
			seen_sync(&s, r);
		if (ext4 && k == CT_WRITEOUT && s.any)
			add_inode(&s.synced, r->h.dev, r->h.ino);
		if (ext4 && k == CT_RENAME && *str_at(r, 2))
			add_inode(&s.synced, r->h.dev2, (uint64_t)r->h.off);
		/* For an image: stale, another point made its file durable. */
		if (is_data(k) || is_dir_op(k) || k == CT_IMAGE)
			r->durable = s.all || (ext4 && is_dir_op(k)) || covered(&s.synced, r);
		if (k == CT_CREATE || k == CT_MKDIR || k == CT_RMDIR)
			forget(&s.synced, r->h.dev2, r->h.ino2);
	}
	snapshot_free(&s.synced);
	free(s.p);
}

/* A path the journal names, if it lies in `top` with no ".." in it. */
static const char *within(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (strncmp(path, top, n) != 0 || path[n] != '/' || strstr(path, "/../") ||
	    (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/..")))
		return NULL;
	return path;
}

static const char *short_name(const struct ct_run *run, const char *path)
{
	size_t n = strlen(run->work);

	return strncmp(path, run->work, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

/* The name a file now in keep/ had: its unlink's or replacing rename's. */
static const char *kept_name(const struct ct_run *run, const struct journal *j,
			     const char *path)
{
	for (size_t i = 0; path[0] == '/' && i < j->n; i++) { /* only keep/ is absolute */
		const struct rec *r = &j->rec[i];
		int k = r->h.kind == CT_UNLINK ? 1 : r->h.kind == CT_RENAME ? 2 : 0;

		if (k && !strcmp(str_at(r, k), path))
			return short_name(run, str_at(r, k - 1));
	}
	return path;
}

/* A file of the copy opened to be rolled back.  One the command made
 * read-only (git's objects) is ours: writable for the open, then given its
 * mode back -- root needs none of this. */
static int open_to_undo(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC), saved = errno;

	if (fd >= 0 || saved != EACCES || lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || chmod(path, (st.st_mode & 07777) | S_IWUSR) != 0)
		return errno = saved, fd;
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	saved = errno;
	chmod(path, st.st_mode & 07777);
	errno = saved;
	return fd;
}

static void undo_data(struct ct_run *run, const struct journal *j, const struct rec *r,
		      const struct snapshot *now, struct snapshot *done)
{
	const struct file *f = find(now, r->h.dev, r->h.ino);
	int fd;

	if (!f) {
		strlist_add(&run->unknown, "a written file is gone without a trace");
		return;
	}
	fd = open_to_undo(f->path);
	if (fd < 0 || pwrite(fd, r->payload, r->h.len, r->h.off) != (ssize_t)r->h.len ||
	    ftruncate(fd, r->h.size) != 0)
		die("cannot roll %s back: %s", f->path, strerror(errno));
	close(fd);
	if (!find(done, r->h.dev, r->h.ino)) {
		walking = done;
		add_file(f->path, &(struct stat){.st_mode = S_IFREG, .st_dev = r->h.dev,
						 .st_ino = r->h.ino}, 0, NULL);
		strlist_add(&run->rolled_back, "%s", kept_name(run, j, short_name(run, f->path)));
	}
}

/* ext4-ordered: the data written since a file's last durability point is
 * lost, but its truncations are journaled metadata and stay: on the
 * contents undone to that point, they are made again, oldest first. */
static void redo_truncations(struct ct_run *run, const struct journal *j,
			     const struct snapshot *now)
{
	for (size_t i = 0; i < j->n; i++) {
		const struct rec *r = &j->rec[i];
		const struct file *f = find(now, r->h.dev, r->h.ino);
		int fd;

		if (r->h.kind != CT_TRUNC || r->durable || !f)
			continue;
		if ((fd = open_to_undo(f->path)) < 0 || ftruncate(fd, (off_t)r->h.ino2) != 0)
			die("cannot truncate %s: %s", f->path, strerror(errno));
		close(fd);
		strlist_add(&run->kept, "the truncation of %s to %llu bytes",
			    short_name(run, f->path), (unsigned long long)r->h.ino2);
	}
}

/* Newest first, what is not durable of the files' contents. */
static void undo_contents(struct ct_run *run, const struct journal *j, const struct snapshot *now)
{
	struct snapshot done = {0};

	for (size_t i = j->n; i-- > 0;)
		if (is_data(j->rec[i].h.kind) && !j->rec[i].durable)
			undo_data(run, j, &j->rec[i], now, &done);
	if (run->model == CT_EXT4_ORDERED)
		redo_truncations(run, j, now);
	snapshot_free(&done);
}

/* Bring back the entry `path` from its link in keep/. */
static void restore(struct ct_run *run, const char *keep, const char *path)
{
	char top[PATH_MAX];

	path_join(top, sizeof(top), run->dir, CT_KEEP);
	if (!*keep || !within(keep, top) || link(keep, path) != 0)
		strlist_add(&run->unknown, "cannot bring back %s", short_name(run, path));
}

/* A directory whose entry is lost takes what is in it along, whatever
 * was made durable inside: nothing names it any more. */
static void undo_mkdir(struct ct_run *run, const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		remove_tree(path);
		strlist_add(&run->undone, "created directory %s", short_name(run, path));
	}
}

/* A removed directory back with its mode (past the umask) and owner. */
static void undo_rmdir(struct ct_run *run, const struct rec *r, const char *path)
{
	if (mkdir(path, 0700) != 0)
		return;
	if (chown(path, r->h.size < 0 ? (uid_t)-1 : (uid_t)((uint64_t)r->h.size >> 32),
		  r->h.size < 0 ? (gid_t)-1 : (gid_t)(r->h.size & 0xffffffff)) != 0 ||
	    chmod(path, (mode_t)r->h.off & 07777) != 0)
		strlist_add(&run->unknown, "cannot give %s back its owner and mode",
			    short_name(run, path));
	strlist_add(&run->undone, "removed directory %s", short_name(run, path));
}

static void undo_name(struct ct_run *run, const struct rec *r)
{
	const char *a = within(str_at(r, 0), run->work), *b = within(str_at(r, 1), run->work);
	const char *name = a ? short_name(run, a) : "?";

	if (!a)
		strlist_add(&run->unknown, "a journal record names a path outside the copy");
	else if (r->h.kind == CT_CREATE || r->h.kind == CT_LINK) {
		if (unlink(a) == 0)
			strlist_add(&run->undone, "created %s", name);
	} else if (r->h.kind == CT_MKDIR) {
		undo_mkdir(run, a);
	} else if (r->h.kind == CT_RMDIR) {
		undo_rmdir(run, r, a);
	} else if (r->h.kind == CT_UNLINK) {
		restore(run, str_at(r, 1), a);
		strlist_add(&run->undone, "removed %s", name);
	} else if (!b || rename(b, a) != 0) {
		strlist_add(&run->unknown, "cannot rename %s back", name);
	} else {
		strlist_add(&run->undone, "renamed %s -> %s", name, short_name(run, b));
		if (*str_at(r, 2))
			restore(run, str_at(r, 2), b);
	}
}

/* Images (CT_IMAGE): a file changed past the library (stdio, a shared
 * mapping) as each durability call that covered it found it.  The undo pass
 * brought it back to its contents when it was first held, unless a later
 * durability point made that durable; then the images that point took
 * restore what was durable, and a later msync adds its range.  Images are
 * stale once another durability point covers their file: were the file still
 * held, that point's own images follow (or the state is unknown, below);
 * were it not, the undo pass alone rebuilt that state.  A durability point
 * is what mark_durable takes for one under the model. */
static int covers(const struct journal *j, size_t k, const struct ct_record *f,
		  enum ct_model model)
{
	const struct rec *e = &j->rec[k];
	int same = e->h.dev == f->dev && e->h.ino == f->ino, ext4 = model == CT_EXT4_ORDERED;

	if (e->h.kind == CT_SYNC_ALL || (e->h.kind == CT_SYNC && same))
		return 1;
	if (ext4 && e->h.kind == CT_RENAME && *str_at(e, 2))
		return e->h.dev2 == f->dev && (uint64_t)e->h.off == f->ino;
	if (!ext4 || e->h.kind != CT_WRITEOUT || !same)
		return 0;
	for (size_t i = k + 1; i < j->n; i++)
		if (j->rec[i].h.kind == CT_SYNC || j->rec[i].h.kind == CT_SYNC_ALL)
			return 1;
	return 0;
}

/* mark_durable found a later durability point covering the image's file. */
static int stale(const struct journal *j, size_t i)
{
	return j->rec[i].durable;
}

/* Does the image r change the file fd? */
static int differs(int fd, const struct rec *r)
{
	char *buf = malloc(r->h.len ? r->h.len : 1);
	struct stat st;
	int diff = !buf || pread(fd, buf, r->h.len, r->h.off) != (ssize_t)r->h.len ||
		   memcmp(buf, r->payload, r->h.len) != 0 ||
		   (r->h.size >= 0 && (fstat(fd, &st) != 0 || st.st_size != r->h.size));

	free(buf);
	return diff;
}

/* List name as rolled back, once. */
static void rolled_back_once(struct ct_run *run, const char *name)
{
	for (size_t i = 0; i < run->rolled_back.n; i++)
		if (!strcmp(run->rolled_back.v[i], name))
			return;
	strlist_add(&run->rolled_back, "%s", name);
}

/* Write image r into the file at path: its bytes, and its size if whole. */
static void redo_image(struct ct_run *run, const struct journal *j, const struct rec *r,
		       const char *path)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 && differs(fd, r))
		rolled_back_once(run, kept_name(run, j, short_name(run, path)));
	if (fd < 0 || pwrite(fd, r->payload, r->h.len, r->h.off) != (ssize_t)r->h.len ||
	    (r->h.size >= 0 && ftruncate(fd, r->h.size) != 0))
		die("cannot bring %s to its image: %s", path, strerror(errno));
	close(fd);
}

/* Is there a whole image of file f after record i? */
static int imaged_after(const struct journal *j, size_t i, const struct ct_record *f)
{
	for (size_t k = i + 1; k < j->n; k++)
		if (j->rec[k].h.kind == CT_IMAGE && j->rec[k].h.size >= 0 &&
		    j->rec[k].h.dev == f->dev && j->rec[k].h.ino == f->ino)
			return 1;
	return 0;
}

static size_t drop_holder(struct ct_record *held, size_t n, const struct ct_record *r)
{
	for (size_t k = 0; k < n; k++)
		if (held[k].dev == r->dev && held[k].ino == r->ino && held[k].pid == r->pid) {
			held[k] = held[--n];
			break;
		}
	return n;
}

/* A durability point that covered a file some process held, with no image
 * of it after: a process that did not hold it synced it (or, under
 * ext4-ordered, a rename or a writeout made it durable), and what was changed
 * past the library became durable with no record of it. */
static void unimaged(struct ct_run *run, const struct journal *j)
{
	struct ct_record *held = calloc(j->n + 1, sizeof(*held));
	size_t n = 0;

	if (!held)
		die("out of memory");
	for (size_t i = 0; i < j->n; i++) {
		const struct rec *r = &j->rec[i];

		if (r->h.kind == CT_IMAGE && r->h.size == CT_IMAGE_HELD)
			held[n++] = r->h;
		if (r->h.kind == CT_IMAGE && r->h.size == CT_IMAGE_FREED)
			n = drop_holder(held, n, &r->h);
		for (size_t k = 0; k < n; k++)
			if (covers(j, i, &held[k], run->model) && !imaged_after(j, i, &held[k])) {
				strlist_add(&run->unknown, "a file changed past the library was "
					    "made durable with no image of it");
				free(held);
				return;
			}
	}
	free(held);
}

/* ext4-ordered keeps truncations (redo_truncations); one made after an
 * image that redo_images applied is made again on it. */
static void truncate_after_images(const struct journal *j, const struct snapshot *now)
{
	struct snapshot imaged = {0};

	for (size_t k = 0; k < j->n; k++) {
		const struct rec *t = &j->rec[k];
		const struct file *f = find(now, t->h.dev, t->h.ino);

		if (t->h.kind == CT_IMAGE && t->h.size >= CT_IMAGE_RANGE && !stale(j, k))
			add_inode(&imaged, t->h.dev, t->h.ino);
		if (t->h.kind != CT_TRUNC || t->durable || !f || !find(&imaged, t->h.dev, t->h.ino))
			continue;
		if (truncate(f->path, (off_t)t->h.ino2) != 0)
			die("cannot truncate %s: %s", f->path, strerror(errno));
	}
	snapshot_free(&imaged);
}

/* After the undo pass: the images that are not stale, oldest first. */
static void redo_images(struct ct_run *run, const struct journal *j, const struct snapshot *now)
{
	unimaged(run, j);
	for (size_t i = 0; i < j->n; i++) {
		const struct rec *r = &j->rec[i];
		const struct file *f;

		if (r->h.kind != CT_IMAGE || r->h.size < CT_IMAGE_RANGE || stale(j, i))
			continue;
		if ((f = find(now, r->h.dev, r->h.ino)))
			redo_image(run, j, r, f->path);
		else
			strlist_add(&run->unknown, "an imaged file is gone without a trace");
	}
	if (run->model == CT_EXT4_ORDERED)
		truncate_after_images(j, now);
}

/* Files whose times the library saw set (utime and kin), with the last
 * mtime set: a file that only got new times (git freshens its objects so)
 * changed nothing of its contents. */
static void times_set(const struct journal *j, struct snapshot *touched)
{
	for (size_t i = 0; i < j->n; i++) {
		const struct rec *r = &j->rec[i];
		struct file *f = (struct file *)find(touched, r->h.dev, r->h.ino);

		if (r->h.kind != CT_TIMES)
			continue;
		if (!f) {
			add_inode(touched, r->h.dev, r->h.ino);
			f = &touched->f[touched->n - 1];
		}
		f->mtime = (struct timespec){(time_t)r->h.off, (long)r->h.size};
	}
}

static int same_file(const struct file *a, const struct file *b, const struct timespec *mtime)
{
	return a && b && a->size == b->size && mtime->tv_sec == b->mtime.tv_sec &&
	       mtime->tv_nsec == b->mtime.tv_nsec;
}

/* An entry other than a regular file, there now: was it there before, or
 * made by a call the library recorded?  Gone since: removed by one? */
static void unseen_entries(struct ct_run *run, const struct snapshot *made,
			   const struct snapshot *before, const struct snapshot *now)
{
	for (size_t i = 0; i < now->n; i++) {
		const struct file *f = &now->f[i];

		if (!S_ISREG(f->mode) && !find(before, f->dev, f->ino) && !find(made, f->dev, f->ino))
			strlist_add(&run->unknown, "%s made unseen", short_name(run, f->path));
	}
	for (size_t i = 0; i < before->n; i++) {
		const struct file *f = &before->f[i];

		if (!find(now, f->dev, f->ino) && (S_ISREG(f->mode) || !find(made, f->dev, f->ino)))
			strlist_add(&run->unknown, "%s went unseen", short_name(run, f->path));
	}
}

/* Files the library did not see change: changed, or new with data, and no
 * record of their writes; new and empty with no record of their making (a
 * marker a crash could lose); entries made or gone with no record of it. */
static void unseen(struct ct_run *run, const struct journal *j,
		   const struct snapshot *before, const struct snapshot *now)
{
	struct snapshot written = {0}, touched = {0}, made = {0};

	for (size_t i = 0; i < j->n; i++) {
		uint32_t k = j->rec[i].h.kind;

		if (is_data(k))
			add_inode(&written, j->rec[i].h.dev, j->rec[i].h.ino);
		if (k == CT_CREATE || k == CT_LINK || k == CT_MKDIR || k == CT_RMDIR)
			add_inode(&made, j->rec[i].h.dev2, j->rec[i].h.ino2);
		if (k == CT_UNKNOWN)
			strlist_add(&run->unknown, "%s", str_at(&j->rec[i], 0));
	}
	times_set(j, &touched);
	for (size_t i = 0; i < now->n; i++) {
		const struct file *f = &now->f[i], *old = find(before, f->dev, f->ino);
		const struct file *t = find(&touched, f->dev, f->ino);
		int same = same_file(old, f, old ? &old->mtime : NULL) ||
			   (t && same_file(old, f, &t->mtime));

		if (S_ISREG(f->mode) && !same && (old || f->size || !find(&made, f->dev, f->ino)) &&
		    !find(&written, f->dev, f->ino))
			strlist_add(&run->unknown, "%s changed unseen", short_name(run, f->path));
	}
	unseen_entries(run, &made, before, now);
	snapshot_free(&written);
	snapshot_free(&touched);
	snapshot_free(&made);
}

/* The crash point reached: what it followed, and the calls before it. */
static void find_point(struct ct_run *run, const struct journal *j)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->rec[i].h.kind == CT_POINT && j->rec[i].h.off == run->point) {
			snprintf(run->after, sizeof(run->after), "%s", str_at(&j->rec[i], 0));
			run->syncs = j->rec[i].h.size;
			run->writes = (long)j->rec[i].h.ino2;
		}
}

/* Directories of the copy the command made read-only or unreadable: ours
 * (never another user's), usable (u+rwx) for the rollback and the removal,
 * their modes kept to be given back -- root needs none of this. */
static struct {
	char **path;
	mode_t *mode;
	size_t n;
	int changed;
} opened;

static int open_up(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if ((type != FTW_D && type != FTW_DNR) || st->st_uid != geteuid() ||
	    (st->st_mode & S_IRWXU) == S_IRWXU || chmod(path, st->st_mode | S_IRWXU) != 0)
		return 0;
	opened.path = realloc(opened.path, (opened.n + 1) * sizeof(*opened.path));
	opened.mode = realloc(opened.mode, (opened.n + 1) * sizeof(*opened.mode));
	if (!opened.path || !opened.mode || !(opened.path[opened.n] = strdup(path)))
		die("out of memory");
	opened.mode[opened.n++] = st->st_mode & 07777;
	opened.changed = 1;
	return 0;
}

/* Again until nothing changes: an unreadable directory is entered once
 * it is readable. */
static void open_up_tree(const char *top)
{
	do {
		opened.changed = 0;
		nftw(top, open_up, 16, FTW_PHYS);
	} while (opened.changed);
}

/* The modes of those opened since the `from`th back, innermost first;
 * `run` (or NULL: the tree is going) hears of a failure, but not of a
 * directory the rollback removed. */
static void close_up(struct ct_run *run, size_t from)
{
	for (size_t i = opened.n; i-- > from; free(opened.path[i]))
		if (run && chmod(opened.path[i], opened.mode[i]) != 0 && errno != ENOENT)
			strlist_add(&run->unknown, "cannot give %s its mode back",
				    short_name(run, opened.path[i]));
	opened.n = from;
}

void rollback(struct ct_run *run, const struct snapshot *before)
{
	struct journal j = {0};
	struct snapshot now = {0};
	char keep[PATH_MAX];

	load(run, &j);
	run->journal = (long)j.len;
	find_point(run, &j);
	path_join(keep, sizeof(keep), run->dir, CT_KEEP);
	open_up_tree(run->work);
	walk(&now, run->work);
	walking = &now;
	/* keep/ is the run's, but the command may remove it: what it held
	 * cannot be brought back. */
	if (nftw(keep, add_file, 16, FTW_PHYS) != 0)
		strlist_add(&run->unknown, "keep/ is gone: %s", strerror(errno));
	unseen(run, &j, before, &now);
	mark_durable(&j, run->model);
	undo_contents(run, &j, &now);
	redo_images(run, &j, &now);
	for (size_t i = j.n; i-- > 0;)
		if (is_dir_op(j.rec[i].h.kind) && !j.rec[i].durable)
			undo_name(run, &j.rec[i]);
	close_up(run, 0);
	free(j.buf);
	free(j.rec);
	snapshot_free(&now);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if ((type == FTW_DP ? rmdir(path) : unlink(path)) != 0)
		warn("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

void remove_tree(const char *dir)
{
	size_t from = opened.n;

	open_up_tree(dir);
	close_up(NULL, from);
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
