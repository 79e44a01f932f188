/* SPDX-License-Identifier: MIT */
/* bundle.c -- a recorded run as one file, and back.
 *
 * The file is a magic line, then items, each a tag (4 bytes), a length (8)
 * and as many bytes, little-endian; the last is B_END, so that a bundle cut
 * short (an upload that stopped) is refused, not read as a shorter run.
 * The journal and the points file are the run's own bytes: a bundle is read
 * on a machine of the same byte order and word size (the magic line says
 * which, and a bundle of another is refused by name).
 *
 * A bundle is untrusted input (the command wrote its journal): each length
 * is checked against what is left, each name of the base is one component,
 * each entry's parent an earlier directory; the base is made afresh in a
 * new private directory, every step relative to it, no link followed.
 */
#define _GNU_SOURCE 1
#include "crashtest/bundle.h"
#include "common/common.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAGIC "crashtest bundle 1\n"

enum tag {
	B_ID = 1,     /* the bundle's name */
	B_NUMBER,     /* an option: key (4 bytes), value (8) */
	B_TEXT,       /* an option: key (4 bytes), its text */
	B_ARG,        /* an argument of COMMAND, in order */
	B_STATUS,     /* the command's wait status (4), the signal that stopped crashtest (4) */
	B_DEV,        /* the copy's file system (8) */
	B_UNREACHED,  /* why the library could not enter COMMAND */
	B_COMPARED,   /* a change past the journal, found when recorded */
	B_ENTRY,      /* an entry of the base (struct entry, its name, its link's target) */
	B_DATA,       /* the contents of the regular file of the entry before */
	B_JOURNAL,
	B_OUT,
	B_ERR,
	B_POINTS,
	B_END,
};

enum key { K_AT = 1, K_MAX, K_RANDOM, K_SEED, K_EACH, K_WRITES, K_CLASSES, K_STATES, K_MODEL,
	   K_ALL_MODELS, K_CHECK, K_DIR };

/* The fixed part of a B_ENTRY, little-endian. */
struct entry {
	uint32_t parent, mode, uid, gid, same, name_len;
	uint64_t work_ino;
};

/* The machine the journal's records were written on. */
static void machine(char *out, size_t size)
{
	snprintf(out, size, "%s %zu-bit, record %zu bytes\n",
		 BYTE_ORDER == LITTLE_ENDIAN ? "little-endian" : "big-endian", 8 * sizeof(void *),
		 sizeof(struct ct_record));
}

/* ---- writing ------------------------------------------------------------- */

struct out {
	int fd;
	const char *path;
};

