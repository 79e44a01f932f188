/* SPDX-License-Identifier: MIT */
/* stdiosync.c -- write a file through stdio and glibc's temporary files,
 * whose opens and writes glibc makes internally, past any preload:
 *   stdiosync plain FILE TEXT    fopen "w", fputs, fclose (as git writes
 *                                COMMIT_EDITMSG)
 *   stdiosync fsync FILE TEXT    the same with fflush and fsync before fclose
 *   stdiosync temp TEMPLATE TEXT mkstemp, fdopen, fputs, fclose
 *   stdiosync tempdir TEMPLATE - mkdtemp
 * then prints "written";
 *   stdiosync stdout - TEXT      prints TEXT, fflush, fsync(1), then "more"
 *                                (a shell redirected standard output)
 * crashtest's tests run it under every crash point.
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

static FILE *open_file(const char *mode, char *path)
{
	FILE *f;
	int fd;

	if (!strcmp(mode, "tempdir"))
		return mkdtemp(path) ? NULL : (fail("mkdtemp"), NULL);
	if (strcmp(mode, "temp"))
		return (f = fopen(path, "w")) ? f : (fail("fopen"), NULL);
	if ((fd = mkstemp(path)) < 0)
		fail("mkstemp");
	return (f = fdopen(fd, "w")) ? f : (fail("fdopen"), NULL);
}

int main(int argc, char **argv)
{
	FILE *f;

	if (argc != 4)
		return fprintf(stderr, "usage: stdiosync MODE FILE TEXT\n"), 2;
	if (!strcmp(argv[1], "stdout")) {
		printf("%s\n", argv[3]);
		if (fflush(stdout) != 0 || fsync(STDOUT_FILENO) != 0)
			fail("fsync stdout");
		printf("more\n");
		return 0;
	}
	f = open_file(argv[1], argv[2]);
	if (f && fprintf(f, "%s\n", argv[3]) < 0)
		fail("fprintf");
	if (f && !strcmp(argv[1], "fsync") && (fflush(f) != 0 || fsync(fileno(f)) != 0))
		fail("fsync");
	if (f && fclose(f) != 0)
		fail("fclose");
	printf("written\n");
	return 0;
}
