/* SPDX-License-Identifier: MIT */
/* problems.h -- reasons, collected once each: why a state is unknown, what
 * could not be explored.  Each is one line of text, shown escaped.
 */
#ifndef CT_PROBLEMS_H
#define CT_PROBLEMS_H

#include <stddef.h>

struct problems {
	char **v;
	size_t n;
};

/* Add a reason, unless the same text is there already. */
void problem(struct problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void problems_free(struct problems *p);

#endif
