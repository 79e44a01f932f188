/* SPDX-License-Identifier: MIT */
/* problems.c -- a list of reasons, each given once. */
#define _GNU_SOURCE 1
#include "crashtest/problems.h"
#include "common/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past this many, one more reason would only hide the first ones. */
#define MAX_PROBLEMS 64

void problem(struct problems *p, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i], s))
			return free(s);
	if (p->n == MAX_PROBLEMS)
		return free(s);
	if (!(p->v = realloc(p->v, (p->n + 1) * sizeof(*p->v))))
		die("out of memory");
	p->v[p->n++] = s;
}

void problems_free(struct problems *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	*p = (struct problems){0};
}
