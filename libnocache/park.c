/* SPDX-License-Identifier: MIT */
/* park.c -- waiting for the writeback of small files after their close.
 *
 * Waiting at close for the writeback of what a file got costs a disk write
 * per file: `cp -r` of a thousand small files would wait a thousand times in
 * a row.  Instead, close starts the writeback and parks the file: an O_PATH
 * descriptor of its own, opened afresh through /proc/self/fd (a new open
 * file description, so no flock or OFD lock of the command's is held the
 * longer; one that reads nothing, so no write lease is refused for it, and
 * whose close releases no POSIX lock), moved up near RLIMIT_NOFILE,
 * close-on-exec.  The oldest of NC_PARKED parked files is waited for and
 * dropped when another comes, by then mostly written, through a descriptor
 * opened for the moment; all are at exit, at exec, and when the command
 * closes the number.  Closing that descriptor would release the process's
 * POSIX locks on the file, so one whose file is locked is kept open until
 * exit.
 *
 * A parked descriptor still holds its file and file system: whatever would
 * see that settles the parked files first (visible.c): a process started
 * (which may unmount the file system), an unmount, the removal of a parked
 * file (whose space it would hold).
 *
 * One process owns the parked files: a forked child neither parks nor
 * touches them (a vfork child shares this memory with its parent).  A
 * thread that finds the list busy (another thread, or a signal handler that
 * interrupted it) waits at close instead.
 */
#include "nocache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

struct parked {
	int fd;
	dev_t dev;
	ino_t ino;
	struct nc_file f;
};

static struct parked list[NC_PARKED];
static int count;
static pid_t owner;
static int busy;

static int lock(void)
{
	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		return 0;
	if (owner && owner != getpid()) {
		__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
		return 0;
	}
	return 1;
}

static void unlock(void)
{
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}

/* Is p's descriptor still the file it was (the command may have closed
 * the number with close_range, or put a file of its own there)? */
static int still_ours(const struct parked *p)
{
	struct stat st;
	int flags = fcntl(p->fd, F_GETFD);

	return flags >= 0 && (flags & FD_CLOEXEC) && fstat(p->fd, &st) == 0 &&
	       st.st_dev == p->dev && st.st_ino == p->ino;
}

/* Does anyone hold a POSIX or OFD lock on the file?  OFD locks conflict
 * with the process's own POSIX locks, so F_OFD_GETLK sees those too. */
static int locked(int fd)
{
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};

	return fcntl(fd, F_OFD_GETLK, &l) != 0 || l.l_type != F_UNLCK;
}

/* p's file opened for reading, for the moment of its drop, or -1. */
static int readable(const struct parked *p)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", p->fd);
	return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/* Wait for p's writeback and drop it; close its descriptor if `close_it`.
 * The descriptor it is read through is closed only if no lock could go
 * with it. */
static void settle(struct parked *p, int close_it)
{
	int fd;

	if (still_ours(p)) {
		if ((fd = readable(p)) >= 0) {
			nc_drop_file(fd, &p->f);
			if (!locked(fd))
				NC_REAL(close)(fd);
		}
		if (close_it)
			NC_REAL(close)(p->fd);
	}
	nc_residency_free(&p->f.was);
}

/* RLIMIT_NOFILE as last seen; read again when a descriptor cannot be had
 * below it (the command may have lowered it). */
static rlim_t limit;

static rlim_t nofile(int again)
{
	struct rlimit rl;

	if ((!limit || again) && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		limit = rl.rlim_cur;
	return limit;
}

/* A descriptor of our own for fd's file, near the top of the table; none
 * for a file that could not be opened again to be read (then dropped). */
static int reopen(int fd)
{
	char path[32];
	rlim_t top = nofile(0);
	int low, high;

	if (top < NC_PARK_NOFILE || top > 1 << 20)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) != 0)
		return -1;
	low = open(path, O_PATH | O_CLOEXEC);
	if (low < 0)
		return -1;
	high = fcntl(low, F_DUPFD_CLOEXEC, (int)top - 2 * NC_PARKED);
	NC_REAL(close)(low);
	if (high < 0)
		nofile(1);
	return high;
}

static void take_oldest(void)
{
	settle(&list[0], 1);
	count--;
	memmove(&list[0], &list[1], count * sizeof(*list));
}

int nc_park(int fd, struct nc_file *f)
{
	struct parked p;
	struct stat st;

	if (!lock())
		return 0;
	p.fd = reopen(fd);
	if (p.fd < 0 || fstat(p.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (p.fd >= 0)
			NC_REAL(close)(p.fd);
		unlock();
		return 0;
	}
	nc_start_writeback(fd, f);
	p.dev = st.st_dev;
	p.ino = st.st_ino;
	p.f = *f;
	if (count == NC_PARKED)
		take_oldest();
	list[count++] = p;
	owner = getpid();
	unlock();
	return 1;
}

/* Is any parked number in the range?  Read without the lock, which costs a
 * getpid: every close asks, and almost never is one. */
static int any_in(unsigned int first, unsigned int last)
{
	int n = __atomic_load_n(&count, __ATOMIC_RELAXED);

	for (int i = 0; i < n && i < NC_PARKED; i++) {
		unsigned int fd = __atomic_load_n(&list[i].fd, __ATOMIC_RELAXED);

		if (fd >= first && fd <= last)
			return 1;
	}
	return 0;
}

/* Settle, and take off the list, each parked file `which` picks. */
static void unpark(int (*which)(const struct parked *p, const void *arg), const void *arg,
		   int close_them)
{
	int i = 0;

	if (!lock())
		return;
	while (i < count) {
		if (!which(&list[i], arg)) {
			i++;
			continue;
		}
		settle(&list[i], close_them);
		count--;
		memmove(&list[i], &list[i + 1], (count - i) * sizeof(*list));
	}
	unlock();
}

static int in_range(const struct parked *p, const void *arg)
{
	const unsigned int *range = arg;

	return (unsigned int)p->fd >= range[0] && (unsigned int)p->fd <= range[1];
}

void nc_unpark_range(unsigned int first, unsigned int last, int close_them)
{
	const unsigned int range[2] = {first, last};

	if (any_in(first, last))
		unpark(in_range, range, close_them);
}

static int same_file(const struct parked *p, const void *arg)
{
	const struct stat *st = arg;

	return p->dev == st->st_dev && p->ino == st->st_ino;
}

void nc_unpark_name(int dirfd, const char *path)
{
	struct stat st;
	int saved = errno;

	if (__atomic_load_n(&count, __ATOMIC_RELAXED) &&
	    fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
		unpark(same_file, &st, 1);
	errno = saved;
}
