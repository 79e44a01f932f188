/* SPDX-License-Identifier: MIT */
/* crashtest_rollback.h -- what crashtest.c, crashtest_rollback.c and
 * crashtest_report.c share: one crash point's run directory, what its
 * rollback found, and the report of it.
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

/* What a crash keeps (README, "The models"). */
enum ct_model { CT_POSIX, CT_EXT4_ORDERED };

/* One run: its private directory, the copy in it, and what was found. */
struct ct_run {
	char dir[PATH_MAX], work[PATH_MAX];
	enum ct_model model;
	long point;         /* the crash point reached, 0: none (the end) */
	long points;        /* crash points the whole run counted */
	long syncs, writes; /* durability calls and writes before the crash */
	long journal;       /* bytes of undo information the run recorded */
	char after[PATH_MAX + 32];
	struct strlist rolled_back, undone, kept, unknown;
};

/* The files of the copy before the command ran: (ino, size, mtime). */
struct snapshot;
struct snapshot *snapshot_take(const char *work);
void snapshot_free(struct snapshot *s);

/* Read the journal, find what the command did that the library could not
 * see, and roll the copy back to what the run's model says a crash leaves. */
void rollback(struct ct_run *run, const struct snapshot *before);

/* One crash point as reported: the run and the checker's verdict. */
enum verdict { OK, FAILED, UNKNOWN, UNCHECKED };
struct point {
	struct ct_run run;
	enum verdict v;
	int status; /* the checker's exit status, or 128 + its signal; -1: none */
};

/* The report: its head (seed given with --random), each point, its end,
 * which returns crashtest's exit status (0 ok, 1 a check failed, 2 some
 * state unknown). */
void report_start(const char *model, int writes, const unsigned long long *seed, int json);
void report_point(const struct point *p, int json);
int report_end(int json);

/* Remove a tree this run created; failures are only warned of. */
void remove_tree(const char *dir);

#endif