static void put_raw(const struct out *b, const void *p, size_t n)
{
	for (const char *c = p; n > 0;) {
		ssize_t k = write(b->fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			die("cannot write %s: %s", b->path, k < 0 ? strerror(errno) : "no space");
		c += k, n -= (size_t)k;
	}
}

/* An item's tag and length; its bytes follow. */
static void put_head(const struct out *b, enum tag tag, uint64_t n)
{
	uint32_t t = htole32((uint32_t)tag);
	uint64_t len = htole64(n);

	put_raw(b, &t, sizeof(t));
	put_raw(b, &len, sizeof(len));
}

static void put(const struct out *b, enum tag tag, const void *p, uint64_t n)
{
	put_head(b, tag, n);
	put_raw(b, p, (size_t)n);
}

static void put_number(const struct out *b, enum key key, uint64_t v)
{
	unsigned char buf[12];
	uint32_t k = htole32((uint32_t)key);

	v = htole64(v);
	memcpy(buf, &k, 4);
	memcpy(buf + 4, &v, 8);
	put(b, B_NUMBER, buf, sizeof(buf));
}

static void put_text(const struct out *b, enum key key, const char *s)
{
	size_t n = strlen(s);
	char *buf = malloc(4 + n);
	uint32_t k = htole32((uint32_t)key);

	if (!buf)
		die("out of memory");
	memcpy(buf, &k, 4);
	memcpy(buf + 4, s, n);
	put(b, B_TEXT, buf, 4 + n);
	free(buf);
}

/* A whole file (of the run directory, or the base), as item `tag`. */
static void put_file(const struct out *b, enum tag tag, int fd, const char *name)
{
	struct stat st;
	loff_t n;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		die("cannot read %s: %s", name, fd < 0 ? strerror(errno) : "not a regular file");
	put_head(b, tag, (uint64_t)st.st_size);
	for (n = st.st_size; n > 0;) {
		ssize_t k = copy_file_range(fd, NULL, b->fd, NULL, (size_t)n, 0);
		char buf[65536];

		if (k <= 0 && (k = read(fd, buf, sizeof(buf))) > 0)
			put_raw(b, buf, (size_t)k);
		if (k <= 0)
			die("cannot copy %s into %s: %s", name, b->path,
			    k < 0 ? strerror(errno) : "it shrank");
		n -= k;
	}
	close(fd);
}

static void put_options(const struct out *b, const struct options *o)
{
	put_number(b, K_AT, (uint64_t)o->at);
	put_number(b, K_MAX, (uint64_t)o->max);
	put_number(b, K_RANDOM, (uint64_t)o->random);
	put_number(b, K_SEED, o->seed);
	put_number(b, K_EACH, (uint64_t)o->each);
	put_number(b, K_WRITES, (uint64_t)o->writes);
	put_number(b, K_CLASSES, (uint64_t)o->classes);
	put_number(b, K_STATES, o->states);
	put_number(b, K_MODEL, (uint64_t)o->model);
	put_number(b, K_ALL_MODELS, (uint64_t)o->all_models);
	if (o->check)
		put_text(b, K_CHECK, o->check);
	put_text(b, K_DIR, o->dir);
	for (char **a = o->cmd; *a; a++)
		put(b, B_ARG, *a, strlen(*a));
}

static void put_entry(const struct out *b, const struct run *run, size_t i)
{
	const struct base_entry *e = &run->base.e[i];
	struct entry x = {htole32(e->parent), htole32(e->mode), htole32(e->uid), htole32(e->gid),
			  htole32(e->same), htole32((uint32_t)strlen(e->name)),
			  htole64(run->work_ino[i])};
	size_t n = strlen(e->name), t = e->target ? strlen(e->target) : 0;
	char *buf = malloc(sizeof(x) + n + t);

	if (!buf)
		die("out of memory");
	memcpy(buf, &x, sizeof(x));
	memcpy(buf + sizeof(x), e->name, n);
	memcpy(buf + sizeof(x) + n, e->target ? e->target : "", t);
	put(b, B_ENTRY, buf, sizeof(x) + n + t);
	free(buf);
	if (S_ISREG(e->mode) && !e->same && i)
		put_file(b, B_DATA, base_open(&run->base, e->path), e->path);
}

/* The bundle's name, drawn. */
static void draw_id(char id[BUNDLE_ID_SIZE])
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		die("cannot draw a name for the bundle: %s", strerror(errno));
	for (int i = 0; i < 16; i++)
		snprintf(id + 2 * i, 3, "%02x", r[i]);
}

void bundle_write(const char *path, const struct run *run, const struct options *o)
{
	struct out b = {open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), path};
	char head[128], id[BUNDLE_ID_SIZE];
	int32_t st[2] = {(int32_t)htole32((uint32_t)run->status),
			 (int32_t)htole32((uint32_t)run->caught)};
	uint64_t dev = htole64(run->dev);

	if (b.fd < 0)
		die("cannot create %s: %s", path, strerror(errno));
	machine(head, sizeof(head));
	put_raw(&b, MAGIC, strlen(MAGIC));
	put_raw(&b, head, strlen(head));
	draw_id(id);
	put(&b, B_ID, id, BUNDLE_ID_SIZE - 1);
	put_options(&b, o);
	put(&b, B_STATUS, st, sizeof(st));
	put(&b, B_DEV, &dev, sizeof(dev));
	if (run->unreached)
		put(&b, B_UNREACHED, run->unreached, strlen(run->unreached));
	for (size_t i = 0; i < run->compared.n; i++)
		put(&b, B_COMPARED, run->compared.v[i], strlen(run->compared.v[i]));
	for (size_t i = 0; i < run->base.n; i++)
		put_entry(&b, run, i);
	put_file(&b, B_JOURNAL, openat(run->fd, CT_JOURNAL, O_RDONLY | O_NOFOLLOW | O_CLOEXEC),
		 "the journal");
	put_file(&b, B_OUT, openat(run->fd, CT_OUT, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), "out");
	put_file(&b, B_ERR, openat(run->fd, CT_ERR, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), "err");
	put_file(&b, B_POINTS, openat(run->fd, CT_POINTS, O_RDONLY | O_NOFOLLOW | O_CLOEXEC),
		 "the points file");
	put(&b, B_END, NULL, 0);
	if (close(b.fd) != 0)
		die("cannot write %s: %s", path, strerror(errno));
}

