/* SPDX-License-Identifier: MIT */
/* nocache.c -- run a command without letting it evict the page cache.
 *
 * Takes upstream nocache's options (-n, -f, -D) and passes them to the
 * library in upstream's environment variables, which it checks first: the
 * library cannot say that a value is wrong.
 */
#include "common/common.h"
#include "seccomp/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"Usage: nocache [OPTION]... [--] COMMAND [ARG]...\n"
	"Run COMMAND so that its file I/O leaves the page cache as it found it:\n"
	"pages cached before stay cached, pages COMMAND reads or writes are\n"
	"dropped as it goes (RWF_DONTCACHE, else posix_fadvise behind its\n"
	"position, what it wrote written back first).  Nothing is ever synced.\n"
	"\n"
	"  -n N           call posix_fadvise N times (1 to 100) for each drop\n"
	"  -f             drop what COMMAND touches even if it was cached before\n"
	"  -D FILE        log what is dropped to FILE (created 0600, or appended\n"
	"                 to if it is a regular file of yours; /dev/stderr)\n"
	"  -h, --help     show this help and exit\n"
	"  -V, --version  show the version and exit\n"
	"\n"
	"Exit status: 125 for an error of nocache itself, 126 if COMMAND\n"
	"cannot be run, 127 if it is not found, else COMMAND's status.\n";

/* The log goes to a descriptor COMMAND inherits; from 10 up, as the shell's
 * {var}> does, out of the way of the numbers programs expect. */
#define DEBUG_FD_MIN 10

/* "/dev/stderr", "/dev/fd/N"...: a descriptor of ours, which O_NOFOLLOW
 * would refuse (they are symbolic links); -1 for any other path. */
static int own_descriptor(const char *path)
{
	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	if (strncmp(path, "/dev/fd/", 8) == 0)
		return (int)parse_number("-D", path + 8, 0, INT_MAX);
	return -1;
}

/* A new file of ours, or an existing one that is a regular file of ours
 * with one link, or a character device (a terminal, /dev/null).  Never
 * through a symbolic link, never truncated: in /tmp, another user may have
 * put either there first. */
static int open_log(const char *path)
{
	int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
	int fd = open(path, flags | O_CREAT | O_EXCL, 0600);
	struct stat st;

	if (fd < 0 && errno == EEXIST)
		fd = open(path, flags);
	if (fd < 0 && errno == ELOOP)
		die("-D %s: a symbolic link, not followed", path);
	if (fd < 0 && errno == ENXIO) /* a FIFO with no reader, a socket */
		die("-D %s: not a regular file nor a character device", path);
	if (fd < 0)
		die("-D %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0)
		die("-D %s: %s", path, strerror(errno));
	if (!S_ISCHR(st.st_mode) &&
	    !(S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1))
		die("-D %s: not a regular file of this user's with one link, "
		    "nor a character device", path);
	fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);
	return fd;
}

/* -D FILE: NOCACHE_DEBUGFD names a copy of it that COMMAND inherits. */
static void debug_to(const char *path)
{
	int own = own_descriptor(path);
	int fd = own >= 0 ? own : open_log(path);
	int high = fcntl(fd, F_DUPFD, DEBUG_FD_MIN);
	char num[16];

	if (high < 0)
		die("-D %s: %s", path, strerror(errno));
	if (own < 0)
		close(fd);
	snprintf(num, sizeof(num), "%d", high);
	if (setenv("NOCACHE_DEBUGFD", num, 1) != 0)
		die("cannot set NOCACHE_DEBUGFD: %s", strerror(errno));
}

/* Upstream's variables, set by hand or by the options above. */
static void check_environment(void)
{
	const char *v;

	if ((v = getenv("NOCACHE_NR_FADVISE")))
		parse_number("NOCACHE_NR_FADVISE", v, 1, 100);
	if ((v = getenv("NOCACHE_MAX_FDS")))
		parse_number("NOCACHE_MAX_FDS", v, 0, INT_MAX);
	if ((v = getenv("NOCACHE_DEBUGFD")) &&
	    fcntl((int)parse_number("NOCACHE_DEBUGFD", v, 0, INT_MAX), F_GETFD) < 0)
		die("NOCACHE_DEBUGFD: descriptor %s is not open", v);
}

/* The log's first line, as upstream writes one. */
static void log_command(char **argv)
{
	const char *v = getenv("NOCACHE_DEBUGFD");
	int fd = v ? atoi(v) : -1;

	if (fd < 0)
		return;
	dprintf(fd, "nocache[%ld]: running", (long)getpid());
	for (; *argv; argv++)
		dprintf(fd, " %s", *argv);
	dprintf(fd, "\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const struct seccomp_options seccomp = {.mode = "auto", .policy = "nocache"};
	const char *debug = NULL;
	int c;

	tool_name = "nocache";
	/* The supervisor and the stand-in, when a static or Go command needs
	 * them. */
	seccomp_hidden_modes(argc, argv);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+n:fD:hV", longopts, NULL)) != -1) {
		if (c == 'n' && parse_number("-n", optarg, 1, 100))
			setenv("NOCACHE_NR_FADVISE", optarg, 1);
		else if (c == 'f')
			setenv("NOCACHE_FLUSHALL", "1", 1);
		else if (c == 'D')
			debug = optarg;
		else
			common_option(c, argv, usage);
	}
	if (optind >= argc)
		die("no command given; try '%s --help'", tool_name);
	check_environment();
	if (debug) /* no log file is made for a command line in error */
		debug_to(debug);
	preload_prepend(preload_entry("libnocache.so"));
	log_command(argv + optind);
	/* A command the library cannot reach (static, Go, musl's loader) has
	 * its reads and writes made by the supervisor, with RWF_DONTCACHE. */
	seccomp_prepare(&seccomp);
	seccomp_before_exec(&seccomp, find_command(argv[optind]));
	exec_command(argv[optind], argv + optind);
}
