/* SPDX-License-Identifier: MIT */
/* junit.h -- test results as JUnit XML, the format CI systems show as
 * tests (Jenkins, GitLab, GitHub Actions' reporters, CircleCI, Buildkite):
 * one <testsuite> of <testcase>s, each passed, failed, in error or
 * skipped.  crashtest makes a case of each crash point, `syncstat compare`
 * one of each limit.
 *
 * Text is written as XML 1.0 allows: markup characters as entities, a
 * control character other than tab and newline as '?', bytes that are not
 * UTF-8 as U+FFFD.  The cases are kept in memory until the document is
 * written: the suite's counts come first in it.
 */
#ifndef EMD_JUNIT_H
#define EMD_JUNIT_H

#include <stddef.h>
#include <stdio.h>

struct junit {
	FILE *cases; /* the cases so far, into text */
	char *text;
	size_t len;
	size_t tests, failures, errors, skipped;
	int failed, erred, skips; /* of the open case */
};

void junit_init(struct junit *j);
/* A new case; those of one class are shown together. */
void junit_case(struct junit *j, const char *classname, const char *name);
/* What came of the open case: "failure", "error" or "skipped", a message
 * (one line) and any text (several); none of these: it passed. */
void junit_outcome(struct junit *j, const char *kind, const char *message, const char *text);
void junit_case_end(struct junit *j);

/* The document, at path (created or replaced, as a shell's redirection
 * would): a suite named `suite` that took `seconds`, with properties
 * (name, value, ..., NULL) and the cases; 0, or -1 with errno. */
int junit_write(struct junit *j, const char *path, const char *suite, double seconds,
		const char *const *properties);

#endif
