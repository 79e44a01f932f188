/* SPDX-License-Identifier: MIT */
/* vforksync.c -- a vfork child that syncs before it leaves (in its
 * parent's memory), then the parent syncs 5 times: the record must not name
 * the parent after its child (libeatmydata/record.c learns its process at
 * start and fork, never at a first record, which the child would make in
 * memory it shares).  Prints "parent PID".
 * Usage: vforksync FILE */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = argc == 2 ? open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600) : -1;
	pid_t child;

	if (fd < 0)
		return 2;
	child = vfork();
	if (child == 0) {
		fsync(fd);
		_exit(0);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child)
		return 3;
	for (int i = 0; i < 5; i++)
		fsync(fd);
	printf("parent %d\n", (int)getpid());
	return 0;
}
