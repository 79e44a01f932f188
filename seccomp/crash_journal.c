/* SPDX-License-Identifier: MIT */
/* crash_journal.c -- crashtest's run as its supervisor sees it: the journal
 * it appends to for the programs it follows, the counters it shares with
 * the libraries of the tree (the points file), the claims it finds as the
 * command's output grows, and the stop at the point --at asks for.
 *
 * The run directory is the tree's to write: every file of it is opened
 * without following a link or waiting on a FIFO, and must be a regular
 * file.  Records are appended as the library appends its own: a header
 * and its payload in one writev on an O_APPEND descriptor, so that the
 * records of the supervisor and of the tree's libraries never interleave.
 * This process raised its own file size limit (serve.c): a journal past
 * the tree's limit costs it nothing.
 */
#define _GNU_SOURCE 1
#include "crash.h"
#include "env.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static struct {
	int on, journal, out, err, writes, fds;
	char run[PATH_MAX], root[PATH_MAX];
	size_t run_len, root_len;
	dev_t root_dev;
	ino_t root_ino;
	unsigned long long at;
	pid_t pgid;
	struct ct_counters *count;
} run = {.journal = -1, .out = -1, .err = -1};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* A regular file of the run directory, or -1. */
static int open_in_run(const char *name, int flags)
{
	char path[PATH_MAX + 16];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", run.run, name);
	fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void map_points(void)
{
	int fd = open_in_run(CT_POINTS, O_RDWR);
	void *p = MAP_FAILED;
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(struct ct_counters))
		p = mmap(NULL, sizeof(struct ct_counters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	run.count = p == MAP_FAILED ? NULL : p;
}

/* This process's descriptor limit (serve.c raised it to the hard one),
 * raised to what following a tree takes where it may be (root); if it is
 * still below, the limit (the tree's: ulimit -n sets both), else 0. */
#define ENOUGH_FDS 256

static int few_fds(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) != 0)
		return 0;
	if (r.rlim_cur >= ENOUGH_FDS)
		return 0;
	if (setrlimit(RLIMIT_NOFILE, &(struct rlimit){ENOUGH_FDS, ENOUGH_FDS}) == 0)
		return 0;
	return (int)r.rlim_cur;
}

/* The run crashtest put in the environment (include/crashtest.h). */
static void read_run(void)
{
	const char *dir = getenv(CT_ENV_RUN), *root = getenv(CT_ENV_ROOT);
	const char *at = getenv(CT_ENV_AT), *pgid = getenv(CT_ENV_PGID);
	struct stat st;

	if (!dir || !root || !at || !pgid || *dir != '/' || *root != '/' ||
	    strlen(dir) >= PATH_MAX || strlen(root) >= PATH_MAX || stat(root, &st) != 0)
		return;
	strcpy(run.run, dir);
	strcpy(run.root, root);
	run.run_len = strlen(dir);
	run.root_len = strlen(root);
	run.root_dev = st.st_dev;
	run.root_ino = st.st_ino;
	run.at = strtoull(at, NULL, 10);
	run.pgid = (pid_t)atol(pgid);
	run.writes = emd_env_true(getenv(CT_ENV_WRITES));
	map_points();
	run.journal = open_in_run(CT_JOURNAL, O_WRONLY | O_APPEND);
	run.out = open_in_run(CT_OUT, O_RDONLY);
	run.err = open_in_run(CT_ERR, O_RDONLY);
	if (run.journal < 0 && run.count) /* its changes go unrecorded */
		__atomic_add_fetch(&run.count->lost, 1, __ATOMIC_SEQ_CST);
	run.on = run.journal >= 0 && run.count;
	run.fds = few_fds();
}

int crash_on(void)
{
	static int told;

	pthread_once(&once, read_run);
	if (run.on && run.fds && !__atomic_exchange_n(&told, 1, __ATOMIC_SEQ_CST)) {
		char why[160];

		snprintf(why, sizeof(why), "crashtest's supervisor runs at the tree's descriptor "
			 "limit of %d: a call it cannot look at (EMFILE) goes on unseen", run.fds);
		crash_note(getpid(), CT_UNKNOWN, NULL, why);
	}
	return run.on;
}

/* The journal's lock: this process's threads, and the run's other
 * supervisors (each exec that finds none running starts one: programs
 * started at once have one each), through a lock on the journal's open
 * file, which each opened on its own.  Taken again by its holder
 * (crash_claims, then crash_record). */
static int held;

void crash_lock(void)
{
	pthread_mutex_lock(&lock);
	if (held++ == 0 && run.journal >= 0)
		while (flock(run.journal, LOCK_EX) != 0 && errno == EINTR)
			;
}

void crash_unlock(void)
{
	if (--held == 0 && run.journal >= 0)
		flock(run.journal, LOCK_UN);
	pthread_mutex_unlock(&lock);
}

/* The process of thread tid, as the library names its records (getpid). */
static pid_t process_of(pid_t tid)
{
	return caller_process(tid, NULL, 0);
}

/* The point asked for was passed: the power fails, nothing of the tree
 * runs on (the caller, which may have left the group, with it). */
