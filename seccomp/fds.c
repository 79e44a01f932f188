/* SPDX-License-Identifier: MIT */
/* fds.c -- a caller's descriptors, from outside it.
 *
 * What a descriptor is, is looked at through /proc/TID/fd/N and
 * /proc/TID/fdinfo/N: statx follows the magic link to the file without
 * opening it, so nothing reaches the caller's file system.  A duplicate
 * (pidfd_getfd) is made only to act on the file, and only where closing
 * it is no event: every close of a descriptor calls its file's flush,
 * which FUSE sends to its server (s3fs and the like upload the whole
 * object then), and NFS and SMB answer by writing the file back.  Those,
 * and any file system not known to do nothing there, are left to the
 * kernel (their_fd's NOT_QUIET).
 *
 * The caller is named by thread id: a thread may have a descriptor table
 * of its own (unshare(CLONE_FILES)), so its descriptors are fetched through
 * a pidfd of that very thread (PIDFD_THREAD, Linux 6.9), and /proc/TID/fd
 * is that thread's table.  What is read by number (/proc) may be another
 * process's once the caller is gone: the caller checks still_pending after.
 */
#include "common/common.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

#define STATX_WHAT (STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE | STATX_BTIME | STATX_MNT_ID)

int their_flags(const struct call *c, int fd)
{
	char path[64], text[256], *at;
	int f;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", c->req->pid, fd);
	if ((f = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fds_note();
		return errno == ENOENT ? -EBADF : -errno;
	}
	n = read(f, text, sizeof(text) - 1);
	close(f);
	text[n > 0 ? n : 0] = '\0';
	if (!(at = strstr(text, "flags:")))
		return -EIO;
	return (int)strtol(at + 6, NULL, 8);
}

int their_path(const struct call *c, int fd)
{
	char path[64];
	int r;

	if (fd == AT_FDCWD)
		snprintf(path, sizeof(path), "/proc/%d/cwd", c->req->pid);
	else if (fd >= 0)
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", c->req->pid, fd);
	else
		return -EBADF;
	/* O_PATH opens nothing on the file's file system, and its close
	 * reaches none */
	if ((r = open(path, O_PATH | O_CLOEXEC)) < 0)
		fds_note();
	return r >= 0 ? r : errno == ENOENT ? -EBADF : -errno;
}

/* The file systems whose flush does nothing for a descriptor this process
 * closes: they have none (ext4, XFS, Btrfs, tmpfs...); f2fs's acts only
 * for the task that began an atomic write, overlayfs's is the flush of the
 * file system under it (one of these, as overlayfs takes for an upper).
 * Any other is not known to be quiet: FUSE, NFS, SMB, 9p, Ceph. */
static const char *const quiet_types[] = {"ext2", "ext3",  "ext4", "xfs",   "btrfs",
					  "tmpfs", "ramfs", "f2fs", "exfat", "vfat",
					  "msdos", "bcachefs", "overlay"};

/* Per mount, whether its type is one of those: known by its id and
 * device (an id is given again once its mount is gone, to another). */
#define MOUNTS_KEPT 64
static struct {
	unsigned long long id, dev;
	int known; /* 0: an empty place; 1: not quiet; 2: quiet */
} mounts[MOUNTS_KEPT];
static unsigned mounts_next;
static pthread_mutex_t mounts_lock = PTHREAD_MUTEX_INITIALIZER;

/* Is mount `id` of a quiet type, as the caller's mount table says (mount
 * ids are the system's, whatever the namespace)?  -ENOENT: not found;
 * -errno: the table cannot be read. */
static int quiet_mount(pid_t tid, unsigned long long id)
{
	char path[64], type[64], *line = NULL, *dash;
	size_t cap = 0;
	FILE *f;
	int quiet = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", tid);
	if (!(f = fopen(path, "re"))) {
		fds_note();
		return -errno;
	}
	while (quiet < 0 && getline(&line, &cap, f) > 0) {
		if (strtoull(line, NULL, 10) != id || !(dash = strstr(line, " - ")) ||
		    sscanf(dash + 3, "%63s", type) != 1)
			continue;
		quiet = 0;
		for (size_t i = 0; i < sizeof(quiet_types) / sizeof(*quiet_types); i++)
			quiet |= !strcmp(type, quiet_types[i]);
	}
	free(line);
	fclose(f);
	return quiet;
}

/* Character devices whose driver has no flush either: mem's (/dev/null,
 * /dev/zero...), terminals and pseudo-terminals. */
static int quiet_device(unsigned major)
{
	return major == 1 || major == 4 || major == 5 || (major >= 136 && major <= 143);
}

/* A mount in no mount table is the kernel's own (memfd's tmpfs, the
 * anonymous inodes of eventfd, epoll...), never a FUSE or NFS one: its
 * type is asked of the file itself (statfs of /proc/TID/fd/N, which no
 * server hears).  Quiet: tmpfs, ramfs, the anonymous inodes' (none of
 * their files has a flush). */
static int quiet_internal(pid_t tid, int fd)
{
	char path[64];
	struct statfs fs;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", tid, fd);
	if (statfs(path, &fs) != 0)
		return -errno;
	return fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC ||
	       fs.f_type == ANON_INODE_FS_MAGIC;
}

/* Is the mount of the file stx quiet, as its type (kept per mount)? */
static int quiet_kept(pid_t tid, const struct statx *stx)
{
	unsigned long long dev = makedev(stx->stx_dev_major, stx->stx_dev_minor);
	int quiet = -1;
	unsigned i;

	pthread_mutex_lock(&mounts_lock);
	for (i = 0; i < MOUNTS_KEPT && quiet < 0; i++)
		if (mounts[i].known && mounts[i].id == stx->stx_mnt_id && mounts[i].dev == dev)
			quiet = mounts[i].known - 1;
	pthread_mutex_unlock(&mounts_lock);
	if (quiet >= 0 || (quiet = quiet_mount(tid, stx->stx_mnt_id)) < 0)
		return quiet;
	pthread_mutex_lock(&mounts_lock);
	i = mounts_next++ % MOUNTS_KEPT;
	mounts[i].id = stx->stx_mnt_id;
	mounts[i].dev = dev;
	mounts[i].known = 1 + quiet;
	pthread_mutex_unlock(&mounts_lock);
	return quiet;
}

int closes_quietly(pid_t tid, int fd, const struct statx *stx)
{
	unsigned type = stx->stx_mode & S_IFMT;
	int quiet;

	if (type == S_IFIFO || type == S_IFSOCK) /* pipes' and sockets' own: none */
		return 1;
	if (type == S_IFCHR)
		return quiet_device(stx->stx_rdev_major);
	if (type == 0) /* an anonymous inode */
		return quiet_internal(tid, fd);
	if ((type != S_IFREG && type != S_IFDIR) || !(stx->stx_mask & STATX_MNT_ID))
		return 0;
	quiet = quiet_kept(tid, stx);
	return quiet == -ENOENT ? quiet_internal(tid, fd) : quiet;
}

/* A pidfd whose descriptor table is the thread's: the thread's own, or
 * before Linux 6.9 its process's, if the thread shares that table now
 * (*exact = 0: the thread may leave it, unshare(CLONE_FILES), at once). */
int caller_pidfd(pid_t tid, int *exact)
{
	char path[64], line[128];
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD), tgid = 0;
	FILE *f;

	*exact = 1;
	if (fd >= 0 || errno != EINVAL)
		return fd;
	*exact = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if ((f = fopen(path, "re"))) {
		while (fgets(line, sizeof(line), f) && sscanf(line, "Tgid: %d", &tgid) != 1)
			;
		fclose(f);
	}
	if (tgid <= 0 || (tgid != tid && syscall(SYS_kcmp, tgid, tid, KCMP_FILES, 0, 0) != 0)) {
		errno = ENOSYS;
		return -1;
	}
	return (int)syscall(SYS_pidfd_open, tgid, 0);
}

