/* SPDX-License-Identifier: MIT */
/* json.h -- JSON written as it is made (syncstat's and crashtest's
 * reports), and read back (`syncstat compare`), with no library beyond libc:
 * the build needs nothing but a C compiler, and no launcher pays the dynamic
 * loader for a JSON library at each start.
 *
 * The writer streams: a report of a million records is never a tree in
 * memory, and a report cut short (crashtest interrupted) still has every
 * point made so far.  Members come out in the order written.  Names are
 * bytes; JSON text is Unicode: a byte that is not part of well-formed UTF-8
 * becomes U+FFFD.
 *
 * The reader is for untrusted input, and strict (RFC 8259): invalid UTF-8,
 * \u0000, a lone surrogate, a duplicate name, a number out of range,
 * trailing text and nesting past JSON_MAX_DEPTH are refused with the line
 * and column of what was refused.
 */
#ifndef EMD_JSON_H
#define EMD_JSON_H

#include <stddef.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 2048

/* A document being written to `f`, `indent` spaces a level (0: one line);
 * the reports nest a few levels, far from JW_MAX_DEPTH. */
#define JW_MAX_DEPTH 32
struct jw {
	FILE *f;
	int indent, depth;
	int empty;               /* the open container has no member yet */
	char open[JW_MAX_DEPTH]; /* each open container's bracket */
};

void jw_start(struct jw *w, FILE *f, int indent);
/* Open an object or an array, as member `key` (NULL in an array, or at the
 * top); jw_end closes the innermost. */
void jw_object(struct jw *w, const char *key);
void jw_array(struct jw *w, const char *key);
void jw_end(struct jw *w);
void jw_string(struct jw *w, const char *key, const char *s);
void jw_int(struct jw *w, const char *key, long long v);
/* A count: at most 2^63 - 1 (what every reader takes as an integer). */
void jw_count(struct jw *w, const char *key, unsigned long long v);
void jw_bool(struct jw *w, const char *key, int v);
void jw_null(struct jw *w, const char *key);
/* `digits` significant digits; null when v is not finite. */
void jw_real(struct jw *w, const char *key, double v, int digits);
/* The document written: a newline, flushed; 0, or -1 with errno. */
int jw_finish(struct jw *w);

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0. */
int json_utf8_length(const unsigned char *s);

/* A value read. */
enum json_type { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_INT, JSON_REAL, JSON_STRING,
		 JSON_ARRAY, JSON_OBJECT };
struct json {
	enum json_type type;
	long long i;
	double real;
	char *s;            /* a string, with no NUL in it */
	size_t n;           /* members of an array or an object */
	struct json **v;    /* its values */
	char **names;       /* an object's names */
};

/* The document in text[0, len); NULL if it is not one JSON value, with the
 * reason and where in `why` (a message of at most `size` bytes). */
struct json *json_parse(const char *text, size_t len, char *why, size_t size);
void json_free(struct json *v);
/* obj's member `name`, or NULL (also when obj is not an object). */
const struct json *json_get(const struct json *obj, const char *name);
/* The ith element of an array, or NULL. */
const struct json *json_at(const struct json *array, size_t i);

#endif
