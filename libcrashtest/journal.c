/* SPDX-License-Identifier: MIT */
/* journal.c -- the run this process belongs to (from the environment), the
 * journal it appends to, and the crash points it counts.
 *
 * Wrappers may run before constructors and in several threads: the run is
 * read once under pthread_once.  The journal descriptor is checked before
 * each record, since a program may close descriptors it did not open and
 * reuse their numbers.
 */
#include "ct.h"
#include "env.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

void *ct_real_fn[CT_NREAL];
const char *const ct_real_name[CT_NREAL] = {REAL_SYMBOLS(PL_NAME)};

static struct {
	int on;
	char run[PATH_MAX], root[PATH_MAX];
	size_t run_len, root_len;
	long long at;
	int writes; /* writes are crash points */
	pid_t pgid;
	int journal;
	dev_t jdev;
	ino_t jino;
	struct ct_counters *count;
	unsigned long long err_dev, err_ino;
	struct rlimit fsize; /* past it, a write of the journal is SIGXFSZ */
} run;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static int open_in_run(const char *name, int flags)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", run.run, name) >= (int)sizeof(path))
		return -1;
	return (int)ct_sys(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC | O_NOFOLLOW);
}

static void open_journal(void)
{
	struct stat st;

	run.journal = open_in_run(CT_JOURNAL, O_WRONLY | O_APPEND);
	if (run.journal >= 0 && fstat(run.journal, &st) == 0) {
		run.jdev = st.st_dev;
		run.jino = st.st_ino;
	}
}

/* In a forked child: the lock the parent held for the fork is owned by a
 * thread id the child does not have, so unlocking it would fail (EPERM) and
 * the child's next write would wait forever.  The child has one thread: a
 * fresh lock is the same lock, released. */
static void fresh_lock(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

	memcpy(&lock, &unlocked, sizeof(lock));
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

static void read_run(void)
{
	const char *r = getenv(CT_ENV_RUN), *root = getenv(CT_ENV_ROOT);
	const char *at = getenv(CT_ENV_AT), *pgid = getenv(CT_ENV_PGID);
	int fd;

	if (!r || !root || !at || !pgid || strlen(r) >= PATH_MAX || strlen(root) >= PATH_MAX)
		return;
	strcpy(run.run, r);
	strcpy(run.root, root);
	run.run_len = strlen(r);
	run.root_len = strlen(root);
	run.at = atoll(at);
	run.writes = emd_env_true(getenv(CT_ENV_WRITES));
	run.pgid = (pid_t)atol(pgid);
	if (getrlimit(RLIMIT_FSIZE, &run.fsize) != 0)
		run.fsize.rlim_cur = RLIM_INFINITY;
	if (getenv(CT_ENV_STDERR))
		sscanf(getenv(CT_ENV_STDERR), "%llu:%llu", &run.err_dev, &run.err_ino);
	fd = open_in_run(CT_POINTS, O_RDWR);
	run.count = map_points(fd >= 0 ? fd : inherited_points());
	if (fd >= 0)
		close(fd);
	if (!run.count)
		return;
	open_journal();
	/* Its writes would go unrecorded: the state is unknown. */
	if (run.journal < 0)
		__atomic_add_fetch(&run.count->lost, 1, __ATOMIC_SEQ_CST);
	/* A fork while another thread saves old contents: the child's copy
	 * of the lock would stay taken. */
	pthread_atfork(ct_lock, ct_unlock, fresh_lock);
	run.on = run.journal >= 0;
}

int ct_active(void)
{
	int saved = errno;

	pthread_once(&once, read_run);
	errno = saved;
	return run.on;
}

void ct_lock(void)
{
	pthread_mutex_lock(&lock);
}

void ct_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

/* Still our journal?  Reopened when the program closed it.  Its size in
 * *size, -1 if unknown. */
static int journal_fd(off_t *size)
{
	struct stat st;

	if (fstat(run.journal, &st) != 0 || st.st_dev != run.jdev || st.st_ino != run.jino) {
		open_journal();
		if (fstat(run.journal, &st) != 0)
			st.st_size = -1;
	}
	*size = st.st_size;
	return run.journal;
}

/* Append a record, or count it lost: never past the file size limit, whose
 * SIGXFSZ would kill the program (the command's own writes may fit). */
static void append(struct iovec *iov, int n, size_t total)
{
	off_t size;
	int fd = journal_fd(&size);

	if (size < 0 || (run.fsize.rlim_cur != RLIM_INFINITY &&
			 (unsigned long long)size + total > run.fsize.rlim_cur) ||
	    ct_sys(SYS_writev, fd, iov, n) != (long)total)
		__atomic_add_fetch(&run.count->lost, 1, __ATOMIC_SEQ_CST);
}

long long ct_journal_size(void)
{
	off_t size;

	ct_lock();
	journal_fd(&size);
	ct_unlock();
	return size;
}

void ct_record(const struct ct_record *head, const void *payload, size_t len)
{
	int saved = errno;
	struct ct_record h = *head;
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)payload, len}};

	h.magic = CT_MAGIC;
	h.len = (uint32_t)len;
	h.pid = (uint32_t)getpid();
	ct_lock();
	append(iov, len ? 2 : 1, sizeof(h) + len);
	ct_unlock();
	errno = saved;
}

void ct_note(enum ct_kind kind, const struct stat *st, const char *what)
{
	struct ct_record h = {.kind = kind};

	if (st) {
		h.dev = st->st_dev;
		h.ino = st->st_ino;
	}
	ct_record(&h, what, what ? strlen(what) + 1 : 0);
}

/* Count a crash point, a durability call when `sync`, and stop the tree if
 * it is the one asked for: only then is it named (by path, or else by fd)
 * and recorded. */
static void count_point(int sync, const char *call, int fd, const char *path)
{
	char what[PATH_MAX + 32], buf[PATH_MAX] = "";
	struct ct_record h = {.kind = CT_POINT};
	uint64_t *mine = sync ? &run.count->syncs : &run.count->writes;

	__atomic_add_fetch(mine, 1, __ATOMIC_SEQ_CST);
	if (sync)
		ct_bump();
	if (!sync && !run.writes)
		return;
	h.off = (int64_t)__atomic_add_fetch(&run.count->points, 1, __ATOMIC_SEQ_CST);
	if (h.off != run.at)
		return;
	if (!path && fd >= 0)
		ct_fd_path(fd, buf, sizeof(buf));
	snprintf(what, sizeof(what), "%s(%s)", call, path ? path : buf);
	h.size = (int64_t)__atomic_load_n(&run.count->syncs, __ATOMIC_SEQ_CST);
	h.ino2 = __atomic_load_n(&run.count->writes, __ATOMIC_SEQ_CST);
	ct_record(&h, what, strlen(what) + 1);
	/* The power fails: nothing of the tree runs on. */
	kill(-run.pgid, SIGKILL);
	raise(SIGKILL);
}

void ct_point(const char *call, int fd)
{
	int saved = errno;

	count_point(1, call, fd, NULL);
	errno = saved;
}

void ct_step(const char *call, int fd, const char *path)
{
	int saved = errno;

	count_point(0, call, fd, path);
	errno = saved;
}

void ct_bump(void)
{
	__atomic_add_fetch(&run.count->generation, 1, __ATOMIC_SEQ_CST);
}

uint64_t ct_generation(void)
{
	return __atomic_load_n(&run.count->generation, __ATOMIC_SEQ_CST);
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

void ct_keep_name(char *out, size_t size)
{
	static unsigned long serial;

	snprintf(out, size, "%s/%s/%ld.%lu", run.run, CT_KEEP, (long)getpid(),
		 __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
}
