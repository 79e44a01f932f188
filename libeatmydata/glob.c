/* SPDX-License-Identifier: MIT */
/* glob.c -- the --only patterns: `*`, `?` and `[...]` as in the shell.
 *
 * fnmatch(3) may allocate in a multibyte locale, and this runs inside any
 * program at any time, so the library has its own small matcher.
 */
#include "emd.h"

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

/* Does str match pat, which ends at pat_end? */
static int match(const char *pat, const char *pat_end, const char *str)
{
	while (pat < pat_end) {
		if (*pat == '*') {
			for (pat++;; str++) {
				if (match(pat, pat_end, str))
					return 1;
				if (!*str)
					return 0;
			}
		}
		if (!*str)
			return 0;
		if (*pat == '[' && memchr(pat + 1, ']', pat_end - pat - 1)) {
			if (!match_class(&pat, *str++))
				return 0;
			continue;
		}
		if (*pat != '?' && *pat != *str)
			return 0;
		pat++;
		str++;
	}
	return !*str;
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
