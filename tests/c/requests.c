/* SPDX-License-Identifier: MIT */
/* requests.c -- prints the request table (include/requests.h) for the
 * pytest suite, which builds its lists of kernel events and of requests to
 * try from it: one line per row, "name nr nr32 arg arg32 field bits test
 * eat", the test and eat columns by name. */
#define _GNU_SOURCE 1
#include <stdio.h>

#include "requests.h"

EMD_REQUEST_TABLE(requests);

static const char *const tests[] = {"always", "fd", "bits", "memory", "write"};
static const char *const eats[] = {"none",    "fd_sync", "fs_sync", "all_sync",    "range",
				   "mapping", "open",    "open_handle", "write", "uring"};

int main(void)
{
	_Static_assert(sizeof(eats) / sizeof(*eats) == EMD_NEAT, "a name per handler");
	for (int i = 0; i < EMD_NREQUESTS; i++) {
		const struct emd_request *r = &requests[i];

		printf("%s %ld %ld %d %d %s %#x %s %s\n", r->name, r->nr, r->nr32, r->arg,
		       r->arg32, r->field, r->bits, tests[r->test], eats[r->eat]);
	}
	return 0;
}
