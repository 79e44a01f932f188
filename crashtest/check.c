/* SPDX-License-Identifier: MIT */
/* check.c -- the workers: each builds one state and runs the checker in it,
 * then sends crashtest the verdict on a pipe and removes the state.
 *
 * A state must be at the path the command ran in (RUN/work: a program's
 * files may name their own paths).  With one worker, it is built there.
 * With several, worker k builds it in RUN/s<k> and its checker runs in a
 * mount namespace of its own where RUN/s<k> is mounted on RUN: every
 * checker sees its own state at RUN/work, its own CRASHTEST_OUTPUT at
 * RUN/output; and in a network namespace of its own, whose loopback is up:
 * a checker that starts a server on a fixed port does not meet another's.
 * As an ordinary user, a user namespace that maps the user to itself makes
 * the two namespaces possible (where the kernel allows it).
 *
 * A worker is the subreaper of its checker: whatever the checker left
 * running is killed before the verdict is sent.  Worker and checker are in
 * process groups of their own, so that a ^C reaches crashtest alone, which
 * kills them.  A worker never returns into crashtest's code: it _exits.
 */
#define _GNU_SOURCE 1
#include "crashtest/check.h"
#include "crashtest/text.h"
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The most of a checker's output the report keeps: its end. */
#define OUTPUT_KEPT 4096
/* The most a worker sends: well within a pipe's buffer, which crashtest
 * reads only once the worker has ended. */
#define RESULT_MAX 49152

/* ---- namespaces --------------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -1;
	r = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	close(fd);
	return r;
}

/* In a new user namespace: this user is itself there, and nobody else. */
static int map_ids(uid_t uid, gid_t gid)
{
	char map[64];

	if (write_file("/proc/self/setgroups", "deny") != 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) != 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return write_file("/proc/self/gid_map", map);
}

/* A new network namespace has its loopback down. */
static int loopback_up(void)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = -1;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	if (s >= 0)
		close(s);
	return r;
}

/* This process into namespaces of its own, slot k's directory mounted on
 * the run directory; 0, or -1 with errno. */
static int isolate(const char *dir, int k, int user)
{
	char slot[PATH_MAX + 16];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	snprintf(slot, sizeof(slot), "%s/s%d", dir, k);
	if (unshare(CLONE_NEWNS | CLONE_NEWNET | (user ? CLONE_NEWUSER : 0)) != 0 ||
	    (user && map_ids(uid, gid) != 0))
		return -1;
	/* Nothing mounted here reaches the namespace crashtest is in. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount(slot, dir, NULL, MS_BIND, NULL) != 0)
		return -1;
	return loopback_up();
}

/* Can a child isolate itself (with a user namespace, if `user`)?  0, or
 * the errno of what it could not do. */
static int try_isolate(const char *dir, int user)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(isolate(dir, 0, user) == 0 ? 0 : errno & 0xff);
	if (pid < 0)
		return errno;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
}

static void make_slot(struct run *run, int k)
{
	char name[16];

	snprintf(name, sizeof(name), "s%d", k);
	if (mkdirat(run->fd, name, 0700) != 0)
		die("cannot create %s/%s: %s", run->dir, name, strerror(errno));
}

void workers_init(struct workers *w, struct run *run, int n)
{
	int err;

	*w = (struct workers){.n = n > MAX_JOBS ? MAX_JOBS : n};
	run->workers = w;
	if (w->n <= 1)
		return;
	make_slot(run, 0);
	w->user = geteuid() != 0;
	if ((err = try_isolate(run->dir, w->user)) && !w->user && !try_isolate(run->dir, 1))
		err = 0, w->user = 1; /* root without CAP_SYS_ADMIN (a container) */
	if (err) {
		warn("-j%d: checking one state at a time: a checker's state must be at the path the "
		     "command ran in, and no mount namespace could put it there (%s)", n,
		     strerror(err));
		w->n = 1;
		return;
	}
	w->isolated = 1;
	for (int k = 1; k < w->n; k++)
		make_slot(run, k);
}

/* ---- in the worker ------------------------------------------------------ */

/* A worker ignores the signals that stop crashtest, which kills it then
 * itself: a signal to the whole tree (pkill, a CI killing the job's
 * processes) ends the run as crashtest's own would, never as a check that
 * failed; its checker gets them as any program does. */
static void set_signals(void (*how)(int))
{
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	for (size_t i = 0; i < sizeof(stops) / sizeof(*stops); i++)
		signal(stops[i], how);
}

