/* SPDX-License-Identifier: MIT */
/* json.c -- the project's JSON (common/json.h): what the writer makes
 * reads back the same, and the reader refuses every document a strict
 * reader of untrusted reports must (RFC 8259, and no duplicate names). */
#define _GNU_SOURCE 1
#include "common/json.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

static struct json *parse(const char *text, size_t len, char *why)
{
	return json_parse(text, len, why, 200);
}

/* Refused, with `reason` in the message. */
static void refused(const char *text, size_t len, const char *reason)
{
	char why[200] = "";
	struct json *v = parse(text, len, why);

	CHECK(v == NULL);
	if (!strstr(why, reason))
		fprintf(stderr, "json: %.40s: \"%s\", not \"%s\"\n", text, why, reason);
	CHECK(strstr(why, reason) != NULL);
	json_free(v);
}

#define REFUSED(lit, reason) refused(lit, sizeof(lit) - 1, reason)

static void test_refused(void)
{
	REFUSED("{\"a\": 1, \"b\": 2, \"a\": 3}", "duplicate name \"a\"");
	REFUSED("\"x\\u0000y\"", "\\u0000");
	REFUSED("\"\xff\"", "invalid UTF-8");
	REFUSED("\"\xc0\x80\"", "invalid UTF-8");
	REFUSED("\"\xed\xa0\x80\"", "invalid UTF-8");
	REFUSED("\"\xe2\x82", "unterminated");
	REFUSED("\"\xe2\x82\"", "invalid UTF-8");
	REFUSED("\"\\ud800\"", "surrogate");
	REFUSED("\"\\udc00\\ud800\"", "surrogate");
	REFUSED("\"\\ud800\\u0041\"", "surrogate");
	REFUSED("\"\\u12g4\"", "\\u escape");
	REFUSED("\"\\x\"", "invalid escape");
	REFUSED("\"a\tb\"", "control character");
	REFUSED("9223372036854775808", "out of range");
	REFUSED("-9223372036854775809", "out of range");
	REFUSED("1e400", "out of range");
	REFUSED("{} x", "end of input expected");
	REFUSED("[1,]", "invalid number");
	REFUSED("{\"a\"}", "':' expected");
	REFUSED("{\"a\":1,}", "a name expected");
	REFUSED("{1:2}", "a name expected");
	REFUSED("[1 2]", "',' or ']' expected");
	REFUSED("01", "end of input expected");
	REFUSED("1.", "invalid number");
	REFUSED(".5", "invalid number");
	REFUSED("-", "invalid number");
	REFUSED("+1", "invalid number");
	REFUSED("1e", "invalid number");
	REFUSED("NaN", "invalid number");
	REFUSED("tru", "invalid token");
	REFUSED("", "unexpected end");
	REFUSED("[", "unexpected end");
	REFUSED("\"abc", "unterminated");
	REFUSED("{\n  \"a\": x}", "line 2, column 8");
}

static void test_depth(void)
{
	char *deep = malloc(2 * JSON_MAX_DEPTH + 4);
	char why[200];
	struct json *v;

	for (int n = JSON_MAX_DEPTH; n <= JSON_MAX_DEPTH + 1; n++) {
		memset(deep, '[', (size_t)n);
		memset(deep + n, ']', (size_t)n);
		v = parse(deep, 2 * (size_t)n, why);
		CHECK((v != NULL) == (n == JSON_MAX_DEPTH));
		CHECK(v || strstr(why, "nested too deep"));
		json_free(v);
	}
	free(deep);
}

/* Names and values as the writer writes them, read back. */
static void test_round_trip(void)
{
	char *text = NULL, why[200];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct jw w;
	struct json *v;
	const struct json *a;

	jw_start(&w, f, 2);
	jw_object(&w, NULL);
	jw_string(&w, "name", "a \"quoted\"\\ line\n\x01\xff\xe2\x82\xac end");
	jw_count(&w, "big", ~0ULL);
	jw_int(&w, "neg", -5);
	jw_real(&w, "share", 100, 4);
	jw_real(&w, "none", 0.0 / 0.0, 4);
	jw_array(&w, "list");
	jw_bool(&w, NULL, 1);
	jw_null(&w, NULL);
	jw_object(&w, NULL);
	jw_end(&w);
	jw_end(&w);
	jw_array(&w, "empty");
	CHECK(jw_finish(&w) == 0);
	fclose(f);
	v = parse(text, len, why);
	CHECK(v && v->type == JSON_OBJECT && v->n == 7);
	if (!v)
		return (void)fprintf(stderr, "json: %s\n%s\n", why, text);
	CHECK(!strcmp(json_get(v, "name")->s, "a \"quoted\"\\ line\n\x01\xef\xbf\xbd\xe2\x82\xac end"));
	CHECK(json_get(v, "big")->i == 9223372036854775807LL);
	CHECK(json_get(v, "neg")->i == -5);
	CHECK(json_get(v, "share")->type == JSON_REAL && json_get(v, "share")->real == 100);
	CHECK(json_get(v, "none")->type == JSON_NULL);
	a = json_get(v, "list");
	CHECK(a->n == 3 && json_at(a, 0)->type == JSON_TRUE && json_at(a, 1)->type == JSON_NULL &&
	      json_at(a, 2)->type == JSON_OBJECT && json_at(a, 3) == NULL);
	CHECK(json_get(v, "empty")->type == JSON_ARRAY && json_get(v, "empty")->n == 0);
	CHECK(json_get(v, "missing") == NULL && json_get(a, "name") == NULL);
	json_free(v);
	free(text);
}

/* A surrogate pair is one character; every escape JSON has is read. */
static void test_escapes(void)
{
	static const char text[] = "\"\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"";
	char why[200];
	struct json *v = parse(text, sizeof(text) - 1, why);

	CHECK(v && !strcmp(v->s, "\xf0\x9f\x98\x80\"\\/\b\f\n\r\t\xc3\xa9"));
	json_free(v);
}

/* An object of many members: names checked once it is read, not each
 * against all before it (which would take minutes here). */
static void test_many_members(void)
{
	size_t n = 200000, len = 1;
	char *text = malloc(n * 24 + 16), why[200];
	struct json *v;

	text[0] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "%s\"k%zu\":%zu", i ? "," : "", i, i);
	strcpy(text + len, "}");
	v = parse(text, len + 1, why);
	CHECK(v && v->n == n && json_get(v, "k199999")->i == 199999);
	json_free(v);
	strcpy(text + len, ",\"k7\":1}");
	v = parse(text, strlen(text), why);
	CHECK(!v && strstr(why, "duplicate name \"k7\""));
	json_free(v);
	free(text);
}

int main(void)
{
	test_refused();
	test_depth();
	test_round_trip();
	test_escapes();
	test_many_members();
	if (failures)
		fprintf(stderr, "json: %d check(s) failed\n", failures);
	else
		printf("json: all checks passed\n");
	return failures != 0;
}
