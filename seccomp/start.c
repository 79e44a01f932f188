/* SPDX-License-Identifier: MIT */
/* start.c -- the launcher's side of the seccomp filter: starting the tree's
 * supervisor, deciding whether the command starts filtered, and standing in
 * for a program that posix_spawn starts (--seccomp-exec).
 *
 * The supervisor is started once per run, before the command, and serves
 * every filter of the tree: each process that execs a program the library
 * cannot reach puts itself under the filter and sends the listener over
 * the socket the tree inherits (include/filter.h).  A process the library
 * serves runs with no filter at all.
 */
#include "launch/common.h"
#include "seccomp.h"
#include "elf_kind.h"
#include "env.h"
#include "filter.h"
#include "inherit.h"
#include "launch/sync_on_exit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The tree's copy of the supervisor's socket, as EATMYDATA_SECCOMP names
 * it; -1 when there is none, or no supervisor at its end (an outer run's
 * that filters its whole tree takes no other filter). */
static int tree_socket(void)
{
	struct emd_inherited in;
	struct pollfd alive;

	if (emd_inherited_parse(&in, getenv(EMD_ENV_SECCOMP)) != 0 ||
	    !emd_inherited_ok(&in, S_IFSOCK))
		return -1;
	alive = (struct pollfd){.fd = in.fd, .events = POLLOUT};
	if (poll(&alive, 1, 0) != 1 || (alive.revents & (POLLHUP | POLLERR)))
		return -1;
	return in.fd;
}

/* The command runs only once the supervisor answers: a byte on the socket
 * (nothing: it died, the kernel refused it seccomp). */
static int ready(int sock)
{
	char byte;
	ssize_t n;

	while ((n = read(sock, &byte, 1)) < 0 && errno == EINTR)
		;
	return n == 1;
}

/* The supervisor's listening socket at `path`, in a private directory
 * (only this user, and root, may connect); -1 if it cannot be made: then
 * only processes that kept the inherited socket are served. */
