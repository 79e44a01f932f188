/* SPDX-License-Identifier: MIT */
/* journal.c -- the run this process belongs to (from the environment), the
 * journal it appends to, and the crash points and claims it counts.
 *
 * Wrappers may run before constructors and in several threads: the run is
 * read once under pthread_once.  Every descriptor the library keeps (the
 * journal, the command's output files) is checked before each use, since a
 * program may close descriptors it did not open and reuse their numbers.
 */
#include "ct.h"
#include "env.h"
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

void *ct_real_fn[CT_NREAL];
const char *const ct_real_name[CT_NREAL] = {REAL_SYMBOLS(PL_NAME)};

/* A file of the run directory the library keeps open, known by identity. */
struct kept {
	const char *name;
	int flags, fd;
	dev_t dev;
	ino_t ino;
};

static struct {
	int on;
	char run[PATH_MAX], root[PATH_MAX];
	size_t run_len, root_len;
	unsigned long long at;
	int writes; /* every change is a crash point */
	pid_t pgid;
	struct kept journal, out, err;
	int hook_w, hook_r;
	struct ct_counters *count;
	unsigned long long err_dev, err_ino;
	struct rlimit fsize; /* past it, a write of the journal is SIGXFSZ */
} run = {.journal = {CT_JOURNAL, O_WRONLY | O_APPEND, -1},
	 .out = {CT_OUT, O_RDONLY, -1},
	 .err = {CT_ERR, O_RDONLY, -1},
	 .hook_w = -1,
	 .hook_r = -1};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
/* Under `lock`: how deep this process holds it, and the journal's open
 * file, locked (flock) while it does, so that a change and its record are
 * one with every other process's of the run: the libraries' and the
 * seccomp supervisors' (seccomp/crash_journal.c), whose records then come
 * in the order their crash points were numbered. */
static int depth, locked_fd = -1;

static int open_in_run(const char *name, int flags)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", run.run, name) >= (int)sizeof(path))
		return -1;
	return (int)ct_sys(SYS_openat, AT_FDCWD, path,
			   flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
}

/* k's descriptor, reopened when the program closed it; its size in *size
 * (-1 if it cannot be had). */
static int kept_fd(struct kept *k, off_t *size)
{
	struct stat st;

	if (k->fd < 0 || fstat(k->fd, &st) != 0 || st.st_dev != k->dev || st.st_ino != k->ino) {
		k->fd = open_in_run(k->name, k->flags);
		if (k->fd >= 0 && fstat(k->fd, &st) == 0 && S_ISREG(st.st_mode)) {
			k->dev = st.st_dev;
			k->ino = st.st_ino;
		} else {
			st.st_size = -1;
		}
	}
	*size = st.st_size;
	return k->fd;
}

/* In a forked child: the lock the parent held for the fork is owned by a
 * thread id the child does not have, so unlocking it would fail (EPERM) and
 * the child's next record would wait forever.  The child has one thread: a
 * fresh lock is the same lock, released. */
static void fresh_lock(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

	memcpy(&lock, &unlocked, sizeof(lock));
	/* The journal's open file is the parent's, whose lock (flock) it
	 * shares: the child opens its own. */
	depth = 0;
	locked_fd = -1;
	if (run.journal.fd >= 0)
		ct_sys(SYS_close, run.journal.fd);
	run.journal.fd = -1;
}

/* The points file on the descriptor the launcher left (CT_ENV_POINTS), for
 * a process that cannot open it by name; -1 if the number now names
 * something else. */
static int inherited_points(void)
{
	const char *e = getenv(CT_ENV_POINTS);
	char path[PATH_MAX], want[PATH_MAX + 16];
	int fd = e ? atoi(e) : -1;

	snprintf(want, sizeof(want), "%s/%s", run.run, CT_POINTS);
	return fd >= 0 && ct_fd_path(fd, path, sizeof(path)) == 0 && !strcmp(path, want) ? fd : -1;
}

static struct ct_counters *map_points(int fd)
{
	void *p;

