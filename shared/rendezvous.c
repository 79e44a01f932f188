/* SPDX-License-Identifier: MIT */
/* rendezvous.c -- finding the run's seccomp supervisor, or starting it,
 * when a process is about to be filtered (include/filter.h): the launcher
 * for its command, the library before an exec, the stand-in.  Linked into
 * the library and the launcher: it allocates nothing and may run in a
 * vfork child.
 *
 * The launcher only names the supervisor (EATMYDATA_SECCOMP: 32 random hex
 * digits) and starts nothing: a tree that never execs a program the
 * library cannot reach has no supervisor.  The first process that needs it
 * finds no socket bound to the name and starts one from the launcher's
 * binary (EATMYDATA_SECCOMP_EXEC); later ones connect to it while it runs.
 * The socket is abstract (nothing on a file system, gone with the process
 * that bound it, whatever kills it), and each user of the tree has a name
 * of their own (the user id is in it): another user may bind a name, even
 * fill its backlog, but is never handed a listener (ours(), below), and
 * the process then starts a supervisor of its own.
 */
#define _GNU_SOURCE 1
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* How long a starter waits for the supervisor it started to answer (its
 * exec, its start-up: a millisecond), and a connecting process for a
 * running one, before it gives up and runs the program unfiltered. */
#define START_MS 10000
#define CONNECT_MS 2000

extern char **environ;

int emd_rendezvous_ok(const char *name)
{
	size_t n = name ? strspn(name, "0123456789abcdef") : 0;

	return n == EMD_RENDEZVOUS_LEN && !name[n];
}

socklen_t emd_rendezvous_address(const char *name, struct sockaddr_un *addr)
{
	int n;

	*addr = (struct sockaddr_un){.sun_family = AF_UNIX};
	n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "eatmydata-%s-%u", name,
		     (unsigned)geteuid());
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Whoever holds a filter's listener can answer the process's calls for it
 * and put descriptors in it: only a supervisor of this user's or root's
 * (the socket's creator). */
static int ours(int sock)
{
	struct ucred peer;
	socklen_t len = sizeof(peer);

	return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 &&
	       (peer.uid == 0 || peer.uid == geteuid());
}

/* What the supervisor says on sock within `ms`: EMD_READY, or its
 * refusal, or 0 for nothing. */
static char said(int sock, int ms)
{
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	char byte = 0;
	int r;

	while ((r = poll(&pfd, 1, ms)) < 0 && errno == EINTR)
		;
	return r == 1 && recv(sock, &byte, 1, MSG_DONTWAIT) == 1 ? byte : 0;
}

/* A connection to this user's running supervisor, or -1: none bound, its
 * backlog full, another user's socket, no answer.  One try, not blocking:
 * the caller then starts one of its own. */
static int connect_running(const char *name)
{
	struct sockaddr_un addr;
	socklen_t len = emd_rendezvous_address(name, &addr);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, len) == 0 && ours(fd) &&
	    fcntl(fd, F_SETFL, 0) == 0 && said(fd, CONNECT_MS) == EMD_READY)
		return fd;
	close(fd);
	return -1;
}

/* The launcher's binary, held (O_PATH) to be run as it was checked, if it
 * is a program only root or this user could have put there: the
 * environment naming it may come from another user (sudo -E). */
static int program_held(const char *exe)
{
	struct stat st;
	int fd = exe && *exe == '/' ? open(exe, O_PATH | O_CLOEXEC) : -1;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) &&
	    !(st.st_mode & (S_ISUID | S_ISGID | S_IWGRP | S_IWOTH)) &&
	    (st.st_uid == 0 || st.st_uid == geteuid()))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* A process of its own, which no wait(2) of the host program sees: a
 * clone with no exit signal (waited for with __WCLONE), or the ordinary
 * kind.  No fork(): no atfork handler runs, no lock is taken. */
static pid_t raw_fork(int exit_signal)
{
	return (pid_t)syscall(SYS_clone, (unsigned long)exit_signal, 0L, 0L, 0L, 0L);
}

/* The descriptor the --sync-on-exit notes are made through, kept across
 * the exec (inherit.h), or -1. */
static int notes_fd(void)
{
	const char *n = getenv("EATMYDATA_SYNC_FD");

	return n && *n >= '0' && *n <= '9' ? atoi(n) : -1;
}

/* The descriptor of the record file the tree writes (syncstat, --stats:
 * inherit.h), kept for the supervisor to record what it serves, or -1. */
