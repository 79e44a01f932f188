/* SPDX-License-Identifier: MIT */
/* transact.c -- a small transactional workload in the current directory,
 * printing "committed K" (flushed: a claim) after each transaction, for
 * crashtest's comparison of a program the library journals with the same
 * program journaled by the seccomp supervisor (built dynamic, static and
 * 32-bit: tests/py/test_crashtest_supervised.py, whose checker
 * tests/py/crash/transact_check.py knows each mode's files).
 *   transact good N   N times: data.tmp written, fsynced, renamed over data,
 *                     the directory fsynced
 *   transact bad N    the same without any fsync
 *   transact fork N   good's, each transaction made by a child of its own,
 *                     the claim by the parent once it exited
 *   transact names    mkdir, create, write, link, symlink, rmdir, unlink,
 *                     rename over a file and between directories, ftruncate,
 *                     pwrite, writev, pwritev, O_TRUNC, the *at calls, each
 *                     made durable (fsync, fdatasync, sync, syncfs)
 *   transact mmap     blob written through a shared writable mapping
 *   transact copy|sendfile  a file filled by copy_file_range or sendfile
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

/* Told at once, by a write(2) of its own: the library sees a write to a
 * pipe, which stdio's (glibc's internal __write) it would not. */
static void claim(int k)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "committed %d\n", k);

	if (write(1, line, (size_t)n) != n)
		fail("stdout");
}

