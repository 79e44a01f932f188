/* SPDX-License-Identifier: MIT */
/* syncstat.c -- run a command with real durability and report every
 * durability call of its process tree: how long, where, by whom. */
#include "common/common.h"
#include "report/compare.h"
#include "report/device.h"
#include "report/run.h"
#include "report/report.h"
#include "seccomp/seccomp.h"
#include "record.h"
#include "env.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"Usage: syncstat [OPTION]... [--] COMMAND [ARG]...\n"
	"       syncstat report [--json[=FILE]] [--html=FILE] [--output=FILE] DIR\n"
	"       syncstat compare [--max-calls-increase=N|P%] [--max-time-increase=T|P%]\n"
	"                        [--group-files=GLOB]... [--skip-files=GLOB]...\n"
	"                        [--any-command] [--output=FILE] [--junit=FILE] OLD NEW\n"
	"Run COMMAND with real durability and report every durability call of\n"
	"its process tree (fsync, fdatasync, syncfs, sync, sync_file_range,\n"
	"msync, O_SYNC opens, pwritev2 with RWF_SYNC): per program and kind of\n"
	"call its latency histogram, then the files and call sites that cost the\n"
	"most, and what eatmydata would save.  'report' prints it again from a\n"
	"directory kept with --keep; 'compare' sets two runs (kept directories\n"
	"or --json reports) side by side and fails (exit 1) when the calls or\n"
	"their time grew past a limit.\n"
	"\n"
	"  -o, --output=FILE  write the report to FILE instead of stderr\n"
	"  -j, --json         the report as JSON (schema eatmydata.syncstat/4,\n"
	"                     /usr/share/eatmydata/syncstat.schema.json)\n"
	"      --json=FILE    the JSON report to FILE, and the text report too\n"
	"      --html=FILE    write the report as one self-contained HTML page\n"
	"                     (charts, no script) to FILE, instead of the text\n"
	"                     report unless --json or --output asks for it too\n"
	"  -k, --keep=DIR     keep the records in DIR (created if needed)\n"
	"  -a, --audit        also report the durability mistakes made: renames\n"
	"                     of unsynced data, directories never synced after\n"
	"                     an entry, writes after the last sync\n"
	"  --max-calls-increase=N|P%   compare: the most the calls may grow, in\n"
	"                     calls or percent (whole run, each program and kind)\n"
	"  --max-time-increase=T|P%    compare: the same for their time (20ms, 1s...)\n"
	"  --group-files=GLOB compare: the files GLOB matches as one row named GLOB\n"
	"                     ('/tmp/tmp.*': temporary names); '*' matches '/' too\n"
	"  --skip-files=GLOB  compare: leave the files GLOB matches out\n"
	"  --junit=FILE       compare: the verdicts as JUnit XML too, a test case per\n"
	"                     limit and program (CI shows them as tests)\n"
	"  --any-command      compare: runs of different commands too (refused\n"
	"                     otherwise: the wrong baseline)\n"
	"  -h, --help         show this help and exit\n"
	"  -V, --version      show the version and exit\n"
	"\n"
	"Exit status: 125 for an error of syncstat itself, 126 if COMMAND cannot\n"
	"be run, 127 if it is not found, else COMMAND's status; 'compare': 0 within\n"
	"the limits, 1 past one, 125 if OLD or NEW cannot be read or ran another\n"
	"command.\n";

struct options {
	struct seccomp_options seccomp;
	const char *file; /* the command, as found in PATH */
	struct report_options report;
	struct compare_options compare;
	const char *keep;
	int audit;
};

static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"json", optional_argument, NULL, 'j'},
	{"html", required_argument, NULL, 'H'},
	{"keep", required_argument, NULL, 'k'},
	{"audit", no_argument, NULL, 'a'},
	{"max-calls-increase", required_argument, NULL, 'C'},
	{"max-time-increase", required_argument, NULL, 'T'},
	{"group-files", required_argument, NULL, 'G'},
	{"skip-files", required_argument, NULL, 'S'},
	{"any-command", no_argument, NULL, 'A'},
	{"junit", required_argument, NULL, 'U'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static int parse_options(int argc, char **argv, struct options *opt)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:jk:ahV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			opt->report.output = optarg;
			break;
		case 'j':
			if (optarg)
				opt->report.json_file = optarg;
			else
				opt->report.json = 1;
			break;
		case 'H':
			opt->report.html = optarg;
			break;
		case 'k':
			opt->keep = optarg;
			break;
		case 'a':
			opt->audit = 1;
			break;
		case 'C':
		case 'T':
			compare_parse_limit(c == 'C' ? "--max-calls-increase"
						     : "--max-time-increase",
					    optarg, c == 'T',
					    c == 'C' ? &opt->compare.calls : &opt->compare.time);
			break;
		case 'G':
			compare_add_pattern("--group-files", optarg, opt->compare.group,
					    &opt->compare.ngroup);
			break;
		case 'S':
			compare_add_pattern("--skip-files", optarg, opt->compare.skip,
					    &opt->compare.nskip);
			break;
		case 'A':
			opt->compare.any_command = 1;
			break;
		case 'U':
			opt->compare.junit = optarg;
			break;
		default:
			common_option(c, argv, usage);
		}
	}
	return optind;
}