/* ---- reading ------------------------------------------------------------- */

struct in {
	int fd;
	const char *path;
	uint64_t left; /* bytes of the file not read yet */
	struct run *run;
	struct options *o;
	size_t cap, nargs;
	int data, ended;
};

static noreturn void bad(const struct in *b, const char *why)
{
	die("%s is not a bundle of crashtest record: %s", b->path, why);
}

static void get_raw(struct in *b, void *p, size_t n)
{
	for (char *c = p; n > 0;) {
		ssize_t k = read(b->fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			bad(b, k < 0 ? strerror(errno) : "it is cut short");
		c += k, n -= (size_t)k, b->left -= (uint64_t)k;
	}
}

/* An item's bytes, NUL-ended (to be freed), at most `max`. */
static char *get_bytes(struct in *b, uint64_t n, uint64_t max)
{
	char *s;

	if (n > max || n > b->left)
		bad(b, "an item is longer than it may be");
	if (!(s = malloc((size_t)n + 1)))
		die("out of memory");
	get_raw(b, s, (size_t)n);
	s[n] = '\0';
	if (strlen(s) != n)
		bad(b, "a text holds a NUL");
	return s;
}

/* An item's bytes into the new file `name` of dirfd. */
static void get_file(struct in *b, uint64_t n, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		die("cannot create %s: %s", name, strerror(errno));
	if (n > b->left)
		bad(b, "it is cut short");
	while (n > 0) {
		ssize_t k = copy_file_range(b->fd, NULL, fd, NULL, (size_t)n, 0);
		char buf[65536];

		if (k <= 0 && (k = read(b->fd, buf, n < sizeof(buf) ? (size_t)n : sizeof(buf))) > 0 &&
		    write(fd, buf, (size_t)k) != k)
			die("cannot write %s: %s", name, strerror(errno));
		if (k <= 0)
			bad(b, k < 0 ? strerror(errno) : "it is cut short");
		n -= (uint64_t)k, b->left -= (uint64_t)k;
	}
	close(fd);
}

static void skip(struct in *b, uint64_t n)
{
	if (n > b->left || lseek(b->fd, (off_t)n, SEEK_CUR) < 0)
		bad(b, "it is cut short");
	b->left -= n;
}

static void get_option(struct in *b, enum tag tag, uint64_t n)
{
	unsigned char buf[12];
	uint32_t key;
	uint64_t v;
	char *text;

	if (tag == B_TEXT) {
		if (n < 4)
			bad(b, "an option of the wrong length");
		get_raw(b, &key, 4);
		text = get_bytes(b, n - 4, 1 << 20);
		if (le32toh(key) != K_CHECK && le32toh(key) != K_DIR)
			bad(b, "an option it does not know");
		*(le32toh(key) == K_CHECK ? &b->o->check : &b->o->dir) = text;
		return;
	}
	if (n != sizeof(buf))
		bad(b, "an option of the wrong length");
	get_raw(b, buf, sizeof(buf));
	memcpy(&key, buf, 4);
	memcpy(&v, buf + 4, 8);
	v = le64toh(v);
	switch (le32toh(key)) {
	case K_AT: b->o->at = (long)v; break;
	case K_MAX: b->o->max = (long)v; break;
	case K_RANDOM: b->o->random = (long)v; break;
	case K_SEED: b->o->seed = v; break;
	case K_EACH: b->o->each = v != 0; break;
	case K_WRITES: b->o->writes = v != 0; break;
	case K_CLASSES: b->o->classes = (int)(v & CLASS_ALL); break;
	case K_STATES: b->o->states = v >= 1 && v <= 1u << 20 ? v : 64; break;
	case K_MODEL: b->o->model = v < NMODELS ? (enum model)v : MODEL_POSIX; break;
	case K_ALL_MODELS: b->o->all_models = v != 0; break;
	default: bad(b, "an option it does not know");
	}
}

static void get_arg(struct in *b, uint64_t n)
{
	if (b->nargs + 2 > b->cap &&
	    !(b->o->cmd = realloc(b->o->cmd, (b->cap = 2 * b->cap + 8) * sizeof(char *))))
		die("out of memory");
	b->o->cmd[b->nargs++] = get_bytes(b, n, 1 << 20);
	b->o->cmd[b->nargs] = NULL;
}

/* A name of the base: one component. */
static int one_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") &&
	       strlen(s) <= CT_NAME_MAX;
}

