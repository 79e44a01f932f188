/* SPDX-License-Identifier: MIT */
/* closeedge.c -- the close wrappers (libeatmydata/close.c) on what a program
 * may hand them once a recorded request has made the library keep
 * identities: fclose of a stream with no descriptor leaves errno as libc
 * does (0 here), and closedir(NULL) fails with EINVAL as glibc's does.
 * Prints "fclose R ERRNO" and "closedir R ERRNO".
 * Usage: closeedge FILE */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[64];
	DIR *none = NULL;
	FILE *m;
	int fd, r;

	if (argc != 2 || (fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0)
		return 2;
	fsync(fd); /* a recorded request: the table of identities is made */
	close(fd);
	if (!(m = fmemopen(buf, sizeof(buf), "w")))
		return 3;
	errno = 0;
	r = fclose(m);
	printf("fclose %d %d\n", r, errno);
	fflush(stdout);
	__asm__("" : "+r"(none)); /* closedir is declared nonnull */
	errno = 0;
	r = closedir(none);
	printf("closedir %d %d\n", r, errno);
	return 0;
}