/* The pidfds of the threads served last, per worker: a pidfd names its
 * thread for good (after it exits, pidfd_getfd fails with ESRCH, and a new
 * one is opened for the thread that has its number now), so the two system
 * calls that make and close one are saved on each request after the first.
 * A process's pidfd standing for a thread (before Linux 6.9) is good for
 * one request only: checked again for the next.  Closed when the worker
 * leaves (fds_leave), and at this process's descriptor limit, but for the
 * one in use. */
#define PIDFDS 8
static __thread struct {
	pid_t tid;
	int pidfd;
} pidfds[PIDFDS];
static __thread unsigned pidfds_next;

static void unkeep(int *slot);

static void forget_pidfds(int but)
{
	for (unsigned i = 0; i < PIDFDS; i++)
		if ((int)i != but)
			unkeep(&pidfds[i].pidfd);
}

static __thread unsigned shortages;

void fds_note(void)
{
	if (errno == EMFILE || errno == ENFILE)
		shortages++;
}

unsigned fds_shortages(void)
{
	return shortages;
}

static int short_of_fds(int e)
{
	return e == EMFILE || e == ENFILE;
}

/* What all workers keep (pidfds, /proc/TID/fd directories), all told: at
 * most a quarter of this process's descriptor limit.  Each worker keeps a
 * few, and a burst of threads starts many workers: kept without a bound,
 * the caches took every descriptor (128 under ulimit -n 128) and a request
 * had none left.  Past the bound a worker gives up what it keeps, then
 * uses a descriptor once and closes it. */
