/* SPDX-License-Identifier: MIT */
/* run.h -- a run's record directory: the record file the library writes
 * (include/record.h), the command line and how the run ended. */
#ifndef EMD_RECORDS_H
#define EMD_RECORDS_H

#include <stddef.h>

/* Make `dir` (or, if NULL, a private temporary directory) ready for a run
 * of argv, with the record file's EMD_REC_* flags (eaten, audit), and leave
 * the record file open for the tree (EATMYDATA_RECORD, EATMYDATA_RECORD_FD);
 * returns the directory.  Dies (125) if the directory is not fit. */
const char *records_prepare(const char *dir, unsigned flags, char *const argv[]);

/* A new file in the prepared directory, for writing: exclusively, never
 * through a link, mode 0600; -1 and errno if it cannot be made. */
int records_create_file(const char *name);

/* Save how the command ended, for `syncstat report`. */
void records_save_run(const char *dir, int status, double wall_seconds);

/* Die unless a record file's format `version` is the one this build reads. */
void records_check_version(const char *file, unsigned version);

/* A file of a record directory, for reading: a descriptor, or -1 with
 * errno ENOENT if there is none.  Dies unless it is a regular file (a FIFO
 * must not hang the report, a link not lead it elsewhere). */
int records_open_input(const char *file);

/* The whole of such a file, NUL-terminated, its size in *len; NULL if there
 * is none.  Dies if it is larger than `max`. */
char *records_read_input(const char *file, size_t max, size_t *len);

/* Remove a temporary record directory. */
void records_remove(const char *dir);

#endif
