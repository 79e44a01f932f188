/* SPDX-License-Identifier: MIT */
/* json.c -- JSON written as it is made (json.h).  Errors of the stream are
 * left to jw_finish (ferror), so that a report's many members need no check
 * each.
 */
#include "common/json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int json_utf8_length(const unsigned char *s)
{
	unsigned c = s[0], n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (unsigned i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return (int)n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * each byte outside well-formed UTF-8 as U+FFFD. */
static void quoted(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	putc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\') {
			putc('\\', f);
			putc(*s, f);
		} else if (*s == '\n') {
			fputs("\\n", f);
		} else if (*s == '\t') {
			fputs("\\t", f);
		} else if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s);
		} else if (*s < 0x80) {
			putc(*s, f);
		} else if ((n = json_utf8_length(s)) > 0) {
			fwrite(s, 1, (size_t)n, f);
			s += n - 1;
		} else {
			fputs("\xef\xbf\xbd", f);
		}
	}
	putc('"', f);
}

void jw_start(struct jw *w, FILE *f, int indent)
{
	*w = (struct jw){.f = f, .indent = indent};
}

static void newline(struct jw *w)
{
	if (w->indent)
		fprintf(w->f, "\n%*s", w->indent * w->depth, "");
}

/* Before a value: the separator, the line, the member's name. */
static void member(struct jw *w, const char *key)
{
	if (w->depth) {
		if (!w->empty)
			putc(',', w->f);
		newline(w);
	}
	w->empty = 0;
	if (key) {
		quoted(w->f, key);
		fputs(w->indent ? ": " : ":", w->f);
	}
}

static void open_container(struct jw *w, const char *key, char bracket)
{
	member(w, key);
	putc(bracket, w->f);
	if (w->depth < JW_MAX_DEPTH)
		w->open[w->depth] = bracket;
	w->depth++;
	w->empty = 1;
}

void jw_object(struct jw *w, const char *key)
{
	open_container(w, key, '{');
}

void jw_array(struct jw *w, const char *key)
{
	open_container(w, key, '[');
}

void jw_end(struct jw *w)
{
	if (w->depth <= 0)
		return;
	w->depth--;
	if (!w->empty)
		newline(w);
	w->empty = 0;
	putc(w->depth < JW_MAX_DEPTH && w->open[w->depth] == '{' ? '}' : ']', w->f);
}

void jw_string(struct jw *w, const char *key, const char *s)
{
	member(w, key);
	quoted(w->f, s);
}

void jw_int(struct jw *w, const char *key, long long v)
{
	member(w, key);
	fprintf(w->f, "%lld", v);
}

void jw_count(struct jw *w, const char *key, unsigned long long v)
{
	jw_int(w, key, v > LLONG_MAX ? LLONG_MAX : (long long)v);
}

void jw_bool(struct jw *w, const char *key, int v)
{
	member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}

/* A real reads as one: "100.0", not the integer "100". */
void jw_real(struct jw *w, const char *key, double v, int digits)
{
	char buf[64];

	if (!isfinite(v)) {
		jw_null(w, key);
		return;
	}
	member(w, key);
	snprintf(buf, sizeof(buf), "%.*g", digits, v);
	if (!strpbrk(buf, ".eE"))
		strcat(buf, ".0");
	fputs(buf, w->f);
}

int jw_finish(struct jw *w)
{
	while (w->depth > 0)
		jw_end(w);
	putc('\n', w->f);
	errno = 0;
	if (fflush(w->f) == 0 && !ferror(w->f))
		return 0;
	if (!errno)
		errno = EIO; /* a write failed before: its errno is gone */
	return -1;
}
