/* SPDX-License-Identifier: MIT */
/* crashy.c -- replace a file's contents by writing a temporary file and
 * renaming it over the real one, as editors and config tools do:
 *   crashy bad FILE TEXT      no fsync at all
 *   crashy dironly FILE TEXT  fsync of the directory only, after the rename
 *   crashy good FILE TEXT     fsync the file, rename, fsync the directory
 *   crashy truncate FILE TEXT rewrite FILE in place (O_TRUNC), no fsync
 * crashtest's tests run it under every crash point.
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

static void sync_dir(void)
{
	int dir = open(".", O_RDONLY | O_DIRECTORY);

	if (dir < 0 || fsync(dir) != 0)
		fail("fsync .");
	close(dir);
}

int main(int argc, char **argv)
{
	char tmp[4096];
	int fd;

	if (argc != 4)
		return fprintf(stderr, "usage: crashy bad|dironly|good|truncate FILE TEXT\n"), 2;
	if (!strcmp(argv[1], "truncate")) {
		fd = open(argv[2], O_WRONLY | O_TRUNC);
		if (fd < 0 || write(fd, argv[3], strlen(argv[3])) != (ssize_t)strlen(argv[3]))
			fail(argv[2]);
		return close(fd) != 0 || printf("replaced\n") < 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[2]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, argv[3], strlen(argv[3])) != (ssize_t)strlen(argv[3]))
		fail(tmp);
	if (!strcmp(argv[1], "good") && fsync(fd) != 0)
		fail("fsync");
	if (close(fd) != 0 || rename(tmp, argv[2]) != 0)
		fail("rename");
	if (strcmp(argv[1], "bad") != 0)
		sync_dir();
	printf("replaced\n");
	return 0;
}
