/* SPDX-License-Identifier: MIT */
/* files.h -- crashtest's own work on whole trees, every step relative to a
 * directory descriptor and never through a symlink: copying DIR once into
 * the run directory (the base every state is built from), comparing two
 * trees, removing one.
 */
#ifndef CT_FILES_H
#define CT_FILES_H

#include "crashtest/problems.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One entry of the base, in the order of a walk (a directory before what
 * it holds, names sorted): its parent's index (the top is entry 0, its own
 * parent), its name and path relative to the top. */
struct base_entry {
	uint32_t parent;
	char *name, *path;
	mode_t mode; /* type and permissions */
	uid_t uid;
	gid_t gid;
	uint64_t ino;   /* in the base: hard links share it */
	uint32_t same;  /* a hard link: the entry copied first, else 0 */
	char *target;   /* a symlink's */
};

struct base {
	struct base_entry *e;
	size_t n;
	int fd; /* the base's top directory */
};

/* The names in directory fd (not "." and ".."), sorted; fd stays open. */
struct names {
	char **v;
	size_t n;
};
int read_names(int fd, struct names *out);
void free_names(struct names *n);

/* Copy the directory `src` (a path the user gave) to a new directory `name`
 * in `dirfd`, listing what it holds in `b`; dies with a message that names
 * src on an error. */
void base_copy(const char *src, int dirfd, const char *name, struct base *b);
void base_free(struct base *b);

/* Open `path` (relative, from the base's list) under the base's top for
 * reading, without following a link or leaving it; -1 if it is no longer a
 * regular file there. */
int base_open(const struct base *b, const char *path);

/* Copy all of file `from` into file `to` (a reflink where the file system
 * can); 0 or -1. */
int copy_contents(int from, int to);

/* Remove the entry `name` of dirfd and all it holds, as this user may: a
 * directory made read-only by its owner (us) is made writable first.
 * Never follows a link, never leaves the file system. */
void remove_tree_at(int dirfd, const char *name);

/* A file by device and inode. */
struct file_id {
	dev_t dev;
	ino_t ino;
};

/* Compare the trees `a` (what the run left) and `b` (what its journal
 * says), both entries of dirfd: each difference is a change the library did
 * not see, said in `why`.  FIFOs and sockets hold no data and are skipped,
 * and so are the `n` files of a in `told`: a change of theirs the journal
 * says it could not follow (where a write went), which explains them. */
void compare_trees(int dirfd, const char *a, const char *b, const struct file_id *told, size_t n,
		   struct problems *why);

#endif
