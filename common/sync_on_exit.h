/* SPDX-License-Identifier: MIT */
/* sync_on_exit.h -- eatmydata --sync-on-exit: make the run durable at its end. */
#ifndef EMD_SYNC_ON_EXIT_H
#define EMD_SYNC_ON_EXIT_H

#include <sys/types.h>

/* Create the directory the library notes file systems in, and leave it
 * open for the command's process tree: EATMYDATA_SYNC_FD, _ID and _DIR. */
void sync_on_exit_prepare(void);

/* Move the inherited note directory to descriptor `at` (a process that
 * closes the others: the seccomp supervisor); returns the first descriptor
 * above what it keeps. */
int sync_on_exit_keep(int at);

/* Note the file system behind fd (-1: all of them) in the inherited
 * directory; where that cannot be done, sync it now. */
void sync_on_exit_note(int fd);

/* The same for the file system of device dev, known without a descriptor
 * (the seccomp supervisor's look at a caller's); sync(2) where it cannot
 * be noted. */
void sync_on_exit_note_dev(dev_t dev);

/* Sync every file system noted (all of them, with sync(2), if one cannot be
 * named) and remove the directory. */
void sync_on_exit_finish(void);

#endif
