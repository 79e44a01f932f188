/* SPDX-License-Identifier: MIT */
/* serve.c -- the supervisor process: started by the first process of the
 * run that needed it (shared/rendezvous.c), it receives the
 * listeners of that process's filter and of those that connect to it
 * later (include/filter.h), and answers every notification of each
 * (supervisor.c says what), until no process is left to ask and none has
 * come for a second.
 *
 * Each listener has a pool of worker threads: each worker receives one
 * notification and answers it, so that a caller whose memory blocks (FUSE,
 * userfaultfd) stalls only itself.  Whoever takes the last idle place
 * starts another worker first; surplus workers leave.  Since Linux 6.6 (the
 * kernel that takes SECCOMP_IOCTL_NOTIF_SET_FLAGS) a RECV that waits
 * returns (ENOENT) once no process uses the filter: the idle workers wait
 * in RECV itself, and a notification costs the worker that takes it two
 * system calls, RECV and SEND.  Before, one worker receives at a time
 * (`receiving`), after poll says a notification waits, so that it also
 * sees the listener hang up.  The main thread is woken by a notification
 * only when no worker is idle (see watch).
 *
 * The tree must never pay for a fault of this process: it blocks every
 * signal and raises its soft limits, so that nothing the tree does to its
 * own (ulimit -f, a signal to the process group) reaches it.  If it is
 * killed anyway (SIGKILL, the OOM killer), every later durability request
 * of a filtered process fails with ENOSYS: the kernel has no one to ask;
 * a process filtered after that starts a supervisor of its own.
 */
#include "common/common.h"
#include "seccomp.h"
#include "supervisor.h"
#include "filter.h"

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
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Linux 6.6: the caller and the worker woken on one CPU, each handing it
 * to the other, as a system call would be: the round trip of a
 * notification is a few microseconds less (linux/seccomp.h of 6.6). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define MAX_POOLS 1000 /* listeners served at once; more go unanswered */
#define LINGER_MS 1000 /* how long it waits for the next program, when idle */

struct pool {
	int listener;
	int trusted; /* the launcher's own: see supervisor.h */
	int idle, workers, dead;
	/* Linux 6.6 and later: workers wait in RECV (see above); the number
	 * in or entering it, and the main thread's claim to receive one
	 * itself (answer_unattended), each seen by the other. */
	int waits_in_recv, receivers, unattended;
	pthread_mutex_t receiving; /* before 6.6: the one worker receiving */
};

static struct seccomp_notif_sizes sizes;
static const char *only_globs;
static const struct policy *policy;
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

