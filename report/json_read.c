/* SPDX-License-Identifier: MIT */
/* json_read.c -- a recursive-descent JSON reader (RFC 8259), for reports
 * read back by `syncstat compare`.  Strings are decoded to UTF-8; \u0000,
 * which no name in a report can hold, is refused. */
#include "launch/common.h"
#include "json_read.h"

#include <stdlib.h>
#include <string.h>

struct parser {
	const char *file, *start, *p;
	int depth;
};

static noreturn void fail(const struct parser *ps, const char *why)
{
	die("%s: not a JSON report (byte %zu: %s)", ps->file,
	    (size_t)(ps->p - ps->start), why);
}

static void *grow(void *p, size_t n, size_t size)
{
	if (n && n > ~(size_t)0 / 2 / size)
		die("out of memory");
	if (!(p = realloc(p, (n ? 2 * n : 4) * size)))
		die("out of memory");
	return p;
}

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static void parse_value(struct parser *ps, struct json *v);

static unsigned hex4(struct parser *ps)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++, ps->p++) {
		char c = *ps->p;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (c | 0x20) - 'a' + 10;
		else
			fail(ps, "a bad \\u escape");
	}
	return v;
}

/* \uXXXX, or a surrogate pair of them, as UTF-8. */
static char *put_escape(struct parser *ps, char *o)
{
	unsigned c = hex4(ps);

	if (c >= 0xdc00 && c <= 0xdfff)
		fail(ps, "a lone low surrogate");
	if (c >= 0xd800 && c <= 0xdbff) {
		unsigned lo;

		if (ps->p[0] != '\\' || ps->p[1] != 'u')
			fail(ps, "a lone high surrogate");
		ps->p += 2;
		if ((lo = hex4(ps)) < 0xdc00 || lo > 0xdfff)
			fail(ps, "a lone high surrogate");
		c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (c == 0)
		fail(ps, "\\u0000 in a string");
	if (c < 0x80) {
		*o++ = (char)c;
	} else if (c < 0x800) {
		*o++ = (char)(0xc0 | c >> 6);
		*o++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*o++ = (char)(0xe0 | c >> 12);
		*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	} else {
		*o++ = (char)(0xf0 | c >> 18);
		*o++ = (char)(0x80 | ((c >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	}
	return o;
}

/* A string's text: never longer decoded than written. */
static char *parse_string(struct parser *ps)
{
	const char *end = ps->p + 1;
	char *s, *o;

	while (*end && *end != '"')
		end += *end == '\\' && end[1] ? 2 : 1;
	if (!*end)
		fail(ps, "a string not closed");
	if (!(s = o = malloc((size_t)(end - ps->p))))
		die("out of memory");
	for (ps->p++; *ps->p != '"';) {
		unsigned char c = (unsigned char)*ps->p++;

		if (c < 0x20)
			fail(ps, "a control character in a string");
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		c = (unsigned char)*ps->p++;
		if (c == 'u')
			o = put_escape(ps, o);
		else if (strchr("\"\\/", c))
			*o++ = (char)c;
		else if (c && strchr("bfnrt", c))
			*o++ = "\b\f\n\r\t"[strchr("bfnrt", c) - "bfnrt"];
		else
			fail(ps, "a bad escape");
	}
	ps->p++;
	*o = '\0';
	return s;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static void parse_json_number(struct parser *ps, struct json *v)
{
	const char *q = ps->p;
	char *end;

	q += *q == '-';
	if (*q == '0')
		q++;
	else if (*q >= '1' && *q <= '9')
		q += strspn(q, "0123456789");
	else
		fail(ps, "not a value");
	if (*q == '.' && (q[1] < '0' || q[1] > '9'))
		fail(ps, "a bad number");
	if (*q == '.')
		q += 1 + strspn(q + 1, "0123456789");
	if (*q == 'e' || *q == 'E') {
		q += 1 + (q[1] == '+' || q[1] == '-');
		if (*q < '0' || *q > '9')
			fail(ps, "a bad number");
		q += strspn(q, "0123456789");
	}
	v->type = JSON_NUMBER;
	v->number = strtod(ps->p, &end);
	ps->p = q;
}

static int literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(ps->p, word, n) != 0)
		return 0;
	ps->p += n;
	return 1;
}

/* "[" already read: values until "]". */
static void parse_array(struct parser *ps, struct json *v)
{
	v->type = JSON_ARRAY;
	skip_space(ps);
	if (*ps->p == ']') {
		ps->p++;
		return;
	}
	for (;;) {
		if ((v->n & (v->n - 1)) == 0 && v->n >= 4)
			v->items = grow(v->items, v->n, sizeof(*v->items));
		else if (!v->n)
			v->items = grow(NULL, 0, sizeof(*v->items));
		parse_value(ps, &v->items[v->n++]);
		skip_space(ps);
		if (*ps->p == ']')
			break;
		if (*ps->p++ != ',')
			fail(ps, "expected , or ] in an array");
	}
	ps->p++;
}

/* "{" already read: "name": value pairs until "}". */
static void parse_object(struct parser *ps, struct json *v)
{
	v->type = JSON_OBJECT;
	skip_space(ps);
	if (*ps->p == '}') {
		ps->p++;
		return;
	}
	for (;;) {
		if (v->n == 0 || ((v->n & (v->n - 1)) == 0 && v->n >= 4)) {
			v->items = grow(v->items, v->n, sizeof(*v->items));
			v->keys = grow(v->keys, v->n, sizeof(*v->keys));
		}
		skip_space(ps);
		if (*ps->p != '"')
			fail(ps, "expected a member's name");
		v->keys[v->n] = parse_string(ps);
		skip_space(ps);
		if (*ps->p++ != ':')
			fail(ps, "expected : after a member's name");
		parse_value(ps, &v->items[v->n++]);
		skip_space(ps);
		if (*ps->p == '}')
			break;
		if (*ps->p++ != ',')
			fail(ps, "expected , or } in an object");
	}
	ps->p++;
}

static void parse_value(struct parser *ps, struct json *v)
{
	*v = (struct json){JSON_NULL};
	skip_space(ps);
	if (++ps->depth > 64)
		fail(ps, "nested too deep");
	if (*ps->p == '{' && ps->p++)
		parse_object(ps, v);
	else if (*ps->p == '[' && ps->p++)
		parse_array(ps, v);
	else if (*ps->p == '"') {
		v->type = JSON_STRING;
		v->string = parse_string(ps);
	} else if (literal(ps, "true") || literal(ps, "false")) {
		v->type = JSON_BOOL;
		v->boolean = ps->p[-1] == 'e' && ps->p[-2] == 'u';
	} else if (!literal(ps, "null")) {
		parse_json_number(ps, v);
	}
	ps->depth--;
}

struct json *json_parse(const char *file, const char *text)
{
	struct parser ps = {file, text, text, 0};
	struct json *v = malloc(sizeof(*v));

	if (!v)
		die("out of memory");
	parse_value(&ps, v);
	skip_space(&ps);
	if (*ps.p)
		fail(&ps, "more after the value");
	return v;
}

const struct json *json_get(const struct json *obj, const char *key)
{
	for (size_t i = 0; obj && obj->type == JSON_OBJECT && i < obj->n; i++)
		if (strcmp(obj->keys[i], key) == 0)
			return &obj->items[i];
	return NULL;
}
