/* SPDX-License-Identifier: MIT */
/* serve.c -- the supervisor process: receives the listeners of the tree's
 * filters on its socket (include/filter.h) and answers every notification
 * of each (supervisor.c says what), until no process is left to ask.
 *
 * Each listener has a pool of worker threads: each worker receives one
 * notification and answers it, so that a caller whose memory blocks (FUSE,
 * userfaultfd) stalls only itself.  Whoever takes the last idle place
 * starts another worker first; surplus workers leave.  One worker receives
 * at a time (`receiving`), after poll says a notification waits, so that
 * it also sees the listener hang up once no process uses the filter.
 *
 * The tree must never pay for a fault of this process: it blocks every
 * signal and raises its soft limits, so that nothing the tree does to its
 * own (ulimit -f, a signal to the process group) reaches it.  If it is
 * killed anyway (SIGKILL, the OOM killer), every later durability request
 * of a filtered process fails with ENOSYS: the kernel has no one to ask;
 * and the library puts no new process under a filter (libeatmydata/filter.c).
 */
#include "launch/common.h"
#include "seccomp.h"
#include "supervisor.h"

#include <errno.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_POOLS 1000 /* listeners served at once; more go unanswered */

struct pool {
	int listener;
	int trusted; /* the launcher's own: see supervisor.h */
	int idle, workers, dead;
	pthread_mutex_t receiving;
};

static struct seccomp_notif_sizes sizes;
static const char *only_globs;
static int on_behalf; /* --on-behalf=on */
/* Landlock in this kernel: then a filter the tree installs may postdate a
 * domain (see `trusted` in supervisor.h); without it, none can. */
static int landlock_enabled;

static void *worker(void *arg);

static void start_worker(struct pool *p)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	__atomic_add_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&p->workers, 1, __ATOMIC_ACQ_REL);
	if (pthread_create(&t, &attr, worker, p) != 0) { /* fewer workers */
		__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
		__atomic_sub_fetch(&p->workers, 1, __ATOMIC_ACQ_REL);
	}
	pthread_attr_destroy(&attr);
}

/* Receive one notification: 1, or 0 when the listener hung up, -1 when it
 * was withdrawn meanwhile (the caller interrupted or dead). */
static int receive(struct pool *p, struct seccomp_notif *req)
{
	struct pollfd pfd = {.fd = p->listener, .events = POLLIN};
	int got = -1;

	memset(req, 0, sizes.seccomp_notif);
	pthread_mutex_lock(&p->receiving);
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL))
		got = 0;
	else if (ioctl(p->listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0)
		got = 1;
	pthread_mutex_unlock(&p->receiving);
	return got;
}

