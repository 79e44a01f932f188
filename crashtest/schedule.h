/* SPDX-License-Identifier: MIT */
/* schedule.h -- the crash points asked for, their states checked by -j
 * workers at once, each point reported in order as soon as it is done.
 */
#ifndef CT_SCHEDULE_H
#define CT_SCHEDULE_H

#include "crashtest/report.h"
#include "crashtest/run.h"

/* The points the options ask for, then the end (unless --at).  A signal to
 * crashtest, or the budget spent, stops it: tail says how many points were
 * to be built and how many were. */
void run_points(struct run *run, const struct options *o, double start,
		struct report_tail *tail);

#endif
