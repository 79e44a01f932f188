/* SPDX-License-Identifier: MIT */
/* supervisor.c -- answers the durability requests the seccomp filter sends
 * (filter.c), from outside the process that made them, as the library
 * answers them inside: the kernel's verdict on the arguments, no I/O.
 *
 * A descriptor is fetched with pidfd_getfd and asked with
 * sync_file_range(fd, 0, 0, 0).  Opens and writes with sync flags are in
 * behalf.c, io_uring submissions in uring.c.  Anything that cannot be
 * answered faithfully goes on to the kernel unchanged
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE): it then syncs, but it is answered.
 *
 * The tree must never pay for a fault of this process: it answers on
 * worker threads, so that a caller whose memory blocks (FUSE,
 * userfaultfd) stalls only itself; it blocks every signal and raises its
 * soft limits, so that nothing the tree does to its own (ulimit -f, a
 * signal to the process group) reaches it; and it leaves when the last
 * filtered process has.  If it is killed anyway (SIGKILL, the OOM killer),
 * every later durability request of the tree fails with ENOSYS: the kernel
 * has no one to ask.
 */
#include "launch/common.h"
#include "seccomp.h"
#include "supervisor.h"
#include "launch/sync_on_exit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

int reply_error(struct call *c, int err)
{
	c->resp->error = -err;
	return 0;
}

int still_pending(const struct call *c)
{
	return ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &c->req->id) == 0;
}

void note(int fd)
{
	sync_on_exit_note(fd);
}

/* fsync, fdatasync, syncfs: the descriptor checked as the library checks
 * it (emd_check_fd), with `espipe` the answer for pipes and sockets. */
static int check_fd(struct call *c, int espipe)
{
	int fd = their_fd(c, (int)call_arg(c, 0)), r;

	if (fd == -EBADF)
		return reply_error(c, EBADF);
	if (fd < 0)
		return CONTINUE;
	r = (int)syscall(SYS_sync_file_range, fd, 0L, 0L, 0U) ? -errno : 0;
	if (r == -ESPIPE)
		r = espipe;
	if (r == 0)
		note(fd);
	close(fd);
	return r ? reply_error(c, -r) : 0;
}

static int sync_fd(struct call *c)
{
	return check_fd(c, -EINVAL);
}

static int sync_fs(struct call *c)
{
	return check_fd(c, 0);
}

static int sync_all(struct call *c)
{
	(void)c;
	note(-1);
	return 0;
}

/* The offsets follow the descriptor, or on arm's sync_file_range2 the
 * flags (argument 1); each is two arguments in the compat ABI. */
static int sync_range(struct call *c)
{
	int flags_arg = c->compat ? c->request->arg32 : c->request->arg;
	int off_arg = flags_arg == 1 ? 2 : 1, width = c->compat ? 2 : 1;
	int fd = their_fd(c, (int)call_arg(c, 0)), r;

	if (fd == -EBADF)
		return reply_error(c, EBADF);
	if (fd < 0)
		return CONTINUE;
	r = (int)syscall(SYS_sync_file_range, fd, call_arg64(c, off_arg),
			 call_arg64(c, off_arg + width),
			 (unsigned)call_arg(c, flags_arg) & ~EMD_SFR_VALID) ? -errno : 0;
	if (r == 0)
		note(fd);
	close(fd);
	return r ? reply_error(c, -r) : 0;
}

/* msync's checks, in the kernel's order; MS_INVALIDATE of locked pages
 * (EBUSY) is not seen from here. */
static int sync_mapping(struct call *c)
{
	unsigned long addr = call_arg(c, 0), len = call_arg(c, 1);
	unsigned long page = sysconf(_SC_PAGESIZE);
	int flags = (int)call_arg(c, 2), m;

	if ((flags & ~(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) || (addr & (page - 1)) ||
	    ((flags & MS_ASYNC) && (flags & MS_SYNC)))
		return reply_error(c, EINVAL);
	len = (len + page - 1) & ~(page - 1);
	if (addr + len < addr)
		return reply_error(c, ENOMEM);
	if (len == 0)
		return 0;
	if ((m = caller_mapped(c->req->pid, addr, addr + len)) < 0)
		return CONTINUE;
	note(-1);
	return m ? 0 : reply_error(c, ENOMEM);
}

/* The supervisor's handler for each way a request is eaten; a request
 * without one is not filtered. */
static int (*const handlers[EMD_NEAT])(struct call *c) = {
	[EMD_EAT_FD_SYNC] = sync_fd,
	[EMD_EAT_FS_SYNC] = sync_fs,
	[EMD_EAT_ALL_SYNC] = sync_all,
	[EMD_EAT_RANGE] = sync_range,
	[EMD_EAT_MAPPING] = sync_mapping,
	[EMD_EAT_OPEN] = open_on_behalf,
	[EMD_EAT_WRITE] = write_on_behalf,
	[EMD_EAT_URING] = uring_submit,
};

int supervisor_answers(const struct emd_request *r)
{
	return handlers[r->eat] != NULL;
}

EMD_REQUEST_TABLE(requests);

/* The row of the notified call, by its ABI and number; NULL for Landlock
 * (through any entry: x32 sets a bit in the number). */
static const struct emd_request *request_of(const struct seccomp_data *d, int *compat)
{
	*compat = d->arch == EMD_ARCH_COMPAT;
	if (d->arch != EMD_ARCH_NATIVE && !*compat)
		return NULL;
	for (int i = 0; i < EMD_NREQUESTS; i++)
		if ((long)d->nr == (*compat ? requests[i].nr32 : requests[i].nr) &&
		    supervisor_answers(&requests[i]))
			return &requests[i];
	return NULL;
}

static int answer(struct call *c, const char *only)
{
	c->request = request_of(&c->req->data, &c->compat);
	if (!c->request) {
		if ((c->req->data.nr & ~EMD_X32_BIT) == SYS_landlock_restrict_self)
			rights_note_landlock();
		return CONTINUE;
	}
	if (!caller_eats(c->req->pid, only))
		return CONTINUE;
	return handlers[c->request->eat](c);
}

/* The pool: each worker receives one notification and answers it.  Whoever
 * takes the last idle place starts another worker first, so that one is
 * always waiting while others may be blocked; surplus workers leave.  One
 * receives at a time (`receiving`): the main thread, which cannot block,
 * knows a notification is nobody's when it can take that lock itself. */
struct pool {
	int listener;
	const char *only;
	struct seccomp_notif_sizes sizes;
	int idle;
	pthread_mutex_t receiving;
};

static void *worker(void *arg);

static void start_worker(struct pool *p)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	__atomic_add_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
	if (pthread_create(&t, &attr, worker, p) != 0)
		__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL); /* fewer workers */
	pthread_attr_destroy(&attr);
}

