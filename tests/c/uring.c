/* SPDX-License-Identifier: MIT */
/* uring.c -- can this process set up an io_uring?  Prints the errno name
 * io_uring_setup fails with, or "ok". */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	char params[120] = {0};
	long fd = syscall(SYS_io_uring_setup, 4, params);

	puts(fd >= 0 ? "ok" : strerrorname_np(errno));
	return 0;
}
