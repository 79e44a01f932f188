/* SPDX-License-Identifier: MIT */
/* merge.h -- crashtest merge BUNDLE REPORT...: the shards' --json reports
 * of `crashtest check --shard`, put together into the report of the whole
 * run.  The bundle's run is met again, point by point (as a check would,
 * with no state built): each check's result is taken from the report of
 * the shard it is in, so the report is, by construction, the one a run of
 * the whole bundle gives.
 */
#ifndef CT_MERGE_H
#define CT_MERGE_H

#include "crashtest/report.h"
#include "crashtest/run.h"

/* Read the reports (untrusted input): each must be a shard of this
 * bundle's run, the shards 1 to N each once; a check in two reports, or
 * in a report of a shard it is not in, is refused.  The time is the
 * shards' added up; the first shard cut short makes tail's cause. */
struct merge *merge_read(const struct run *run, char *const *reports, struct report_tail *tail);

/* Check c (from 0) takes its result from its shard: 0; -1 if that shard
 * was cut short before it (the merged report stops there).  Dies if no
 * report has it, or has another state for it. */
int merge_take(struct merge *m, struct run *run, size_t c);

/* Once the run was met whole: every check a report gave was one of it. */
void merge_done(const struct merge *m);
void merge_free(struct merge *m);

#endif
