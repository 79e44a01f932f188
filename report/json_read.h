/* SPDX-License-Identifier: MIT */
/* json_read.h -- a report of --json read back for `syncstat compare`, with
 * jansson.  A report is untrusted input: anything that is not RFC 8259
 * JSON (invalid UTF-8, \u0000, a duplicate name), nesting deeper than
 * jansson's limit (2048), or a file past its size limit stops it with a
 * message naming the file. */
#ifndef EMD_JSON_READ_H
#define EMD_JSON_READ_H

#include <jansson.h>

/* The document in `text` (len bytes); dies naming `file` if it is not one
 * JSON value. */
json_t *json_read(const char *file, const char *text, size_t len);

#endif
