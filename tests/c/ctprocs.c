/* SPDX-License-Identifier: MIT */
/* ctprocs.c -- processes of one tree changing files at once: each of N
 * children appends a line to a file of its own and fdatasyncs it, M times
 * (the parent wrote and synced a file of its own first),
 * so that their crash points interleave (test_crashtest_attack.py: the
 * journal of the library's processes, and of the supervisor's, in the
 * order their points were numbered, at each point --at asks for).
 * Usage: ctprocs N M */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void appender(int p, int m)
{
	char name[16];
	int fd;

	snprintf(name, sizeof(name), "t%d", p);
	if ((fd = open(name, O_CREAT | O_WRONLY | O_APPEND, 0644)) < 0)
		_exit(1);
	for (int i = 0; i < m; i++)
		if (write(fd, "0123456789\n", 11) != 11 || fdatasync(fd) != 0)
			_exit(1);
	_exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 3, m = argc > 2 ? atoi(argv[2]) : 20, status, bad = 0;
	int fd = open("parent", O_CREAT | O_WRONLY, 0644);

	/* A change before the forks: the library has the journal open then,
	 * and each child must lock its own open file of it, not the parent's. */
	if (fd < 0 || write(fd, "p\n", 2) != 2 || fdatasync(fd) != 0)
		return 1;
	for (int p = 0; p < n; p++)
		if (fork() == 0)
			appender(p, m);
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	return bad;
}
