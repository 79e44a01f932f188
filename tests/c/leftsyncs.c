/* SPDX-License-Identifier: MIT */
/* leftsyncs.c -- the requests eatmydata's supervisor eats only when allowed
 * to make them itself, beside those it always eats: 4 opens with O_SYNC,
 * each written once (the kernel syncs the write), 2 writes with RWF_DSYNC,
 * and 8 fsync-family calls (4 fsync, 4 fdatasync).  Natively 14 syncs;
 * under eatmydata's default (--on-behalf=off) the 6 of the first two kinds.
 * Usage: leftsyncs DIR */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct iovec iov = {(void *)"data", 4};
	char path[4200];
	int fd;

	if (argc != 2)
		return 2;
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/sync%d", argv[1], i);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_SYNC, 0644)) < 0 ||
		    write(fd, "data", 4) != 4 || close(fd) != 0)
			return 1;
	}
	snprintf(path, sizeof(path), "%s/plain", argv[1]);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		return 1;
	for (int i = 0; i < 2; i++)
		if (pwritev2(fd, &iov, 1, 4 * i, RWF_DSYNC) != 4)
			return 1;
	for (int i = 0; i < 8; i++)
		if ((i % 2 ? fdatasync(fd) : fsync(fd)) != 0)
			return 1;
	return close(fd) != 0;
}
