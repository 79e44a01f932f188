/* SPDX-License-Identifier: MIT */
/* fanotify-deny.c -- a fanotify permission watcher, as an on-access
 * scanner or fapolicyd is: it judges each open of FILE by the program that
 * makes it, and denies the opens of the program named NAME (by the name of
 * its executable), allowing every other (test_supervisor_attack.py).
 *
 * Usage: fanotify-deny FILE NAME; prints "ready" once watching, then
 * serves until its standard input ends, or 60 seconds have passed.  Needs
 * CAP_SYS_ADMIN. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <time.h>
#include <unistd.h>

/* Is the process pid running a program called name? */
static int runs(int pid, const char *name)
{
	char link[64], exe[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	if ((n = readlink(link, exe, sizeof(exe) - 1)) < 0)
		return 0;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	return !strcmp(base ? base + 1 : exe, name);
}

/* Answer every permission event waiting on fan. */
static void answer(int fan, const char *name)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	ssize_t len = read(fan, buf, sizeof(buf));

	for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, len);
	     m = FAN_EVENT_NEXT(m, len)) {
		struct fanotify_response r = {.fd = m->fd, .response = FAN_ALLOW};

		if ((m->mask & FAN_OPEN_PERM) && runs(m->pid, name))
			r.response = FAN_DENY;
		if (write(fan, &r, sizeof(r)) != sizeof(r))
			perror("fanotify response");
		if (m->fd >= 0)
			close(m->fd);
	}
}

int main(int argc, char **argv)
{
	int fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
	struct pollfd pfd[2] = {{.fd = fan, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
	time_t end = time(NULL) + 60;

	if (argc != 3)
		return fprintf(stderr, "usage: fanotify-deny FILE NAME\n"), 2;
	if (fan < 0 || fanotify_mark(fan, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, argv[1]) != 0)
		return perror("fanotify"), 1;
	printf("ready\n");
	fflush(stdout);
	while (time(NULL) < end && poll(pfd, 2, 1000) >= 0) {
		if (pfd[0].revents & POLLIN)
			answer(fan, argv[2]);
		if (pfd[1].revents & (POLLIN | POLLHUP)) {
			char c;

			if (read(0, &c, 1) <= 0)
				break;
		}
	}
	return 0;
}
