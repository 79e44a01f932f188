/* SPDX-License-Identifier: MIT */
/* json_read.c -- a report read back by `syncstat compare`, through jansson
 * in its strictest mode: duplicate names refused (which of two "calls"
 * would count?), \u0000 refused (no name in a report holds one). */
#include "common/common.h"
#include "json_read.h"

json_t *json_read(const char *file, const char *text, size_t len)
{
	json_error_t err;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);

	if (!doc)
		die("%s: not a JSON report (line %d, column %d: %s)", file, err.line,
		    err.column, err.text);
	return doc;
}
