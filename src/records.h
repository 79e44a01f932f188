/* SPDX-License-Identifier: MIT */
/* records.h -- a run's record directory: the record file the library writes
 * (libeatmydata/record.h), the command line and how the run ended. */
#ifndef EMD_RECORDS_H
#define EMD_RECORDS_H

/* Make `dir` (or, if NULL, a temporary directory) ready for a run, with the
 * record file's EMD_REC_* flags (eaten, audit), and name the record file in
 * EATMYDATA_RECORD; returns the directory. */
const char *records_prepare(const char *dir, unsigned flags);

/* Save the command and how it ended, for `syncstat report`. */
void records_save_run(const char *dir, char *const argv[], int status,
		      double wall_seconds);

/* Die unless a record file's format `version` is the one this build reads. */
void records_check_version(const char *file, unsigned version);

/* Remove a temporary record directory. */
void records_remove(const char *dir);

#endif
