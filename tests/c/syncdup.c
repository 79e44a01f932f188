/* SPDX-License-Identifier: MIT */
/* syncdup.c -- a file opened with O_DSYNC, then written through a copy of
 * its descriptor made one way or another, each way a mode: the flag is the
 * open file's, so every write through any copy syncs (or, set or cleared
 * with F_SETFL, which cannot change it, does or does not as it did).
 * Five writes, one through each write call (write, pwrite, writev,
 * pwritev, pwritev2 without flags; or five Linux AIO writes, or five
 * flushes of a stdio stream); the original
 * descriptor is closed before, so that only the copy writes.  Built dynamic and static (the
 * library's and the supervisor's ways): tests/py/test_syncstat_copies.py.
 *
 * Usage: syncdup MODE FILE   (MODE: see `modes` below)
 *        syncdup write-fd FD (the five writes on an inherited descriptor)
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *self;

static void fail(const char *what)
{
	fprintf(stderr, "syncdup: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void five_writes(int fd)
{
	struct iovec iov = {(void *)"data", 4};

	if (write(fd, "data", 4) != 4 || pwrite(fd, "data", 4, 4) != 4 ||
	    writev(fd, &iov, 1) != 4 || pwritev(fd, &iov, 1, 12) != 4 ||
	    pwritev2(fd, &iov, 1, 16, 0) != 4)
		fail("write");
}

/* The descriptor moved past the original, which is closed. */
static int moved(int fd, int copy)
{
	if (copy < 0)
		fail("copy");
	close(fd);
	return copy;
}

/* A descriptor sent over a socket to this very process (SCM_RIGHTS): the
 * number it arrives as was never seen opened. */
static int passed(int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))] = {0}, byte = 'x';
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			     .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int sv[2], got = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		fail("socketpair");
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sv[0], &msg, 0) != 1)
		fail("sendmsg");
	close(fd);
	if (recvmsg(sv[1], &msg, 0) != 1 || !(c = CMSG_FIRSTHDR(&msg)))
		fail("recvmsg");
	memcpy(&got, CMSG_DATA(c), sizeof(int));
	close(sv[0]);
	close(sv[1]);
	return got;
}

/* The number `at` written on first (a plain file: its writes do not
 * sync), then made a copy of fd: what was learnt of the number before
 * must not stand. */
static int over_plain(int fd, int at, const char *name, int raw)
{
	char plain[4200];
	int p;

	snprintf(plain, sizeof(plain), "%s-plain", name);
	if ((p = open(plain, O_WRONLY | O_CREAT, 0644)) < 0 || dup2(p, at) != at)
		fail("plain");
	close(p);
	five_writes(at);
	return moved(fd, raw ? (int)syscall(SYS_dup3, fd, at, 0) : dup2(fd, at));
}

/* Five Linux AIO writes (as libaio makes them: syscall()), which the
 * kernel makes and syncs in io_submit. */
static void aio_writes(int fd)
{
	aio_context_t ctx = 0;
	struct iocb cb[5], *list[5];
	struct io_event ev[5];

	if (syscall(SYS_io_setup, 5, &ctx) != 0)
		fail("io_setup");
	for (int i = 0; i < 5; i++) {
		cb[i] = (struct iocb){.aio_lio_opcode = IOCB_CMD_PWRITE, .aio_fildes = (unsigned)fd,
				      .aio_buf = (unsigned long)"data", .aio_nbytes = 4,
				      .aio_offset = 4 * i};
		list[i] = &cb[i];
	}
	if (syscall(SYS_io_submit, ctx, 5L, list) != 5 ||
	    syscall(SYS_io_getevents, ctx, 5L, 5L, ev, NULL) != 5)
		fail("io_submit");
	for (int i = 0; i < 5; i++)
		if (ev[i].res != 4)
			fail("aio write");
	syscall(SYS_io_destroy, ctx);
}

/* Five writes of a stdio stream, each flushed: the C library's own. */
static void stream_writes(int fd)
{
	FILE *f = fdopen(fd, "w");

	for (int i = 0; f && i < 5; i++)
		if (fputs("data", f) < 0 || fflush(f) != 0)
			fail("fputs");
	if (!f || fclose(f) != 0)
		fail("fdopen");
}

