/* SPDX-License-Identifier: MIT */
/* cachedel.c -- drop a file's pages from the page cache, as upstream
 * nocache's cachedel does, dirty ones included.
 *
 * DONTNEED cannot drop a dirty page or one under writeback, so the file is
 * written back first with sync_file_range: the data goes to the disk as the
 * kernel would soon send it anyway, with no journal commit and no flush of
 * the device's cache (no fsync).
 */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"Usage: cachedel [-n N] FILE\n"
	"Drop FILE's pages from the page cache: write back what is dirty, then\n"
	"posix_fadvise(POSIX_FADV_DONTNEED) N times (default 1, at most 100).\n"
	"\n"
	"  -n N           call posix_fadvise N times\n"
	"  -h, --help     show this help and exit\n"
	"  -V, --version  show the version and exit\n"
	"\n"
	"Exit status: 0, or 125 for an error (FILE cannot be opened, is not a\n"
	"regular file...).\n";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c, fd, err;
	long times = 1;

	tool_name = "cachedel";
	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:hV", longopts, NULL)) != -1) {
		if (c == 'n')
			times = parse_number("-n", optarg, 1, 100);
		else
			common_option(c, argv, usage);
	}
	if (argc - optind != 1)
		die("one FILE, please; try 'cachedel --help'");
	fd = open_regular(argv[optind]);
	if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
			    SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) != 0)
		die("cannot write %s back: %s", argv[optind], strerror(errno));
	while (times-- > 0)
		if ((err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) != 0)
			die("posix_fadvise %s: %s", argv[optind], strerror(err));
	return 0;
}
