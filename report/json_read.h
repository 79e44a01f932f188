/* SPDX-License-Identifier: MIT */
/* json_read.h -- a small JSON reader for `syncstat compare`, which takes
 * back the reports of --json.  A report is untrusted input: any departure
 * from RFC 8259, nesting past 64 levels, or a file past its size limit
 * stops it with a message naming the file. */
#ifndef EMD_JSON_READ_H
#define EMD_JSON_READ_H

#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY,
		 JSON_OBJECT };

struct json {
	enum json_type type;
	int boolean;
	double number;
	char *string;        /* UTF-8, NUL-terminated (no NUL inside) */
	size_t n;            /* an array's items or an object's members */
	struct json *items;  /* the values */
	char **keys;         /* an object's names, beside its values */
};

/* The document in `text` (NUL-terminated); dies naming `file` if it is
 * not one JSON value. */
struct json *json_parse(const char *file, const char *text);

/* An object's member, or NULL. */
const struct json *json_get(const struct json *obj, const char *key);

#endif
