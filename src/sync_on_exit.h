/* SPDX-License-Identifier: MIT */
/* sync_on_exit.h -- eatmydata --sync-on-exit: make the run durable at its end. */
#ifndef EMD_SYNC_ON_EXIT_H
#define EMD_SYNC_ON_EXIT_H

/* Create the directory the library notes file systems in, and name it in
 * EATMYDATA_SYNC_DIR for the command's process tree. */
void sync_on_exit_prepare(void);

/* Sync every file system noted (all of them, with sync(2), if one cannot be
 * named) and remove the directory. */
void sync_on_exit_finish(void);

#endif