/* Answer one notification; returns 0 when the listener is gone. */
static int serve_one(struct pool *p, struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	struct call c = {p->listener, req, resp, NULL, 0};
	int how, got;

	memset(req, 0, p->sizes.seccomp_notif);
	pthread_mutex_lock(&p->receiving);
	got = ioctl(p->listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0;
	pthread_mutex_unlock(&p->receiving);
	if (__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL) == 0 && got)
		start_worker(p);
	if (!got) /* ENOENT: the caller was interrupted or died meanwhile */
		return errno == ENOENT || errno == EINTR;
	memset(resp, 0, p->sizes.seccomp_notif_resp);
	resp->id = req->id;
	how = answer(&c, p->only);
	if (how == CONTINUE)
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (how != ANSWERED)
		ioctl(p->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	return 1;
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct seccomp_notif *req = calloc(1, p->sizes.seccomp_notif);
	struct seccomp_notif_resp *resp = calloc(1, p->sizes.seccomp_notif_resp);

	/* start_worker counted this worker idle; serve_one takes that place,
	 * and it is given back before each next one.  A umask and working
	 * directory of its own: behalf.c sets the caller's umask. */
	if (!req || !resp || unshare(CLONE_FS) != 0)
		__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
	else
		while (serve_one(p, req, resp))
			if (__atomic_add_fetch(&p->idle, 1, __ATOMIC_ACQ_REL) > 2) {
				__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
				break;
			}
	free(req);
	free(resp);
	return NULL;
}

/* Nothing the tree does to itself may end this process: no signal but
 * SIGKILL, no limit of the tree's (ulimit -f, -n), no ptrace by it. */
static void harden(void)
{
	sigset_t all;
	struct rlimit r;
	int fd;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_DUMPABLE, 0);
	for (int res = 0; res < RLIM_NLIMITS; res++)
		if (getrlimit(res, &r) == 0 && r.rlim_cur != r.rlim_max &&
		    res != RLIMIT_CORE && res != RLIMIT_STACK) {
			r.rlim_cur = r.rlim_max;
			setrlimit(res, &r);
		}
	if ((fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC)) >= 0) {
		if (write(fd, "-1000", 5) < 0) /* only root may; small anyway */
			(void)0;
		close(fd);
	}
	if (chdir("/") != 0)
		(void)0; /* keep no mount of the tree's busy */
}

/* No worker could be started (pids.max, RLIMIT_NPROC of the tree's user):
 * a pending notification that no worker is receiving is let go on to the
 * kernel, from here.  With the lock, RECV cannot block: POLLIN said that a
 * notification waits, and no one else can take it meanwhile. */
static void answer_unattended(struct pool *p)
{
	struct seccomp_notif *req = calloc(1, p->sizes.seccomp_notif);
	struct seccomp_notif_resp *resp = calloc(1, p->sizes.seccomp_notif_resp);

	if (req && resp && pthread_mutex_trylock(&p->receiving) == 0) {
		/* else a worker is receiving: it will have it */
		if (ioctl(p->listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) {
			resp->id = req->id;
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			ioctl(p->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
		}
		pthread_mutex_unlock(&p->receiving);
	}
	free(req);
	free(resp);
}

/* Every notification is answered: by a worker, or here when none can be
 * started (retried every poll).  POLLHUP: no process is left under the
 * filter.  `ready` tells the launcher it may run the command. */
void supervise(int listener, int ready, const char *only)
{
	static struct pool p = {.receiving = PTHREAD_MUTEX_INITIALIZER};
	struct pollfd pfd = {.fd = listener, .events = POLLIN};
	const struct timespec pause = {0, 1000000};

	harden();
	rights_init();
	p.listener = listener;
	p.only = only;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &p.sizes) != 0)
		_exit(1);
	/* Requests made meanwhile wait in the kernel for the first worker;
	 * the socket is closed first, for a descriptor of its own. */
	if (write(ready, "", 1) != 1)
		_exit(1);
	close(ready);
	start_worker(&p);
	for (;;) {
		int n = poll(&pfd, 1, 100);

		if (n > 0 && (pfd.revents & POLLHUP))
			_exit(0);
		if (__atomic_load_n(&p.idle, __ATOMIC_ACQUIRE) == 0)
			start_worker(&p);
		if (n > 0 && (pfd.revents & POLLIN)) {
			if (__atomic_load_n(&p.idle, __ATOMIC_ACQUIRE) == 0)
				answer_unattended(&p);
			else
				nanosleep(&pause, NULL); /* an idle worker is taking it */
		}
	}
}
