/* SPDX-License-Identifier: MIT */
/* inherit.h -- what the launcher leaves open for the whole tree, and how a
 * process finds it again (shared/inherit.c): the library, the
 * supervisor and the launchers all use these.
 *
 * Each object is a descriptor the tree inherits, named in the environment
 * with the file it must still be, "N:DEV:INO" (the number may have been
 * closed and reused since: closefrom in a daemon, a shell's `exec 9>f`):
 *   EATMYDATA_RECORD_FD   the record file (record.h);
 *   EATMYDATA_SYNC_FD/_ID the --sync-on-exit notes directory, its number
 *                         and "DEV:INO" apart (a process that lost the
 *                         descriptor reopens EATMYDATA_SYNC_DIR).
 * In the notes directory, whoever eats a durability request makes an entry
 * "MAJOR:MINOR" for its file system, or "all" when that is unknown (sync,
 * msync), with one mkdirat: atomic across processes, and there even if the
 * process is killed next.  At the end the launcher syncs each one named.
 */
#ifndef EMD_INHERIT_H
#define EMD_INHERIT_H

#include <sys/types.h>

struct emd_inherited {
	int fd; /* -1: none */
	unsigned long long dev, ino;
};

/* From "N:DEV:INO"; 0 when well formed. */
int emd_inherited_parse(struct emd_inherited *in, const char *text);

/* The notes directory's: "DEV:INO", the number apart in fd_text (NULL:
 * lost, fd -1); 0 when well formed. */
int emd_notes_parse(struct emd_inherited *in, const char *fd_text, const char *id);

/* Is in->fd still that object, of file type `type` (S_IFDIR...)? */
int emd_inherited_ok(const struct emd_inherited *in, mode_t type);

/* Note the file system `dev` (all: every one) in the notes directory `in`;
 * 0 when the entry is there. */
int emd_notes_add(const struct emd_inherited *in, dev_t dev, int all);

#endif