static int stopped;

int crash_stopped(void)
{
	/* passed here, or by any other process of the run: another
	 * supervisor, a library of the tree (the counters are shared) */
	return __atomic_load_n(&stopped, __ATOMIC_SEQ_CST) ||
	       (run.at && run.count && __atomic_load_n(&run.count->points, __ATOMIC_SEQ_CST) >= run.at);
}

int crash_acts(const struct call *c)
{
	return !crash_stopped() && still_pending(c);
}

static void passed(uint64_t point, pid_t pid)
{
	if (run.at && point == run.at) {
		/* nothing is made for anyone past it, whoever asks before
		 * the signal lands (crashtest then kills this process too,
		 * whatever it is doing) */
		__atomic_store_n(&stopped, 1, __ATOMIC_SEQ_CST);
		if (run.pgid > 1) /* never -1 (all this user's), nor our own group */
			kill(-run.pgid, SIGKILL);
		if (pid > 1)
			kill(pid, SIGKILL);
	}
}

void crash_record(pid_t tid, struct ct_record *h, const struct iovec *payload, int n)
{
	struct iovec iov[1 + 64];
	size_t total = sizeof(*h);
	int point;

	if (!crash_on())
		return;
	h->magic = CT_MAGIC;
	h->pid = (uint32_t)process_of(tid);
	h->len = 0;
	iov[0] = (struct iovec){h, sizeof(*h)};
	for (int i = 0; i < n && i < 64; i++) {
		iov[1 + i] = payload[i];
		h->len += (uint32_t)payload[i].iov_len;
	}
	total += h->len;
	crash_lock();
	point = ct_number(run.count, h, run.writes) != 0;
	if (writev(run.journal, iov, 1 + (n < 64 ? n : 64)) != (ssize_t)total)
		__atomic_add_fetch(&run.count->lost, 1, __ATOMIC_SEQ_CST);
	crash_unlock();
	if (point)
		passed(h->point, (pid_t)h->pid);
}

void crash_note(pid_t tid, enum ct_kind kind, const struct stat *st, const char *why)
{
	struct ct_record h = {.kind = (uint16_t)kind};
	struct iovec v = {(void *)why, why ? strlen(why) + 1 : 0};

	if (crash_stopped()) /* what was not made after the power failed */
		return;
	if (st) {
		h.dev = st->st_dev;
		h.ino = st->st_ino;
	}
	crash_record(tid, &h, &v, why ? 1 : 0);
}

/* Has the output file fd grown past *seen?  Then *seen moves on (once,
 * whoever sees it first: a library of the tree, or this). */
static int grew(int fd, uint64_t *seen)
{
	struct stat st;
	uint64_t was = __atomic_load_n(seen, __ATOMIC_SEQ_CST);

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size > was &&
	       __atomic_compare_exchange_n(seen, &was, (uint64_t)st.st_size, 0, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST);
}

void crash_claims(pid_t tid)
{
	if (!crash_on())
		return;
	crash_lock();
	if (grew(run.out, &run.count->out) | grew(run.err, &run.count->err)) {
		struct ct_record h = {.kind = CT_CLAIM};

		crash_record(tid, &h, NULL, 0);
	}
	crash_unlock();
}

uint64_t crash_journal_size(void)
{
	struct stat st;

	return crash_on() && fstat(run.journal, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int under(const char *path, const char *dir, size_t len)
{
	return len && strncmp(path, dir, len) == 0 && (path[len] == '/' || path[len] == '\0');
}

int crash_in_root(const char *path)
{
	return crash_on() && under(path, run.root, run.root_len);
}

int crash_above_root(const char *path)
{
	return crash_on() && under(run.root, path, strlen(path));
}

int crash_in_run(const char *path)
{
	return crash_on() && under(path, run.run, run.run_len);
}

int crash_on_copy_fs(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && crash_on_copy_dev(st.st_dev);
}

int crash_on_copy_dev(dev_t dev)
{
	return dev == run.root_dev;
}

int crash_below_root(int dir)
{
	struct stat st, up;
	int at = dup(dir), next, found = 0;

	for (int depth = 0; at >= 0 && depth < 8192 && !found; depth++) {
		if (fstat(at, &st) != 0)
			break;
		found = st.st_dev == run.root_dev && st.st_ino == run.root_ino;
		next = openat(at, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next < 0 || fstat(next, &up) != 0 || (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {
			if (next >= 0)
				close(next);
			break;
		}
		close(at);
		at = next;
	}
	if (at >= 0)
		close(at);
	return crash_on() && found;
}

int crash_fd_path(int fd, char *out, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, size - 1);
	if (n <= 0 || out[0] != '/')
		return out[0] = '\0', -1;
	out[n] = '\0';
	return 0;
}

void crash_unfollowed(const char *file, const char *why)
{
	char line[PATH_MAX + 256];

	snprintf(line, sizeof(line), "%s runs past crashtest's library and its supervisor: %s",
		 file, why);
	crash_note(getpid(), CT_UNKNOWN, NULL, line);
}
