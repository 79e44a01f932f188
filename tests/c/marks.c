/* SPDX-License-Identifier: MIT */
/* marks.c -- the edges of the library's table of descriptors whose writes
 * sync (libeatmydata/osync.c), with the library's sources built into this
 * program under AddressSanitizer (Makefile): a state set or cleared
 * outside the table is a global buffer overflow, which no run of a real
 * program shows (the word past it is another variable's).  Exits 0 when
 * every CHECK held.
 */
#include "../../libeatmydata/emd.h"

#include <limits.h>
#include <stdio.h>
#include <sys/resource.h>

#include "check.h"

/* The last descriptor the table follows, and the first it does not (asked
 * at every write), when the descriptor limit can be raised that far
 * (root): an O_DSYNC file at each, then a plain one in its place. */
static void test_last_and_first_past(void)
{
	struct rlimit rl = {65537, 65537};
	int fd = open("/dev/null", O_WRONLY | O_DSYNC), plain = open("/dev/null", O_WRONLY);

	if (fd < 0 || plain < 0 || setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		fprintf(stderr, "marks: cannot open descriptor 65536, edges by number only\n");
		return;
	}
	CHECK(dup2(fd, 65535) == 65535 && dup2(fd, 65536) == 65536);
	CHECK(emd_sync_kind(65535) == EMD_K_WRITE_DSYNC);
	CHECK(emd_sync_kind(65536) == EMD_K_WRITE_DSYNC);
	CHECK(dup2(plain, 65535) == 65535 && dup2(plain, 65536) == 65536);
	CHECK(emd_sync_kind(65535) == -1);
	CHECK(emd_sync_kind(65536) == -1);
	close(65535);
	close(65536);
	close(fd);
	close(plain);
}

int main(void)
{
	int edges[] = {0, 31, 32, 63, 64, 65535, 65536, 65537, 1 << 20, INT_MAX};

	__atomic_store_n(&emd_follow_writes, EMD_FOLLOW_ON, __ATOMIC_RELAXED);
	for (size_t i = 0; i < sizeof(edges) / sizeof(*edges); i++) {
		emd_mark_sync_fd(edges[i]);
		if (edges[i] > 2)
			CHECK(emd_sync_kind(edges[i]) == -1); /* no such descriptor */
		emd_sync_forget_range((unsigned)edges[i], (unsigned)edges[i]);
	}
	emd_sync_forget_range(0, ~0u);
	CHECK(emd_sync_kind(-1) == -1);
	test_last_and_first_past();
	if (failures)
		fprintf(stderr, "marks: %d failures\n", failures);
	return failures != 0;
}
