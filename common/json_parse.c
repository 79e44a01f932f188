/* SPDX-License-Identifier: MIT */
/* json_parse.c -- JSON read back, strictly (json.h): a report is untrusted
 * input, and of two members "calls", which one would count?
 *
 * Recursive descent, bounded by JSON_MAX_DEPTH; an object's names are
 * checked for duplicates once it is read, sorted (a hostile object of a
 * million members costs n log n, not n^2).
 */
#include "common/json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const unsigned char *p, *start, *end;
	int depth;
	char *why;
	size_t size;
	int failed;
};

/* The first error, with its line and column (in bytes, from 1). */
__attribute__((format(printf, 2, 3))) static void fail(struct parser *ps, const char *fmt, ...)
{
	int line = 1, column = 1;
	char what[160];
	va_list ap;

	if (ps->failed++)
		return;
	for (const unsigned char *c = ps->start; c < ps->p && c < ps->end; c++, column++)
		if (*c == '\n') {
			line++;
			column = 0;
		}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(ps->why, ps->size, "line %d, column %d: %s", line, column, what);
}

static struct json *value(struct parser *ps);

static void skip_space(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
				   *ps->p == '\r'))
		ps->p++;
}

static struct json *made(struct parser *ps, enum json_type type)
{
	struct json *v = calloc(1, sizeof(*v));

	if (!v)
		fail(ps, "out of memory");
	else
		v->type = type;
	return v;
}

/* A literal: true, false, null. */
static struct json *word(struct parser *ps, const char *w, enum json_type type)
{
	size_t n = strlen(w);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0) {
		fail(ps, "invalid token");
		return NULL;
	}
	ps->p += n;
	return made(ps, type);
}

static const unsigned char *digits(const unsigned char *p, const unsigned char *end)
{
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p;
}

/* RFC 8259's number; one with neither fraction nor exponent is an integer,
 * which must fit in 64 bits. */
static struct json *number(struct parser *ps)
{
	const unsigned char *p = ps->p + (*ps->p == '-'), *end = ps->end, *q;
	char buf[400];
	int real = 0;
	struct json *v;

	if (p == end || *p < '0' || *p > '9')
		return fail(ps, "invalid number"), NULL;
	p = *p == '0' ? p + 1 : digits(p, end);
	if (p < end && *p == '.') {
		real = 1;
		if ((q = digits(p + 1, end)) == p + 1)
			return fail(ps, "invalid number"), NULL;
		p = q;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		real = 1;
		p += p + 1 < end && (p[1] == '+' || p[1] == '-') ? 2 : 1;
		if ((q = digits(p, end)) == p)
			return fail(ps, "invalid number"), NULL;
		p = q;
	}
	if ((size_t)(p - ps->p) >= sizeof(buf))
		return fail(ps, "number too long"), NULL;
	memcpy(buf, ps->p, (size_t)(p - ps->p));
	buf[p - ps->p] = '\0';
	if (!(v = made(ps, real ? JSON_REAL : JSON_INT)))
		return NULL;
	errno = 0;
	if (real)
		v->real = strtod(buf, NULL);
	else
		v->i = strtoll(buf, NULL, 10);
	/* A real too small to tell from 0 is 0; one too big is refused. */
	if (real ? isinf(v->real) : errno == ERANGE)
		fail(ps, "number out of range");
	ps->p = p;
	return v;
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned *out)
{
	*out = 0;
	for (int i = 0; i < 4; i++, p++) {
		unsigned c = p < end ? *p | 0x20u : 0; /* digits have the bit already */

		if (c >= '0' && c <= '9')
			*out = *out << 4 | (c - '0');
		else if (c >= 'a' && c <= 'f')
			*out = *out << 4 | (c - 'a' + 10);
		else
			return -1;
	}
	return 0;
}