/* Answer one notification; returns 0 when the listener is gone. */
static int serve_one(struct pool *p, struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	struct call c = {p->listener, req, resp, NULL, 0, p->trusted, on_behalf};
	int how, got = receive(p, req);

	if (__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL) == 0 && got > 0)
		start_worker(p);
	if (got <= 0)
		return got < 0;
	memset(resp, 0, sizes.seccomp_notif_resp);
	resp->id = req->id;
	how = supervisor_answer(&c, only_globs);
	if (how == CONTINUE)
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (how != ANSWERED)
		ioctl(p->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	return 1;
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct seccomp_notif *req = calloc(1, sizes.seccomp_notif);
	struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);
	int alive = 1;

	/* start_worker counted this worker idle; serve_one takes that place,
	 * and it is given back before each next one.  A umask and working
	 * directory of its own: behalf.c sets the caller's umask. */
	if (!req || !resp || unshare(CLONE_FS) != 0)
		__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
	else
		while ((alive = serve_one(p, req, resp)))
			if (__atomic_add_fetch(&p->idle, 1, __ATOMIC_ACQ_REL) > 2) {
				__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
				break;
			}
	if (!alive)
		__atomic_store_n(&p->dead, 1, __ATOMIC_RELEASE);
	free(req);
	free(resp);
	__atomic_sub_fetch(&p->workers, 1, __ATOMIC_ACQ_REL);
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
	struct seccomp_notif *req = calloc(1, sizes.seccomp_notif);
	struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);
	struct pollfd waiting = {.fd = p->listener, .events = POLLIN};

	if (req && resp && pthread_mutex_trylock(&p->receiving) == 0) {
		/* else a worker is receiving: it will have it; and one that
		 * just finished may have taken it since the main poll */
		if (poll(&waiting, 1, 0) == 1 && (waiting.revents & POLLIN) &&
		    ioctl(p->listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) {
			resp->id = req->id;
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			ioctl(p->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
		}
		pthread_mutex_unlock(&p->receiving);
	}
	free(req);
	free(resp);
}

/* Is fd a seccomp listener (and not a device of the tree's, on which the
 * supervisor's ioctls would act with its rights)? */
static int is_listener(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	return n > 0 && (target[n] = '\0', !strcmp(target, "anon_inode:seccomp notify"));
}

/* A message on a socket: a listener (one byte, one descriptor), or the
 * launcher's "end" byte, with its own listener or none, after which no
 * listener is its own.  0 when the socket has hung up, or when it is no
 * longer needed (*sock closed): `whole`, the launcher filtered the whole
 * tree, which can add no other filter (one listener per chain), and the
 * descriptor counts (ulimit -n 6 runs). */
static int take_listener(int *sock, struct pool **pools, int *n, int *trusting, int whole)
{
	char data = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {&data, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c;
	struct pool *p;
	int fd, more = 1;
	ssize_t got = recvmsg(*sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	if (got <= 0)
		return got < 0 && (errno == EAGAIN || errno == EINTR);
	if (!(c = CMSG_FIRSTHDR(&msg)) || c->cmsg_type != SCM_RIGHTS) {
		*trusting &= data != SUPERVISOR_END;
		return 1;
	}
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (!is_listener(fd)) { /* a tree's device or pipe: nothing to ioctl */
		close(fd);
		return 1;
	}
	if (*n == MAX_POOLS || !(p = calloc(1, sizeof(*p)))) {
		close(fd); /* its requests fail with ENOSYS: never past the limit */
		return 1;
	}
	*p = (struct pool){.listener = fd, .trusted = *trusting || !landlock_enabled,
			   .receiving = PTHREAD_MUTEX_INITIALIZER};
	pools[(*n)++] = p;
	if (data == SUPERVISOR_END && *trusting && whole) {
		close(*sock);
		*sock = -1;
		more = 0;
	}
	*trusting &= data != SUPERVISOR_END;
	start_worker(p);
	return more;
}

/* A pool whose listener hung up and whose workers have left is freed;
 * one without an idle worker is kept answered.  Returns pools left. */
static int tend(struct pool **pools, int n, const struct pollfd *pfd)
{
	const struct timespec pause = {0, 1000000};

	for (int i = n - 1; i >= 0; i--) {
		struct pool *p = pools[i];

		if (pfd[i + 1].revents & POLLHUP)
			__atomic_store_n(&p->dead, 1, __ATOMIC_RELEASE);
		if (__atomic_load_n(&p->dead, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&p->workers, __ATOMIC_ACQUIRE)) {
			close(p->listener);
			free(p);
			pools[i] = pools[--n];
			continue;
		}
		if (__atomic_load_n(&p->dead, __ATOMIC_ACQUIRE))
			continue;
		if (__atomic_load_n(&p->idle, __ATOMIC_ACQUIRE) == 0)
			start_worker(p);
		if (pfd[i + 1].revents & POLLIN) {
			if (__atomic_load_n(&p->idle, __ATOMIC_ACQUIRE) == 0)
				answer_unattended(p);
			else
				nanosleep(&pause, NULL); /* an idle worker is taking it */
		}
	}
	return n;
}

/* A process that lost the inherited socket (close_fds in Python's
 * subprocess, a daemon's closefrom) connects to the one at the path: its
 * listener, if it sends it at once, is a pool of the tree's. */
static void take_connection(int server, struct pool **pools, int *n)
{
	int conn = accept4(server, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), untrusting = 0;
	struct pollfd pfd = {.fd = conn, .events = POLLIN};

	if (conn < 0)
		return;
	/* It sends at once, but may be descheduled meanwhile: closing on it
	 * would leave it a filter no one answers. */
	if (poll(&pfd, 1, 2000) == 1)
		take_listener(&conn, pools, n, &untrusting, 0);
	close(conn);
}

/* `ready` tells the launcher it may go on; then listeners come on `sock`
 * and through `server`, until the tree has closed its end of `sock` and no
 * filtered process is left: then `dir` and its socket go. */
/* What the main thread waits on: the tree's socket, the socket to connect
 * to, and each live pool's listener (a dead one waits for its workers). */
static nfds_t watch(struct pollfd *pfd, int sock, int server, struct pool **pools, int n)
{
	pfd[0] = (struct pollfd){.fd = sock, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = server, .events = POLLIN};
	for (int i = 0; i < n; i++)
		pfd[i + 2] = (struct pollfd){
			.fd = __atomic_load_n(&pools[i]->dead, __ATOMIC_ACQUIRE) ? -1 : pools[i]->listener,
			.events = POLLIN};
	return (nfds_t)n + 2;
}

/* The private directory of the socket to connect to goes with us, on
 * every way out. */
noreturn void supervisor_leave(const char *dir)
{
	char path[4096];

	if (dir && snprintf(path, sizeof(path), "%s/" SUPERVISOR_SOCKET, dir) < (int)sizeof(path)) {
		unlink(path);
		rmdir(dir);
	}
	_exit(0);
}

void supervise(int sock, int ready, int server, const char *dir,
	       const struct seccomp_options *opt)
{
	static struct pool *pools[MAX_POOLS];
	static struct pollfd pfd[MAX_POOLS + 2];
	int n = 0, open_sock = 1, trusting = 1;

	harden();
	rights_init();
	only_globs = opt->only;
	on_behalf = opt->on_behalf;
	/* landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) */
	landlock_enabled = syscall(SYS_landlock_create_ruleset, NULL, 0, 1UL) > 0;
	/* A tree that has ended already (a command that exits at once) cannot
	 * be told: nothing to serve, and the directory goes all the same. */
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0 ||
	    !supervisor_table_agrees() || write(ready, "", 1) != 1)
		supervisor_leave(dir);
	if (ready != sock)
		close(ready);
	while (open_sock || n) {
		if (!open_sock && sock >= 0) {
			close(sock);
			sock = -1;
		}
		if (poll(pfd, watch(pfd, sock, server, pools, n), 100) < 0)
			continue;
		n = tend(pools, n, pfd + 1);
		if (pfd[1].revents & POLLIN)
			take_connection(server, pools, &n);
		if (open_sock && (pfd[0].revents & POLLIN))
			open_sock = take_listener(&sock, pools, &n, &trusting, !dir);
		else if (open_sock && (pfd[0].revents & (POLLHUP | POLLERR)))
			open_sock = 0;
	}
	supervisor_leave(dir);
}