static int record_fd(void)
{
	const char *n = getenv("EATMYDATA_RECORD_FD");

	return n && *n >= '0' && *n <= '9' ? atoi(n) : -1;
}

/* Every descriptor from 4 on closed, but `a` and `b` (-1: none), each left
 * open across the exec: the host's must not be held (its pipes), and the
 * limit may be as low as 6 (ulimit -n). */
static void close_from_4(int a, int b)
{
	unsigned from = 4;

	if (a > b) {
		int t = a;

		a = b;
		b = t;
	}
	for (int keep = a; ; keep = b) {
		if (keep >= (int)from) {
			if (keep > (int)from)
				syscall(SYS_close_range, from, (unsigned)keep - 1, 0U);
			fcntl(keep, F_SETFD, 0);
			from = (unsigned)keep + 1;
		}
		if (keep == b)
			break;
	}
	syscall(SYS_close_range, from, ~0U, 0U);
}

/* Standard input, output and error on /dev/null; closed if it cannot be
 * had. */
static void null_stdio(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	for (int fd = 0; fd < 3; fd++)
		if (null < 0 || dup2(null, fd) != fd)
			close(fd);
	if (null > 4)
		close(null);
}

/* The tool whose policy the supervisor is to serve, as the launcher named
 * it: a lowercase word (the supervisor knows which), else eatmydata's. */
static const char *policy(void)
{
	const char *p = getenv("EATMYDATA_SECCOMP_POLICY");
	size_t n = p ? strspn(p, "abcdefghijklmnopqrstuvwxyz") : 0;

	return n && n <= 16 && !p[n] ? p : "eatmydata";
}

/* In the supervisor-to-be: a session of its own, the socket as 3, the
 * launcher's binary as 4 (checked, and run as it was checked), stdio
 * /dev/null, no other descriptor of the host's but the --sync-on-exit
 * notes' and the record file's (moved off 3 and 4, its number told in the
 * argument), the environment without LD_PRELOAD (a supervisor eats
 * nothing itself).  Never returns. */
static void become_supervisor(int sock, const char *exe, int trust)
{
	size_t n = 0, kept = 0;
	int notes = notes_fd(), records = record_fd(), held;
	char arg[80];

	while (environ[n])
		n++;
	char *env[n + 1], *argv[] = {"eatmydata", arg, NULL};

	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[kept++] = environ[i];
	env[kept] = NULL;
	setsid();
	if (records >= 0 && records < 5)
		records = fcntl(records, F_DUPFD_CLOEXEC, 5);
	snprintf(arg, sizeof(arg), "--seccomp-supervise=%s:3:%d:%d", policy(), trust, records);
	if (dup2(sock, 3) == 3 && fcntl(3, F_SETFD, 0) == 0) {
		close_from_4(notes, records);
		held = program_held(exe);
		if (held >= 0 && (held == 4 || dup2(held, 4) == 4)) {
			null_stdio();
			syscall(SYS_execveat, 4, "", argv, env, AT_EMPTY_PATH);
		}
	}
	syscall(SYS_exit_group, 1);
}

/* Start this user's supervisor, detached (a grandchild, nobody's child in
 * the tree); the end of a socket pair to it once it says it is ready, or
 * -ECHILD, or EMD_FOREIGN if it refused.  `trust`: the launcher's own,
 * whose first listener is trusted (supervisor.h). */
static int start(const char *exe, int trust)
{
	int sv[2], status;
	pid_t middle;
	char answer = 0;

	if (!exe || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -ECHILD;
	if ((middle = raw_fork(0)) == 0) {
		if (raw_fork(SIGCHLD) == 0)
			become_supervisor(sv[1], exe, trust);
		syscall(SYS_exit_group, 0);
	}
	close(sv[1]);
	while (middle > 0 && waitpid(middle, &status, __WCLONE) < 0 && errno == EINTR)
		;
	if (middle > 0 && (answer = said(sv[0], START_MS)) == EMD_READY)
		return sv[0];
	close(sv[0]);
	return answer == EMD_REFUSED_PROC ? EMD_FOREIGN : -ECHILD;
}

int emd_supervisor(const char *name, const char *exe, int trust)
{
	int saved = errno, fd = -ECHILD;

	if (emd_rendezvous_ok(name)) {
		if (!trust)
			fd = connect_running(name);
		if (fd < 0)
			fd = start(exe, trust);
	}
	errno = saved;
	return fd;
}