/* The directory of base entry i's parent, opened beneath the base. */
static int parent_dir(const struct base *base, uint32_t parent)
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
	const char *p = base->e[parent].path;

	return (int)syscall(SYS_openat2, base->fd, *p ? p : ".", &how, sizeof(how));
}

/* Entry i of the base: checked, listed, and made if it is a directory
 * (a regular file is made by the B_DATA after it). */
static void check_entry(struct in *b, const struct entry *x, const char *name, const char *target)
{
	const struct base *base = &b->run->base;
	size_t i = base->n;
	mode_t t = x->mode & S_IFMT;

	if (!S_ISDIR(t) && !S_ISREG(t) && !S_ISLNK(t) && !S_ISFIFO(t) && !S_ISSOCK(t) &&
	    !S_ISCHR(t) && !S_ISBLK(t))
		bad(b, "an entry of the base of no type");
	if (i == 0 ? x->parent || *name || !S_ISDIR(t) || x->same :
	    x->parent >= i || !S_ISDIR(base->e[x->parent].mode) || !one_name(name))
		bad(b, "an entry of the base out of place");
	if (x->same && (x->same >= i || !S_ISREG(t) || !S_ISREG(base->e[x->same].mode) ||
			base->e[x->same].same))
		bad(b, "a hard link to no file");
	if (S_ISLNK(t) != (*target != '\0'))
		bad(b, "a link with no target, or a target of no link");
}

/* A directory of the base, made as the entry says. */
static void make_dir(struct in *b, const struct base_entry *e)
{
	int dir = parent_dir(&b->run->base, e->parent);

	if (dir < 0 || mkdirat(dir, e->name, 0700) != 0)
		bad(b, "two entries of the base with one name");
	close(dir);
}

static void get_entry(struct in *b, uint64_t n)
{
	struct base *base = &b->run->base;
	struct base_entry *e;
	struct entry x;
	char *rest;

	if (n < sizeof(x))
		bad(b, "an entry too short");
	get_raw(b, &x, sizeof(x));
	x = (struct entry){le32toh(x.parent), le32toh(x.mode), le32toh(x.uid), le32toh(x.gid),
			   le32toh(x.same), le32toh(x.name_len), le64toh(x.work_ino)};
	rest = get_bytes(b, n - sizeof(x), CT_NAME_MAX + PATH_MAX);
	if (x.name_len > n - sizeof(x))
		bad(b, "an entry's name is longer than the entry");
	if (!(b->run->work_ino = realloc(b->run->work_ino, (base->n + 1) * sizeof(uint64_t))) ||
	    !(base->e = realloc(base->e, (base->n + 1) * sizeof(*base->e))))
		die("out of memory");
	e = &base->e[base->n];
	*e = (struct base_entry){.parent = x.parent, .mode = x.mode, .uid = x.uid, .gid = x.gid,
				 .same = x.same, .name = strndup(rest, x.name_len)};
	if (rest[x.name_len] && !(e->target = strdup(rest + x.name_len)))
		die("out of memory");
	free(rest);
	check_entry(b, &x, e->name, e->target ? e->target : "");
	if (asprintf(&e->path, "%s%s%s", base->n ? base->e[x.parent].path : "",
		     x.parent ? "/" : "", e->name) < 0)
		die("out of memory");
	b->run->work_ino[base->n++] = x.work_ino;
	if (base->n > 1 && S_ISDIR(x.mode))
		make_dir(b, e);
}

