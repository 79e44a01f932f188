/* SPDX-License-Identifier: MIT */
/* lines.c -- print the numbers 1 to N, one a line, on standard output:
 *   lines printf N    through stdio (printf), whose writes glibc makes
 *                     internally, past any preload
 *   lines write N     the same bytes, each line a write(2) of its own
 *   lines exit N      as printf, but what stdout holds at the end is left
 *                     to libc's exit to flush (after every destructor)
 * crashtest's tests redirect it to a file of the copy (lines printf N > f)
 * and compare the two ways, dynamic and static.
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char line[32];
	long n = argc == 3 ? atol(argv[2]) : -1;

	if (n < 0 || (strcmp(argv[1], "printf") && strcmp(argv[1], "write") &&
		      strcmp(argv[1], "exit")))
		return fprintf(stderr, "usage: lines printf|write|exit N\n"), 2;
	for (long i = 1; i <= n; i++) {
		int k = snprintf(line, sizeof(line), "%ld\n", i);

		if (argv[1][0] != 'w' ? printf("%s", line) != k : write(1, line, (size_t)k) != k)
			return perror("lines"), 1;
	}
	if (argv[1][0] == 'e')
		return 0;
	return fflush(stdout) == 0 ? 0 : (perror("lines"), 1);
}
