/* SPDX-License-Identifier: MIT */
/* eatmydata.c -- run a command with its durability requests eaten.
 *
 * Invoked under another name (a link `dpkg -> eatmydata` early in PATH), it
 * runs that name from PATH, skipping itself, with argv unchanged.
 */
#include "common/common.h"
#include "report/run.h"
#include "seccomp/seccomp.h"
#include "record.h"
#include "report/report.h"
#include "common/sync_on_exit.h"
#include "env.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"Usage: eatmydata [OPTION]... [--] COMMAND [ARG]...\n"
	"Run COMMAND with fsync, O_SYNC and the other durability requests\n"
	"answered as success without touching the disk.\n"
	"\n"
	"  --only=GLOB[,GLOB]...  eat only in programs whose name (or, for a\n"
	"                         GLOB with a '/', path) matches; the rest of\n"
	"                         the process tree keeps real durability\n"
	"  --sync-on-exit         when COMMAND ends, sync the file systems it\n"
	"                         asked to sync, then exit with its status\n"
	"  --stats                when COMMAND ends, report to stderr the calls\n"
	"                         eaten: per program and kind, file, call site\n"
	"  --seccomp=auto|on|off  also eat the system calls no library sees\n"
	"                         (static and Go programs, aio_fsync) with a\n"
	"                         seccomp filter; auto: for static and Go\n"
	"                         programs (default auto)\n"
	"  --no-io-uring          with the filter: io_uring_setup fails with\n"
	"                         ENOSYS, so programs fall back to system calls\n"
	"  --on-behalf=on|off     with the filter: the supervisor may open and\n"
	"                         write for a program, as itself, to eat an\n"
	"                         O_SYNC open or an RWF_SYNC write (default off:\n"
	"                         a policy judging who opens would see it)\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Environment: EATMYDATA_DISABLE=1 makes the library pass everything\n"
	"through; EATMYDATA_ONLY is --only; EATMYDATA_ON_BEHALF=1 is\n"
	"--on-behalf=on; EATMYDATA_LIBDIR is where to find\n"
	"$LIB/libeatmydata.so.\n"
	"Exit status: 125 for an error of eatmydata itself, 126 if COMMAND\n"
	"cannot be run, 127 if it is not found, else COMMAND's status.\n";

struct options {
	const char *only;
	int sync_on_exit;
	int stats;
	struct seccomp_options seccomp;
	const char *record_dir; /* --stats */
	const char *file;       /* the command, as found in PATH */
};

/* "on" or "off", as a flag. */
static int on_off(const char *option, const char *arg)
{
	if (strcmp(arg, "on") && strcmp(arg, "off"))
		die("%s takes on or off, not '%s'", option, arg);
	return !strcmp(arg, "on");
}

/* Parse the options; returns the index of COMMAND in argv. */
static int parse_options(int argc, char **argv, struct options *opt)
{
	enum { OPT_ONLY = 256, OPT_SYNC_ON_EXIT, OPT_STATS, OPT_SECCOMP,
	       OPT_NO_IO_URING, OPT_ON_BEHALF };
	static const struct option longopts[] = {
		{"only", required_argument, NULL, OPT_ONLY},
		{"sync-on-exit", no_argument, NULL, OPT_SYNC_ON_EXIT},
		{"stats", no_argument, NULL, OPT_STATS},
		{"seccomp", required_argument, NULL, OPT_SECCOMP},
		{"no-io-uring", no_argument, NULL, OPT_NO_IO_URING},
		{"on-behalf", required_argument, NULL, OPT_ON_BEHALF},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ONLY:
			if (!*optarg || strspn(optarg, ",") == strlen(optarg))
				die("--only needs at least one program name");
			opt->only = optarg;
			break;
		case OPT_SYNC_ON_EXIT:
			opt->sync_on_exit = 1;
			break;
		case OPT_STATS:
			opt->stats = 1;
			break;
		case OPT_SECCOMP:
			opt->seccomp.mode = optarg;
			break;
		case OPT_NO_IO_URING:
			opt->seccomp.no_io_uring = 1;
			break;
		case OPT_ON_BEHALF:
			opt->seccomp.on_behalf = on_off("--on-behalf", optarg);
			break;
		default:
			common_option(c, argv, usage);
		}
	}
	if (optind >= argc)
		die("no command given; try 'eatmydata --help'");
	return optind;
}

