/* SPDX-License-Identifier: MIT */
/* eatmydata.c -- run a command with its durability requests eaten.
 *
 * Invoked under another name (a link `dpkg -> eatmydata` early in PATH), it
 * runs that name from PATH, skipping itself, with argv unchanged.
 */
#include "common.h"
#include "records.h"
#include "../libeatmydata/record.h"
#include "report.h"
#include "sync_on_exit.h"

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
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Environment: EATMYDATA_DISABLE=1 makes the library pass everything\n"
	"through; EATMYDATA_ONLY is --only; EATMYDATA_LIBDIR is where to find\n"
	"PLATFORM/libeatmydata.so.\n"
	"Exit status: 125 for an error of eatmydata itself, 126 if COMMAND\n"
	"cannot be run, 127 if it is not found, else COMMAND's status.\n";

struct options {
	const char *only;
	int sync_on_exit;
	int stats;
};

/* Parse the options; returns the index of COMMAND in argv. */
static int parse_options(int argc, char **argv, struct options *opt)
{
	enum { OPT_ONLY = 256, OPT_SYNC_ON_EXIT, OPT_STATS };
	static const struct option longopts[] = {
		{"only", required_argument, NULL, OPT_ONLY},
		{"sync-on-exit", no_argument, NULL, OPT_SYNC_ON_EXIT},
		{"stats", no_argument, NULL, OPT_STATS},
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
	const char *file = find_in_path_skipping_self(name);

	if (!file) {
		warn("%s: command not found in PATH (other than this link)", name);
		exit(EXIT_NOT_FOUND);
	}
	preload_prepend(preload_entry("libeatmydata.so"));
	exec_command(file, argv);
}

/* Run the command as a child, then sync and report as asked. */
static noreturn void run_then_finish(char **argv, const struct options *opt)
{
	const struct report_options report = {0};
	const char *dir = NULL;
	double start = monotonic_seconds();
	int status;

	if (opt->sync_on_exit)
		sync_on_exit_prepare();
	if (opt->stats)
		dir = records_prepare(NULL, EMD_REC_EATEN);
	status = run_and_wait(argv);
	if (opt->sync_on_exit)
		sync_on_exit_finish();
	if (dir) {
		records_save_run(dir, argv, status, monotonic_seconds() - start);
		report_dir(dir, &report);
		records_remove(dir);
	}
	exit_like(status);
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');
	struct options opt = {0};
	int first;

	/* 1. Under another name, be that program. */
	name = name ? name + 1 : argv[0];
	if (strcmp(name, "eatmydata") != 0 && *name)
		run_as_link(name, argv);

	/* 2. Read the options, then set up the environment for the tree. */
	first = parse_options(argc, argv, &opt);
	preload_prepend(preload_entry("libeatmydata.so"));
	if (opt.only && setenv("EATMYDATA_ONLY", opt.only, 1) != 0)
		die("cannot set EATMYDATA_ONLY");

	/* 3. Become the command, unless something has to happen after it. */
	if (!opt.sync_on_exit && !opt.stats)
		exec_command(argv[first], argv + first);
	run_then_finish(argv + first, &opt);
}
