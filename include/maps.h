/* SPDX-License-Identifier: MIT */
/* maps.h -- reading /proc/PID/maps (shared/maps.c), for the library
 * (the file an msync names) and the supervisor (whether a caller's range
 * is mapped, where an io_uring ring's SQEs are). */
#ifndef EMD_MAPS_H
#define EMD_MAPS_H

/* One line: "lo-hi perms offset major:minor inode   path"; path is "" for
 * an anonymous mapping, "[heap]" and the like for the kernel's own, and
 * cut short past a few KiB. */
struct emd_map {
	unsigned long lo, hi, offset, inode;
	unsigned long long dev; /* the file's device (makedev) */
	const char *path;
	char perms[5]; /* "rw-p" */
};

/* Call `match` on each mapping of the maps file open at `fd`, in order,
 * until it returns non-zero; that value, or 0 at the end (or on a read
 * error).  Uses read(2) alone: no stdio, no allocation. */
int emd_maps_each(int fd, int (*match)(const struct emd_map *m, void *arg), void *arg);

#endif
