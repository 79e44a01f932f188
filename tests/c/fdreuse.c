/* SPDX-License-Identifier: MIT */
/* fdreuse.c -- a descriptor number handed from one file to another by each
 * route a program has, then synced: the record must name the file the
 * number is at the time of the call (libeatmydata/fdid.c keeps identities
 * between calls).  In DIR, file k (or directory k) gets k+1 fsyncs after
 * its number changed hands; the one synced before the change gets one.
 * The route that hands the number over unseen by the library is a close
 * made with the syscall instruction.  A forked child syncs "child".
 * Usage: fdreuse DIR */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[4096];

/* close(2) by the syscall instruction: no libc, no library sees it. */
static void close_unseen(int fd)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_close), "D"((long)fd) : "rcx", "r11", "memory");
	(void)r;
}

static const char *name(const char *n)
{
	static char p[4200];

	snprintf(p, sizeof(p), "%s/%s", dir, n);
	return p;
}

static int make(const char *n)
{
	int fd = open(name(n), O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, "x", 1) != 1)
		exit(2);
	return fd;
}

static DIR *subdir(const char *n)
{
	DIR *d;

	mkdir(name(n), 0700);
	if (!(d = opendir(name(n))))
		exit(3);
	return d;
}

static void syncs(int fd, int n)
{
	while (n-- > 0)
		if (fsync(fd) != 0)
			exit(4);
}

/* The number now is fd's: synced n times, then let go. */
static void expect(int fd, int want, int n)
{
	if (fd != want)
		exit(5);
	syncs(fd, n);
}

int main(int argc, char **argv)
{
	FILE *f;
	DIR *d;
	int fd, other;

	if (argc != 2)
		return 1;
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	/* An open the library sees hands the number over (one without
	 * O_CREAT: libc's fast path). */
	close(make("b-open"));
	syncs(fd = make("a-open"), 1), close_unseen(fd);
	expect(open(name("b-open"), O_RDWR), fd, 2), close(fd);
	/* close, then an open it does not see (opendir's). */
	syncs(fd = make("c-close"), 1), close(fd);
	expect(dirfd(d = subdir("d-close")), fd, 3), closedir(d);
	/* fclose. */
	if (!(f = fopen(name("e-fclose"), "w")))
		return 2;
	syncs(fd = fileno(f), 1), fclose(f);
	expect(dirfd(d = subdir("f-fclose")), fd, 4);
	/* closedir. */
	closedir(d);
	expect(dirfd(d = subdir("g-closedir")), fd, 5), closedir(d);
	/* dup2 onto a synced number. */
	syncs(fd = make("h-dup2"), 1);
	other = make("i-dup2");
	dup2(other, fd), close(other);
	syncs(fd, 6), close(fd);
	/* close_range. */
	syncs(fd = make("j-close_range"), 1), close_range((unsigned)fd, (unsigned)fd, 0);
	expect(dirfd(d = subdir("k-close_range")), fd, 7), closedir(d);
	/* closefrom. */
	syncs(fd = make("q-closefrom"), 1), closefrom(fd);
	expect(dirfd(d = subdir("r-closefrom")), fd, 9), closedir(d);
	/* pclose, after a failed fsync of the pipe (which looks again, and
	 * keeps the pipe). */
	if (!(f = popen("cat >/dev/null", "w")) || fsync(fd = fileno(f)) == 0)
		return 7;
	other = open("/dev/null", O_RDONLY); /* the pipe's other end's number */
	pclose(f);
	expect(dirfd(d = subdir("s-pclose")), fd, 10), closedir(d);
	close(other);
	/* syscall(SYS_close). */
	syncs(fd = make("l-syscall"), 1), syscall(SYS_close, fd);
	expect(dirfd(d = subdir("m-syscall")), fd, 8), closedir(d);
	/* Unseen both ways: the failed call looks again. */
	syncs(fd = make("n-unseen"), 1), close_unseen(fd);
	if ((other = socket(AF_UNIX, SOCK_STREAM, 0)) != fd || fsync(fd) == 0)
		return 6;
	close(other);
	/* A child is its own process. */
	if (fork() == 0) {
		syncs(make("o-child"), 1);
		_exit(0);
	}
	wait(NULL);
	syncs(make("p-parent"), 1);
	return 0;
}
