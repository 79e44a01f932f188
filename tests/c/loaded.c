/* SPDX-License-Identifier: MIT */
/* loaded.c -- which C library this program is built on, whether a seccomp
 * filter is on it, and which of our libraries its loader took (their files,
 * from /proc/self/maps); then an fsync of FILE, and the rest of the
 * arguments exec'd (with LOADED_SPAWN set, started by posix_spawn and
 * waited for): a chain of glibc and musl programs shows each taking its own
 * C library's build of the library, or the supervisor
 * (tests/py/test_musl.py).  Built with gcc and with musl-gcc.
 * Usage: loaded FILE [PROGRAM ARG...]
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

#ifdef __GLIBC__
#define LIBC "glibc"
#else
#define LIBC "musl"
#endif

/* The "NAME:\tVALUE" line of /proc/self/status, its value. */
static void status_line(const char *name, char *out, size_t size)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	snprintf(out, size, "?");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)) && line[strlen(name)] == ':') {
			snprintf(out, size, "%s", line + strlen(name) + 2);
			out[strcspn(out, "\n")] = '\0';
		}
	if (f)
		fclose(f);
}

/* Each file of ours mapped, once, after " lib=". */
static void our_libraries(void)
{
	char line[4352], last[4096] = "";
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path || !strstr(path, "/lib") ||
		    !(strstr(path, "libeatmydata") || strstr(path, "libnocache") ||
		      strstr(path, "libcrashtest") || strstr(path, "libhirestimes")))
			continue;
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(path, last) != 0)
			printf(" lib=%s", path);
		snprintf(last, sizeof(last), "%s", path);
	}
	if (f)
		fclose(f);
}

/* The next program of the chain: its exit status. */
static int next(char **argv)
{
	int status;
	pid_t pid;

	if (!getenv("LOADED_SPAWN")) {
		execv(argv[0], argv);
		perror(argv[0]);
		return 127;
	}
	if ((errno = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ)) != 0 ||
	    waitpid(pid, &status, 0) != pid) {
		perror(argv[0]);
		return 127;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int main(int argc, char **argv)
{
	char seccomp[256];
	int fd;

	if (argc < 2)
		return 2;
	status_line("Seccomp", seccomp, sizeof(seccomp));
	printf("%s seccomp=%s", LIBC, seccomp);
	our_libraries();
	printf("\n");
	fflush(stdout);
	fd = open(argv[1], O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || write(fd, "data", 4) != 4 || fsync(fd) != 0 || close(fd) != 0) {
		perror(argv[1]);
		return 1;
	}
	return argc > 2 ? next(argv + 2) : 0;
}
