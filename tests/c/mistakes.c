/* SPDX-License-Identifier: MIT */
/* mistakes.c -- small programs that make exactly one durability mistake,
 * and the same written correctly, for syncstat --audit.
 * Usage: mistakes MODE DIR  (see the table in main)
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int dirfd_;

static void check(int ok, const char *what)
{
	if (!ok) {
		perror(what);
		exit(1);
	}
}

static int create(const char *name, const char *data)
{
	int fd = openat(dirfd_, name, O_RDWR | O_CREAT | O_TRUNC, 0644);

	check(fd >= 0 && write(fd, data, strlen(data)) == (ssize_t)strlen(data), name);
	return fd;
}

static void sync_fd(int fd)
{
	check(fsync(fd) == 0, "fsync");
}

/* An existing, durable file named "target". */
static void target(void)
{
	int fd = create("target", "old contents\n");

	sync_fd(fd);
	close(fd);
	sync_fd(dirfd_);
}

static void replace(int synced, int change, int dir_synced)
{
	int fd;

	target();
	fd = create("target.tmp", "new contents\n");
	if (synced)
		sync_fd(fd);
	if (change == 1)
		check(write(fd, "more\n", 5) == 5, "write");
	if (change == 2 && fork() == 0) { /* another process appends */
		int fd2 = openat(dirfd_, "target.tmp", O_WRONLY | O_APPEND);

		_exit(fd2 < 0 || write(fd2, "more\n", 5) != 5);
	}
	if (change == 2)
		wait(NULL);
	close(fd);
	check(renameat(dirfd_, "target.tmp", dirfd_, "target") == 0, "rename");
	if (dir_synced)
		sync_fd(dirfd_);
}

static void new_file(int dir_synced, int tail)
{
	int fd = create("new", "data\n");
	char *m;

	sync_fd(fd);
	if (dir_synced)
		sync_fd(dirfd_);
	if (tail == 1)
		check(write(fd, "tail\n", 5) == 5, "write");
	if (tail == 2) {
		m = mmap(NULL, 5, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		check(m != MAP_FAILED, "mmap");
		memcpy(m, "DATA", 4);
		munmap(m, 5);
	}
	close(fd);
}

/* The rename made durable by syncfs of its file system, or (elsewhere) of
 * another one, /proc, which covers nothing of it. */
static void with_syncfs(int elsewhere)
{
	int other = elsewhere ? open("/proc", O_RDONLY | O_DIRECTORY) : -1;
	int fd;

	check(!elsewhere || other >= 0, "/proc");
	target();
	fd = create("target.tmp", "new contents\n");
	check(syncfs(elsewhere ? other : fd) == 0, "syncfs");
	close(fd);
	check(renameat(dirfd_, "target.tmp", dirfd_, "target") == 0, "rename");
	check(syncfs(elsewhere ? other : dirfd_) == 0, "syncfs");
}

int main(int argc, char **argv)
{
	const char *m = argc == 3 ? argv[1] : "";

	check(argc == 3 && (dirfd_ = open(argv[2], O_RDONLY | O_DIRECTORY)) >= 0, "usage: mistakes MODE DIR");
	if (!strcmp(m, "rename-unsynced"))
		replace(0, 0, 1);
	else if (!strcmp(m, "rename-changed"))
		replace(1, 1, 1);
	else if (!strcmp(m, "rename-changed-by-another"))
		replace(1, 2, 1);
	else if (!strcmp(m, "rename-dir-not-synced"))
		replace(1, 0, 0);
	else if (!strcmp(m, "create-dir-not-synced"))
		new_file(0, 0);
	else if (!strcmp(m, "tail"))
		new_file(1, 1);
	else if (!strcmp(m, "tail-mmap"))
		new_file(1, 2);
	else if (!strcmp(m, "correct")) {
		replace(1, 0, 1);
		new_file(1, 0);
	} else if (!strcmp(m, "correct-syncfs"))
		with_syncfs(0);
	else if (!strcmp(m, "syncfs-elsewhere"))
		with_syncfs(1);
	else
		check(0, m);
	return 0;
}