	if (fd < 0)
		return NULL;
	p = REAL(mmap)(NULL, sizeof(struct ct_counters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The rest of the run's environment, once the counters are there. */
static void read_rest(void)
{
	off_t size;
	const char *hook = getenv(CT_ENV_HOOK), *e = getenv(CT_ENV_STDERR);

	run.writes = emd_env_true(getenv(CT_ENV_WRITES));
	run.at = strtoull(getenv(CT_ENV_AT), NULL, 10);
	run.pgid = (pid_t)atol(getenv(CT_ENV_PGID));
	if (getrlimit(RLIMIT_FSIZE, &run.fsize) != 0)
		run.fsize.rlim_cur = RLIM_INFINITY;
	if (e)
		sscanf(e, "%llu:%llu", &run.err_dev, &run.err_ino);
	if (hook)
		sscanf(hook, "%d:%d", &run.hook_w, &run.hook_r);
	kept_fd(&run.out, &size);
	kept_fd(&run.err, &size);
}

static void read_run(void)
{
	const char *r = getenv(CT_ENV_RUN), *root = getenv(CT_ENV_ROOT);
	off_t size;
	int fd;

	if (!r || !root || !getenv(CT_ENV_AT) || !getenv(CT_ENV_PGID) ||
	    strlen(r) >= PATH_MAX || strlen(root) >= PATH_MAX)
		return;
	strcpy(run.run, r);
	strcpy(run.root, root);
	run.run_len = strlen(r);
	run.root_len = strlen(root);
	fd = open_in_run(CT_POINTS, O_RDWR);
	run.count = map_points(fd >= 0 ? fd : inherited_points());
	if (fd >= 0)
		close(fd);
	/* Under crashtest's filter, its supervisor journals this process:
	 * every change reaches it as a system call. */
	if (!run.count || (ct_sys(SYS_flock, EMD_PROBE_FD, 0) == -1 && errno == EMD_PROBE_CRASH))
		return;
	read_rest();
	/* Its changes would go unrecorded: the state is unknown. */
	if (kept_fd(&run.journal, &size) < 0) {
		__atomic_add_fetch(&run.count->lost, 1, __ATOMIC_SEQ_CST);
		return;
	}
	/* A fork while another thread records: the child's copy of the lock
	 * would stay taken. */
	pthread_atfork(ct_lock, ct_unlock, fresh_lock);
	run.on = 1;
}

int ct_active(void)
{
	static int std_held;
	int saved = errno;

	pthread_once(&once, read_run);
	/* Once the run is read: what the process inherited as its standard
	 * output may be a file of the copy it writes through stdio. */
	if (run.on && !__atomic_exchange_n(&std_held, 1, __ATOMIC_SEQ_CST))
		ct_hold_std(-1);
	errno = saved;
	return run.on;
}

/* Is standard output or error a regular file under the copy?  Told from
 * the environment and /proc alone, before the run is read. */
static int std_in_copy(void)
{
	const char *root = getenv(CT_ENV_ROOT);
	size_t n = root ? strlen(root) : 0;
	char path[PATH_MAX];
	struct stat st;

	for (int fd = STDOUT_FILENO; n && fd <= STDERR_FILENO; fd++)
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    ct_fd_path(fd, path, sizeof(path)) == 0 && !strncmp(path, root, n) &&
		    (path[n] == '/' || path[n] == '\0'))
			return 1;
	return 0;
}

/* From the process's start: its standard output or error may be a file of
 * the copy that a shell opened and that it writes through stdio, whose
 * writes no wrapper sees (seq > data), even if it makes no call the library
 * wraps.  Any other process reads the run at its first call, as before (no
 * descriptor of the library's from its start). */
__attribute__((constructor)) static void at_start(void)
{
	int saved = errno;

	if (std_in_copy())
		ct_active();
	errno = saved;
}

int ct_writes_are_points(void)
{
	return run.writes;
}

static void journal_lock(void)
{
	off_t size;

	if (depth++ || !run.on || (locked_fd = kept_fd(&run.journal, &size)) < 0)
		return;
	while (ct_sys(SYS_flock, locked_fd, LOCK_EX) != 0 && errno == EINTR)
		;
}

static void journal_unlock(void)
{
	if (--depth == 0 && locked_fd >= 0) {
		ct_sys(SYS_flock, locked_fd, LOCK_UN);
		locked_fd = -1;
	}
}

void ct_unlock(void)
{
	journal_unlock();
	pthread_mutex_unlock(&lock);
}

/* Just locked: past the point --at asks for, numbered by another process
 * whose kill has not come yet (or never will: this one left the group),
 * the power failed, and nothing this process would change under the lock
 * may reach the copy, where a kill between the change and its record
 * would leave it past the journal.  The supervisor's crash_stopped, for
 * the library.  The lock is let go first: a vfork child shares it with
 * its parent. */
static void stop_if_passed(void)
{
	if (depth == 1 && run.on && run.at &&
	    __atomic_load_n(&run.count->points, __ATOMIC_SEQ_CST) >= run.at) {
		ct_unlock();
		kill(getpid(), SIGKILL);
	}
}

void ct_lock(void)
{
	pthread_mutex_lock(&lock);
	journal_lock();
	stop_if_passed();
}

int ct_trylock(void)
{
	if (pthread_mutex_trylock(&lock) != 0)
		return 0;
	journal_lock();
	stop_if_passed();
	return 1;
}

/* Append a record, or count it lost: never past the file size limit, whose
 * SIGXFSZ would kill the program (the command's own writes may fit). */
static void append(struct iovec *iov, int n, size_t total)
{
	off_t size;
	int fd = kept_fd(&run.journal, &size);

	if (size < 0 || (run.fsize.rlim_cur != RLIM_INFINITY &&
			 (unsigned long long)size + total > run.fsize.rlim_cur) ||
	    ct_sys(SYS_writev, fd, iov, n) != (long)total)
		__atomic_add_fetch(&run.count->lost, 1, __ATOMIC_SEQ_CST);
}

uint64_t ct_journal_size(void)
{
	off_t size;

	ct_lock();
	kept_fd(&run.journal, &size);
	ct_unlock();
	return size < 0 ? 0 : (uint64_t)size;
}

/* The crash point asked for was passed: for the kernel-reference tests,
 * wait for their word; else the power fails and nothing of the tree runs
 * on. */
static void passed(uint64_t point, unsigned kind)
{
	char msg[64], c;
	int n = snprintf(msg, sizeof(msg), "%llu %ld %u\n", (unsigned long long)point,
			 (long)run.pgid, kind);

	if (run.hook_w >= 0 && ct_sys(SYS_write, run.hook_w, msg, n) == n)
		ct_sys(SYS_read, run.hook_r, &c, 1);
	if (run.at && point == run.at) {
		kill(-run.pgid, SIGKILL);
		raise(SIGKILL);
	}
}

void ct_record(struct ct_record *h, const struct iovec *payload, int n)
{
	int saved = errno, point;
	struct iovec iov[1 + IOV_MAX / 2];
	size_t total = sizeof(*h);

	h->magic = CT_MAGIC;
	h->pid = (uint32_t)getpid();
	h->len = 0;
	iov[0] = (struct iovec){h, sizeof(*h)};
	for (int i = 0; i < n && i < IOV_MAX / 2; i++) {
		iov[1 + i] = payload[i];
		h->len += (uint32_t)payload[i].iov_len;
	}
	total += h->len;
	ct_lock();
	point = ct_number(run.count, h, run.writes) != 0;
	append(iov, 1 + (n < IOV_MAX / 2 ? n : IOV_MAX / 2), total);
	ct_unlock();
	if (point)
		passed(h->point, h->kind);
	errno = saved;
}

void ct_note(enum ct_kind kind, const struct stat *st, const char *why)
{
	struct ct_record h = {.kind = (uint16_t)kind};
	struct iovec v = {(void *)why, why ? strlen(why) + 1 : 0};

	if (st) {
		h.dev = st->st_dev;
		h.ino = st->st_ino;
	}
	ct_record(&h, &v, why ? 1 : 0);
}

/* Has the output file k grown past what *seen says?  Then *seen moves on
 * (once, whichever process sees it first). */
static int grew(struct kept *k, uint64_t *seen)
{
	off_t size;
	uint64_t was = __atomic_load_n(seen, __ATOMIC_SEQ_CST);

	kept_fd(k, &size);
	return size > 0 && (uint64_t)size > was &&
	       __atomic_compare_exchange_n(seen, &was, (uint64_t)size, 0, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST);
}

void ct_claims(void)
{
	int saved = errno;

	ct_lock();
	if (grew(&run.out, &run.count->out) | grew(&run.err, &run.count->err)) {
		struct ct_record h = {.kind = CT_CLAIM};

		ct_record(&h, NULL, 0);
	}
	ct_unlock();
	errno = saved;
}

static int under(const char *path, const char *dir, size_t len)
{
	return strncmp(path, dir, len) == 0 && (path[len] == '/' || path[len] == '\0');
}

int ct_in_root(const char *path)
{
	return under(path, run.root, run.root_len);
}

int ct_in_run(const char *path)
{
	return under(path, run.run, run.run_len);
}

/* Is fd on the file system of the copy? */
int ct_on_copy_fs(int fd)
{
	struct stat a, b;
	int saved = errno, on = fstat(fd, &a) == 0 && stat(run.root, &b) == 0 &&
				a.st_dev == b.st_dev;

	errno = saved;
	return on;
}

int ct_is_stderr(const struct stat *st)
{
	return run.err_ino && st->st_dev == run.err_dev && st->st_ino == run.err_ino;
}

int ct_fd_path(int fd, char *out, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, size - 1);
	if (n < 0 || out[0] != '/')
		return out[0] = '\0', -1;
	out[n] = '\0';
	return 0;
}