/* Symlink mode: argv[0] names the program to run. */
static noreturn void run_as_link(const char *name, char **argv)
{
	const struct seccomp_options auto_seccomp = {
		.mode = "auto", .only = getenv(EMD_ENV_ONLY),
		.on_behalf = emd_env_true(getenv(EMD_ENV_ON_BEHALF))};
	const char *file = find_in_path_skipping_self(name, argv[0]);

	if (!file) {
		warn("%s: command not found in PATH (other than this link)", name);
		exit(EXIT_NOT_FOUND);
	}
	preload_prepend(preload_entry("libeatmydata.so"));
	seccomp_prepare(&auto_seccomp);
	seccomp_before_exec(&auto_seccomp, file);
	exec_command(file, argv);
}

/* In the command's process, before its exec. */
static void before_exec(const void *argv_opt)
{
	const struct options *opt = argv_opt;

	seccomp_before_exec(&opt->seccomp, opt->file);
}

/* Run the command as a child, then sync and report as asked. */
static noreturn void run_then_finish(char **argv, const struct options *opt)
{
	const struct report_options report = {0};
	const char *dir = opt->record_dir;
	double start = monotonic_seconds();
	int status;

	status = run_and_wait(argv, before_exec, opt);
	if (opt->sync_on_exit)
		sync_on_exit_finish();
	if (dir) {
		records_save_run(dir, status, monotonic_seconds() - start);
		if (!command_never_ran())
			report_dir(dir, &report);
		records_remove(dir);
	}
	exit_like(status);
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');
	struct options opt = {.seccomp = {.mode = "auto",
		.on_behalf = emd_env_true(getenv(EMD_ENV_ON_BEHALF))}};
	int first;

	/* 0. In the place of a program that posix_spawn starts (exec.c); the
	 * supervisor, started by the process that first needs it. */
	seccomp_hidden_modes(argc, argv);

	/* 1. Under another name, be that program. */
	name = name ? name + 1 : argv[0];
	if (strcmp(name, "eatmydata") != 0 && *name)
		run_as_link(name, argv);

	/* 2. Read the options, then set up the environment for the tree. */
	hold_signals();
	first = parse_options(argc, argv, &opt);
	preload_prepend(preload_entry("libeatmydata.so"));
	if (opt.only && setenv(EMD_ENV_ONLY, opt.only, 1) != 0)
		die("cannot set EATMYDATA_ONLY");
	if ((opt.seccomp.on_behalf ? setenv(EMD_ENV_ON_BEHALF, "1", 1)
				   : unsetenv(EMD_ENV_ON_BEHALF)) != 0)
		die("cannot set EATMYDATA_ON_BEHALF");
	opt.seccomp.only = getenv(EMD_ENV_ONLY);
	opt.file = find_command(argv[first]);

	/* 3. What happens after the command is set up before it; the
	 * supervisor is only named (it keeps the notes directory). */
	if (opt.sync_on_exit)
		sync_on_exit_prepare();
	if (opt.stats)
		opt.record_dir = records_prepare(NULL, EMD_REC_EATEN, argv + first);
	seccomp_prepare(&opt.seccomp);

	/* 4. Become the command, unless something has to happen after it. */
	if (!opt.sync_on_exit && !opt.stats) {
		seccomp_before_exec(&opt.seccomp, opt.file);
		exec_command(argv[first], argv + first);
	}
	run_then_finish(argv + first, &opt);
}
