/* SPDX-License-Identifier: MIT */
/* glob.c -- the --only patterns: `*`, `?` and `[...]` as in the shell.
 *
 * fnmatch(3) may allocate in a multibyte locale, and this runs inside any
 * program at any time, so the library has its own small matcher.
 */
#define _GNU_SOURCE 1 /* strchrnul */
#include "globs.h"

#include <string.h>

/* Match one bracket expression at *pat against c; advance *pat past it. */
static int match_class(const char **pat, char c)
{
	const char *p = *pat + 1;
	int negate = (*p == '!' || *p == '^');
	int hit = 0;

	if (negate)
		p++;
	do {
		if (p[1] == '-' && p[2] && p[2] != ']') {
			hit |= (unsigned char)c >= (unsigned char)p[0] &&
			       (unsigned char)c <= (unsigned char)p[2];
			p += 3;
		} else {
			hit |= *p++ == c;
		}
	} while (*p && *p != ']');
	*pat = *p ? p + 1 : p;
	return hit != negate;
}

/* The element at pat (one character, '?' or a bracket expression) against
 * c: the element after it, or NULL when c does not match. */
static const char *match_element(const char *pat, const char *pat_end, char c)
{
	if (*pat == '[' && memchr(pat + 1, ']', pat_end - pat - 1))
		return match_class(&pat, c) ? pat : NULL;
	return *pat == '?' || *pat == c ? pat + 1 : NULL;
}

/* Does str match pat, which ends at pat_end?  On a mismatch, only the last
 * '*' seen takes one more character: what an earlier '*' could take instead
 * the last one can take too, so trying it again is wasted.  That keeps the
 * match O(len(pat) * len(str)) where recursion is exponential in the '*'s,
 * and this runs at every start of every program of the tree. */
static int match(const char *pat, const char *pat_end, const char *str)
{
	const char *star = NULL, *resume = NULL, *next;

	while (*str) {
		if (pat < pat_end && *pat == '*') {
			star = ++pat;
			resume = str;
			continue;
		}
		next = pat < pat_end ? match_element(pat, pat_end, *str) : NULL;
		if (next) {
			pat = next;
			str++;
		} else if (star) {
			pat = star;
			str = ++resume;
		} else {
			return 0;
		}
	}
	while (pat < pat_end && *pat == '*')
		pat++;
	return pat == pat_end;
}

/* A glob with a '/' is matched against the whole path, others against its
 * last component. */
int emd_glob_list_match(const char *globs, const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	while (*globs) {
		const char *end = strchrnul(globs, ',');
		const char *subject = memchr(globs, '/', end - globs) ? name : base;

		if (end > globs && match(globs, end, subject))
			return 1;
		globs = *end ? end + 1 : end;
	}
	return 0;
}
