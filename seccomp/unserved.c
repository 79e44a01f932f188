/* SPDX-License-Identifier: MIT */
/* unserved.c -- a call the supervisor serves, left to the kernel for a
 * reason of the supervisor's own (no descriptor free), is said: an answer
 * of "eaten", "dropped" or "ok" must mean the tool saw everything.  Each
 * policy says it where its run says things (crashtest: the journal; the
 * record file of eatmydata --stats); nocache and eatmydata without a
 * record file say it as their libraries do, one line on the program's own
 * standard error, once per process image and reason.
 *
 * At the descriptor limit, the line needs a descriptor of the program's
 * standard error here: two are kept in reserve (/dev/null), given up for
 * it and taken again; none under a limit of RESERVE_FROM, where this
 * process needs every one it has to serve at all (ulimit -n 6).
 */
#include "common/common.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int reserve[2] = {-1, -1};

#define RESERVE_FROM 64

void unserved_init(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur >= RESERVE_FROM)
		for (int i = 0; i < 2; i++)
			reserve[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* The reserve given up (under the lock), for what follows. */
static void give_up_reserve(void)
{
	for (int i = 0; i < 2; i++) {
		if (reserve[i] >= 0)
			close(reserve[i]);
		reserve[i] = -1;
	}
}

int first_told(const struct call *c, const char *why, char *name, size_t size, pid_t *tgid)
{
	struct image_stamp st;
	int first = 1;

	pthread_mutex_lock(&lock);
	give_up_reserve();
	*tgid = caller_process(c->req->pid, name, size);
	image_stamp(c->req->pid, &st);
	for (int i = 0; i < TOLD && first; i++)
		first = !(told[i].tgid == *tgid && told[i].why == why && st.at &&
			  told[i].image.at == st.at &&
			  !memcmp(told[i].image.bytes, st.bytes, sizeof(st.bytes)));
	if (first) {
		told[told_next % TOLD].tgid = *tgid;
		told[told_next % TOLD].why = why;
		told[told_next++ % TOLD].image = st;
	}
	unserved_init();
	pthread_mutex_unlock(&lock);
	return first;
}

void tell_caller(const struct call *c, const char *line)
{
	struct iovec v = {(void *)line, strlen(line)};
	int fd;

	pthread_mutex_lock(&lock);
	give_up_reserve();
	/* Never waiting on a pipe no one drains (the caller waits on this):
	 * a terminal, which has no RWF_NOWAIT, is written as is. */
	if ((fd = their_fd(c, STDERR_FILENO, NULL)) >= 0) {
		if (pwritev2(fd, &v, 1, -1, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP)
			(void)!write(fd, line, v.iov_len);
		close(fd);
	}
	unserved_init();
	pthread_mutex_unlock(&lock);
}