/* Has the listener hung up (no process uses the filter any more)? */
static int hung_up(const struct pool *p)
{
	struct pollfd pfd = {.fd = p->listener};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* Receive one notification, waiting in RECV (Linux 6.6 and later): as
 * receive's.  A worker never enters RECV while the main thread receives
 * (answer_unattended), whose RECV must not wait. */
static int receive_waiting(struct pool *p, struct seccomp_notif *req)
{
	const struct timespec pause = {0, 1000000};

	while (__atomic_add_fetch(&p->receivers, 1, __ATOMIC_SEQ_CST),
	       __atomic_load_n(&p->unattended, __ATOMIC_SEQ_CST)) {
		__atomic_sub_fetch(&p->receivers, 1, __ATOMIC_SEQ_CST);
		nanosleep(&pause, NULL);
	}
	if (ioctl(p->listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) {
		__atomic_sub_fetch(&p->receivers, 1, __ATOMIC_SEQ_CST);
		return 1;
	}
	__atomic_sub_fetch(&p->receivers, 1, __ATOMIC_SEQ_CST);
	return hung_up(p) ? 0 : -1;
}

/* Receive one notification: 1, or 0 when the listener hung up, -1 when it
 * was withdrawn meanwhile (the caller interrupted or dead). */
static int receive(struct pool *p, struct seccomp_notif *req)
{
	struct pollfd pfd = {.fd = p->listener, .events = POLLIN};
	int got = -1;

	memset(req, 0, sizes.seccomp_notif);
	if (p->waits_in_recv)
		return receive_waiting(p, req);
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

/* Idle again, as its answer is sent: counted before the SEND, which lets
 * the caller make its next request at once (to another worker, that must
 * not find none idle and start one more).  1: a worker too many, to leave
 * (not counted). */
static int idle_again(struct pool *p)
{
	if (__atomic_add_fetch(&p->idle, 1, __ATOMIC_ACQ_REL) <= 2)
		return 0;
	__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
	return 1;
}

/* Answer one notification; returns 0 when the listener is gone, 2 when
 * this worker is to leave, else 1. */
static int serve_one(struct pool *p, struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	struct call c = {p->listener, req, resp, NULL, 0, p->trusted, on_behalf};
	int how, surplus, got = receive(p, req);

	if (__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL) == 0 && got > 0)
		start_worker(p);
	if (got <= 0)
		return got < 0 ? 1 + idle_again(p) : 0;
	memset(resp, 0, sizes.seccomp_notif_resp);
	resp->id = req->id;
	how = supervisor_answer(&c, policy, only_globs);
	if (how == CONTINUE)
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	surplus = idle_again(p);
	if (how != ANSWERED)
		ioctl(p->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	return 1 + surplus;
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct seccomp_notif *req = calloc(1, sizes.seccomp_notif);
	struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);
	int alive = 1;

	/* start_worker counted this worker idle; serve_one takes that place,
	 * and gives it back before each next one.  A umask and working
	 * directory of its own: behalf.c sets the caller's umask. */
	if (!req || !resp || unshare(CLONE_FS) != 0)
		__atomic_sub_fetch(&p->idle, 1, __ATOMIC_ACQ_REL);
	else
		while ((alive = serve_one(p, req, resp)) == 1)
			;
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

/* May the main thread receive, no worker being in RECV or entering it
 * (else it will have the notification)?  Then it holds that right until
 * unclaim. */
static int claim_receiving(struct pool *p)
{
	if (!p->waits_in_recv)
		return pthread_mutex_trylock(&p->receiving) == 0;
	__atomic_store_n(&p->unattended, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->receivers, __ATOMIC_SEQ_CST) == 0)
		return 1;
	__atomic_store_n(&p->unattended, 0, __ATOMIC_SEQ_CST);
	return 0;
}

static void unclaim_receiving(struct pool *p)
{
	if (p->waits_in_recv)
		__atomic_store_n(&p->unattended, 0, __ATOMIC_SEQ_CST);
	else
		pthread_mutex_unlock(&p->receiving);
}

/* No worker could be started (pids.max, RLIMIT_NPROC of the tree's user):
 * a pending notification that no worker is receiving is let go on to the
 * kernel, from here.  With the claim, RECV cannot block: POLLIN said that a
 * notification waits, and no one else can take it meanwhile. */
static void answer_unattended(struct pool *p)
{
	struct seccomp_notif *req = calloc(1, sizes.seccomp_notif);
	struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);
	struct pollfd waiting = {.fd = p->listener, .events = POLLIN};

	if (req && resp && claim_receiving(p)) {
		/* else a worker is receiving: it will have it; and one that
		 * just finished may have taken it since the main poll */
		if (poll(&waiting, 1, 0) == 1 && (waiting.revents & POLLIN) &&
		    ioctl(p->listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) {
			resp->id = req->id;
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			ioctl(p->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
		}
		unclaim_receiving(p);
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

/* The listener a connection sends (one byte, one descriptor), as a pool of
 * workers; 1 when one was taken.  Each connection brings one, or none (a
 * process under a filter already, whose new one the kernel refused). */
static int take_listener(int sock, struct pool **pools, int *n, int trusted)
{
	char data = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {&data, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c;
	struct pool *p;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) <= 0 ||
	    !(c = CMSG_FIRSTHDR(&msg)) || c->cmsg_type != SCM_RIGHTS)
		return 0;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (!is_listener(fd)) { /* a tree's device or pipe: nothing to ioctl */
		close(fd);
		return 0;
	}
	if (*n == MAX_POOLS || !(p = calloc(1, sizeof(*p)))) {
		close(fd); /* its requests fail with ENOSYS: never past the limit */
		return 0;
	}
	*p = (struct pool){.listener = fd, .trusted = trusted || !landlock_enabled,
			   .receiving = PTHREAD_MUTEX_INITIALIZER};
	/* Linux 6.6 and later: the caller and the worker swap on one CPU,
	 * and a RECV that waits sees the listener hang up (see above). */
	p->waits_in_recv = ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
				 SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0;
	pools[(*n)++] = p;
	start_worker(p);
	return 1;
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
			if (policy->gone)
				policy->gone(p->listener);
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

/* A process of this user's that found the run's supervisor by name: told
 * it is ready, it sends its listener at once, but may be descheduled
 * meanwhile (closing on it would leave it a filter no one answers).
 * Another user's connection is closed unanswered: it starts a supervisor
 * of its own. */
static void take_connection(int server, struct pool **pools, int *n)
{
	int conn = accept4(server, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct pollfd pfd = {.fd = conn, .events = POLLIN};
	struct ucred peer;
	socklen_t len = sizeof(peer);
	const char ready = EMD_READY;

	if (conn < 0)
		return;
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.uid == geteuid() &&
	    send(conn, &ready, 1, MSG_NOSIGNAL) == 1 && poll(&pfd, 1, 2000) == 1)
		take_listener(conn, pools, n, 0);
	close(conn);
}

/* What the main thread waits on: the first connection, until it has sent
 * its listener, the socket bound to the run's name, and each live pool's
 * listener (a dead one waits for its workers): its hanging up, and a
 * notification only when no worker is idle to take it (else each would
 * wake this thread too, on the caller's CPU; a worker that stops being
 * idle meanwhile is seen at the next round, within 100 ms). */
static nfds_t watch(struct pollfd *pfd, int first, int server, struct pool **pools, int n)
{
	pfd[0] = (struct pollfd){.fd = first, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = server, .events = POLLIN};
	for (int i = 0; i < n; i++)
		pfd[i + 2] = (struct pollfd){
			.fd = __atomic_load_n(&pools[i]->dead, __ATOMIC_ACQUIRE) ? -1 : pools[i]->listener,
			.events = __atomic_load_n(&pools[i]->idle, __ATOMIC_ACQUIRE) ? 0 : POLLIN};
	/* And the processes left.c is to tell when they end. */
	return (nfds_t)n + 2 + (nfds_t)left_watch(pfd + n + 2, LEFT_HELD);
}

/* The run's name for this user, bound for the processes that come later;
 * -1 when another supervisor of the run (or another user's squatter) has
 * it: then only the first connection is served. */
static int listen_on(const char *name)
{
	struct sockaddr_un addr;
	socklen_t len = emd_rendezvous_address(name, &addr);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd >= 0 && (bind(fd, (struct sockaddr *)&addr, len) != 0 || listen(fd, 64) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Ready to answer: the notification sizes known, the table and the
 * handlers in agreement, this process hardened. */
static int set_up(const struct seccomp_options *opt)
{
	prctl(PR_SET_NAME, "eatmydata"); /* not the "4" of the exec's /dev/fd/4 */
	harden();
	rights_init();
	only_globs = opt->only;
	on_behalf = opt->on_behalf;
	policy = policy_named(opt->policy ? opt->policy : "eatmydata");
	record_attach(opt->record_fd);
	/* landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) */
	landlock_enabled = syscall(SYS_landlock_create_ruleset, NULL, 0, 1UL) > 0;
	/* Without /proc (a chroot), no listener could be told from a
	 * device: none would be taken, and a filter sent would have no one. */
	return policy && syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0 &&
	       supervisor_table_agrees() && access("/proc/self/fd", R_OK) == 0;
}

void supervise(int first, int trust_first, const char *name, const struct seccomp_options *opt)
{
	static struct pool *pools[MAX_POOLS];
	static struct pollfd pfd[MAX_POOLS + 2 + LEFT_HELD];
	const char ready = EMD_READY;
	int n = 0, server;
	long long busy = now_ms();

	if (!set_up(opt))
		_exit(1);
	/* The launcher's own serves the whole tree, which can add no filter
	 * to its (one listener per chain): no one is to come, and the
	 * descriptor counts (ulimit -n 6 runs). */
	server = trust_first ? -1 : listen_on(name);
	if (send(first, &ready, 1, MSG_NOSIGNAL) != 1)
		_exit(0); /* the process that started it is gone */
	/* Until no listener is alive and no one has come for LINGER_MS: the
	 * programs of a script, one after the other, share it. */
	while (first >= 0 || n || now_ms() - busy < LINGER_MS) {
		if (poll(pfd, watch(pfd, first, server, pools, n), 100) < 0)
			continue;
		n = tend(pools, n, pfd + 1);
		left_tend(0);
		if (first >= 0 && pfd[0].revents) {
			take_listener(first, pools, &n, trust_first);
			close(first);
			first = -1;
		}
		if (server >= 0 && (pfd[1].revents & POLLIN))
			take_connection(server, pools, &n);
		if (first >= 0 || n)
			busy = now_ms();
	}
	left_tend(1);
	_exit(0); /* the name goes with the socket */
}
