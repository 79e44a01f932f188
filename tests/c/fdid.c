/* SPDX-License-Identifier: MIT */
/* fdid.c -- libeatmydata/fdid.c, built into this program with its statx
 * stood in for, so that what another thread does between a lookup's statx
 * and its store (the race no timing makes reliable) happens on cue: a
 * forget there must leave nothing kept.  Prints "ok" or what failed
 * (tests/py/test_syncstat_identity.py). */
#include "../../libeatmydata/fdid.c"

#include <stdio.h>

static int stats, race_fd = -1;

/* osync.c's forget, which fdid.c's calls first: not this test's. */
void emd_sync_forget_range(unsigned lo, unsigned hi)
{
	(void)lo;
	(void)hi;
}

/* Each look finds a new file (inode 1000 + n); `race_fd` is let go by
 * "another thread" between the look and the store. */
int emd_rec_stat(int dirfd, const char *path, int flags, struct emd_rec_file *f)
{
	(void)path;
	(void)flags;
	*f = (struct emd_rec_file){.dev = 1, .ino = 1000 + (unsigned)++stats};
	if (dirfd == race_fd)
		emd_fd_forget_range((unsigned)dirfd, (unsigned)dirfd);
	return 0;
}

static int failed;

static void expect(const char *what, int ok)
{
	if (!ok) {
		printf("failed: %s (statx %d times)\n", what, stats);
		failed = 1;
	}
}

static unsigned long long ino(int fd)
{
	struct emd_rec_file f;

	return emd_fd_identity(fd, &f) == 0 ? f.ino : 0;
}

int main(void)
{
	expect("first look", ino(5) == 1001 && stats == 1);
	expect("kept", ino(5) == 1001 && stats == 1);
	emd_fd_forget_range(5, 5);
	expect("looked again after a forget", ino(5) == 1002 && stats == 2);
	race_fd = 5;
	emd_fd_forget_range(5, 5);
	expect("the racing look answers", ino(5) == 1003 && stats == 3);
	race_fd = -1;
	expect("what a forget overtook is not kept", ino(5) == 1004 && stats == 4);
	expect("then kept", ino(5) == 1004 && stats == 4);
	expect("another number", ino(9) == 1005 && ino(9) == 1005 && stats == 5);
	emd_fd_forget_range(3, ~0u);
	expect("a range to the end forgets the highest kept", ino(9) == 1006 && stats == 6);
	expect("and the lower", ino(5) == 1007 && stats == 7);
	expect("past the table, every time", ino(KEPT_FDS) == 1008 && ino(KEPT_FDS) == 1009);
	expect("a negative number, every time", ino(-1) == 1010 && ino(-1) == 1011);
	if (!failed)
		printf("ok\n");
	return failed;
}
