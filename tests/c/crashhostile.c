/* SPDX-License-Identifier: MIT */
/* crashhostile.c -- a program that tries to make crashtest's supervisor act
 * where the caller would not, or journal what did not happen: built static,
 * so that the supervisor follows it (test_crashtest_supervised_attack.py).
 * Each mode prints what the program saw, to compare with a native run.
 * Usage: crashhostile proclink|linkfollow|rights|fsize|signals|tmpfile|missing|edge|
 *        symlink [ARG] */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define HIGH_FD 200

static void said(const char *what, int r)
{
	printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

/* Names through /proc/self/fd/N: the caller's N, never the supervisor's. */
static void proclink(void)
{
	mkdir("sub", 0755);
	dup2(open("sub", O_RDONLY | O_DIRECTORY), HIGH_FD);
	said("mkdir", mkdir("/proc/self/fd/200/made", 0755));
	said("create", open("/proc/self/fd/200/file", O_CREAT | O_WRONLY, 0644));
	said("rename", rename("/proc/self/fd/200/file", "/proc/self/fd/200/moved"));
	said("exists", access("sub/moved", F_OK));
}

/* linkat(AT_SYMLINK_FOLLOW) through a symlink to the caller's descriptor. */
static void linkfollow(void)
{
	struct stat a, b;
	int fd = open("data", O_CREAT | O_WRONLY, 0644);

	dup2(fd, HIGH_FD);
	said("symlink", symlink("/proc/self/fd/200", "l"));
	said("link", linkat(AT_FDCWD, "l", AT_FDCWD, "hard", AT_SYMLINK_FOLLOW));
	printf("same: %d\n", stat("data", &a) == 0 && stat("hard", &b) == 0 && a.st_ino == b.st_ino);
}

/* Another group: the supervisor has not the caller's rights.  Each kind of
 * change after it (a write, a name, a create) goes to the kernel: what it
 * makes is the group's. */
static void rights(void)
{
	gid_t g = 65534;
	int fd = open("file", O_CREAT | O_WRONLY, 0644);
	struct stat st;

	said("setgroups", setgroups(1, &g));
	said("setgid", setresgid(g, g, g));
	said("write", (int)write(fd, "abc", 3));
	said("mkdir", mkdir("dir", 0755));
	said("create", open("new", O_CREAT | O_WRONLY, 0644));
	printf("groups: %d %d\n", stat("dir", &st) == 0 ? (int)st.st_gid : -1,
	       stat("new", &st) == 0 ? (int)st.st_gid : -1);
}

/* A rename out of the copy and one into it. */
static void edge(const char *outside)
{
	char there[4096];

	snprintf(there, sizeof(there), "%s/moved", outside);
	close(open("file", O_CREAT | O_WRONLY, 0644));
	said("out", rename("file", there));
	said("in", rename(there, "back"));
}

/* A file size limit: the kernel's short write, then EFBIG (the limit is
 * past what the program prints: its output is a file under crashtest). */
static void fsize(void)
{
	struct rlimit r = {4096, 4096};
	int fd = open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	char buf[5000] = {0};

	signal(SIGXFSZ, SIG_IGN);
	said("limit", setrlimit(RLIMIT_FSIZE, &r));
	printf("write: %zd\n", write(fd, buf, sizeof(buf)));
	said("again", (int)write(fd, buf, sizeof(buf)));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Writes under a storm of signals: each made once, as the journal says
 * (SA_RESTART: without it, a signal before the supervisor takes the call
 * makes it fail with EINTR, a known limit, SECURITY.md). */
static void signals(void)
{
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	struct itimerval t = {{0, 50}, {0, 50}};
	int fd = open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	char buf[100];
	long total = 0;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &t, NULL);
	for (int i = 0; i < 2000; i++) {
		ssize_t n;

		memset(buf, 'a' + i % 26, sizeof(buf));
		n = i % 2 ? write(fd, buf, sizeof(buf)) : pwrite(fd, buf, sizeof(buf), total);
		if (n > 0 && i % 2 == 0)
			lseek(fd, n, SEEK_CUR);
		total += n > 0 ? n : 0;
	}
	t = (struct itimerval){0};
	setitimer(ITIMER_REAL, &t, NULL);
	printf("total: %ld\n", total);
}

/* An O_TMPFILE file written: no name the journal could have made. */
static void nameless(void)
{
	int fd = open(".", O_TMPFILE | O_WRONLY, 0644);

	said("open", fd);
	said("write", (int)write(fd, "abc", 3));
}

/* O_TRUNC of a name that is not there: the kernel's ENOENT, nothing made. */
static void missing(void)
{
	said("open", open("missing", O_WRONLY | O_TRUNC));
}

/* O_TRUNC through a symlink the program planted, to a file outside. */
static void through_symlink(const char *outside)
{
	said("symlink", symlink(outside, "lnk"));
	said("open", open("lnk", O_WRONLY | O_TRUNC));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "proclink"))
		proclink();
	else if (!strcmp(mode, "linkfollow"))
		linkfollow();
	else if (!strcmp(mode, "rights"))
		rights();
	else if (!strcmp(mode, "fsize"))
		fsize();
	else if (!strcmp(mode, "signals"))
		signals();
	else if (!strcmp(mode, "tmpfile"))
		nameless();
	else if (!strcmp(mode, "missing"))
		missing();
	else if (!strcmp(mode, "edge") && argc > 2)
		edge(argv[2]);
	else if (!strcmp(mode, "symlink") && argc > 2)
		through_symlink(argv[2]);
	else
		return 2;
	return 0;
}