static long kept_total;

static int over_budget(void)
{
	static long cap;
	struct rlimit lim;

	if (!__atomic_load_n(&cap, __ATOMIC_RELAXED))
		__atomic_store_n(&cap, getrlimit(RLIMIT_NOFILE, &lim) == 0 &&
				 lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur / 4 < 1024 ?
				 (long)(lim.rlim_cur / 4) + 1 : 1024, __ATOMIC_RELAXED);
	return __atomic_load_n(&kept_total, __ATOMIC_RELAXED) >= cap;
}

/* A kept descriptor *slot set to fd (if one), or closed. */
static void keep(int *slot, int fd)
{
	*slot = fd > 0 ? fd : 0;
	if (fd > 0)
		__atomic_add_fetch(&kept_total, 1, __ATOMIC_RELAXED);
}

static void unkeep(int *slot)
{
	if (*slot > 0) {
		close(*slot);
		__atomic_sub_fetch(&kept_total, 1, __ATOMIC_RELAXED);
	}
	*slot = 0;
}

/* The /proc/TID/fd directories of the threads looked at last, per worker
 * (O_PATH): a name looked up there is one path component, where a whole
 * path from / walks /proc each time.  A kept one of a thread that is gone
 * finds nothing (ENOENT), and is opened again: its number may be
 * another's now.  Closed when the worker leaves, and at this process's
 * descriptor limit. */
#define FDDIRS 4
static __thread struct {
	pid_t tid;
	int dir;
} fddirs[FDDIRS];
static __thread unsigned fddirs_next;

static void forget_fddirs(void)
{
	for (unsigned i = 0; i < FDDIRS; i++)
		unkeep(&fddirs[i].dir);
}

/* The thread's /proc/TID/fd, kept or (fresh) opened now; -errno.  *once:
 * not kept (past the budget), for the caller to close. */