/* `syncstat report DIR` and `syncstat compare OLD NEW`: an earlier run's
 * report, two runs side by side; exits, or returns if argv is neither. */
static void subcommand(int argc, char **argv, struct options *opt)
{
	int first;

	if (argc > 1 && strcmp(argv[1], "report") == 0) {
		first = parse_options(argc - 1, argv + 1, opt) + 1;
		if (first != argc - 1 || opt->keep || opt->audit || opt->compare.ngroup ||
		    opt->compare.nskip || opt->compare.any_command || opt->compare.junit)
			die("usage: syncstat report [--json[=FILE]] [--html=FILE] [--output=FILE] DIR");
		report_dir(argv[first], &opt->report);
		exit(0);
	}
	if (argc > 1 && strcmp(argv[1], "compare") == 0) {
		first = parse_options(argc - 1, argv + 1, opt) + 1;
		if (first != argc - 2 || opt->keep || opt->audit || opt->report.json ||
		    opt->report.json_file || opt->report.html)
			die("usage: syncstat compare [--max-calls-increase=N|P%%] "
			    "[--max-time-increase=T|P%%] [--group-files=GLOB]... "
			    "[--skip-files=GLOB]... [--any-command] [--output=FILE] [--junit=FILE] "
			    "OLD NEW");
		opt->compare.output = opt->report.output;
		exit(compare_runs(argv[first], argv[first + 1], &opt->compare));
	}
}

/* In the command's process, before its exec: a program the library cannot
 * reach (static, Go, liburing, aio: elf_kind.c) runs under the filter,
 * its requests timed by the supervisor. */
static void before_exec(const void *arg)
{
	const struct options *opt = arg;

	seccomp_before_exec(&opt->seccomp, opt->file);
}

int main(int argc, char **argv)
{
	struct options opt = {.seccomp = {.mode = "auto", .policy = "syncstat"}};
	const char *dir;
	double start;
	int first, status;

	tool_name = "syncstat";
	/* 0. The supervisor and the stand-in for a posix_spawn'd program. */
	seccomp_hidden_modes(argc, argv);

	/* 1. `syncstat report DIR`, `syncstat compare OLD NEW`. */
	subcommand(argc, argv, &opt);

	/* 2. Record the command's durability calls, passed through; sample the
	 * disks' counters at the start, every few seconds and at the end. */
	first = parse_options(argc, argv, &opt);
	if (first >= argc)
		die("no command given; try 'syncstat --help'");
	if (opt.compare.junit)
		die("--junit is an option of syncstat compare; try 'syncstat --help'");
	hold_signals();
	dir = records_prepare(opt.keep, opt.audit ? EMD_REC_AUDIT : 0, argv + first);
	preload_prepend(preload_entry("libeatmydata.so"));
	if (setenv(EMD_ENV_DISABLE, "1", 1) != 0)
		die("cannot set EATMYDATA_DISABLE");
	opt.file = find_command(argv[first]);
	seccomp_prepare(&opt.seccomp);
	device_sample_start(dir);
	run_and_wait_tick(device_tick, DEVICE_TICK);
	start = monotonic_seconds();
	status = run_and_wait(argv + first, before_exec, &opt);
	device_sample_end();

	/* 3. Report, then exit as the command did; a command that could not be
	 * run (its error said) has no report. */
	records_save_run(dir, status, monotonic_seconds() - start);
	if (command_never_ran() && !opt.keep)
		records_remove(dir);
	if (command_never_ran())
		exit_like(status);
	if (opt.audit)
		report_finish_audit(dir);
	report_dir(dir, &opt.report);
	if (!opt.keep)
		records_remove(dir);
	exit_like(status);
}
