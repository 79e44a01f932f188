/* SPDX-License-Identifier: MIT */
/* junit.c -- JUnit XML (junit.h). */
#define _GNU_SOURCE 1
#include "common/junit.h"
#include "common/common.h"
#include "common/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* s as XML text or an attribute's value. */
static void xml(FILE *f, const char *s)
{
	while (s && *s) {
		unsigned char c = (unsigned char)*s;
		int n = c < 0x80 ? 1 : json_utf8_length((const unsigned char *)s);

		if (c == '&' || c == '<' || c == '>' || c == '"' || c == '\'')
			fprintf(f, "&#%d;", c);
		else if (c < 0x20 && c != '\t' && c != '\n')
			fputc('?', f);
		else if (n == 0)
			fputs("\xef\xbf\xbd", f); /* U+FFFD */
		else
			fwrite(s, 1, (size_t)n, f);
		s += n ? n : 1;
	}
}

void junit_init(struct junit *j)
{
	*j = (struct junit){0};
	if (!(j->cases = open_memstream(&j->text, &j->len)))
		die("out of memory");
}

void junit_case(struct junit *j, const char *classname, const char *name)
{
	fputs("    <testcase classname=\"", j->cases);
	xml(j->cases, classname);
	fputs("\" name=\"", j->cases);
	xml(j->cases, name);
	fputs("\">\n", j->cases);
	j->failed = j->erred = j->skips = 0;
	j->tests++;
}

void junit_outcome(struct junit *j, const char *kind, const char *message, const char *text)
{
	fprintf(j->cases, "      <%s message=\"", kind);
	xml(j->cases, message);
	fprintf(j->cases, "\" type=\"%s\">", kind);
	xml(j->cases, text);
	fprintf(j->cases, "</%s>\n", kind);
	j->failed |= !strcmp(kind, "failure");
	j->erred |= !strcmp(kind, "error");
	j->skips |= !strcmp(kind, "skipped");
}

void junit_case_end(struct junit *j)
{
	fputs("    </testcase>\n", j->cases);
	j->failures += j->failed;
	j->errors += j->erred && !j->failed;
	j->skipped += j->skips && !j->failed && !j->erred;
}

/* The suite's head: its name, counts, time, when, properties. */
static void suite_head(FILE *f, const struct junit *j, const char *suite, double seconds,
		       const char *const *properties)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", gmtime_r(&now, &tm));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"%zu\" "
		"failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n  <testsuite "
		"name=\"", j->tests, j->failures, j->errors, j->skipped, seconds);
	xml(f, suite);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
		"time=\"%.3f\" timestamp=\"%s\">\n", j->tests, j->failures, j->errors, j->skipped,
		seconds, when);
	if (!properties || !*properties)
		return;
	fputs("    <properties>\n", f);
	for (; properties[0] && properties[1]; properties += 2) {
		fputs("      <property name=\"", f);
		xml(f, properties[0]);
		fputs("\" value=\"", f);
		xml(f, properties[1]);
		fputs("\"/>\n", f);
	}
	fputs("    </properties>\n", f);
}

int junit_write(struct junit *j, const char *path, const char *suite, double seconds,
		const char *const *properties)
{
	FILE *f = fopen(path, "we");
	int r;

	if (fclose(j->cases) != 0)
		die("out of memory");
	j->cases = NULL;
	if (!f)
		return -1;
	suite_head(f, j, suite, seconds, properties);
	fwrite(j->text, 1, j->len, f);
	fputs("  </testsuite>\n</testsuites>\n", f);
	r = fflush(f) != 0 || ferror(f) ? -1 : 0;
	if (fclose(f) != 0)
		r = -1;
	free(j->text);
	j->text = NULL;
	return r;
}
