/* SPDX-License-Identifier: MIT */
/* device.h -- what the block devices under the tree's files did during the
 * run, from the counters every user can read (/sys/block/DEV/stat).
 *
 * The launcher samples them into DIR/devices at the start, every few
 * seconds and at the end (device_sample.c); the report reads that file back
 * as untrusted input and sets each disk's change beside the tree's own
 * durability calls on the files it holds (device.c).  The counters are
 * device-wide: whatever else used the disk is in them too. */
#ifndef EMD_DEVICE_H
#define EMD_DEVICE_H

#include <stddef.h>

#include "record.h"

/* The fields of /sys/block/DEV/stat (Documentation/block/stat.rst). */
enum { DEV_READS, DEV_READ_MERGES, DEV_READ_SECTORS, DEV_READ_MS, DEV_WRITES,
       DEV_WRITE_MERGES, DEV_WRITE_SECTORS, DEV_WRITE_MS, DEV_IN_FLIGHT,
       DEV_BUSY_MS, DEV_QUEUE_MS, DEV_DISCARDS, DEV_DISCARD_MERGES,
       DEV_DISCARD_SECTORS, DEV_DISCARD_MS, DEV_FLUSHES, DEV_FLUSH_MS,
       DEV_FIELDS };

#define DEV_MAX_DISKS 64
#define DEV_MAX_MOUNTS 256
#define DEV_MAX_LEAVES 8
#define DEV_NAME 32
#define DEVICE_TICK 2 /* seconds between the launcher's samples */

/* A disk the launcher sampled, and what the tree asked of files on it. */
struct disk {
	char name[DEV_NAME];
	unsigned major, minor;
	int write_cache, fua;       /* -1: unknown */
	int fields;                 /* how many stat fields the kernel gives */
	int from_start;             /* sampled when the run started */
	unsigned long long seq;     /* diskseq: a new medium is a new count */
	unsigned long long last[DEV_FIELDS], delta[DEV_FIELDS];
	unsigned long long calls, total_ns; /* the tree's, on files here */
	int seen;
};

/* A file system's device and the disks under it (none: tmpfs, NFS...). */
struct dev_mount {
	unsigned long long dev; /* major << 32 | minor, as in the records */
	char fstype[DEV_NAME];
	int leaves[DEV_MAX_LEAVES], nleaves;
	char via[DEV_NAME];     /* the loop or mapper device on the way */
	unsigned long long calls, total_ns;
};

struct devices {
	int present;      /* DIR/devices was there */
	int unavailable;  /* /sys could not be read when the run started */
	struct disk d[DEV_MAX_DISKS];
	size_t nd;
	struct dev_mount m[DEV_MAX_MOUNTS];
	size_t nm;
	unsigned long long samples, t0_ns, t1_ns;
	unsigned long long nofile_calls, nofile_ns; /* sync(): no file named */
	unsigned long long unknown_calls, unknown_ns; /* a device not mounted */
};

/* Launcher: the first sample, in DIR/devices (a warning if it cannot be
 * made: the run goes on without it); then one every few seconds while the
 * command runs (device_tick, from a timer), and the last at the end. */
void device_sample_start(const char *dir);
void device_tick(void);
void device_sample_end(void);

/* Report: DIR/devices, read back; dies naming the file if it is corrupt. */
void device_load(const char *dir, struct devices *out);

/* Count one durability call against the disks under its file. */
void device_count(struct devices *ds, const struct emd_rec_slot *s);

/* A counter's milliseconds in ns (never wrapped). */
unsigned long long device_ns(unsigned long long ms);

/* A disk's flush time in ns, and the share (0 to 100) of the tree's time
 * in calls on its files that its writes and flushes could account for at
 * most; -1 if none, or if the disk spent longer in writes and flushes than
 * the tree in its calls (device_busier: others' work is in the counters,
 * and no share can be told from them). */
unsigned long long device_flush_ns(const struct disk *d);
double device_share(const struct disk *d);
int device_busier(const struct disk *d);

#endif
