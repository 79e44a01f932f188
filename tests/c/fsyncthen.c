/* SPDX-License-Identifier: MIT */
/* fsyncthen.c -- fsyncs from a function of its own, then runs other
 * programs: built static, one tree under one filter runs several programs
 * in turn, whose call sites the supervisor names from each program's
 * symbols (tests/py/test_syncstat_site_symbols.py).
 * Usage: fsyncthen FILE N [run PROGRAM M | cp FROM TO | pause]...: N fsyncs
 * of FILE from ask_here (a copy may rename it), then each step in turn:
 * PROGRAM FILE M run as a child, waited for; FROM copied over TO in place
 * (the same inode); "paused" said, and a line of input waited for. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int ask_here(int fd);
__attribute__((noinline)) int ask_here(int fd)
{
	int r = fsync(fd);

	__asm__ volatile("" ::: "memory"); /* no tail call: ask_here is on the stack */
	return r;
}

/* FROM's bytes over TO's, in TO's own inode. */
static int copy_in_place(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	return close(in) | close(out) | (int)n;
}

/* PROGRAM FILE M, as a child; 0 when it exits 0. */
static int run(char *program, char *file, char *m)
{
	char *args[] = {program, file, m, NULL};
	pid_t child = fork();
	int status;

	if (child == 0) {
		execv(program, args);
		_exit(127);
	}
	return child < 0 || waitpid(child, &status, 0) != child || status != 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	int fd, n, i;

	if (argc < 3 || (fd = open(argv[1], O_WRONLY | O_CREAT, 0600)) < 0)
		return 2;
	n = atoi(argv[2]);
	for (i = 0; i < n; i++)
		if (ask_here(fd) != 0)
			return perror("fsync"), 1;
	close(fd);
	for (i = 3; i < argc; i += 3) {
		if (!strcmp(argv[i], "pause")) {
			printf("paused\n");
			fflush(stdout);
			getchar();
			i -= 2;
		} else if (i + 2 >= argc || (!strcmp(argv[i], "run")
			   ? run(argv[i + 1], argv[1], argv[i + 2])
			   : copy_in_place(argv[i + 1], argv[i + 2])) != 0) {
			return fprintf(stderr, "%s failed\n", argv[i]), 1;
		}
	}
	return 0;
}
