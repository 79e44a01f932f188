/* SPDX-License-Identifier: MIT */
/* bundle.h -- a recorded run in one file (crashtest record): the base the
 * states are built from, the journal, what the command printed, how it
 * ended, what was found when it was recorded, and the options that choose
 * the points and states -- all a `crashtest check` elsewhere needs to build
 * and check them, and `crashtest merge` to put the shards' reports
 * together.
 */
#ifndef CT_BUNDLE_H
#define CT_BUNDLE_H

#include "crashtest/run.h"

/* Its name: 32 hexadecimal digits drawn at record, the same in every copy
 * of the bundle; each shard's report carries it. */
#define BUNDLE_ID_SIZE 33

/* Write run (analysed, its run directory still there) and the options to
 * a new file at path, as one bundle. */
void bundle_write(const char *path, const struct run *run, const struct options *o);

/* Read the bundle at path (untrusted input: every length and name is
 * checked) into a new run directory: the journal, the output, the points
 * file, and the base (with `data`, its files' contents; without, only
 * their names: enough to choose states, not to build them).  The options
 * it was recorded with go into o; dies with a message if it is no bundle. */
void bundle_read(const char *path, struct run *run, struct options *o, int data);

#endif
