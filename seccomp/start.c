/* SPDX-License-Identifier: MIT */
/* start.c -- the launcher's side of the seccomp filter: naming the run's
 * supervisor, deciding whether the command starts filtered, and standing
 * in for a program that posix_spawn starts (--seccomp-exec).
 *
 * Nothing is started here unless the command itself needs the filter: the
 * launcher names the supervisor (EATMYDATA_SECCOMP, include/filter.h) and
 * the process that first needs it starts it (shared/rendezvous.c).
 * A process the library serves runs with no filter at all.
 */
#include "common/common.h"
#include "seccomp.h"
#include "elf_kind.h"
#include "env.h"
#include "filter.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A name no one else can guess: the abstract socket is bound by name,
 * and only this run's tree (its environment) knows it. */
static void new_name(char *out)
{
	unsigned char bytes[EMD_RENDEZVOUS_LEN / 2];

	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		die("cannot set up the seccomp supervisor: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

/* The environment that lets the tree start and find the supervisor: its
 * name, this launcher (to start it, and for --seccomp-exec),
 * --no-io-uring. */
static void name_supervisor(const struct seccomp_options *opt)
{
	char name[EMD_RENDEZVOUS_LEN + 1];
	const char *self = launcher_path();

	if (!self)
		die("cannot set up the seccomp supervisor: /proc/self/exe cannot be read");
	new_name(name);
	if (setenv(EMD_ENV_SECCOMP, name, 1) != 0 || setenv(EMD_ENV_SECCOMP_EXEC, self, 1) != 0 ||
	    setenv(EMD_ENV_SECCOMP_POLICY, opt->policy ? opt->policy : "eatmydata", 1) != 0 ||
	    (opt->no_io_uring ? setenv(EMD_ENV_NO_IO_URING, "1", 1)
			      : unsetenv(EMD_ENV_NO_IO_URING)) != 0)
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

void seccomp_prepare(const struct seccomp_options *opt)
{
	if (strcmp(opt->mode, "auto") && strcmp(opt->mode, "on") && strcmp(opt->mode, "off"))
		die("--seccomp takes auto, on or off, not '%s'", opt->mode);
	if (!strcmp(opt->mode, "off")) { /* nor an outer run's */
		unsetenv(EMD_ENV_SECCOMP);
		unsetenv(EMD_ENV_SECCOMP_EXEC);
		unsetenv(EMD_ENV_SECCOMP_POLICY);
		return;
	}
	name_supervisor(opt);
}

/* Put this process, and the command it becomes, under the filter, its
 * listener to a supervisor started for it: 0, or -errno (as
 * emd_filter_self; -ECHILD: no supervisor could be started). */
static int filter_command(const struct seccomp_options *opt)
{
	int sock = emd_supervisor(getenv(EMD_ENV_SECCOMP), getenv(EMD_ENV_SECCOMP_EXEC), 1), r;

	if (sock < 0)
		return sock;
	r = emd_filter_self(sock, opt->no_io_uring, 0, NULL);
	close(sock);
	return r;
}

/* auto: the command, or the program a stand-in is for, runs unobserved;
 * the report names it (syncstat, --stats) and so does stderr, in each
 * tool's words (the libraries' own, for what they start, in theirs). */
static void unobserved(const struct seccomp_options *opt, const char *file, int r)
{
	const char *policy = opt->policy ? opt->policy : "eatmydata";

	/* Under the filter of a run of this tool (the run's own, which a
	 * stand-in started by a filtered process finds on; an outer nocache's
	 * or crashtest's), which serves it. */
	if (r == -EBUSY && emd_under_filter_of(policy))
		return;
	if (!strcmp(policy, "crashtest")) { /* in the run's journal, not on stderr */
		crash_unfollowed(file, emd_why_unfiltered(r));
		return;
	}
	record_unobserved(file, emd_why_unfiltered(r), r == -ECHILD || r == EMD_FOREIGN ? 0 : -r);
	if (!strcmp(policy, "nocache"))
		warn("%s: its reads and writes stay cached: %s", file, emd_why_unfiltered(r));
	else
		warn("%s: not %s: %s", file, strcmp(policy, "syncstat") ? "eaten" : "observed",
		     emd_why_unfiltered(r));
}

void seccomp_before_exec(const struct seccomp_options *opt, const char *file)
{
	int on = !strcmp(opt->mode, "on"), r;

	if (!getenv(EMD_ENV_SECCOMP) || !(on || unreachable(file)))
		return;
	r = filter_command(opt);
	if (r != 0 && !on && file)
		unobserved(opt, file, r);
	if (!on || r == 0)
		return; /* auto: without a filter, the library's part goes on alone */
	/* One listener per filter chain: an outer eatmydata --seccomp=on, or a
	 * container runtime's supervisor, is there already. */
	if (r == -EBUSY)
		die("cannot install the seccomp filter: the process is under one "
		    "with a supervisor already (an outer eatmydata --seccomp, or a "
		    "container's)");
	if (r == -ECHILD || r == -EPIPE)
		die("cannot install the seccomp filter: the supervisor could not start "
		    "(is seccomp refused here?)");
	if (r == EMD_FOREIGN)
		die("cannot install the seccomp filter: %s", emd_why_unfiltered(r));
	die("cannot install the seccomp filter: %s", strerror(-r));
}

noreturn void seccomp_exec(const char *name, char **argv)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *policy = getenv(EMD_ENV_SECCOMP_POLICY);
	/* The run's tool, in its words; this launcher's if the environment
	 * the program was given lost its name. */
	struct seccomp_options opt = {.policy = policy ? policy : tool_name};
	int sock, r;

	/* A stand-in: whatever fails, the program runs, as posix_spawn asked,
	 * and is named. */
	self[n > 0 ? n : 0] = '\0';
	sock = emd_supervisor(name, n > 0 ? self : NULL, 0);
	r = sock < 0 ? sock : emd_filter_self(sock, getenv(EMD_ENV_NO_IO_URING) != NULL, 0, NULL);
	if (sock >= 0)
		close(sock);
	if (r != 0 && argv[0])
		unobserved(&opt, argv[0], r);
	unsetenv(EMD_ENV_SECCOMP_EXEC); /* the program is not to come back here */
	if (!argv[0] || !argv[1])
		_exit(127);
	preload_drop_refused(argv[0]);
	/* Past the library preloaded here, whose exec would try the filter
	 * again, and say so a second time. */
	syscall(SYS_execve, argv[0], argv + 1, environ);
	_exit(errno == ENOENT ? 127 : 126);
}

void seccomp_supervise(const char *arg)
{
	struct seccomp_options opt = {.mode = "auto", .only = getenv(EMD_ENV_ONLY),
				      .on_behalf = emd_env_true(getenv(EMD_ENV_ON_BEHALF))};
	const char *name = getenv(EMD_ENV_SECCOMP);
	char policy[17];
	int fd, trust, records = -1;

	/* POLICY:FD:TRUST[:RECORDS] */
	if (sscanf(arg, "%16[a-z]:%d:%d:%d", policy, &fd, &trust, &records) < 3 || fd < 3 ||
	    !emd_rendezvous_ok(name))
		return;
	opt.policy = policy;
	opt.record_fd = records;
	supervise(fd, trust == 1, name, &opt);
}

void seccomp_hidden_modes(int argc, char **argv)
{
	if (argc > 1 && !strncmp(argv[1], "--seccomp-exec=", 15))
		seccomp_exec(argv[1] + 15, argv + 2);
	if (argc == 2 && !strncmp(argv[1], "--seccomp-supervise=", 20)) {
		seccomp_supervise(argv[1] + 20);
		die("--seccomp-supervise is the supervisor's own");
	}
}