static int listen_at(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -1;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
			listen(fd, 64) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The supervisor: a grandchild, so that it is nobody's child in the tree,
 * in a session of its own, holding no descriptor of the tree's but its
 * socket and --sync-on-exit's notes directory (ulimit -n 6 runs).  Stdio
 * is /dev/null. */
static int start_supervisor(int sock, const char *dir, const char *path,
			    const struct seccomp_options *opt)
{
	pid_t middle = fork(), grandchild;
	int null, status;

	if (middle < 0)
		return -1;
	if (middle > 0) {
		while (waitpid(middle, &status, 0) < 0)
			if (errno != EINTR)
				return -1;
		return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
	}
	if ((grandchild = fork()) != 0)
		_exit(grandchild < 0);
	setsid();
	if (dup2(sock, 3) < 0)
		supervisor_leave(dir);
	close_range(sync_on_exit_keep(4), ~0U, 0);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		supervisor_leave(dir);
	if (null > 3)
		close(null);
	supervise(3, 3, path ? listen_at(path) : -1, dir, opt);
}

/* The environment that lets the tree find the supervisor: its socket
 * (inherited, above the numbers shell scripts take for themselves), the
 * path to connect to, this launcher for --seccomp-exec, --no-io-uring. */
static void name_socket(int sock, const char *path, const struct seccomp_options *opt)
{
	char id[64], self[PATH_MAX];
	struct stat st;
	int fd = fcntl(sock, F_DUPFD, 100);
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (fd >= 0)
		close(sock);
	else if ((fd = fcntl(sock, F_DUPFD, 0)) >= 0) /* under ulimit -n 100 */
		close(sock);
	else
		fd = sock;
	if (fcntl(fd, F_SETFD, 0) != 0 || fstat(fd, &st) != 0 || n <= 0)
		die("cannot set up the seccomp supervisor: %s", strerror(errno));
	self[n] = '\0';
	snprintf(id, sizeof(id), "%d:%llu:%llu", fd, (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	if (setenv(EMD_ENV_SECCOMP, id, 1) != 0 ||
	    (path ? setenv(EMD_ENV_SECCOMP_PATH, path, 1) : unsetenv(EMD_ENV_SECCOMP_PATH)) != 0 ||
	    setenv(EMD_ENV_SECCOMP_EXEC, self, 1) != 0 ||
	    (opt->no_io_uring && setenv(EMD_ENV_NO_IO_URING, "1", 1) != 0))
		die("cannot set up the seccomp supervisor: %s", strerror(errno));
}

/* Does the program need the filter (elf_kind.c)?  It is opened only once
 * it is known to be a regular file, through the very descriptor looked at
 * (by name without /proc). */
static int unreachable(const char *file)
{
	int look = file ? open(file, O_PATH | O_CLOEXEC) : -1, fd = -1, r = 0;
	char self[32];
	struct stat st;

	if (look >= 0 && emd_program_file(look, &st)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", look);
		if ((fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
			fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		r = fd >= 0 && emd_elf_unreachable(fd);
	}
	if (fd >= 0)
		close(fd);
	if (look >= 0)
		close(look);
	return r;
}

/* Will the command itself run under the filter, and with it all the tree? */
static int whole_tree(const struct seccomp_options *opt, const char *file)
{
	return !strcmp(opt->mode, "on") || unreachable(file);
}

/* auto: without a supervisor the library's part goes on alone; on: none
 * is an error. */
static void no_supervisor(const struct seccomp_options *opt, const char *why)
{
	if (!strcmp(opt->mode, "on"))
		die("cannot install the seccomp filter: %s", why);
}

/* The private directory of the supervisor's socket, its path in `path`;
 * none (the inherited socket only) if TMPDIR cannot have it. */
static void socket_path(char *dir, char *path, size_t size)
{
	if (try_private_tmpdir("eatmydata-seccomp", dir, size) != 0 ||
	    snprintf(path, size, "%s/%s", dir, SUPERVISOR_SOCKET) >= (int)size) {
		*dir = *path = '\0';
	}
}

void seccomp_prepare(const struct seccomp_options *opt, const char *file)
{
	char dir[PATH_MAX] = "", path[PATH_MAX] = "";
	int sv[2], whole = whole_tree(opt, file), started;

	if (strcmp(opt->mode, "auto") && strcmp(opt->mode, "on") && strcmp(opt->mode, "off"))
		die("--seccomp takes auto, on or off, not '%s'", opt->mode);
	if (!strcmp(opt->mode, "off")) { /* nor an outer run's */
		unsetenv(EMD_ENV_SECCOMP);
		unsetenv(EMD_ENV_SECCOMP_PATH);
		return;
	}
	if (tree_socket() >= 0)
		return; /* under an outer eatmydata: its supervisor serves */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		no_supervisor(opt, strerror(errno));
		return;
	}
	/* The whole tree under the launcher's filter can add no other: no
	 * socket to connect to (its descriptor counts: ulimit -n 6 runs). */
	if (!whole)
		socket_path(dir, path, sizeof(dir));
	started = start_supervisor(sv[1], *dir ? dir : NULL, *path ? path : NULL, opt) == 0;
	close(sv[1]);
	/* Only the launcher's own filter needs the supervisor there first; a
	 * process of the tree finds it gone if it died starting (poll), and
	 * its "ready" byte waits unread (a millisecond off every run). */
	if (started && (!whole || ready(sv[0]))) {
		name_socket(sv[0], *path ? path : NULL, opt);
		return;
	}
	if (*dir) {
		unlink(path);
		rmdir(dir);
	}
	close(sv[0]);
	no_supervisor(opt, "the supervisor could not start (is seccomp refused here?)");
}

void seccomp_before_exec(const struct seccomp_options *opt, const char *file)
{
	static const char end = SUPERVISOR_END;
	int sock = tree_socket(), r = -1;

	if (sock < 0)
		return;
	if (whole_tree(opt, file))
		r = emd_filter_self(sock, opt->no_io_uring, SUPERVISOR_END);
	/* One listener per filter chain: an outer eatmydata --seccomp=on, or
	 * a container runtime's supervisor, is there already.  Under the
	 * outer eatmydata the tree is eaten anyway; "auto" runs on. */
	if (r == -EBUSY && !strcmp(opt->mode, "on"))
		die("cannot install the seccomp filter: the process is under one "
		    "with a supervisor already (an outer eatmydata --seccomp, or a "
		    "container's)");
	if (r < 0 && r != -EBUSY && !strcmp(opt->mode, "on"))
		die("cannot install the seccomp filter: %s", strerror(-r));
	/* Unless it went with the launcher's own listener, the end byte goes
	 * alone: every listener after it is the tree's. */
	if (r != 0 && send(sock, &end, 1, MSG_NOSIGNAL) != 1 && !strcmp(opt->mode, "on"))
		die("the seccomp supervisor is gone");
}

noreturn void seccomp_exec(const char *arg, char **argv)
{
	int opened, sock = emd_supervisor(arg, getenv(EMD_ENV_SECCOMP_PATH), &opened);

	/* A stand-in: whatever fails, the program runs, as posix_spawn asked. */
	if (sock >= 0)
		emd_filter_self(sock, getenv(EMD_ENV_NO_IO_URING) != NULL, 0);
	if (opened)
		close(sock);
	unsetenv(EMD_ENV_SECCOMP_EXEC); /* the program is not to come back here */
	if (!argv[0] || !argv[1])
		_exit(127);
	execve(argv[0], argv + 1, environ);
	_exit(errno == ENOENT ? 127 : 126);
}
