/* SPDX-License-Identifier: MIT */
/* ctprocs.c -- processes of one tree changing files at once: each of N
 * children appends a line to a file of its own and fdatasyncs it, M times
 * (the parent wrote and synced a file of its own first),
 * so that their crash points interleave (test_crashtest_attack.py: the
 * journal of the library's processes, and of the supervisor's, in the
 * order their points were numbered, at each point --at asks for).
 *
 * Three more ways, each to run a race for the journal's lock many times:
 *   shared: the N children open the same M names in turn, each made by
 *     whichever comes first (O_CREAT), and write a line at their own place
 *     in it: past the end, or over what is there once another wrote
 *     further (whether it was made, and a write's size before, as the
 *     lock found them, not as a look before it did);
 *   unlink: the N children make, write and remove the same few names (a
 *     name removed between a look and the open that makes it again);
 *   setsid: the N children leave the process group, and make files and
 *     write on from when the parent is gone until they are killed; the
 *     parent fdatasyncs M times: at the point --at asks for, the group is
 *     killed, they are not, and must stop before their next change (past
 *     the point, the power failed), not be killed in the middle of it.
 * Usage: ctprocs N M [shared|unlink|setsid] */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char line[] = "0123456789\n";
#define LINE (sizeof(line) - 1)

static void appender(int p, int m)
{
	char name[16];
	int fd;

	snprintf(name, sizeof(name), "t%d", p);
	if ((fd = open(name, O_CREAT | O_WRONLY | O_APPEND, 0644)) < 0)
		_exit(1);
	for (int i = 0; i < m; i++)
		if (write(fd, line, LINE) != LINE || fdatasync(fd) != 0)
			_exit(1);
	_exit(0);
}

/* Every child the same names, each its own place in them. */
static void sharer(int p, int m)
{
	char name[16];
	int fd;

	for (int i = 0; i < m; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		if ((fd = open(name, O_CREAT | O_WRONLY, 0644)) < 0 ||
		    pwrite(fd, line, LINE, (off_t)(p * LINE)) != LINE || close(fd) != 0)
			_exit(1);
	}
	_exit(0);
}

/* The same few names made, written and removed by every child in turn. */
static void remover(int p, int m)
{
	char name[16];
	int fd;

	for (int i = 0; i < m; i++) {
		snprintf(name, sizeof(name), "u%d", i % 4);
		if ((fd = open(name, O_CREAT | O_WRONLY, 0644)) < 0 ||
		    pwrite(fd, line, LINE, (off_t)(p * LINE)) != LINE || close(fd) != 0 ||
		    (unlink(name) != 0 && errno != ENOENT))
			_exit(1);
	}
	_exit(0);
}

/* Out of the group, once the parent is gone (its end of the pipe `gone`
 * closed: killed at the point --at asks for), makes a file (mkstemp) and
 * writes a new 64 KiB on until killed: a kill lands in the middle of a
 * write, or between a file and its record. */
static void leaver(int p, const int gone[2])
{
	static char buf[64 << 10];
	char name[16], temp[32];
	int fd, t;

	snprintf(name, sizeof(name), "w%d", p);
	close(gone[1]);
	if (setsid() < 0 || (fd = open(name, O_CREAT | O_WRONLY, 0644)) < 0)
		_exit(1);
	while (read(gone[0], buf, 1) > 0)
		;
	for (unsigned i = 0;; i++) {
		snprintf(temp, sizeof(temp), "w%d.XXXXXX", p);
		if ((t = mkstemp(temp)) < 0 || close(t) != 0)
			_exit(1);
		memset(buf, 'a' + i % 26, sizeof(buf));
		if (pwrite(fd, buf, sizeof(buf), 0) < 0)
			_exit(1);
	}
}

static void child(const char *how, int p, int m, const int gone[2])
{
	if (!strcmp(how, "shared"))
		sharer(p, m);
	else if (!strcmp(how, "unlink"))
		remover(p, m);
	else if (!strcmp(how, "setsid"))
		leaver(p, gone);
	else
		appender(p, m);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 3, m = argc > 2 ? atoi(argv[2]) : 20, status, bad = 0;
	const char *how = argc > 3 ? argv[3] : "";
	int fd = open("parent", O_CREAT | O_WRONLY, 0644), gone[2] = {-1, -1};

	/* A change before the forks: the library has the journal open then,
	 * and each child must lock its own open file of it, not the parent's. */
	if (fd < 0 || write(fd, "p\n", 2) != 2 || fdatasync(fd) != 0)
		return 1;
	if (!strcmp(how, "setsid") && pipe(gone) != 0)
		return 1;
	for (int p = 0; p < n; p++)
		if (fork() == 0)
			child(how, p, m, gone);
	if (!strcmp(how, "setsid")) {
		for (int i = 0; i < m; i++)
			if (write(fd, "p\n", 2) != 2 || fdatasync(fd) != 0)
				return 1;
		return 0; /* past the point asked for, never here */
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	return bad;
}
