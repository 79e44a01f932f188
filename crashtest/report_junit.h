/* SPDX-License-Identifier: MIT */
/* report_junit.h -- the report as JUnit XML (--junit=FILE, common/junit.h):
 * each crash point a test case (one per model), each failed state a
 * failure with what it lost and what the checker printed.
 */
#ifndef CT_REPORT_JUNIT_H
#define CT_REPORT_JUNIT_H

#include "crashtest/report.h"

void junit_start(const struct report_head *h);
void junit_point(const struct point_result *p, const char *model, int first_failure);
/* The file written: with a case in error for a command that failed on its
 * own, and one for a run cut short (`interrupted`: its words). */
void junit_end(const struct report_tail *t, int command_failed, const char *interrupted);

#endif
