/* SPDX-License-Identifier: MIT */
/* unserved.c -- a call the supervisor serves, left to the kernel for a
 * reason of the supervisor's own (no descriptor free), is said: an answer
 * of "eaten", "dropped" or "ok" must mean the tool saw everything.  Each
 * policy says it where its run says things (crashtest: the journal; the
 * record file of eatmydata --stats); nocache and eatmydata without a
 * record file say it as their libraries do, one line on the program's own
 * standard error, once per process image and reason.
 *
 * At the descriptor limit the workers have none to look at the caller
 * with, and one freed is anyone's.  A thread of its own (the teller) does
 * it: its descriptor table is its own (unshare(CLONE_FILES), emptied at
 * its start), so what it opens is always there to be had.  A worker asks,
 * the teller opens a pidfd of the calling thread, and goes on only once
 * the worker found the notification still pending: then that thread is
 * the caller, alive, and its /proc files by number are its own.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

/* The process images told already, and of what. */
#define TOLD 64
static struct {
	pid_t tgid;
	struct image_stamp image;
	const char *why;
} told[TOLD];
static unsigned told_next;

/* One request at a time: asked, the pidfd opened (or not), the worker's
 * go (or stop), done. */
enum { IDLE, ASKED, OPENED, FAILED, GO, STOP, DONE };
static struct {
	pthread_mutex_t one, lock;
	pthread_cond_t changed;
	int state, started;
	pid_t tid, tgid;
	const char *why, *tool, *what; /* the line: "TOOL: NAME[TGID]: WHAT: WHY"; */
	char name[32];                 /* no line without a tool */
	int first;
} teller = {.one = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER,
	      .changed = PTHREAD_COND_INITIALIZER};

static void set_state(int state)
{
	pthread_mutex_lock(&teller.lock);
	teller.state = state;
	pthread_cond_broadcast(&teller.changed);
	pthread_mutex_unlock(&teller.lock);
}

static void wait_state(int a, int b)
{
	pthread_mutex_lock(&teller.lock);
	while (teller.state != a && teller.state != b)
		pthread_cond_wait(&teller.changed, &teller.lock);
	pthread_mutex_unlock(&teller.lock);
}

/* 1 the first time this process image is told `why`. */
static int first_time(pid_t tid, pid_t tgid, const char *why)
{
	struct image_stamp st;
	int first = 1;

	image_stamp(tid, &st);
	for (int i = 0; i < TOLD && first; i++)
		first = !(told[i].tgid == tgid && told[i].why == why && st.at &&
			  told[i].image.at == st.at &&
			  !memcmp(told[i].image.bytes, st.bytes, sizeof(st.bytes)));
	if (first) {
		told[told_next % TOLD].tgid = tgid;
		told[told_next % TOLD].why = why;
		told[told_next++ % TOLD].image = st;
	}
	return first;
}

/* The caller's standard error (its thread's number 2, through pidfd),
 * where a close of it is no event (unserved's duplicate is closed). */
static int their_stderr(pid_t tid, int pidfd)
{
	char path[64];
	struct statx stx;

	snprintf(path, sizeof(path), "/proc/%d/fd/2", tid);
	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MNT_ID, &stx) != 0 ||
	    closes_quietly(tid, 2, &stx) != 1)
		return -1;
	return (int)syscall(SYS_pidfd_getfd, pidfd, 2, 0);
}

/* The teller's part, the caller known to be the thread of pidfd: its
 * process and name, whether told already, and the line if asked. */
static void tell(int pidfd)
{
	char line[320];
	struct iovec v = {line, 0};
	int fd, n;

	teller.tgid = caller_process(teller.tid, teller.name, sizeof(teller.name));
	teller.first = first_time(teller.tid, teller.tgid, teller.why);
	if (!teller.first || !teller.tool || (fd = their_stderr(teller.tid, pidfd)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%s: %s[%d]: %s: %s\n", teller.tool, teller.name,
		     (int)teller.tgid, teller.what, teller.why);
	v.iov_len = n < (int)sizeof(line) ? (size_t)n : sizeof(line) - 1;
	/* Never waiting on a pipe no one drains (the caller waits on this):
	 * a terminal, which has no RWF_NOWAIT, is written as is. */
	if (pwritev2(fd, &v, 1, -1, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP)
		(void)!write(fd, line, v.iov_len);
	close(fd);
}

static void *teller_main(void *arg)
{
	int pidfd, exact;

	(void)arg;
	pthread_mutex_lock(&teller.lock);
	teller.started = unshare(CLONE_FILES) == 0 ? 1 : -1;
	pthread_cond_broadcast(&teller.changed);
	pthread_mutex_unlock(&teller.lock);
	if (teller.started < 0)
		return NULL;
	syscall(SYS_close_range, 3U, ~0U, 0U); /* its table holds what it opens only */
	for (;;) {
		wait_state(ASKED, ASKED);
		pidfd = caller_pidfd(teller.tid, &exact);
		set_state(pidfd < 0 ? FAILED : OPENED);
		if (pidfd < 0)
			continue;
		wait_state(GO, STOP);
		if (teller.state == GO)
			tell(pidfd);
		close(pidfd);
		set_state(DONE);
	}
	return NULL;
}

void unserved_init(void)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 128 << 10);
	if (pthread_create(&t, &attr, teller_main, NULL) != 0)
		teller.started = -1;
	pthread_attr_destroy(&attr);
}

int teller_ask(const struct call *c, const char *why, const char *tool, const char *what,
	       char *name, size_t size, pid_t *tgid)
{
	int first = -1, started;

	pthread_mutex_lock(&teller.lock); /* a thread just made may not have run yet */
	while (!(started = teller.started))
		pthread_cond_wait(&teller.changed, &teller.lock);
	pthread_mutex_unlock(&teller.lock);
	if (started < 0)
		return -1;
	pthread_mutex_lock(&teller.one);
	teller.tid = c->req->pid;
	teller.why = why;
	teller.tool = tool;
	teller.what = what;
	teller.first = 0;
	set_state(ASKED);
	wait_state(OPENED, FAILED);
	if (teller.state == OPENED) {
		set_state(still_pending(c) ? GO : STOP);
		wait_state(DONE, DONE);
		first = teller.first;
		snprintf(name, size, "%s", teller.name);
		*tgid = teller.tgid;
	}
	set_state(IDLE);
	pthread_mutex_unlock(&teller.one);
	return first;
}
