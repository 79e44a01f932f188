/* SPDX-License-Identifier: MIT */
/* execs.c -- exec entry points that fail, or run something odd, from a
 * dynamic process (the library's exec.c serves it), each printing what the
 * process saw, to compare with a native run (test_seccomp_filter.py).
 *
 * Usage: execs COMMAND ARG...
 *   fexecve-opath FILE      fexecve of an O_PATH descriptor of FILE
 *   exec-then FIRST SECOND  execv(FIRST), which is to fail, then execv(SECOND)
 *   exec-big FIRST SECOND   the same, FIRST with more arguments than the
 *                           kernel takes (E2BIG)
 *   exec-long FIRST SECOND  the same, FIRST with one argument longer than
 *                           the kernel takes (E2BIG)
 *   spawn FILE ARG...       posix_spawn(FILE): its answer, then FILE's status
 *   spawnp NAME ARG...      the same with posix_spawnp(NAME), searched in PATH
 *   fexecve FILE ARG...     fexecve of a descriptor of FILE
 *   execveat FILE ARG...    execveat of FILE's name in a descriptor of its
 *                           directory
 *   execveat-empty FILE ARG...  execveat of a descriptor of FILE, AT_EMPTY_PATH
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int fexecve_opath(char **argv)
{
	int fd = open(argv[0], O_PATH | O_CLOEXEC);
	char *args[] = {argv[0], NULL};

	if (fd < 0)
		return perror(argv[0]), 1;
	fexecve(fd, args, environ);
	printf("fexecve %s\n", strerrorname_np(errno));
	return 0;
}

/* execv(first) fails; what is left of the process runs second. */
static int exec_then(char **argv, size_t extra)
{
	size_t n = extra + 2;
	char **args = calloc(n, sizeof(*args));
	char *arg = malloc(100000);

	if (!args || !arg)
		return perror("calloc"), 1;
	memset(arg, 'x', 99999);
	arg[99999] = '\0';
	args[0] = argv[0];
	for (size_t i = 1; i < n - 1; i++)
		args[i] = arg;
	execv(argv[0], args);
	printf("first %s\n", strerrorname_np(errno));
	fflush(stdout);
	execv(argv[1], (char *[]){argv[1], NULL});
	printf("second %s\n", strerrorname_np(errno));
	return 0;
}

static int exec_fails(char **argv)
{
	return exec_then(argv, 0);
}

/* About 100 MB of arguments: more than any stack limit lets exec copy. */
static int exec_big(char **argv)
{
	return exec_then(argv, 1000);
}

/* One argument of 200 KB: longer than exec copies any one string. */
static int exec_long(char **argv)
{
	char *arg = malloc(200000);

	if (!arg)
		return perror("malloc"), 1;
	memset(arg, 'x', 199999);
	arg[199999] = '\0';
	execv(argv[0], (char *[]){argv[0], arg, NULL});
	printf("first %s\n", strerrorname_np(errno));
	fflush(stdout);
	execv(argv[1], (char *[]){argv[1], NULL});
	printf("second %s\n", strerrorname_np(errno));
	return 0;
}

static int spawn(char **argv)
{
	pid_t pid;
	int r = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ), status;

	printf("posix_spawn %s\n", r ? strerrorname_np(r) : "ok");
	if (r == 0 && waitpid(pid, &status, 0) == pid)
		printf("status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

static int spawnp(char **argv)
{
	pid_t pid;
	int r = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ), status;

	printf("posix_spawnp %s\n", r ? strerrorname_np(r) : "ok");
	if (r == 0 && waitpid(pid, &status, 0) == pid)
		printf("status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

static int by_fexecve(char **argv)
{
	int fd = open(argv[0], O_RDONLY);

	if (fd < 0)
		return perror(argv[0]), 1;
	fexecve(fd, argv, environ);
	return perror("fexecve"), 1;
}

static int by_execveat(char **argv)
{
	char *slash = strrchr(argv[0], '/');
	int dir;

	if (!slash)
		return fprintf(stderr, "execveat: a path with a directory, please\n"), 2;
	*slash = '\0';
	dir = open(*argv[0] ? argv[0] : "/", O_PATH | O_DIRECTORY);
	*slash = '/';
	if (dir < 0)
		return perror(argv[0]), 1;
	execveat(dir, slash + 1, argv, environ, 0);
	return perror("execveat"), 1;
}

static int by_execveat_empty(char **argv)
{
	int fd = open(argv[0], O_RDONLY);

	if (fd < 0)
		return perror(argv[0]), 1;
	execveat(fd, "", argv, environ, AT_EMPTY_PATH);
	return perror("execveat"), 1;
}

static const struct {
	const char *name;
	int args;
	int (*run)(char **);
} commands[] = {
	{"fexecve-opath", 1, fexecve_opath},
	{"exec-then", 2, exec_fails},
	{"exec-big", 2, exec_big},
	{"exec-long", 2, exec_long},
	{"spawn", 1, spawn},
	{"spawnp", 1, spawnp},
	{"fexecve", 1, by_fexecve},
	{"execveat", 1, by_execveat},
	{"execveat-empty", 1, by_execveat_empty},
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; argc > 1 && i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[1], commands[i].name) && argc - 2 >= commands[i].args)
			return commands[i].run(argv + 2);
	fprintf(stderr, "usage: execs COMMAND ARG...\n");
	return 2;
}
