/* SPDX-License-Identifier: MIT */
/* files.c -- copying DIR into the base, comparing two trees, removing one.
 *
 * Every walk goes down from an open directory with O_NOFOLLOW and
 * O_DIRECTORY, one level at a time, and stays on its file system: DIR is the
 * user's (another user may race it in a shared place), the run's trees the
 * command could reach.  Names are read sorted, so two walks of equal trees
 * meet their entries in the same order.
 */
#define _GNU_SOURCE 1
#include "crashtest/files.h"
#include "common/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Deeper than this, a tree is refused: each level holds a descriptor. */
#define MAX_DEPTH 512

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int read_names(int fd, struct names *out)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	size_t cap = 0;

	*out = (struct names){0};
	if (!d)
		return dup_fd >= 0 ? close(dup_fd), -1 : -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (out->n == cap && !(out->v = realloc(out->v, (cap = cap ? 2 * cap : 16) *
								sizeof(*out->v))))
			die("out of memory");
		if (!(out->v[out->n++] = strdup(e->d_name)))
			die("out of memory");
	}
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_name);
	return 0;
}

void free_names(struct names *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->v[i]);
	free(n->v);
}

int copy_contents(int from, int to)
{
	char buf[65536];
	ssize_t n;

	if (ioctl(to, FICLONE, from) == 0)
		return 0;
	for (;;) {
		n = copy_file_range(from, NULL, to, NULL, 1 << 30, 0);
		if (n == 0)
			return 0;
		if (n < 0)
			break;
	}
	if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS)
		return -1;
	while ((n = read(from, buf, sizeof(buf))) > 0)
		if (write(to, buf, (size_t)n) != n)
			return -1;
	return n < 0 ? -1 : 0;
}

int base_open(const struct base *b, const char *path)
{
	struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
	struct stat st;
	int fd = (int)syscall(SYS_openat2, b->fd, path, &how, sizeof(how));

	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* What a walk of DIR carries: the list, the path it is at, the user's
 * name for the top (for messages), hard links seen (DIR's inode -> the
 * entry copied first). */
struct copying {
	struct base *b;
	const char *top;
	size_t cap;
	dev_t dev;
	int depth;
};

static uint32_t add_entry(struct copying *c, uint32_t parent, const char *name,
			  const struct stat *st)
{
	struct base *b = c->b;
	struct base_entry *e;

	if (b->n == c->cap && !(b->e = realloc(b->e, (c->cap = c->cap ? 2 * c->cap : 256) *
							 sizeof(*b->e))))
		die("out of memory");
	e = &b->e[b->n];
	*e = (struct base_entry){parent, strdup(name), NULL, st->st_mode, st->st_uid, st->st_gid,
				 st->st_ino, 0, NULL};
	if (b->n == 0)
		e->path = strdup("");
	else if (asprintf(&e->path, "%s%s%s", b->e[parent].path, parent ? "/" : "", name) < 0)
		e->path = NULL;
	if (!e->name || !e->path)
		die("out of memory");
	return (uint32_t)b->n++;
}

/* The entry of DIR earlier in the walk with this inode, or 0. */
static uint32_t linked(const struct base *b, const struct stat *st, const uint64_t *src_ino)
{
	for (size_t i = 1; st->st_nlink > 1 && i < b->n; i++)
		if (S_ISREG(b->e[i].mode) && src_ino[i] == st->st_ino)
			return (uint32_t)i;
	return 0;
}

static void copy_dir(struct copying *c, int from, int to, uint32_t self, uint64_t **src_ino);

/* Owner, mode and times of the new entry `name` in `to` as st says. */
static void keep_attrs(int to, const char *name, const struct stat *st)
{
	const struct timespec t[2] = {st->st_atim, st->st_mtim};

	if (geteuid() == 0)
		fchownat(to, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW);
	if (!S_ISLNK(st->st_mode))
		fchmodat(to, name, st->st_mode & 07777, 0);
	utimensat(to, name, t, AT_SYMLINK_NOFOLLOW);
}

static void copy_file(struct copying *c, int from, int to, const char *name, const struct stat *st)
{
	int in = openat(from, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), out;
	struct stat now;

	if (in < 0 || fstat(in, &now) != 0 || now.st_ino != st->st_ino)
		die("cannot read %s/%s: %s", c->top, c->b->e[c->b->n - 1].path,
		    in < 0 ? strerror(errno) : "it changed as it was read");
	out = openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0 || copy_contents(in, out) != 0)
		die("cannot copy %s/%s: %s", c->top, c->b->e[c->b->n - 1].path, strerror(errno));
	close(in);
	close(out);
}