static int fddir_of(pid_t tid, int fresh, int *once)
{
	char path[64];
	unsigned i;
	int dir;

	*once = 0;
	for (i = 0; !fresh && i < FDDIRS; i++)
		if (fddirs[i].tid == tid && fddirs[i].dir > 0)
			return fddirs[i].dir;
	i = fddirs_next++ % FDDIRS;
	unkeep(&fddirs[i].dir);
	if (over_budget()) { /* this worker's own first, then none */
		forget_pidfds(-1);
		forget_fddirs();
		*once = over_budget();
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", tid);
	if ((dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 && short_of_fds(errno)) {
		forget_pidfds(-1); /* this worker's own, for room */
		forget_fddirs();
		dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (dir < 0) {
		fds_note();
		return errno == ENOENT ? -ESRCH : -errno;
	}
	if (!*once) {
		fddirs[i].tid = tid;
		keep(&fddirs[i].dir, dir);
	}
	return dir;
}

/* statx of the caller's fd there (AT_SYMLINK_NOFOLLOW in flags: of its
 * link, whose mode is its access mode), with a directory kept, or again
 * with a fresh one where the kept one finds nothing. */
static int stat_theirs(pid_t tid, int fd, int flags, struct statx *stx)
{
	char name[16];
	int fresh = 0, dir, once, r;

	if (fd < 0)
		return -EBADF;
	snprintf(name, sizeof(name), "%d", fd);
	for (;; fresh = 1) {
		if ((dir = fddir_of(tid, fresh, &once)) < 0)
			return dir;
		/* DONT_SYNC: a FUSE or NFS file's attributes as cached, not asked */
		r = statx(dir, name, flags | AT_STATX_DONT_SYNC, STATX_WHAT, stx) == 0 ? 0 : -errno;
		if (once)
			close(dir);
		if (r != -ENOENT || fresh)
			return r == -ENOENT ? -EBADF : r;
	}
}

int their_file(const struct call *c, int fd, struct statx *stx)
{
	return stat_theirs(c->req->pid, fd, 0, stx);
}

/* The caller's descriptor is open for reading or writing (not O_PATH, nor
 * the ioctl-only access mode 3): 1, 0, -errno.  Its link in /proc/TID/fd
 * has the mode of its access (fs/proc/fd.c): no fdinfo to read. */
static int their_access(const struct call *c, int fd)
{
	struct statx link;
	int r = stat_theirs(c->req->pid, fd, AT_SYMLINK_NOFOLLOW, &link);

	return r < 0 ? r : (link.stx_mode & (S_IRUSR | S_IWUSR)) != 0;
}

void fds_leave(void)
{
	forget_pidfds(-1);
	forget_fddirs();
}

/* The slot of the thread's pidfd, opened now if need be (then *fresh is
 * 1); -errno. */
static int pidfd_of(pid_t tid, int *fresh, int *exact)
{
	unsigned i;
	int fd, once = 0;

	for (i = 0; !*fresh && i < PIDFDS; i++)
		if (pidfds[i].tid == tid && pidfds[i].pidfd > 0)
			return (int)i;
	*fresh = 1;
	i = pidfds_next++ % PIDFDS;
	unkeep(&pidfds[i].pidfd);
	if (over_budget()) { /* this worker's own first, then used once */
		forget_pidfds(-1);
		forget_fddirs();
		once = over_budget();
	}
	pidfds[i].tid = tid;
	if ((fd = caller_pidfd(tid, exact)) < 0 && short_of_fds(errno)) {
		forget_pidfds((int)i);
		forget_fddirs();
		fd = caller_pidfd(tid, exact);
	}
	if (fd < 0) {
		fds_note();
		return -errno;
	}
	keep(&pidfds[i].pidfd, fd);
	if (once) /* getfd closes it after its use */
		*exact = 0;
	return (int)i;
}

static int getfd(pid_t tid, int fd, int fresh)
{
	int r, e, exact = 1, i = pidfd_of(tid, &fresh, &exact);

	if (i < 0)
		return i;
	r = (int)syscall(SYS_pidfd_getfd, pidfds[i].pidfd, fd, 0);
	if (r < 0 && short_of_fds(errno)) {
		forget_pidfds(i);
		r = (int)syscall(SYS_pidfd_getfd, pidfds[i].pidfd, fd, 0);
	}
	if (r < 0)
		fds_note();
	e = errno;
	if (!exact)
		unkeep(&pidfds[i].pidfd);
	if (r < 0 && e == ESRCH && !fresh)
		return getfd(tid, fd, 1);
	return r < 0 ? -e : r;
}

int their_fd(const struct call *c, int fd, struct statx *stx)
{
	struct statx mine;
	int r;

	if (!stx)
		stx = &mine;
	if ((r = their_file(c, fd, stx)) < 0 || (r = closes_quietly(c->req->pid, fd, stx)) < 0)
		return r;
	return r ? getfd(c->req->pid, fd, 0) : NOT_QUIET;
}

/* sync_file_range's checks (fs/sync.c), in its order: the flags, the
 * offsets, then the kind of file: what it answers for fd, but for fd
 * itself, which is not fetched (fds.c's top). */
static int range_check(unsigned type, long long off, long long n, unsigned flags)
{
	unsigned long long end = (unsigned long long)off + (unsigned long long)n;

	if (flags & ~(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
		      SYNC_FILE_RANGE_WAIT_AFTER))
		return -EINVAL;
	if (off < 0 || (long long)end < 0 || end < (unsigned long long)off)
		return -EINVAL;
	if (type != S_IFREG && type != S_IFBLK && type != S_IFDIR && type != S_IFLNK)
		return -ESPIPE;
	return 0;
}

int their_range_check(const struct call *c, int fd, long long off, long long n, unsigned flags,
		      struct statx *stx)
{
	int fl, r = their_file(c, fd, stx);

	if (r < 0 || (r = their_access(c, fd)) < 0)
		return r;
	/* fdget refuses an O_PATH descriptor first, as none (neither read nor
	 * write: its flags tell it from the access mode 3) */
	if (!r && ((fl = their_flags(c, fd)) < 0 || (fl & O_PATH)))
		return fl < 0 ? fl : -EBADF;
	return range_check(stx->stx_mode & S_IFMT, off, n, flags);
}

int their_open_flags(const struct call *c, int fd)
{
	struct statx stx;
	int mine = their_fd(c, fd, &stx), fl;

	if (mine == NOT_QUIET)
		return their_flags(c, fd);
	if (mine < 0)
		return mine;
	fl = fcntl(mine, F_GETFL);
	close(mine);
	return fl < 0 ? -errno : fl;
}
