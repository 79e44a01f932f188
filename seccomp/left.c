/* SPDX-License-Identifier: MIT */
/* left.c -- eatmydata's requests that went on to the kernel as the program
 * made them, and synced: an O_SYNC open or RWF_SYNC write without
 * --on-behalf=on, an open of a program the tree started under Landlock's
 * shadow (a filter of its own), a descriptor or mapping that could not be
 * reached.  With --stats they are recorded apart from those eaten
 * (timed.c); without, they are counted per process and said on its
 * standard error in one line when it ends: how many, of which program, and
 * the option that eats them.  "All eaten" is never said of a run that left
 * any.
 *
 * No program is stopped at its exit to say it (a supervisor killed would
 * leave the tree unable to exit): its standard error is held from its first
 * request left until it ends (its pidfd, watched by the main thread) or
 * stops being its standard error (kcmp, each round): then the line is
 * written and the file let go, so that a reader waiting for its end is kept
 * waiting no longer than the program itself would keep it (and at most
 * until the next round, 100 ms, after the program let it go).
 */
#include "common/common.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define HELD LEFT_HELD /* processes followed at once: past it, the first is told now */

enum { OPENS, WRITES, OTHERS, NKINDS };

static struct held {
	pid_t pid;
	int pidfd, err;
	char program[PATH_MAX];
	unsigned long long n[NKINDS];
	unsigned long long none; /* of them, none that an option eats */
	int needs;               /* the options that eat the others */
} held[HELD];
static int nheld;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int kind_of(const struct call *c)
{
	if (c->request->eat == EMD_EAT_OPEN)
		return OPENS;
	return c->request->eat == EMD_EAT_WRITE ? WRITES : OTHERS;
}

/* "N opens with O_SYNC or O_DSYNC, N writes with..." */
static void what(char *b, size_t size, const struct held *h)
{
	static const char *const names[NKINDS][2] = {
		{"open with O_SYNC or O_DSYNC", "opens with O_SYNC or O_DSYNC"},
		{"write with RWF_SYNC or RWF_DSYNC", "writes with RWF_SYNC or RWF_DSYNC"},
		{"other request", "other requests"}};
	size_t at = 0;

	b[0] = '\0';
	for (int k = 0; k < NKINDS && at < size; k++)
		if (h->n[k])
			at += (size_t)snprintf(b + at, size - at, "%s%llu %s", at ? ", " : "", h->n[k],
					       names[k][h->n[k] != 1]);
}

/* The options that eat what `needs` says. */
static const char *options(int needs)
{
	if ((needs & EMD_REC_NEEDS_SECCOMP_ON) && (needs & EMD_REC_NEEDS_ON_BEHALF))
		return "--seccomp=on --on-behalf=on";
	return needs & EMD_REC_NEEDS_SECCOMP_ON ? "--seccomp=on" : "--on-behalf=on";
}

/* The line, on the held standard error: without blocking where the file
 * allows (a pipe no one reads would stall this thread), else as it is (a
 * regular file, a terminal). */
static void say(const struct held *h)
{
	unsigned long long all = h->n[OPENS] + h->n[WRITES] + h->n[OTHERS];
	char kinds[200], line[PATH_MAX + 512], eats[160];
	struct iovec iov = {line, 0};
	struct stat st;
	int n;

	what(kinds, sizeof(kinds), h);
	if (!h->none)
		snprintf(eats, sizeof(eats), "%s eats %s", options(h->needs), all == 1 ? "it" : "them");
	else if (h->none == all)
		snprintf(eats, sizeof(eats), "no option eats %s: the supervisor may not act for the "
			 "program", all == 1 ? "it" : "them");
	else
		snprintf(eats, sizeof(eats), "%s eats %llu, no option the other %llu (the supervisor "
			 "may not act for the program)", options(h->needs), all - h->none, h->none);
	n = snprintf(line, sizeof(line), "eatmydata: %s (pid %d): %llu durability %s left to the "
		     "disk (%s); %s\n", h->program, h->pid, all,
		     all == 1 ? "request" : "requests", kinds, eats);
	iov.iov_len = n > 0 && (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if ((fstat(h->err, &st) == 0 && S_ISREG(st.st_mode)) ||
	    (pwritev2(h->err, &iov, 1, -1, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP))
		if (write(h->err, line, iov.iov_len) < 0)
			(void)0; /* nowhere to say it */
}

static void let_go(int i)
{
	say(&held[i]);
	close(held[i].err);
	close(held[i].pidfd);
	held[i] = held[--nheld];
}

/* The held entry of the caller's process, taken now if need be; NULL when
 * it cannot be (its standard error closed, no pidfd). */
static struct held *held_of(const struct call *c, pid_t pid)
{
	struct held h = {.pid = pid};
	char exe[64];
	ssize_t n;

	for (int i = 0; i < nheld; i++)
		if (held[i].pid == pid)
			return &held[i];
	if (nheld == HELD)
		let_go(0); /* told now, with what it left so far */
	/* The program by its file, as the kernel names it. */
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	n = readlink(exe, h.program, sizeof(h.program) - 1);
	snprintf(h.program + (n > 0 ? n : 0), sizeof(h.program) - (size_t)(n > 0 ? n : 0), "%s",
		 n > 0 ? "" : "?");
	h.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	h.err = their_fd(c, 2, NULL);
	if (h.pidfd < 0 || h.err < 0) {
		if (h.pidfd >= 0)
			close(h.pidfd);
		if (h.err >= 0)
			close(h.err);
		return NULL;
	}
	held[nheld] = h;
	return &held[nheld++];
}

int left_to_kernel(struct call *c, int needs)
{
	pid_t pid = caller_pid(c->req->pid);
	struct held *h;

	if (recording()) {
		record_left(c, needs);
		return CONTINUE;
	}
	pthread_mutex_lock(&lock);
	if (pid > 0 && (h = held_of(c, pid))) {
		h->n[kind_of(c)]++;
		if (needs)
			h->needs |= needs;
		else
			h->none++;
	}
	pthread_mutex_unlock(&lock);
	return CONTINUE;
}

/* Each round of the main thread: a process that ended, or whose standard
 * error is no longer the one held, is told and let go; `all`: every one
 * (the supervisor leaves: every process it served has ended). */
void left_tend(int all)
{
	struct pollfd pfd;

	pthread_mutex_lock(&lock);
	for (int i = nheld - 1; i >= 0; i--) {
		pfd = (struct pollfd){.fd = held[i].pidfd, .events = POLLIN};
		if (all || poll(&pfd, 1, 0) != 0 ||
		    syscall(SYS_kcmp, held[i].pid, getpid(), KCMP_FILE, 2, held[i].err) != 0)
			let_go(i);
	}
	pthread_mutex_unlock(&lock);
}

int left_watch(struct pollfd *pfd, int room)
{
	int n = 0;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < nheld && n < room; i++)
		pfd[n++] = (struct pollfd){.fd = held[i].pidfd, .events = POLLIN};
	pthread_mutex_unlock(&lock);
	return n;
}
