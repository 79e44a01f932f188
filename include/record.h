/* SPDX-License-Identifier: MIT */
/* record.h -- the record file shared by the library (which writes it) and
 * syncstat / eatmydata --stats (which read it).
 *
 * One file for the whole process tree, mapped MAP_SHARED by every process:
 * a slot is claimed with one atomic add and filled in place, so nothing is
 * buffered and nothing is lost when a process is killed.  A call's record is
 * written before the call (state STARTED) and finished after it (DONE).
 * The library trusts nothing it reads back from the file: its capacity is
 * what it mapped, and a chunk of slots has its memory reserved before use,
 * so a full file system or a scribbled header costs records, counted as
 * lost (`next` - `slots`), never the program.
 */
#ifndef EMD_RECORD_H
#define EMD_RECORD_H

#include <stdint.h>

/* The magic names the family; the version changes with any change of the
 * header's or a slot's layout or meaning, and a reader refuses a version it
 * does not read.  Version 1 files exist with two slot layouts (before and
 * after the audit's fields), so neither is read; version 3 added the call
 * site's build id and address, and the module records; version 4 the
 * calling thread (its 4 bytes taken from the program's name); version 5
 * the flags of a request eatmydata left to the kernel (EMD_REC_LEFT). */
#define EMD_REC_MAGIC "EMDREC01"
#define EMD_REC_VERSION 5
#define EMD_REC_HEADER 4096
#define EMD_REC_SLOTS_DEFAULT (1u << 20)
#define EMD_REC_SLOTS_MAX (1u << 24) /* 8 GiB of records */

/* The kinds of durability request, in report order. */
#define EMD_REC_KINDS(X)                                                       \
	X(FSYNC, "fsync")                                                      \
	X(FDATASYNC, "fdatasync")                                              \
	X(SYNCFS, "syncfs")                                                    \
	X(SYNC, "sync")                                                        \
	X(SYNC_FILE_RANGE, "sync_file_range")                                  \
	X(MSYNC, "msync")                                                      \
	X(PWRITEV2_SYNC, "pwritev2(RWF_SYNC)")                                 \
	X(PWRITEV2_DSYNC, "pwritev2(RWF_DSYNC)")                               \
	X(OPEN_SYNC, "open(O_SYNC)")                                           \
	X(OPEN_DSYNC, "open(O_DSYNC)")                                         \
	X(WRITE_SYNC, "write(O_SYNC)")                                         \
	X(WRITE_DSYNC, "write(O_DSYNC)")                                       \
	X(CREATE, "create")                                                    \
	X(RENAME, "rename")                                                    \
	X(LINK, "link")                                                        \
	X(MODULE, "module")                                                    \
	X(UNOBSERVED, "unobserved")

/* Kinds from EMD_K_CREATE on are not durability calls but the events
 * syncstat --audit needs: a directory entry made, a file renamed; and a
 * module (a program or library) first seen at a call site in a process:
 * its path, as /proc/PID/maps names it, and build id, so that the report
 * can find its debug information; a program that ran unobserved: one the
 * library cannot reach that could not be put under the seccomp filter (its
 * path in `path`, the reason in `site`, the errno in `error`), whose
 * requests no record counts. */
#define EMD_K_FIRST_EVENT EMD_K_CREATE

#define EMD_REC_KIND_ID(id, name) EMD_K_##id,
enum emd_rec_kind { EMD_REC_KINDS(EMD_REC_KIND_ID) EMD_K_COUNT };
#undef EMD_REC_KIND_ID

enum emd_rec_state { EMD_REC_FREE, EMD_REC_STARTED, EMD_REC_DONE };

struct emd_rec_header {
	char magic[8];
	uint32_t version;     /* EMD_REC_VERSION */
	uint32_t slot_size;   /* sizeof(struct emd_rec_slot) */
	uint64_t slots;       /* capacity; lowered by the library where it
			       * could not reserve memory for more */
	uint64_t next;        /* slots claimed so far; may pass `slots` */
	uint64_t flags;       /* EMD_REC_EATEN: the calls were eaten */
};

#define EMD_REC_EATEN 1
#define EMD_REC_AUDIT 2 /* the events are recorded too */
/* The run is going on: set by the launcher when it makes the file, cleared
 * when the command ends.  The library maps and fills only a live file, so a
 * daemon that outlives the run, or a copy of a kept file named by a forged
 * EATMYDATA_RECORD_FD, is never written. */
#define EMD_REC_LIVE 4

/* A file as a call found it: which one (device, inode, birth time) and its
 * contents' state (modification time, size). */
struct emd_rec_file {
	uint64_t dev, ino, btime_ns, mtime_ns, size;
	uint32_t mode, pad;
};

struct emd_rec_slot {
	uint32_t state;
	uint32_t kind;
	int32_t pid, ppid;
	int32_t flags;        /* EMD_REC_EXISTED: a rename's target was there */
	int32_t error;        /* errno of a failed call, else 0 */
	int64_t result;
	uint64_t start_ns;    /* CLOCK_MONOTONIC */
	uint64_t latency_ns;
	struct emd_rec_file file;
	uint64_t dir_dev, dir_ino; /* events: the directory of the entry */
	int32_t tid;          /* the calling thread, as gettid() names it */
	char program[28];
	char path[256];
	char site[80];        /* "module+0xoffset symbol", as dladdr names it */
	uint8_t build_id[20]; /* the module's GNU build id (its first 20 bytes) */
	uint32_t build_id_len;   /* 0: none */
	uint64_t site_addr;   /* the call's return address in the module's ELF
			       * (as linked: the load bias taken off) */
};

#define EMD_REC_EXISTED 1
/* A call counted but not timed: the supervisor let it go on to the kernel
 * (an msync, an O_SYNC open or write, an io_uring or AIO submission). */
#define EMD_REC_UNTIMED 2
/* In a run of eatmydata --stats: a request that went on to the kernel as
 * it was, and synced (not eaten); and what would have eaten it: the
 * supervisor allowed to make it (--on-behalf=on), the launcher's own
 * filter over the whole tree (--seccomp=on: one the tree installs may come
 * after a Landlock domain the supervisor cannot see), the program eating
 * (--only or EATMYDATA_DISABLE left it alone).  None of these: nothing
 * would (the supervisor may not act for the program). */
#define EMD_REC_LEFT 4
#define EMD_REC_NEEDS_ON_BEHALF 8
#define EMD_REC_NEEDS_SECCOMP_ON 16
#define EMD_REC_NOT_EATING 32

_Static_assert(sizeof(struct emd_rec_slot) == 512, "record slot size");

/* EATMYDATA_AUDIT=1 with EATMYDATA_RECORD: record the events too. */

#endif