static char *utf8(char *o, unsigned c)
{
	if (c < 0x80) {
		*o++ = (char)c;
	} else if (c < 0x800) {
		*o++ = (char)(0xc0 | c >> 6);
		*o++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*o++ = (char)(0xe0 | c >> 12);
		*o++ = (char)(0x80 | (c >> 6 & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	} else {
		*o++ = (char)(0xf0 | c >> 18);
		*o++ = (char)(0x80 | (c >> 12 & 0x3f));
		*o++ = (char)(0x80 | (c >> 6 & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	}
	return o;
}

/* \uXXXX at p (past the backslash and the u), a surrogate pair taken
 * whole: the code point, or -1. */
static long escaped_code(struct parser *ps, const unsigned char **p)
{
	unsigned hi, lo;

	if (hex4(*p, ps->end, &hi) != 0)
		return fail(ps, "invalid \\u escape"), -1;
	*p += 4;
	if (hi == 0)
		return fail(ps, "\\u0000 is not allowed"), -1;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return fail(ps, "invalid Unicode surrogate"), -1;
	if (hi < 0xd800 || hi > 0xdbff)
		return hi;
	if (ps->end - *p < 6 || (*p)[0] != '\\' || (*p)[1] != 'u' ||
	    hex4(*p + 2, ps->end, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
		return fail(ps, "invalid Unicode surrogate"), -1;
	*p += 6;
	return 0x10000 + ((long)(hi - 0xd800) << 10) + (lo - 0xdc00);
}

/* One character of a string at *p into *o: 0, or -1 at its end or an error. */
static int character(struct parser *ps, const unsigned char **p, char **o)
{
	static const char in[] = "\"\\/bfnrt", out[] = "\"\\/\b\f\n\r\t";
	const unsigned char c = **p;
	const char *e;
	long code;
	int n;

	if (c < 0x20)
		return fail(ps, "control character in a string"), -1;
	if (c >= 0x80) {
		/* Padded with zeros, which end any sequence: nothing past end is read. */
		unsigned char b[4] = {0};

		memcpy(b, *p, ps->end - *p < 4 ? (size_t)(ps->end - *p) : 4);
		if ((n = json_utf8_length(b)) == 0)
			return fail(ps, "invalid UTF-8"), -1;
		memcpy(*o, *p, (size_t)n);
		*o += n;
		*p += n;
		return 0;
	}
	(*p)++;
	if (c != '\\') {
		*(*o)++ = (char)c;
		return 0;
	}
	if (*p < ps->end && **p == 'u') {
		(*p)++;
		if ((code = escaped_code(ps, p)) < 0)
			return -1;
		*o = utf8(*o, (unsigned)code);
		return 0;
	}
	if (*p >= ps->end || !**p || !(e = strchr(in, **p)))
		return fail(ps, "invalid escape"), -1;
	*(*o)++ = out[e - in];
	(*p)++;
	return 0;
}

/* A string, *ps->p its opening quote: its bytes, NUL-terminated. */
static char *string(struct parser *ps)
{
	const unsigned char *p = ps->p + 1, *q = p;
	char *s, *o;

	/* Its end first: the decoded string is never longer than its text. */
	while (q < ps->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= ps->end)
		return fail(ps, "unterminated string"), NULL;
	if (!(s = o = malloc((size_t)(q - p) + 1)))
		return fail(ps, "out of memory"), NULL;
	for (ps->p = p; ps->p < q;)
		if (character(ps, &ps->p, &o) != 0) {
			free(s);
			return NULL;
		}
	*o = '\0';
	ps->p = q + 1;
	return s;
}

/* Room for one more member of v. */
static int grow(struct parser *ps, struct json *v, size_t *cap)
{
	size_t n = *cap ? 2 * *cap : 8;
	struct json **values;
	char **names;

	if (v->n < *cap)
		return 0;
	if (!(values = realloc(v->v, n * sizeof(*values))))
		return fail(ps, "out of memory"), -1;
	v->v = values;
	if (v->type == JSON_OBJECT) {
		if (!(names = realloc(v->names, n * sizeof(*names))))
			return fail(ps, "out of memory"), -1;
		v->names = names;
	}
	*cap = n;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

/* An object's names, each once. */
static int names_unique(struct parser *ps, const struct json *v)
{
	char ***idx = v->n > 1 ? malloc(v->n * sizeof(*idx)) : NULL;
	int dup = 0;

	if (v->n > 1 && !idx)
		return fail(ps, "out of memory"), -1;
	for (size_t i = 0; i < v->n && idx; i++)
		idx[i] = &v->names[i];
	if (idx)
		qsort(idx, v->n, sizeof(*idx), by_name);
	for (size_t i = 1; i < v->n && !dup; i++)
		if (strcmp(*idx[i - 1], *idx[i]) == 0) {
			fail(ps, "duplicate name \"%.60s\"", *idx[i]);
			dup = 1;
		}
	free(idx);
	return -dup;
}

/* An array or an object's members, *ps->p its opening bracket. */
static struct json *container(struct parser *ps, enum json_type type)
{
	const unsigned char close = type == JSON_OBJECT ? '}' : ']';
	struct json *v = made(ps, type), *m;
	size_t cap = 0;

	if (!v || ++ps->depth > JSON_MAX_DEPTH)
		return fail(ps, "nested too deep"), v;
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return v;
	}
	for (;;) {
		if (grow(ps, v, &cap) != 0)
			return v;
		skip_space(ps);
		if (type == JSON_OBJECT) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "a name expected"), v;
			if (!(v->names[v->n] = string(ps)))
				return v;
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(v->names[v->n]);
				return fail(ps, "':' expected"), v;
			}
			ps->p++;
		}
		m = value(ps);
		v->v[v->n++] = m;
		if (!m)
			return v;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p >= ps->end || *ps->p != close)
			return fail(ps, "',' or '%c' expected", close), v;
		ps->p++;
		ps->depth--;
		if (type == JSON_OBJECT)
			names_unique(ps, v);
		return v;
	}
}

static struct json *value(struct parser *ps)
{
	struct json *v;

	skip_space(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end of input"), NULL;
	switch (*ps->p) {
	case '{':
		return container(ps, JSON_OBJECT);
	case '[':
		return container(ps, JSON_ARRAY);
	case '"':
		if (!(v = made(ps, JSON_STRING)))
			return NULL;
		v->s = string(ps);
		return v;
	case 't':
		return word(ps, "true", JSON_TRUE);
	case 'f':
		return word(ps, "false", JSON_FALSE);
	case 'n':
		return word(ps, "null", JSON_NULL);
	default:
		return number(ps);
	}
}

struct json *json_parse(const char *text, size_t len, char *why, size_t size)
{
	struct parser ps = {.p = (const unsigned char *)text, .start = (const unsigned char *)text,
			    .end = (const unsigned char *)text + len, .why = why, .size = size};
	struct json *v = value(&ps);

	skip_space(&ps);
	if (!ps.failed && ps.p < ps.end)
		fail(&ps, "end of input expected");
	if (!ps.failed)
		return v;
	json_free(v);
	return NULL;
}

void json_free(struct json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(v->v[i]);
		if (v->names)
			free(v->names[i]);
	}
	free(v->v);
	free(v->names);
	free(v->s);
	free(v);
}

const struct json *json_get(const struct json *obj, const char *name)
{
	for (size_t i = 0; obj && obj->type == JSON_OBJECT && i < obj->n; i++)
		if (strcmp(obj->names[i], name) == 0)
			return obj->v[i];
	return NULL;
}

const struct json *json_at(const struct json *array, size_t i)
{
	return array && array->type == JSON_ARRAY && i < array->n ? array->v[i] : NULL;
}