/* The contents of the regular file just listed. */
static void get_data(struct in *b, uint64_t n)
{
	const struct base *base = &b->run->base;
	const struct base_entry *e = base->n ? &base->e[base->n - 1] : NULL;
	int dir;

	if (!e || !S_ISREG(e->mode) || e->same || base->n == 1)
		bad(b, "the contents of no file");
	if (!b->data)
		return skip(b, n);
	if ((dir = parent_dir(base, e->parent)) < 0)
		bad(b, "a file of the base in no directory");
	get_file(b, n, dir, e->name);
	close(dir);
}

static void get_status(struct in *b, uint64_t n)
{
	int32_t st[2];

	if (n != sizeof(st))
		bad(b, "a status of the wrong length");
	get_raw(b, st, sizeof(st));
	b->run->status = (int)le32toh((uint32_t)st[0]);
	b->run->caught = (int)le32toh((uint32_t)st[1]);
}

static void get_item(struct in *b, enum tag tag, uint64_t n)
{
	char *s;

	switch (tag) {
	case B_ID:
		s = get_bytes(b, n, BUNDLE_ID_SIZE - 1);
		snprintf(b->run->id, sizeof(b->run->id), "%s", s);
		return free(s);
	case B_NUMBER: case B_TEXT: return get_option(b, tag, n);
	case B_ARG: return get_arg(b, n);
	case B_STATUS: return get_status(b, n);
	case B_DEV:
		if (n != 8)
			bad(b, "a device of the wrong length");
		get_raw(b, &b->run->dev, 8);
		b->run->dev = le64toh(b->run->dev);
		return;
	case B_UNREACHED: free(b->run->unreached); b->run->unreached = get_bytes(b, n, 1 << 16); return;
	case B_COMPARED:
		s = get_bytes(b, n, 1 << 16);
		problem(&b->run->compared, "%s", s);
		return free(s);
	case B_ENTRY: return get_entry(b, n);
	case B_DATA: return get_data(b, n);
	case B_JOURNAL: return get_file(b, n, b->run->fd, CT_JOURNAL);
	case B_OUT: return get_file(b, n, b->run->fd, CT_OUT);
	case B_ERR: return get_file(b, n, b->run->fd, CT_ERR);
	case B_POINTS: return get_file(b, n, b->run->fd, CT_POINTS);
	case B_END: b->ended = 1; return;
	}
	bad(b, "an item it does not know");
}

/* The magic line and the machine the journal was written on. */
static void get_head(struct in *b)
{
	char head[sizeof(MAGIC) + 128] = {0}, want[128];
	size_t n = 0;

	machine(want, sizeof(want));
	while (n < sizeof(head) - 1 && (n <= strlen(MAGIC) || head[n - 1] != '\n'))
		get_raw(b, head + n++, 1);
	if (strncmp(head, MAGIC, strlen(MAGIC)))
		bad(b, "it does not start as one");
	if (strcmp(head + strlen(MAGIC), want))
		die("%s was recorded on a machine of another kind (%.*s), not this one (%.*s)", b->path,
		    (int)strcspn(head + strlen(MAGIC), "\n"), head + strlen(MAGIC),
		    (int)strcspn(want, "\n"), want);
}

void bundle_read(const char *path, struct run *run, struct options *o, int data)
{
	struct in b = {.fd = open(path, O_RDONLY | O_CLOEXEC), .path = path, .run = run, .o = o,
		       .data = data};
	struct stat st;
	uint32_t tag;
	uint64_t n;

	if (b.fd < 0 || fstat(b.fd, &st) != 0 || !S_ISREG(st.st_mode))
		die("cannot read %s: %s", path, b.fd < 0 ? strerror(errno) : "not a regular file");
	b.left = (uint64_t)st.st_size;
	get_head(&b);
	run_directory(run);
	while (!b.ended) {
		get_raw(&b, &tag, sizeof(tag));
		get_raw(&b, &n, sizeof(n));
		get_item(&b, (enum tag)le32toh(tag), le64toh(n));
	}
	if (!run->base.n || !o->cmd || !o->dir || !*run->id)
		bad(&b, "a part of it is missing");
	close(b.fd);
}
