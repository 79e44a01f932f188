/* SPDX-License-Identifier: MIT */
/* crashtest.h -- the journal that libcrashtest writes as the program runs and
 * that crashtest reads to build the states a power failure could leave.
 *
 * The journal is a redo log: every change the program makes to the copy of
 * DIR, in the order it happened -- the bytes of each write, each truncation,
 * each directory entry made, moved or removed (named by its directory's
 * inode and one name, never by a path) -- and every durability call and
 * claim (a write the program made to someone else: its standard output or
 * error, a pipe, a socket).  A crash state is the pristine copy with a subset
 * of these changes applied, the subset a model allows (crashtest/durable.c).
 *
 * One file in the run's private directory, appended to by every process of
 * the tree: a record is a header and its payload written by one writev on an
 * O_APPEND descriptor, so records never interleave.  The tree can write it
 * too: crashtest reads it as untrusted input.
 */
#ifndef CRASHTEST_H
#define CRASHTEST_H

#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

/* The environment the launcher hands to the library. */
#define CT_ENV_RUN "CRASHTEST_RUN"   /* the run directory (journal, points) */
#define CT_ENV_ROOT "CRASHTEST_ROOT" /* the copy the command works in */
#define CT_ENV_AT "CRASHTEST_AT"     /* stop the tree after this point, 0: never */
#define CT_ENV_PGID "CRASHTEST_PGID" /* the process group to stop */
#define CT_ENV_STDERR "CRASHTEST_STDERR" /* "dev:ino" of crashtest's stderr */
#define CT_ENV_WRITES "CRASHTEST_WRITES" /* "1": every change is a crash point */
#define CT_ENV_POINTS "CRASHTEST_POINTS_FD" /* an inherited descriptor of points */
/* Globs, one a line, of the files outside the copy that no state depends
 * on (--outside-ok): a write to one is journaled as CT_IGNORED, not as a
 * change past the journal. */
#define CT_ENV_OUTSIDE_OK "CRASHTEST_OUTSIDE_OK"
/* For the kernel-reference tests only: "W:R", descriptors on which the
 * library says "N PGID KIND\n" after crash point N (a record of that kind)
 * and waits for a byte back. */
#define CT_ENV_HOOK "CRASHTEST_HOOK_FD"

#define CT_JOURNAL "journal"
#define CT_POINTS "points" /* struct ct_counters, shared by the tree */
#define CT_OUT "out"       /* the command's standard output */
#define CT_ERR "err"       /* its standard error */

#define CT_MAGIC 0x43524155u /* "CRAU": the redo format */
#define CT_CHUNK (1 << 20)   /* the most bytes one record carries */
#define CT_NAME_MAX 255      /* one component of a name */

enum ct_kind {
	/* Contents, of the file (dev, ino). */
	CT_WRITE = 1, /* payload: the bytes written at off; size: the file's
	               * size before the write */
	CT_ZERO,      /* [off, off + size) reads as zeros (fallocate) */
	CT_TRUNC,     /* the size set to `size` (from `off`, the old size) */
	CT_IMAGE,     /* payload: the file's bytes at off as the page cache
	               * held them at a durability call (stdio, a shared
	               * mapping: changes the library cannot see); size: the
	               * file's size for an image of the whole file, else -1 */
	/* Names: the entry `payload` (one component) of directory (dev, ino),
	 * for inode ino2; mode in off, owner in size (uid << 32 | gid). */
	CT_CREATE,  /* a regular file made (CT_F_ANON: O_TMPFILE, no name) */
	CT_MKDIR,
	CT_SYMLINK, /* payload: name, NUL, target */
	CT_MKNOD,   /* a FIFO or socket (bind): no data */
	CT_LINK,    /* a new name for ino2 */
	CT_UNLINK,  /* the name of ino2 removed */
	CT_RMDIR,
	CT_RENAME, /* payload: old name, NUL, new name, in directory (dev2,
	            * ino3); ino2 moved, off: the inode it replaced, 0 for
	            * none (CT_F_EXCHANGE: the two swapped) */
	/* Durability: each is a crash point. */
	CT_SYNC,     /* fsync or fdatasync (CT_F_DATA) of (dev, ino) */
	CT_SYNC_ALL, /* sync, or syncfs of the copy's file system */
	CT_WRITEOUT, /* sync_file_range wrote (dev, ino) back and waited */
	CT_CLAIM,    /* the program told someone: a crash point */
	CT_HOLD,     /* pid changes (dev, ino) past the library from now
	              * (CT_F_MAPPED: through a shared mapping) */
	CT_FREE,     /* ... no longer */
	CT_UNKNOWN,  /* something the library could not follow; payload: why */
	CT_DURING,   /* a crash point while a durability call (CT_F_RANGE:
	              * msync) writes the pages just pictured: any part of
	              * them may be on the disk */
	CT_IGNORED,  /* a file outside the copy that --outside-ok names was
	              * written; payload: its path */
	CT_RELEASE,  /* the last descriptor of an open file of (dev, ino)
	              * that was truncated to nothing through it was closed:
	              * ext4's auto_da_alloc starts its writeback */
	CT_KINDS
};

