/* SPDX-License-Identifier: MIT */
/* report_json.h -- the report as one JSON document, written point by
 * point (common/json.h): doc/crashtest.schema.json describes it.
 */
#ifndef CT_REPORT_JSON_H
#define CT_REPORT_JSON_H

#include "crashtest/report.h"

void json_start(const struct report_head *h);
/* A point's result under one model (named if the report has several); ok
 * under ext4-ordered only by auto_da_alloc's rule. */
void json_point(const struct point_result *p, const char *model, int only_by_ada);
void json_end(size_t points, size_t states, size_t distinct, size_t checked,
	      const size_t count[NVERDICTS], const size_t (*by_model)[NVERDICTS],
	      const struct report_tail *tail);

#endif
