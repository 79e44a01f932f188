/* SPDX-License-Identifier: MIT */
/* openclose.c -- open and close one file N times: the cost of interposing
 * open, which every program pays whether it syncs or not.
 * Usage: openclose FILE N */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 200000;

	for (long i = 0; i < n; i++) {
		int fd = open(argv[1], O_RDONLY);

		if (fd < 0)
			return 1;
		close(fd);
	}
	return 0;
}