/* Record flags. */
enum {
	CT_F_DATA = 1,       /* CT_SYNC: fdatasync */
	CT_F_FAILED = 2,     /* a durability call that failed: nothing durable */
	CT_F_DSYNC = 4,      /* CT_WRITE: O_DSYNC, RWF_DSYNC: its range durable */
	CT_F_SYNC = 8,       /* CT_WRITE: O_SYNC, RWF_SYNC: and the size */
	CT_F_DURABLE = 16,   /* CT_IMAGE: taken by a durability call covering it */
	CT_F_ANON = 32,      /* CT_CREATE: O_TMPFILE */
	CT_F_EXCHANGE = 64,  /* CT_RENAME: RENAME_EXCHANGE */
	CT_F_MAPPED = 128,   /* CT_HOLD: a shared writable mapping */
	CT_F_OUTSIDE = 256,  /* CT_SYNC_ALL: syncfs of another file system */
	CT_F_RANGE = 512,    /* CT_SYNC: msync, which makes durable only the
	                      * images it took, just before it */
	CT_F_UNUSED = 1024,  /* CT_FREE: the stream was never written through
	                      * (a shell's redirection it did not use): it
	                      * was never held */
};

/* What every process of the tree counts, in the points file. */
struct ct_counters {
	uint64_t points;     /* crash points passed */
	uint64_t syncs;      /* durability calls */
	uint64_t changes;    /* writes and directory operations in the copy */
	uint64_t out, err;   /* the output bytes seen so far (claims) */
	uint64_t lost;       /* records the journal could not take (a file
	                      * size limit, a full disk, a process that could
	                      * not open it): the state is unknown */
};

struct ct_record {
	uint32_t magic;
	uint16_t kind, flags;
	uint32_t len; /* payload bytes after the header */
	uint32_t pid;
	uint64_t point; /* the crash point this record is, 0 for none */
	uint64_t dev, ino;
	uint64_t dev2, ino2, ino3;
	int64_t off, size;
	uint64_t begin; /* a durability call: 1 + the journal's size when it
	                 * began (it covers what was recorded before) */
	uint64_t out, err; /* output bytes written before this change */
};

/* Is a record of this kind a crash point?  Durability calls and claims
 * always, a write with O_SYNC or O_DSYNC, every change with --writes
 * (`writes`).  The same rule for the library and the supervisor. */
static inline int ct_is_point(const struct ct_record *h, int writes)
{
	switch (h->kind) {
	case CT_SYNC:
	case CT_SYNC_ALL:
	case CT_CLAIM:
	case CT_DURING:
		return 1;
	case CT_WRITE:
		return writes || (h->flags & (CT_F_DSYNC | CT_F_SYNC));
	case CT_IMAGE:
	case CT_WRITEOUT:
	case CT_HOLD:
	case CT_FREE:
	case CT_UNKNOWN:
	case CT_IGNORED:
	case CT_RELEASE:
		return 0;
	default:
		return writes;
	}
}

/* What the counters say of a record: a durability call, or a change. */
static inline void ct_count(struct ct_counters *count, const struct ct_record *h)
{
	if (h->kind == CT_SYNC || h->kind == CT_SYNC_ALL ||
	    (h->kind == CT_WRITE && (h->flags & (CT_F_DSYNC | CT_F_SYNC))))
		__atomic_add_fetch(&count->syncs, 1, __ATOMIC_SEQ_CST);
	else if (h->kind <= CT_RENAME)
		__atomic_add_fetch(&count->changes, 1, __ATOMIC_SEQ_CST);
}

/* Under the journal's lock, just before the record is appended: counted,
 * numbered if it is a crash point (its number, else 0), and stamped with
 * the output seen so far.  The library's and the supervisor's alike. */
static inline uint64_t ct_number(struct ct_counters *count, struct ct_record *h, int writes)
{
	ct_count(count, h);
	h->point = ct_is_point(h, writes) ? __atomic_add_fetch(&count->points, 1, __ATOMIC_SEQ_CST)
					  : 0;
	h->out = __atomic_load_n(&count->out, __ATOMIC_SEQ_CST);
	h->err = __atomic_load_n(&count->err, __ATOMIC_SEQ_CST);
	return h->point;
}

/* Does a glob of `globs` (one a line) name `path`, a file outside the
 * copy?  `*` matches any characters, `/` too. */
static inline int ct_outside_ok(const char *path, const char *globs)
{
	char glob[4096];

	while (globs && *globs) {
		size_t n = strcspn(globs, "\n");

		if (n < sizeof(glob)) {
			memcpy(glob, globs, n);
			glob[n] = '\0';
			if (fnmatch(glob, path, 0) == 0)
				return 1;
		}
		globs += n + (globs[n] != '\0');
	}
	return 0;
}

#endif