/* One entry `name` of directory `from`, copied into `to`. */
static void copy_one(struct copying *c, int from, int to, uint32_t parent, const char *name,
		     uint64_t **src_ino)
{
	struct stat st;
	uint32_t i, first;
	char target[PATH_MAX];
	ssize_t n;

	if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		die("cannot read %s: %s", c->top, strerror(errno));
	if (S_ISSOCK(st.st_mode) || ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && geteuid()))
		return; /* no data; a device only root may make */
	first = linked(c->b, &st, *src_ino);
	i = add_entry(c, parent, name, &st);
	if (!(*src_ino = realloc(*src_ino, c->b->n * sizeof(**src_ino))))
		die("out of memory");
	(*src_ino)[i] = st.st_ino;
	if (first) {
		if (linkat(c->b->fd, c->b->e[first].path, to, name, 0) != 0)
			die("cannot copy %s: %s", c->top, strerror(errno));
		c->b->e[i].ino = c->b->e[first].ino;
		c->b->e[i].same = first;
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		int sub = openat(from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), dst;

		if (sub < 0 || mkdirat(to, name, 0700) != 0 ||
		    (dst = openat(to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			die("cannot copy %s/%s: %s", c->top, c->b->e[i].path, strerror(errno));
		copy_dir(c, sub, dst, i, src_ino);
		close(sub);
		close(dst);
	} else if (S_ISREG(st.st_mode)) {
		copy_file(c, from, to, name, &st);
	} else if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(from, name, target, sizeof(target) - 1)) < 0 ||
		    (target[n] = '\0', symlinkat(target, to, name)) != 0)
			die("cannot copy %s/%s: %s", c->top, c->b->e[i].path, strerror(errno));
		if (!(c->b->e[i].target = strdup(target)))
			die("out of memory");
	} else if (mknodat(to, name, st.st_mode, st.st_rdev) != 0) {
		die("cannot copy %s/%s: %s", c->top, c->b->e[i].path, strerror(errno));
	}
	keep_attrs(to, name, &st);
	/* The base's own inode, for the states: hard links are by it. */
	if (fstatat(to, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		c->b->e[i].ino = st.st_ino;
}

static void copy_dir(struct copying *c, int from, int to, uint32_t self, uint64_t **src_ino)
{
	struct names n;
	struct stat st;

	if (++c->depth > MAX_DEPTH)
		die("%s is deeper than %d directories", c->top, MAX_DEPTH);
	if (fstat(from, &st) != 0 || st.st_dev != c->dev || read_names(from, &n) != 0)
		die("cannot read %s/%s: %s", c->top, c->b->e[self].path,
		    st.st_dev != c->dev ? "another file system" : strerror(errno));
	for (size_t k = 0; k < n.n; k++)
		copy_one(c, from, to, self, n.v[k], src_ino);
	free_names(&n);
	c->depth--;
}

void base_copy(const char *src, int dirfd, const char *name, struct base *b)
{
	int from = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct copying c = {.b = b, .top = src};
	struct stat st;
	uint64_t *src_ino = NULL;

	*b = (struct base){.fd = -1};
	if (from < 0 || fstat(from, &st) != 0)
		die("cannot read %s: %s", src, strerror(errno));
	if (mkdirat(dirfd, name, 0700) != 0 ||
	    (b->fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die("cannot create the copy of %s: %s", src, strerror(errno));
	c.dev = st.st_dev;
	add_entry(&c, 0, "", &st);
	if (!(src_ino = calloc(1, sizeof(*src_ino))))
		die("out of memory");
	copy_dir(&c, from, b->fd, 0, &src_ino);
	fchmod(b->fd, st.st_mode & 07777);
	if (fstat(b->fd, &st) == 0)
		b->e[0].ino = st.st_ino;
	free(src_ino);
	close(from);
}

void base_free(struct base *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->e[i].name);
		free(b->e[i].path);
		free(b->e[i].target);
	}
	free(b->e);
	if (b->fd >= 0)
		close(b->fd);
	*b = (struct base){.fd = -1};
}
