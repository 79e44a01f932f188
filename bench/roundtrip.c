/* SPDX-License-Identifier: MIT */
/* roundtrip.c -- the floor of any seccomp user-notification supervisor on
 * this machine: a child under a filter that notifies getppid makes N of
 * them, each answered by a parent that does nothing else (RECV, SEND), and
 * prints the microseconds a round trip took.  bench.py builds and runs it
 * beside syncstat's per-call figures.
 * Usage: roundtrip N SYNC   (SYNC 1: SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) */
#define _GNU_SOURCE 1
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

/* The child: its listener's number told (the parent takes the listener with
 * pidfd_getfd), then n getppid timed once the parent is ready. */
static void calls(int sock, int n)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(*f), f};
	struct timespec a, b;
	char ready;
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    (fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			       SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog)) < 0)
		_exit(1);
	if (write(sock, &fd, sizeof(fd)) != sizeof(fd) || read(sock, &ready, 1) != 1)
		_exit(1);
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n / 1000);
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	int sv[2], listener = -1, theirs, status, pidfd;
	pid_t child;

	if (argc != 3 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return 2;
	if ((child = fork()) == 0)
		calls(sv[0], atoi(argv[1]));
	if (read(sv[1], &theirs, sizeof(theirs)) == sizeof(theirs) &&
	    (pidfd = (int)syscall(SYS_pidfd_open, child, 0)) >= 0)
		listener = (int)syscall(SYS_pidfd_getfd, pidfd, theirs, 0);
	if (listener < 0)
		return 1;
	if (atoi(argv[2]))
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, 1UL);
	if (write(sv[1], "r", 1) != 1)
		return 1;
	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
			break; /* the child has exited: the listener hung up */
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
