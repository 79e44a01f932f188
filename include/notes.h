/* SPDX-License-Identifier: MIT */
/* notes.h -- the --sync-on-exit protocol between the launcher, the library
 * and the supervisor (libeatmydata/notes.c).
 *
 * The launcher makes a private directory and leaves it open for the whole
 * tree: EATMYDATA_SYNC_FD is the descriptor, EATMYDATA_SYNC_ID the
 * directory's "DEV:INO", EATMYDATA_SYNC_DIR its path.  Whoever eats a
 * durability request makes an entry "MAJOR:MINOR" for its file system, or
 * "all" when that is unknown (sync, msync), with one mkdirat: atomic across
 * processes, and there even if the process is killed next.  At the end the
 * launcher syncs each file system named.
 */
#ifndef EMD_NOTES_H
#define EMD_NOTES_H

#include <sys/types.h>

struct emd_notes {
	int fd; /* -1: none */
	unsigned long long dev, ino;
};

/* The directory from the environment's values (fd_text may be NULL: a
 * process that lost its descriptors), 0 when they are well formed. */
int emd_notes_parse(struct emd_notes *n, const char *fd_text, const char *id);

/* Is n->fd still that directory?  The number may have been closed and
 * reused since (closefrom in a daemon, a shell's `exec 9>f`). */
int emd_notes_ok(const struct emd_notes *n);

/* Note the file system `dev` (all: every one); 0 when the entry is there. */
int emd_notes_add(const struct emd_notes *n, dev_t dev, int all);

#endif
