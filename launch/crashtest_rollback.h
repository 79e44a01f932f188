/* SPDX-License-Identifier: MIT */
/* crashtest_rollback.h -- what crashtest.c and crashtest_rollback.c share: one crash
 * point's run directory and what its rollback found.
 */
#ifndef CRASHTEST_LAUNCH_H
#define CRASHTEST_LAUNCH_H

#include <limits.h>
#include <stddef.h>

struct strlist {
	char **v;
	size_t n;
};

void strlist_add(struct strlist *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* dir/name in out, or die. */
void path_join(char *out, size_t size, const char *dir, const char *name);

/* One run: its private directory, the copy in it, and what was found. */
struct ct_run {
	char dir[PATH_MAX], work[PATH_MAX];
	long point, points; /* the crash point reached (0: none), points counted */
	char after[PATH_MAX + 32];
	struct strlist rolled_back, undone, unknown;
};

/* The files of the copy before the command ran: (ino, size, mtime). */
struct snapshot;
struct snapshot *snapshot_take(const char *work);

/* Read the journal, find what the command did that the library could not
 * see, and roll the copy back to what the posix model says a crash leaves. */
void rollback(struct ct_run *run, const struct snapshot *before);

/* Remove a tree this run created; failures are only warned of. */
void remove_tree(const char *dir);

#endif
