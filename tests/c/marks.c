/* SPDX-License-Identifier: MIT */
/* marks.c -- the edges of the library's table of O_SYNC descriptors
 * (libeatmydata/osync.c), with the library's sources built into this
 * program under AddressSanitizer (Makefile): a mark set outside the table
 * is a global buffer overflow, which no run of a real program shows (the
 * word past it is another variable's).  Exits 0 when every CHECK held.
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "record.h"

void emd_mark_sync_fd(int fd);
int emd_sync_kind(int fd);

#include "check.h"

/* The last descriptor the table follows, and the first it does not, when
 * the descriptor limit can be raised that far (root): an O_DSYNC file at
 * each. */
static void test_last_and_first_past(void)
{
	struct rlimit rl = {65537, 65537};
	int fd = open("/dev/null", O_WRONLY | O_DSYNC);

	if (fd < 0 || setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		fprintf(stderr, "marks: cannot open descriptor 65536, edges by number only\n");
		return;
	}
	CHECK(dup2(fd, 65535) == 65535 && dup2(fd, 65536) == 65536);
	emd_mark_sync_fd(65535);
	emd_mark_sync_fd(65536);
	CHECK(emd_sync_kind(65535) == EMD_K_WRITE_DSYNC);
	CHECK(emd_sync_kind(65536) == -1);
	close(65535);
	close(65536);
	close(fd);
}

int main(void)
{
	int edges[] = {0, 63, 64, 65535, 65536, 65537, 1 << 20, INT_MAX};

	for (size_t i = 0; i < sizeof(edges) / sizeof(*edges); i++) {
		emd_mark_sync_fd(edges[i]);
		if (edges[i] >= 65536)
			CHECK(emd_sync_kind(edges[i]) == -1);
	}
	CHECK(emd_sync_kind(-1) == -1);
	test_last_and_first_past();
	if (failures)
		fprintf(stderr, "marks: %d failures\n", failures);
	return failures != 0;
}
