/* SPDX-License-Identifier: MIT */
/* release.c -- the closes that release a file emptied through them, for
 * ext4's auto_da_alloc replace-by-truncate rule: ext4_truncate() marks a
 * file it leaves empty (EXT4_STATE_DA_ALLOC_CLOSE), and the release of an
 * open file of it (its last descriptor closed: ext4_release_file()) starts
 * writing its data back; xfs_release() does so after a truncation too
 * (doc/crashtest.md).
 *
 * A release is journaled (CT_RELEASE) only where the library knows the
 * close is one: a descriptor this process opened on a file of the copy and
 * truncated to nothing through (O_TRUNC, ftruncate to 0), closed while no
 * other descriptor of the process is on that file and no child was made
 * since (fork, posix_spawn, system, popen: a child may hold it still).  A
 * dup2 of it is followed too (a shell's redirection), a dup2 onto it is a
 * close.  Neither a close at exit or exec nor a static program's is seen.
 * A release not journaled carries no data in the model: more states, never
 * fewer.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MARKS 1024 /* descriptors past it are not followed */
static uint64_t marked[MARKS / 64];
static pid_t owner; /* the process the marks are of: a vfork child's are not */

static int bit(int fd, uint64_t *mask)
{
	if (fd < 0 || fd >= MARKS)
		return -1;
	*mask = 1ULL << (fd % 64);
	return fd / 64;
}

/* A child may hold every descriptor: none is followed any more. */
void ct_release_forget_all(void)
{
	for (int i = 0; i < MARKS / 64; i++)
		__atomic_store_n(&marked[i], 0, __ATOMIC_SEQ_CST);
}

static void watch_forks(void)
{
	pthread_atfork(NULL, ct_release_forget_all, ct_release_forget_all);
}

/* fd, of a file of the copy, was just truncated to nothing through. */
void ct_release_truncated(int fd)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint64_t mask;
	int i = bit(fd, &mask);

	if (i < 0)
		return;
	pthread_once(&once, watch_forks);
	owner = (pid_t)ct_sys(SYS_getpid);
	__atomic_fetch_or(&marked[i], mask, __ATOMIC_SEQ_CST);
}

/* Is fd followed?  It is not any more. */
static int take(int fd)
{
	uint64_t mask;
	int i = bit(fd, &mask);

	if (i < 0 || !(__atomic_load_n(&marked[i], __ATOMIC_RELAXED) & mask) ||
	    (pid_t)ct_sys(SYS_getpid) != owner)
		return 0;
	return !!(__atomic_fetch_and(&marked[i], ~mask, __ATOMIC_SEQ_CST) & mask);
}

/* Is fd followed (and still)? */
static int followed(int fd)
{
	uint64_t mask;
	int i = bit(fd, &mask);

	return i >= 0 && (__atomic_load_n(&marked[i], __ATOMIC_RELAXED) & mask) &&
	       (pid_t)ct_sys(SYS_getpid) == owner;
}

/* getdents64's entries (linux/dirent.h has none for user space). */
struct entry64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Is another descriptor of this process on the file st?  Read without
 * allocating: a close may come from a signal handler. */
static int another(int fd, const struct stat *st)
{
	char buf[4096] __attribute__((aligned(8)));
	long n, found = 0;
	int dir = (int)ct_sys(SYS_openat, AT_FDCWD, "/proc/self/fd",
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dir < 0)
		return 1;
	while (!found && (n = ct_sys(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
		for (long off = 0; !found && off < n;) {
			struct entry64 *e = (struct entry64 *)(buf + off);
			int other = atoi(e->name);
			struct stat ost;

			off += e->reclen;
			found = e->name[0] != '.' && other != fd && other != dir && !ct_image_ours(other) &&
				fstat(other, &ost) == 0 && ost.st_dev == st->st_dev &&
				ost.st_ino == st->st_ino;
		}
	ct_sys(SYS_close, dir);
	return found || n < 0;
}

/* About to close fd: the file it is on, if the close is its release. */
int ct_release_before(int fd, struct stat *st)
{
	int saved = errno, r;

	r = take(fd) && fstat(fd, st) == 0 && !another(fd, st);
	errno = saved;
	return r;
}

/* A duplicate of a followed descriptor is followed too: a shell's
 * redirection moves the file onto standard output, closes the first, and
 * releases it by restoring its own. */
void ct_release_duplicated(int r, int fd, const struct stat *st)
{
	if (r < 0 || r == fd)
		return;
	if (st)
		ct_release_after(st);
	if (followed(fd))
		ct_release_truncated(r);
}

/* ... and closed: journaled. */
void ct_release_after(const struct stat *st)
{
	int saved = errno;
	struct ct_record h = {.kind = CT_RELEASE, .dev = st->st_dev, .ino = st->st_ino};

	ct_record(&h, NULL, 0);
	errno = saved;
}

PL_EXPORT int close(int fd)
{
	struct stat st;
	int release = ct_release_before(fd, &st), r = REAL(close)(fd);

	if (release && (r == 0 || errno != EBADF))
		ct_release_after(&st);
	return r;
}

/* libc's own children, made past fork and posix_spawn's wrappers. */
PL_EXPORT int system(const char *command)
{
	ct_release_forget_all();
	return REAL(system)(command);
}

PL_EXPORT FILE *popen(const char *command, const char *type)
{
	ct_release_forget_all();
	return REAL(popen)(command, type);
}
