/* SPDX-License-Identifier: MIT */
/* park.c -- waiting for the writeback of small files after their close.
 *
 * Waiting at close for the writeback of what a file got costs a disk write
 * per file: `cp -r` of a thousand small files would wait a thousand times in
 * a row.  Instead, close starts the writeback and parks the file: a
 * descriptor of its own, opened afresh through /proc/self/fd (a new open
 * file description, so no flock or OFD lock of the command's is held the
 * longer), moved up near RLIMIT_NOFILE, close-on-exec.  The oldest of
 * NC_PARKED parked files is waited for and dropped when another comes, by
 * then mostly written; all are at exit, at exec, and when the command
 * closes the number.  Closing a parked descriptor would release the
 * process's POSIX locks on the file, so one whose file is locked is kept
 * open until exit.
 *
 * One process owns the parked files: a forked child neither parks nor
 * touches them (a vfork child shares this memory with its parent).  A
 * thread that finds the list busy (another thread, or a signal handler that
 * interrupted it) waits at close instead.
 */
#include "nocache.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
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

/* Wait for p's writeback and drop it; close its descriptor if `close_it`
 * and no lock could go with it. */
static void settle(struct parked *p, int close_it)
{
	if (still_ours(p)) {
		nc_drop_file(p->fd, &p->f);
		if (close_it && !locked(p->fd))
			NC_REAL(close)(p->fd);
	}
	if (p->f.resident)
		munmap(p->f.resident, p->f.resident_pages);
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

/* A descriptor of our own for fd's file, near the top of the table. */
static int reopen(int fd)
{
	char path[32];
	rlim_t top = nofile(0);
	int low, high;

	if (top < NC_PARK_NOFILE || top > 1 << 20)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	low = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
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

void nc_unpark_range(unsigned int first, unsigned int last, int close_them)
{
	int i = 0;

	if (!any_in(first, last) || !lock())
		return;
	while (i < count) {
		if ((unsigned int)list[i].fd < first ||
		    (unsigned int)list[i].fd > last) {
			i++;
			continue;
		}
		settle(&list[i], close_them);
		count--;
		memmove(&list[i], &list[i + 1], (count - i) * sizeof(*list));
	}
	unlock();
}
