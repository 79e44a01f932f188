/* SPDX-License-Identifier: MIT */
/* limit.c -- a write, truncation or fallocate made here for a caller,
 * within its file size limit (RLIMIT_FSIZE) as the kernel applies it: to
 * the position and size the change has when it is made.  A limit judged
 * before, at the file position seen then, is not the kernel's: another
 * thread of the caller moving the shared position in between made 1-byte
 * writes land at 1 MiB under a 64 KiB limit.
 *
 * This process raised its own limit (serve.c).  For a caller with one, the
 * change is made by a helper process sharing this one's memory and
 * descriptors but with limits of its own (clone: CLONE_VM | CLONE_FILES |
 * CLONE_VFORK, not CLONE_THREAD), set to the caller's: the kernel then
 * writes up to the limit and no further, or refuses (EFBIG) and signals
 * SIGXFSZ to the helper, which ignores it.  A refusal, which changed
 * nothing, is the caller's to meet: the call goes on to the kernel, which
 * signals the caller as it would.  The helper runs system calls only: it
 * shares the memory of a threaded process, whose locks may be held.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

struct job {
	const struct change *ch;
	struct rlimit limit;
	long r; /* the result, or -errno */
};

static long make(const struct change *ch)
{
	long r;

	switch (ch->kind) {
	case CHANGE_WRITE:
		r = syscall(SYS_pwritev2, ch->fd, ch->iov, ch->cnt, (long)ch->pos,
			    (long)((unsigned long long)ch->pos >> 32), ch->rwf);
		break;
	case CHANGE_TRUNCATE:
		r = syscall(SYS_ftruncate, ch->fd, (long)ch->pos);
		break;
	default:
		r = syscall(SYS_fallocate, ch->fd, ch->mode, (long)ch->pos, (long)ch->len);
	}
	return r < 0 ? -errno : r;
}

static int helper(void *arg)
{
	struct job *j = arg;

	j->r = syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, &j->limit, NULL) ? -errno : make(j->ch);
	return 0;
}

/* The change made by a helper whose file size limit is `limit`. */
static long made_within(const struct change *ch, const struct rlimit *limit)
{
	char stack[16384] __attribute__((aligned(16)));
	struct job j = {ch, *limit, -ECHILD};
	int status;
	pid_t pid = clone(helper, stack + sizeof(stack), CLONE_VM | CLONE_FILES | CLONE_VFORK, &j);

	if (pid < 0)
		return -errno;
	while (waitpid(pid, &status, __WCLONE) < 0 && errno == EINTR)
		;
	return j.r;
}

long change_within(pid_t tid, const struct change *ch, int *limited)
{
	struct rlimit lim;

	*limited = 0;
	if (prlimit(tid, RLIMIT_FSIZE, NULL, &lim) != 0)
		return -ESRCH;
	if (lim.rlim_cur == RLIM_INFINITY)
		return make(ch);
	*limited = 1;
	lim.rlim_max = lim.rlim_cur;
	return made_within(ch, &lim);
}
