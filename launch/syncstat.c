/* SPDX-License-Identifier: MIT */
/* syncstat.c -- run a command with real durability and report every
 * durability call of its process tree: how long, where, by whom. */
#include "common.h"
#include "report/run.h"
#include "report/report.h"
#include "record.h"
#include "env.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"Usage: syncstat [OPTION]... [--] COMMAND [ARG]...\n"
	"       syncstat report [--json] [--output=FILE] DIR\n"
	"Run COMMAND with real durability and report every durability call of\n"
	"its process tree (fsync, fdatasync, syncfs, sync, sync_file_range,\n"
	"msync, O_SYNC opens, pwritev2 with RWF_SYNC): per program and kind of\n"
	"call its latency histogram, then the files and call sites that cost the\n"
	"most, and what eatmydata would save.  'report' prints it again from a\n"
	"directory kept with --keep.\n"
	"\n"
	"  -o, --output=FILE  write the report to FILE instead of stderr\n"
	"  -j, --json         the report as JSON (schema eatmydata.syncstat/1)\n"
	"  -k, --keep=DIR     keep the records in DIR (created if needed)\n"
	"  -a, --audit        also report the durability mistakes made: renames\n"
	"                     of unsynced data, directories never synced after\n"
	"                     an entry, writes after the last sync\n"
	"  -h, --help         show this help and exit\n"
	"  -V, --version      show the version and exit\n"
	"\n"
	"Exit status: 125 for an error of syncstat itself, 126 if COMMAND cannot\n"
	"be run, 127 if it is not found, else COMMAND's status.\n";

struct options {
	struct report_options report;
	const char *keep;
	int audit;
};

static int parse_options(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},
		{"keep", required_argument, NULL, 'k'},
		{"audit", no_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:jk:ahV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			opt->report.output = optarg;
			break;
		case 'j':
			opt->report.json = 1;
			break;
		case 'k':
			opt->keep = optarg;
			break;
		case 'a':
			opt->audit = 1;
			break;
		default:
			common_option(c, argv, usage);
		}
	}
	return optind;
}

int main(int argc, char **argv)
{
	struct options opt = {0};
	const char *dir;
	double start;
	int first, status;

	tool_name = "syncstat";
	/* 1. `syncstat report DIR`: print an earlier run's report. */
	if (argc > 1 && strcmp(argv[1], "report") == 0) {
		first = parse_options(argc - 1, argv + 1, &opt) + 1;
		if (first != argc - 1 || opt.keep || opt.audit)
			die("usage: syncstat report [--json] [--output=FILE] DIR");
		report_dir(argv[first], &opt.report);
		return 0;
	}

	/* 2. Record the command's durability calls, passed through. */
	first = parse_options(argc, argv, &opt);
	if (first >= argc)
		die("no command given; try 'syncstat --help'");
	dir = records_prepare(opt.keep, opt.audit ? EMD_REC_AUDIT : 0, argv + first);
	preload_prepend(preload_entry("libeatmydata.so"));
	if (setenv(EMD_ENV_DISABLE, "1", 1) != 0)
		die("cannot set EATMYDATA_DISABLE");
	start = monotonic_seconds();
	status = run_and_wait(argv + first, NULL, NULL);

	/* 3. Report, then exit as the command did. */
	records_save_run(dir, status, monotonic_seconds() - start);
	if (opt.audit)
		report_finish_audit(dir);
	report_dir(dir, &opt.report);
	if (!opt.keep)
		records_remove(dir);
	exit_like(status);
}
