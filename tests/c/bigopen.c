/* SPDX-License-Identifier: MIT */
/* bigopen.c -- an open(2) made with the system call itself, with exactly
 * the flags given (no O_LARGEFILE of libc's), then a byte written through
 * it: built 32-bit and static, it is a program without large-file support,
 * whose O_SYNC opens the supervisor answers (test_supervisor_attack.py).
 *
 * Usage: bigopen FILE FLAGS (octal); prints "open ERR size N", N the
 * file's size afterwards. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat64 st;
	long fd;

	if (argc != 3)
		return fprintf(stderr, "usage: bigopen FILE FLAGS\n"), 2;
	fd = syscall(SYS_open, argv[1], (int)strtol(argv[2], NULL, 8), 0644);
	printf("open %s", fd < 0 ? strerrorname_np(errno) : "ok");
	if (fd >= 0 && write((int)fd, "x", 1) != 1)
		printf(" write %s", strerrorname_np(errno));
	if (stat64(argv[1], &st) == 0)
		printf(" size %lld", (long long)st.st_size);
	printf("\n");
	return 0;
}
