/* SPDX-License-Identifier: MIT */
/* walk.c -- removing a tree, comparing two: walks down from open
 * directories, never through a link, never onto another file system.
 */
#define _GNU_SOURCE 1
#include "crashtest/files.h"
#include "common/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 512

/* A directory of ours the command made unreadable or read-only (git's
 * objects are 0444, some tools make directories 0555): given u+rwx, through
 * its O_PATH descriptor so that no link in its place is followed. */
static int open_dir(int dirfd, const char *name, dev_t dev)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), path;
	struct stat st;
	char link[64];

	if (fd < 0 && errno == EACCES &&
	    (path = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", path);
		if (fstat(path, &st) == 0 && st.st_uid == geteuid())
			chmod(link, (st.st_mode & 07777) | S_IRWXU);
		close(path);
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd >= 0 && (fstat(fd, &st) != 0 || (dev && st.st_dev != dev))) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && st.st_uid == geteuid() && (st.st_mode & S_IRWXU) != S_IRWXU)
		fchmod(fd, (st.st_mode & 07777) | S_IRWXU);
	return fd;
}

static void remove_in(int fd, dev_t dev, int depth)
{
	DIR *d;
	struct dirent *e;
	int again = 1;

	/* Entries are removed while the directory is read: read it again
	 * until a pass finds nothing left to remove. */
	while (again && depth < MAX_DEPTH) {
		int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);

		if (dup_fd < 0 || !(d = fdopendir(dup_fd)))
			return dup_fd >= 0 ? (void)close(dup_fd) : (void)0;
		rewinddir(d);
		again = 0;
		while ((e = readdir(d))) {
			int sub;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (unlinkat(fd, e->d_name, 0) == 0)
				continue;
			if ((sub = open_dir(fd, e->d_name, dev)) < 0)
				continue;
			remove_in(sub, dev, depth + 1);
			close(sub);
			again |= unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0;
		}
		closedir(d);
	}
}

void remove_tree_at(int dirfd, const char *name)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlinkat(dirfd, name, 0);
		return;
	}
	if ((fd = open_dir(dirfd, name, st.st_dev)) >= 0) {
		remove_in(fd, st.st_dev, 0);
		close(fd);
	}
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		warn("cannot remove %s: %s", name, strerror(errno));
}

/* ---- comparing ---------------------------------------------------------- */

struct sides {
	int a, b; /* the two directories at this level */
	char path[PATH_MAX];
	struct problems *why;
	const struct file_id *told;
	size_t ntold;
	int depth;
};

static int is_told(const struct sides *s, const struct stat *st)
{
	for (size_t i = 0; i < s->ntold; i++)
		if (s->told[i].dev == st->st_dev && s->told[i].ino == st->st_ino)
			return 1;
	return 0;
}

static int same_bytes(int a, int b)
{
	char x[65536], y[65536];
	ssize_t n, m;

	do {
		n = read(a, x, sizeof(x));
		m = n > 0 ? read(b, y, (size_t)n) : read(b, y, 1);
		if (n != m || (n > 0 && memcmp(x, y, (size_t)n) != 0))
			return 0;
	} while (n > 0);
	return n == 0;
}

static int same_file(int dira, int dirb, const char *name)
{
	int a = openat(dira, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int b = openat(dirb, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int same = a >= 0 && b >= 0 && same_bytes(a, b);

	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return same;
}

static int same_link(int dira, int dirb, const char *name)
{
	char x[PATH_MAX], y[PATH_MAX];
	ssize_t n = readlinkat(dira, name, x, sizeof(x)), m = readlinkat(dirb, name, y, sizeof(y));

	return n >= 0 && n == m && memcmp(x, y, (size_t)n) == 0;
}

static void compare_dirs(struct sides *s);

/* Does `name`, present on both sides as st[0] and st[1], hold the same? */
static void compare_one(struct sides *s, const char *name, const struct stat st[2])
{
	size_t len = strlen(s->path);
	struct sides sub = *s;

	if ((st[0].st_mode & S_IFMT) != (st[1].st_mode & S_IFMT))
		problem(s->why, "%s%s changed past the library", s->path, name);
	else if (S_ISREG(st[0].st_mode) && !is_told(s, &st[0]) &&
		 (st[0].st_size != st[1].st_size || !same_file(s->a, s->b, name)))
		problem(s->why, "%s%s changed past the library", s->path, name);
	else if (S_ISLNK(st[0].st_mode) && !same_link(s->a, s->b, name))
		problem(s->why, "%s%s changed past the library", s->path, name);
	else if (S_ISDIR(st[0].st_mode) && len + strlen(name) + 2 < sizeof(s->path)) {
		sub.a = open_dir(s->a, name, st[0].st_dev);
		sub.b = open_dir(s->b, name, st[1].st_dev);
		snprintf(sub.path + len, sizeof(sub.path) - len, "%s/", name);
		if (sub.a >= 0 && sub.b >= 0 && s->depth < MAX_DEPTH) {
			sub.depth++;
			compare_dirs(&sub);
		}
		if (sub.a >= 0)
			close(sub.a);
		if (sub.b >= 0)
			close(sub.b);
	}
}

/* Is this entry one that holds data (not a FIFO or socket)? */
static int holds_data(int dirfd, const char *name, struct stat *st)
{
	return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISFIFO(st->st_mode) &&
	       !S_ISSOCK(st->st_mode);
}

static void compare_dirs(struct sides *s)
{
	struct names n[2];

	if (read_names(s->a, &n[0]) != 0 || read_names(s->b, &n[1]) != 0)
		return problem(s->why, "%s cannot be read", *s->path ? s->path : ".");
	for (size_t i = 0, j = 0; i < n[0].n || j < n[1].n;) {
		int c = i == n[0].n ? 1 : j == n[1].n ? -1 : strcmp(n[0].v[i], n[1].v[j]);
		struct stat st[2];
		int ha = c <= 0 && holds_data(s->a, n[0].v[i], &st[0]);
		int hb = c >= 0 && holds_data(s->b, n[1].v[j], &st[1]);

		if (ha && hb)
			compare_one(s, n[0].v[i], st);
		else if (ha)
			problem(s->why, "%s%s was made unseen", s->path, n[0].v[i]);
		else if (hb)
			problem(s->why, "%s%s went unseen", s->path, n[1].v[j]);
		i += c <= 0;
		j += c >= 0;
	}
	free_names(&n[0]);
	free_names(&n[1]);
}

void compare_trees(int dirfd, const char *a, const char *b, const struct file_id *told, size_t n,
		   struct problems *why)
{
	struct sides s = {.why = why, .told = told, .ntold = n};
	struct stat st;

	if (fstatat(dirfd, a, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    (s.a = open_dir(dirfd, a, st.st_dev)) < 0) {
		problem(why, "the copy is gone");
		return;
	}
	if ((s.b = open_dir(dirfd, b, 0)) >= 0) {
		compare_dirs(&s);
		close(s.b);
	}
	close(s.a);
}