static int open_at(int dir, const char *name, int flags)
{
	int fd = openat(dir, name, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		fail(name);
	return fd;
}

static void sync_fd(int fd, const char *what)
{
	if (fsync(fd) != 0)
		fail(what);
}

static void sync_path(const char *path)
{
	int fd = open_at(AT_FDCWD, path, O_RDONLY);

	sync_fd(fd, path);
	close(fd);
}

static void put(int fd, const char *text)
{
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fail("write");
}

/* data: "record 1" .. "record K", then "end K". */
static void replace(int k, int durable)
{
	char line[64];
	int fd = open_at(AT_FDCWD, "data.tmp", O_WRONLY | O_CREAT | O_TRUNC);

	for (int i = 1; i <= k; i++) {
		snprintf(line, sizeof(line), "record %d\n", i);
		put(fd, line);
	}
	snprintf(line, sizeof(line), "end %d\n", k);
	put(fd, line);
	if (durable)
		sync_fd(fd, "data.tmp");
	if (close(fd) != 0 || rename("data.tmp", "data") != 0)
		fail("rename");
	if (durable)
		sync_path(".");
}

/* Transactions 1-3: sub/, sub/a ("alpha"), its link sub/b and a symlink
 * sub/c -> a, then a directory made and removed. */
static void names_make(int step, int dot)
{
	int sub, fd;

	if (step == 1) {
		if (mkdir("sub", 0755) != 0)
			fail("mkdir sub");
		sync_fd(dot, ".");
		return;
	}
	sub = open_at(dot, "sub", O_RDONLY | O_DIRECTORY);
	if (step == 2) {
		fd = open_at(sub, "a", O_WRONLY | O_CREAT | O_EXCL);
		put(fd, "alpha\n");
		sync_fd(fd, "sub/a");
		close(fd);
	} else if (link("sub/a", "sub/b") != 0 || symlink("a", "sub/c") != 0) {
		fail("link");
	}
	sync_fd(sub, "sub");
	close(sub);
}

/* Transactions 4-6: "gone" made and removed; sub/a unlinked; new.tmp
 * renamed over old. */
static void names_remove(int step, int dot)
{
	int fd;

	if (step == 4) {
		if (mkdirat(dot, "gone", 0755) != 0)
			fail("mkdirat gone");
		sync_fd(dot, ".");
		if (rmdir("gone") != 0)
			fail("rmdir gone");
	} else if (step == 5) {
		if (unlink("sub/a") != 0)
			fail("unlink sub/a");
		sync_path("sub");
		return;
	} else {
		fd = open("new.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			fail("new.tmp");
		put(fd, "new\n");
		sync_fd(fd, "new.tmp");
		close(fd);
		if (rename("new.tmp", "old") != 0)
			fail("rename new.tmp");
	}
	sync_fd(dot, ".");
}

/* Transactions 7-8: sub/b cut to "alp" and patched to "aXY"; log written
 * by writev, then patched by pwritev. */
static void names_write(int step, int dot)
{
	struct iovec two[] = {{"one\n", 4}, {"two\n", 4}}, one[] = {{"ONE", 3}};
	int fd;

	if (step == 7) {
		fd = open_at(dot, "sub/b", O_WRONLY);
		if (ftruncate(fd, 3) != 0)
			fail("ftruncate");
		sync_fd(fd, "sub/b");
		if (pwrite(fd, "XY", 2, 1) != 2 || fdatasync(fd) != 0)
			fail("pwrite");
		close(fd);
		return;
	}
	fd = open_at(dot, "log", O_WRONLY | O_CREAT | O_EXCL);
	if (writev(fd, two, 2) != 8)
		fail("writev");
	sync_fd(fd, "log");
	sync_fd(dot, ".");
	if (pwritev(fd, one, 1, 0) != 3)
		fail("pwritev");
	sync_fd(fd, "log");
	close(fd);
}

/* Transactions 9-11: sub/b moved to ./moved, rewritten with O_TRUNC and
 * made durable by sync(); then *at names made and removed, and syncfs(). */
static void names_move(int step, int dot)
{
	int sub = open_at(dot, "sub", O_RDONLY | O_DIRECTORY), fd;

	if (step == 9) {
		if (renameat(sub, "b", dot, "moved") != 0)
			fail("renameat");
		sync_fd(sub, "sub");
		sync_fd(dot, ".");
	} else if (step == 10) {
		fd = open_at(dot, "moved", O_WRONLY | O_TRUNC);
		put(fd, "final\n");
		close(fd);
		sync();
	} else {
		if (linkat(dot, "moved", sub, "again", 0) != 0 || symlinkat("../moved", sub, "up") != 0 ||
		    unlinkat(sub, "c", 0) != 0 || mkdirat(dot, "gone2", 0755) != 0 ||
		    unlinkat(dot, "gone2", AT_REMOVEDIR) != 0)
			fail("the *at calls");
		if (syncfs(dot) != 0)
			fail("syncfs");
	}
	close(sub);
}

static void names(void)
{
	int dot = open_at(AT_FDCWD, ".", O_RDONLY | O_DIRECTORY);

	for (int step = 1; step <= 11; step++) {
		if (step <= 3)
			names_make(step, dot);
		else if (step <= 6)
			names_remove(step, dot);
		else if (step <= 8)
			names_write(step, dot);
		else
			names_move(step, dot);
		claim(step);
	}
	close(dot);
}

/* blob: a page of "mapped\n" lines written through a shared writable
 * mapping (a name without "map": the report names the file), msynced. */
static void mapped(void)
{
	int fd = open_at(AT_FDCWD, "blob", O_RDWR | O_CREAT | O_TRUNC);
	char *p;

	if (ftruncate(fd, 4096) != 0)
		fail("ftruncate blob");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		fail("mmap");
	for (int i = 0; i + 7 <= 4096; i += 7)
		memcpy(p + i, "mapped\n", 7);
	if (msync(p, 4096, MS_SYNC) != 0 || munmap(p, 4096) != 0)
		fail("msync");
	sync_fd(fd, "blob");
	close(fd);
	sync_path(".");
	claim(1);
}

/* data (one transaction of "good") copied into "copy" by the kernel. */
static void copied(const char *how)
{
	int in, out;
	ssize_t n;

	replace(1, 1);
	in = open_at(AT_FDCWD, "data", O_RDONLY);
	out = open_at(AT_FDCWD, "copy", O_WRONLY | O_CREAT | O_TRUNC);
	if (!strcmp(how, "copy"))
		n = copy_file_range(in, NULL, out, NULL, 4096, 0);
	else
		n = sendfile(out, in, NULL, 4096);
	if (n <= 0)
		fail(how);
	sync_fd(out, "copy");
	close(out);
	close(in);
	sync_path(".");
	claim(1);
}

/* Transaction k made by a child; told once it exited, successfully. */
static void forked(int k)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		replace(k, 1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail("the child");
	claim(k);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;

	if (!strcmp(mode, "good") || !strcmp(mode, "bad")) {
		for (int k = 1; k <= n; k++) {
			replace(k, !strcmp(mode, "good"));
			claim(k);
		}
	} else if (!strcmp(mode, "fork")) {
		for (int k = 1; k <= n; k++)
			forked(k);
	} else if (!strcmp(mode, "names")) {
		names();
	} else if (!strcmp(mode, "mmap")) {
		mapped();
	} else if (!strcmp(mode, "copy") || !strcmp(mode, "sendfile")) {
		copied(mode);
	} else {
		fprintf(stderr, "usage: transact good|bad|fork N | names | mmap | copy | sendfile\n");
		return 2;
	}
	return 0;
}
