/* SPDX-License-Identifier: MIT */
/* cachestats.c -- how much of a file is in the page cache, as upstream
 * nocache's cachestats prints it.
 *
 * The residency comes from mincore on a shared mapping of the file, a
 * window at a time (a 32-bit process cannot map a large file at once).
 * The kernel answers for the page cache only to the file's owner or to
 * whoever may write it; for others it counts the pages of the mapping.
 */
#include "common/common.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"Usage: cachestats [-q|-v] FILE\n"
	"Print how many of FILE's pages are in the page cache.\n"
	"\n"
	"  -q             print nothing; exit 0 if FILE is all cached, else 1\n"
	"  -v             also print a map, one 'x' per cached page\n"
	"  -h, --help     show this help and exit\n"
	"  -V, --version  show the version and exit\n"
	"\n"
	"Exit status: 0, or with -q 1 when not all of FILE is cached; 125 for\n"
	"an error (FILE cannot be opened, is not a regular file...).\n";

#define WINDOW (256L << 20)
#define MAP_ROW 32

/* One byte a page, bit 0 set for a cached one. */
static unsigned char *residency(int fd, off_t size, size_t pages, long page)
{
	unsigned char *vec = malloc(pages ? pages : 1);

	if (!vec)
		die("out of memory");
	for (off_t at = 0; at < size; at += WINDOW) {
		size_t len = size - at < WINDOW ? (size_t)(size - at) : WINDOW;
		void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, at);

		if (map == MAP_FAILED)
			die("cannot map the file: %s", strerror(errno));
		if (mincore(map, len, vec + at / page) != 0)
			die("mincore: %s", strerror(errno));
		munmap(map, len);
	}
	return vec;
}

/* The map: rows of 32 pages, "|x|" for a cached one. */
static void print_map(const unsigned char *vec, size_t pages)
{
	printf("\ncache map:\n");
	for (size_t i = 0; i < pages; i++) {
		if (i % MAP_ROW == 0)
			printf("%6zu: |", i);
		fputs(vec[i] & 1 ? "x|" : " |", stdout);
		if (i % MAP_ROW == MAP_ROW - 1 || i + 1 == pages)
			putchar('\n');
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c, quiet = 0, verbose = 0, fd;
	long page = sysconf(_SC_PAGESIZE);
	size_t pages, cached = 0;
	unsigned char *vec;
	struct stat st;

	tool_name = "cachestats";
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qvhV", longopts, NULL)) != -1) {
		if (c == 'q')
			quiet = 1;
		else if (c == 'v')
			verbose = 1;
		else
			common_option(c, argv, usage);
	}
	if (argc - optind != 1)
		die("one FILE, please; try 'cachestats --help'");
	if (quiet && verbose)
		die("-q and -v exclude each other");
	fd = open_regular(argv[optind]);
	if (fstat(fd, &st) != 0)
		die("cannot stat %s: %s", argv[optind], strerror(errno));
	pages = (st.st_size + page - 1) / page;
	vec = residency(fd, st.st_size, pages, page);
	for (size_t i = 0; i < pages; i++)
		cached += vec[i] & 1;
	if (quiet)
		return cached == pages ? 0 : 1;
	printf("pages in cache: %zu/%zu (%.1f%%)  [filesize=%.1fK, pagesize=%ldK]\n",
	       cached, pages, pages ? 100.0 * cached / pages : 0.0,
	       st.st_size / 1024.0, page / 1024);
	if (verbose && pages)
		print_map(vec, pages);
	return 0;
}
