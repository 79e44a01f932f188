/* SPDX-License-Identifier: MIT */
/* check.h -- CHECK for the C unit tests: counts a failure and says
 * file:line, and stays on under NDEBUG. */
#ifndef EMD_TESTS_CHECK_H
#define EMD_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			failures++;                                                        \
		}                                                                          \
	} while (0)

#endif