/* The first n bytes of the run's file `from` as the slot's new file `to`:
 * what the command had printed up to the point. */
static void prefix(const struct run *run, const char *from, int slot, const char *to, uint64_t n)
{
	int in = openat(run->fd, from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), out;
	struct stat st;

	unlinkat(slot, to, 0);
	out = openat(slot, to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		die("cannot create %s/%s: %s", run->dir, to, strerror(errno));
	while (in >= 0 && fstat(in, &st) == 0 && S_ISREG(st.st_mode) && n > 0) {
		ssize_t c = copy_file_range(in, NULL, out, NULL, n, 0);

		if (c <= 0)
			break;
		n -= (uint64_t)c;
	}
	if (in >= 0)
		close(in);
	close(out);
}

/* The end of the checker's output, escaped. */
static char *read_output(int slot)
{
	char buf[OUTPUT_KEPT];
	struct stat st;
	int fd = openat(slot, "check", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		n = pread(fd, buf, sizeof(buf),
			  st.st_size > (off_t)sizeof(buf) ? st.st_size - (off_t)sizeof(buf) : 0);
	if (fd >= 0)
		close(fd);
	return escape(buf, n > 0 ? (size_t)n : 0, 1);
}

static void checker_env(const struct run *run, long number, const char *what)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/output", run->dir);
	setenv("CRASHTEST_OUTPUT", path, 1);
	snprintf(path, sizeof(path), "%s/errors", run->dir);
	setenv("CRASHTEST_ERRORS", path, 1);
	snprintf(path, sizeof(path), "%ld", number);
	setenv("CRASHTEST_POINT", path, 1);
	setenv("CRASHTEST_STATE", what, 1);
}

/* `sh -c CHECK` in the state, its output in the slot's file `check`; its
 * status as a shell gives it, or minus the signal that stops crashtest
 * that killed it or a command of it (not a verdict: a kill from outside,
 * set_signals).  A checker's own failure must not exit 129, 130 or 143. */
static int run_checker(const struct run *run, const struct options *o, const struct job *j,
		       int slot)
{
	char *argv[] = {"/bin/sh", "-c", (char *)o->check, NULL};
	int out, status, sig;
	pid_t pid;

	unlinkat(slot, "check", 0);
	out = openat(slot, "check", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0 || (pid = fork()) < 0)
		die("cannot run the check: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		set_signals(SIG_DFL);
		checker_env(run, j->point, j->what);
		/* By path: with a slot mounted on the run directory, its state. */
		if (chdir(run->dir) != 0 || chdir("work") != 0 || dup2(out, 1) < 0 ||
		    dup2(out, 2) < 0)
			die("cannot enter %s/work: %s", run->dir, strerror(errno));
		exec_command(argv[0], argv);
	}
	setpgid(pid, pid);
	close(out);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("cannot wait: %s", strerror(errno));
	power_off(pid);
	/* killed, or its shell outliving a command of its killed so (sh exits
	 * 128 + the signal): a signal to the whole tree kills the leaves first */
	sig = WIFSIGNALED(status) ? WTERMSIG(status)
	      : WIFEXITED(status) && WEXITSTATUS(status) > 128 ? WEXITSTATUS(status) - 128 : 0;
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
		return -sig;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The result on the pipe: "status length\n", the output (a negative
 * status: the signal that killed the checker from outside); or "unknown
 * n\n", then each reason, NUL-ended.  Cut to RESULT_MAX. */
static void send_result(int fd, int status, const char *output, const struct problems *why)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		_exit(EXIT_TOOL);
	if (why->n) {
		fprintf(f, "unknown %zu\n", why->n);
		for (size_t i = 0; i < why->n; i++)
			fprintf(f, "%.1024s%c", why->v[i], '\0');
	} else {
		fprintf(f, "%d %zu\n", status, strlen(output));
		fputs(output, f);
	}
	fclose(f);
	if (write(fd, text, len > RESULT_MAX ? RESULT_MAX : len) < 0)
		_exit(EXIT_TOOL);
	free(text);
}

static noreturn void worker(struct run *run, const struct options *o, const struct workers *w,
			    int k, const struct job *j, int result)
{
	struct problems why = {0};
	struct built b = *j->b;
	char name[16];
	int slot, status = -1;
	char *output = NULL;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	set_signals(SIG_IGN);
	snprintf(name, sizeof(name), w->isolated ? "s%d" : ".", k);
	if ((slot = openat(run->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die("cannot open %s/%s: %s", run->dir, name, strerror(errno));
	prefix(run, CT_OUT, slot, "output", j->out);
	prefix(run, CT_ERR, slot, "errors", j->err);
	b.why = &why;
	state_build(&b, slot, "work");
	if (!why.n) {
		if (w->isolated && isolate(run->dir, k, w->user) != 0)
			die("cannot give a checker its own namespaces: %s", strerror(errno));
		status = run_checker(run, o, j, slot);
		output = read_output(slot);
	}
	send_result(result, status, output ? output : "", &why);
	remove_tree_at(slot, "work");
	_exit(0);
}

/* ---- in crashtest ------------------------------------------------------- */

int workers_start(struct workers *w, struct run *run, const struct options *o,
		  const struct job *j, int (*stop)(void))
{
	int k = 0, fds[2];
	pid_t pid;

	while (!stop() && w->running == w->n)
		workers_reap(w, run, 1);
	if (stop())
		return -1;
	while (w->w[k].pid)
		k++;
	if (pipe2(fds, O_CLOEXEC) != 0)
		die("cannot make a pipe: %s", strerror(errno));
	fflush(NULL); /* nothing of crashtest's written twice */
	if ((pid = fork()) < 0)
		die("cannot fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		worker(run, o, w, k, j, fds[1]);
	}
	setpgid(pid, pid);
	close(fds[1]);
	w->w[k] = (struct worker){pid, fds[0], j->check};
	w->running++;
	watch_worker(pid, 1);
	return 0;
}

/* Read all the worker sent: it has ended. */
static char *read_all(int fd, size_t *len)
{
	char *buf = malloc(RESULT_MAX + 1);
	ssize_t n;

	if (!buf)
		die("out of memory");
	*len = 0;
	while (*len < RESULT_MAX && ((n = read(fd, buf + *len, RESULT_MAX - *len)) > 0 ||
				     (n < 0 && errno == EINTR)))
		*len += n > 0 ? (size_t)n : 0;
	buf[*len] = '\0';
	return buf;
}

/* The worker's result into its check; -1 if it sent none that reads. */
static int take_result(struct checked *c, const char *buf, size_t len)
{
	size_t n, at;
	int status;

	if (sscanf(buf, "unknown %zu\n", &n) == 1 && n > 0) {
		at = (size_t)(strchr(buf, '\n') - buf) + 1;
		for (size_t i = 0; i < n && at < len; i++, at += strlen(buf + at) + 1)
			problem(&c->why, "%s", buf + at);
		c->v = UNKNOWN;
		c->status = -1;
		return (c->output = strdup("")) ? 0 : -1;
	}
	if (sscanf(buf, "%d %zu\n", &status, &n) != 2 || !strchr(buf, '\n'))
		return -1;
	if (status < 0) {
		run_interrupt(-status); /* its checker killed from outside: no verdict */
		return 0;
	}
	at = (size_t)(strchr(buf, '\n') - buf) + 1;
	c->status = status;
	c->v = status == 0 ? OK : FAILED;
	return at + n <= len && (c->output = strndup(buf + at, n)) ? 0 : -1;
}

int workers_reap(struct workers *w, struct run *run, int wait)
{
	int status, k;
	pid_t pid;
	char *buf;
	size_t len;

	do {
		if ((pid = waitpid(-1, &status, wait ? 0 : WNOHANG)) <= 0)
			return 0; /* none ended, a signal, or no child */
		for (k = 0; k < w->n && w->w[k].pid != pid; k++)
			;
	} while (k == w->n); /* a process of a tree whose worker died */
	watch_worker(pid, 0);
	buf = read_all(w->w[k].fd, &len);
	close(w->w[k].fd);
	/* Once crashtest is interrupted, no result is taken: a checker killed
	 * with it (a signal to the whole tree) would seem to have failed. */
	if (WIFSIGNALED(status) && !run_caught())
		run_interrupt(WTERMSIG(status)); /* killed from outside: the run ends */
	else if (!run_caught() && (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
				   take_result(&run->checked[w->w[k].check - 1], buf, len) != 0))
		die("a worker checking a state failed (exit status %d)",
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (!run_caught())
		run->checked[w->w[k].check - 1].state = CHECK_DONE;
	free(buf);
	w->w[k] = (struct worker){0};
	w->running--;
	if (w->done)
		w->done(w->arg);
	return 1;
}
