/* SPDX-License-Identifier: MIT */
/* crashtest.h -- the journal that libcrashtest writes as the program runs and
 * that the crashtest launcher reads to roll the copy back to what a power
 * failure would leave.
 *
 * The journal is one file in the run's private directory, appended to by
 * every process of the tree: each record is a header and its payload written
 * by one writev on an O_APPEND descriptor, so records never interleave.
 * Records are undo information, in the order things happened: walking the
 * journal backwards and undoing what no later durability record covers gives
 * the state a crash would leave (the `posix` model).
 */
#ifndef CRASHTEST_H
#define CRASHTEST_H

#include <stdint.h>

/* The environment the launcher hands to the library. */
#define CT_ENV_RUN "CRASHTEST_RUN"   /* the run directory (journal, points, keep/) */
#define CT_ENV_ROOT "CRASHTEST_ROOT" /* the copy the command works in */
#define CT_ENV_AT "CRASHTEST_AT"     /* the crash point, 0 for none */
#define CT_ENV_PGID "CRASHTEST_PGID" /* the process group to kill there */
#define CT_ENV_STDERR "CRASHTEST_STDERR" /* "dev:ino" of crashtest's stderr */
#define CT_ENV_WRITES "CRASHTEST_WRITES" /* "1": writes are crash points too */
#define CT_ENV_POINTS "CRASHTEST_POINTS_FD" /* an inherited descriptor of points */

#define CT_JOURNAL "journal"
#define CT_POINTS "points" /* struct ct_counters, shared by the tree */
#define CT_KEEP "keep"     /* hard links to what was unlinked or replaced */

#define CT_MAGIC 0x43524154u /* "CRAT" */
#define CT_CHUNK 65536       /* the most old data one record carries */

enum ct_kind {
	CT_DATA = 1,  /* file (dev, ino): old bytes at off, old size in size */
	CT_SYNC,      /* file or directory (dev, ino) made durable; size: 1 +
	               * the journal's size when the call began (it covers
	               * what was recorded before), 0: before this record */
	CT_SYNC_ALL,  /* sync(), syncfs() of the copy's file system; size as
	               * CT_SYNC's */
	CT_CREATE,    /* parent (dev, ino), new inode (dev2, ino2); payload: path */
	CT_MKDIR,     /* parent, new directory (dev2, ino2); payload: path */
	CT_LINK,      /* parent of the new name, its inode (dev2, ino2);
	               * payload: path */
	CT_UNLINK,    /* parent; payload: path, keep name */
	CT_RMDIR,     /* parent, the directory removed (dev2, ino2); mode in
	               * off, owner in size (uid << 32 | gid, -1: unknown);
	               * payload: path */
	CT_RENAME,    /* parents (dev, ino) and (dev2, ino2), the inode moved
	               * in off; payload: old, new, keep name of the replaced
	               * file or "" */
	CT_POINT,     /* crash point number off, after size durability calls
	               * and ino2 writes; payload: what it was */
	CT_UNKNOWN,   /* something the library cannot undo; payload: why */
	CT_IMAGE,     /* file (dev, ino): its bytes at off as a durability call
	               * found them (redo, for changes the library cannot see:
	               * stdio, shared mappings); size: the file's size for an
	               * image of the whole file, else one of CT_IMAGE_* */
	CT_TRUNC,     /* file (dev, ino) was truncated to the length in ino2
	               * from the size in size; no payload: the bytes it
	               * dropped went before it as CT_DATA, written before the
	               * call, this one only once it succeeded */
	CT_WRITEOUT,  /* sync_file_range wrote (dev, ino) back and waited */
	CT_TIMES,     /* utime and kin set the times of (dev, ino): mtime's
	               * seconds in off, nanoseconds in size */
};

/* What every process of the tree counts, in the points file. */
struct ct_counters {
	uint64_t points;     /* crash points passed */
	uint64_t syncs;      /* durability calls */
	uint64_t writes;     /* writes and directory operations in the copy */
	uint64_t generation; /* bumped where a model may make data durable:
	                      * what was saved before it is saved again after */
	uint64_t lost;       /* records the journal could not take (a file
	                      * size limit, a full disk): the state is unknown */
};

/* CT_IMAGE's size when the record is not a whole file's image. */
#define CT_IMAGE_RANGE (-1) /* only these bytes: an msync, an O_DSYNC write */
#define CT_IMAGE_HELD (-2)  /* no payload: pid now changes the file unseen */
#define CT_IMAGE_FREED (-3) /* no payload: pid no longer does */

struct ct_record {
	uint32_t magic;
	uint32_t kind;
	uint64_t dev, ino;
	uint64_t dev2, ino2;
	int64_t off, size;
	uint32_t len; /* payload bytes after the header */
	uint32_t pid;
};

#endif
