/* SPDX-License-Identifier: MIT */
/* text.c -- escaping what the run named or printed. */
#define _GNU_SOURCE 1
#include "crashtest/text.h"
#include "common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at s (n bytes left), or 0:
 * no overlong form, no surrogate, nothing past U+10FFFF. */
static size_t utf8_length(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 :
		     s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return len;
}

char *escape(const char *s, size_t n, int lines)
{
	char *out = malloc(4 * n + 1), *p = out;
	const unsigned char *c = (const unsigned char *)s;

	if (!out)
		die("out of memory");
	for (size_t i = 0, len; i < n; i += len) {
		len = utf8_length(c + i, n - i);
		if (c[i] == '\n' && lines)
			*p++ = '\n';
		else if (c[i] == '\\' || c[i] == '\n' || c[i] == '\t')
			p += sprintf(p, "\\%c", c[i] == '\n' ? 'n' : c[i] == '\t' ? 't' : '\\');
		else if (!len || c[i] < 0x20 || c[i] == 0x7f || (len == 2 && c[i] == 0xc2 && c[i + 1] < 0xa0))
			p += sprintf(p, "\\x%02x", c[i]), len = 1; /* C1 controls too */
		else
			memcpy(p, c + i, len), p += len;
	}
	*p = '\0';
	return out;
}

char *escape1(const char *s)
{
	return escape(s ? s : "", s ? strlen(s) : 0, 0);
}