static void wait_child(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		fail("child");
}

static void run_exec(int fd)
{
	char arg[16];

	snprintf(arg, sizeof(arg), "%d", fd);
	execl(self, self, "write-fd", arg, (char *)NULL);
	fail("exec");
}

/* posix_spawn of this program on a copy of fd as its descriptor 7. */
static void spawned(int fd)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = {(char *)self, "write-fd", "7", NULL};
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 7);
	if ((errno = posix_spawn(&pid, self, &fa, NULL, argv, environ)) != 0)
		fail("posix_spawn");
	close(fd);
	wait_child(pid);
}

/* The descriptor the mode writes through, or -1 when it wrote itself. */
static int copy_of(const char *mode, int fd, const char *name)
{
	pid_t pid;

	if (!strcmp(mode, "open"))
		return fd;
	if (!strcmp(mode, "dup"))
		return moved(fd, dup(fd));
	if (!strcmp(mode, "dup2"))
		return moved(fd, dup2(fd, 10));
	if (!strcmp(mode, "dup3"))
		return moved(fd, dup3(fd, 11, O_CLOEXEC));
	if (!strcmp(mode, "dup2-over-plain"))
		return over_plain(fd, 12, name, 0);
	if (!strcmp(mode, "syscall-dup3-over-plain"))
		return over_plain(fd, 13, name, 1);
	if (!strcmp(mode, "F_DUPFD"))
		return moved(fd, fcntl(fd, F_DUPFD, 20));
	if (!strcmp(mode, "F_DUPFD_CLOEXEC"))
		return moved(fd, fcntl(fd, F_DUPFD_CLOEXEC, 21));
	if (!strcmp(mode, "syscall-dup"))
		return moved(fd, (int)syscall(SYS_dup, fd));
	if (!strcmp(mode, "syscall-F_DUPFD"))
		return moved(fd, (int)syscall(SYS_fcntl, fd, F_DUPFD, 22));
	if (!strcmp(mode, "SCM_RIGHTS"))
		return passed(fd);
	if (!strcmp(mode, "F_SETFL-clear")) {
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~(O_SYNC | O_DSYNC)) != 0)
			fail("F_SETFL");
		return fd;
	}
	if (!strcmp(mode, "fork")) {
		if ((pid = fork()) == 0) {
			five_writes(fd);
			_exit(0);
		}
		close(fd);
		wait_child(pid);
		return -1;
	}
	if (!strcmp(mode, "exec"))
		run_exec(moved(fd, dup2(fd, 14)));
	if (!strcmp(mode, "fork-exec")) {
		if ((pid = fork()) == 0)
			run_exec(fd);
		close(fd);
		wait_child(pid);
		return -1;
	}
	if (!strcmp(mode, "posix_spawn")) {
		spawned(fd);
		return -1;
	}
	if (!strcmp(mode, "fdopen")) {
		stream_writes(moved(fd, dup(fd)));
		return -1;
	}
	if (!strcmp(mode, "aio")) {
		aio_writes(moved(fd, dup(fd)));
		return -1;
	}
	errno = EINVAL;
	fail(mode);
	return -1;
}

int main(int argc, char **argv)
{
	int fd, flags = O_WRONLY | O_CREAT | O_TRUNC;

	self = argv[0];
	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "write-fd")) {
		five_writes(atoi(argv[2]));
		return 0;
	}
	/* F_SETFL cannot set the flag: the writes of this one never sync. */
	if (strcmp(argv[1], "F_SETFL-set") != 0)
		flags |= O_DSYNC;
	if ((fd = open(argv[2], flags, 0644)) < 0)
		fail(argv[2]);
	if (!strcmp(argv[1], "F_SETFL-set")) {
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_SYNC) != 0)
			fail("F_SETFL");
	} else if ((fd = copy_of(argv[1], fd, argv[2])) < 0) {
		return 0;
	}
	five_writes(fd);
	close(fd);
	return 0;
}
