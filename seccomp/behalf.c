/* SPDX-License-Identifier: MIT */
/* behalf.c -- O_SYNC opens and RWF_SYNC writes of a filtered process,
 * made without their sync flags; those that cannot be go on to the kernel
 * as they are, and sync (left.c says so).
 *
 * Only openat2's is the caller's own; an open or a write made here is this
 * process's to the kernel, and to whatever judges who acts (a fanotify
 * permission watcher, audit rules on exe=, a BPF-LSM policy), which might
 * allow eatmydata what it denies the program: those are made only when
 * --on-behalf=on asked for them.
 *
 * openat2 keeps its flags in memory: they are cleared in the caller's own
 * struct open_how and the kernel makes the open, as the caller.  open and
 * openat keep them in a register, and pwritev2 too: those are done here and
 * the result handed back, only when this process has the caller's rights
 * (rights.c) and the call's own context is the caller's too: its working
 * directory or descriptor, its umask, no magic link (/proc/self/... would
 * be this process), nothing on procfs, no FIFO or device (whose open has
 * effects), a file size limit that cannot bite.  Otherwise, and on any
 * error, the call goes on to the kernel unchanged, O_SYNC and all: the
 * request then syncs, and the answer is the kernel's.
 */
#include "common/common.h"
#include "supervisor.h"
#include "maps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#define HOW_MAX 256
#define WRITE_MAX (64 << 20)
#define IOV_MAX_HERE 64
#define DIRECT_ALIGN 4096
#define ZFS_SUPER_MAGIC 0x2fc12fc1UL
#define BCACHEFS_SUPER_MAGIC 0xca451a4eUL

/* The open the caller asked for, as openat2 arguments; 0 if there are no
 * sync flags after all or the request cannot be read (the kernel will
 * answer it: EFAULT, EINVAL...). */
static int read_open(const struct call *c, int *dirfd, char *path, struct open_how *how)
{
	/* The path comes before the flags, the directory (openat) first. */
	int at = (c->compat ? c->request->arg32 : c->request->arg) - 1;

	*dirfd = at ? (int)call_arg(c, 0) : AT_FDCWD;
	if (read_theirs(c->req->pid, call_arg(c, at), path, PATH_MAX, 1) != 0)
		return 0;
	*how = (struct open_how){.flags = (unsigned)call_arg(c, at + 1)};
	if (how->flags & (O_CREAT | __O_TMPFILE))
		how->mode = (unsigned)call_arg(c, at + 2) & 07777;
	return (how->flags & EMD_OPEN_SYNC_FLAGS) != 0;
}

/* The open flags the supervisor knows the meaning of (the kernel's
 * VALID_OPEN_FLAGS; its O_LARGEFILE, which a 64-bit libc calls 0); one it
 * does not know is the kernel's to act on.  A compat caller's flags are
 * ours on x86 only: arm's O_DIRECTORY, O_NOFOLLOW and O_DIRECT are other
 * bits than aarch64's. */
#define KNOWN_OPEN_FLAGS                                                                  \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC | \
	 FASYNC | O_DIRECT | EMD_COMPAT_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |   \
	 O_CLOEXEC | O_SYNC | O_PATH | __O_TMPFILE)

static int flags_known(const struct call *c, unsigned long long flags)
{
	return (!c->compat || EMD_COMPAT_OPEN_FLAGS_NATIVE) &&
	       !(flags & ~(unsigned long long)KNOWN_OPEN_FLAGS);
}

/* Would the kernel refuse to open this file for the caller, with EOVERFLOW:
 * a 32-bit caller's regular file past 2 GiB, without O_LARGEFILE (which a
 * 64-bit process, the supervisor, always has)?  Asked of the file found,
 * before the open, which might truncate it. */
static int too_large(int compat, unsigned long long flags, const struct stat *st)
{
	return compat && !(flags & EMD_COMPAT_O_LARGEFILE) && S_ISREG(st->st_mode) &&
	       st->st_size > 0x7fffffff;
}

int caller_mem(const struct call *c, const struct iovec *remote, int n, size_t *room)
{
	char path[64];
	int mem, maps = open_proc(c->req->pid, "maps");

	snprintf(path, sizeof(path), "/proc/%d/mem", c->req->pid);
	if ((mem = open(path, O_RDWR | O_CLOEXEC)) < 0)
		fds_note();
	*room = mem >= 0 && maps >= 0 ? mapped_prefix(maps, remote, n, 'w') : 0;
	if (maps >= 0)
		close(maps);
	/* After the open: the thread opened, and the maps read, were the
	 * caller's, whose memory the open file now holds for good. */
	if (mem >= 0 && !still_pending(c)) {
		close(mem);
		mem = -1;
	}
	return mem;
}

int caller_unreachable(const struct call *c, const struct iovec *remote, int n, size_t got)
{
	int maps = open_proc(c->req->pid, "maps");
	size_t readable = maps >= 0 ? mapped_prefix(maps, remote, n, 'r') : 0;

	if (maps >= 0)
		close(maps);
	return readable > got;
}

ssize_t write_mem(int mem, const char *buf, size_t len, const struct iovec *remote, int n)
{
	size_t done = 0;
	ssize_t w;

	for (int i = 0; i < n && done < len; i++) {
		size_t part = remote[i].iov_len < len - done ? remote[i].iov_len : len - done;

		for (size_t at = 0; at < part; at += (size_t)w, done += (size_t)w)
			if ((w = pwrite(mem, buf + done, part - at,
					(off_t)((unsigned long)remote[i].iov_base + at))) <= 0)
				return (ssize_t)done;
	}
	return (ssize_t)done;
}

/* openat2: clear the flags in the caller's struct, where the kernel reads
 * them: 2 when they were, 0 if they cannot be (read-only memory), 1 when
 * there is nothing to clear (no sync flags, a struct the kernel refuses). */
static int clear_in_place(const struct call *c)
{
	const __u64 *a = c->req->data.args;
	unsigned long long flags;
	unsigned long at = a[2] + offsetof(struct open_how, flags);
	struct iovec remote = {(void *)at, sizeof(flags)};
	size_t room;
	int mem, written;

	if (a[3] < sizeof(struct open_how) || a[3] > HOW_MAX ||
	    read_theirs(c->req->pid, at, &flags, sizeof(flags), 0) != 0)
		return 1; /* the kernel refuses it: EINVAL, E2BIG, EFAULT */
	if (!(flags & EMD_OPEN_SYNC_FLAGS))
		return 1;
	flags &= ~(unsigned long long)EMD_OPEN_SYNC_FLAGS;
	if ((mem = caller_mem(c, &remote, 1, &room)) < 0)
		return 0;
	written = room == sizeof(flags) &&
		  write_mem(mem, (const char *)&flags, sizeof(flags), &remote, 1) == sizeof(flags);
	close(mem);
	if (!written)
		return 0;
	note(-1);
	return 2;
}

/* The directory the path is relative to, here: held with O_PATH through
 * the caller's own (its working directory, or its descriptor, whatever
 * that is: a path from a non-directory fails as the kernel's would). */
int caller_dir(const struct call *c, int dirfd)
{
	return their_path(c, dirfd);
}

/* Does the file live on a file system of plain files, where opening and
 * writing mean the same whoever does it?  Pseudo file systems do not: "0"
 * written to cgroup.procs moves the writer, procfs and cgroupfs files keep
 * the opener's task or namespace; a FUSE server may answer by the pid that
 * asks (lxcfs does).  Unknown ones are left to the kernel. */
static int plain_file_system(int fd)
{
	static const unsigned long known[] = {
		EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC, F2FS_SUPER_MAGIC,
		TMPFS_MAGIC, RAMFS_MAGIC, OVERLAYFS_SUPER_MAGIC,
		MSDOS_SUPER_MAGIC, EXFAT_SUPER_MAGIC, NFS_SUPER_MAGIC, CIFS_SUPER_MAGIC,
		SMB2_SUPER_MAGIC, CEPH_SUPER_MAGIC, V9FS_MAGIC, ZFS_SUPER_MAGIC,
		BCACHEFS_SUPER_MAGIC};
	struct statfs fs;

	if (fstatfs(fd, &fs) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if ((unsigned long)fs.f_type == known[i])
			return 1;
	return 0;
}

/* Is what was opened a regular file or a directory, on such a file system? */
static int plain(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
	       plain_file_system(fd);
}

/* The file the caller names, as an O_PATH descriptor: nothing is opened
 * yet (no FIFO, no device, no inotify IN_OPEN), and what it is can be
 * checked before it is.  O_CREAT|O_EXCL follows no final symlink. */
static int find_here(int base, const char *path, unsigned long long flags)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | (flags & (O_NOFOLLOW | O_DIRECTORY)),
			       .resolve = RESOLVE_NO_MAGICLINKS};
	int fd;

	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		how.flags |= O_NOFOLLOW;
	if ((fd = (int)syscall(SYS_openat2, base, path, &how, sizeof(how))) < 0)
		fds_note();
	return fd < 0 ? -errno : fd;
}

/* The file found, opened as asked through this process's own magic link
 * to it, so that it is the very inode checked (O_TMPFILE: in it). */
static int reopen(int found, unsigned long long flags, mode_t mode)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", found);
	/* O_EXCL stays with O_TMPFILE: a file never to be linked */
	flags &= ~(unsigned long long)(O_CREAT | O_NOFOLLOW |
				       ((flags & __O_TMPFILE) == __O_TMPFILE ? 0 : O_EXCL));
	int fd = open(self, (int)flags, mode);

	if (fd < 0)
		fds_note();
	return fd;
}

/* A name that is not there yet, created exclusively in its directory,
 * itself held (O_PATH) and checked first: a file must not be made where it
 * could not be opened (a message queue on mqueue), or the caller's own
 * O_EXCL would then fail.  A trailing slash is the kernel's (EISDIR). */
static int create_here(int base, const char *path, struct open_how how)
{
	struct open_how dir = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_MAGICLINKS};
	const char *slash = strrchr(path, '/');
	char name[PATH_MAX];
	int parent = base, fd = -1;

	if (!*path || path[strlen(path) - 1] == '/')
		return -1;
	if (slash) {
		snprintf(name, sizeof(name), "%.*s", (int)(slash - path), path);
		parent = (int)syscall(SYS_openat2, base, slash == path ? "/" : name, &dir,
				      sizeof(dir));
	}
	if (parent >= 0 && plain(parent)) {
		how.flags |= O_EXCL | O_NOFOLLOW;
		how.resolve = RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, parent, slash ? slash + 1 : path, &how, sizeof(how));
	}
	if (parent < 0 || fd < 0)
		fds_note();
	if (parent >= 0 && parent != base)
		close(parent);
	return fd;
}

/* fs.protected_regular or fs.protected_fifos: 0, 1, 2; -1 unknown. */
static int protected_level(const char *which)
{
	char path[64], v[8] = "";
	int fd, n;

	snprintf(path, sizeof(path), "/proc/sys/fs/%s", which);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = (int)read(fd, v, sizeof(v) - 1);
	close(fd);
	return n > 0 && v[0] >= '0' && v[0] <= '9' ? v[0] - '0' : -1;
}

/* O_CREAT of the existing file st, not the opener's, at `path` from base:
 * the kernel's may_create_in_sticky, which refuses it in a sticky
 * directory others may write (fs.protected_regular, protected_fifos) before
 * anything is opened: -EACCES; 0, it goes on as an open without O_CREAT;
 * -1 when it cannot be told (a symlink followed: another directory's). */
static int sticky_answer(int base, const char *path, const struct stat *st)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_MAGICLINKS};
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat d, last;
	int fd, level;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	fd = (int)syscall(SYS_openat2, base, slash == path ? "/" : dir, &how, sizeof(how));
	level = fd < 0 || fstat(fd, &d) != 0 ||
			fstatat(fd, slash ? slash + 1 : path, &last, AT_SYMLINK_NOFOLLOW) != 0 ||
			S_ISLNK(last.st_mode) ? -1 : 0;
	if (fd >= 0)
		close(fd);
	if (level < 0 || !(d.st_mode & S_ISVTX) || (!S_ISREG(st->st_mode) && !S_ISFIFO(st->st_mode)))
		return level;
	level = protected_level(S_ISREG(st->st_mode) ? "protected_regular" : "protected_fifos");
	if (level <= 0 || st->st_uid == d.st_uid)
		return level < 0 ? -1 : 0;
	return (d.st_mode & S_IWOTH) || ((d.st_mode & S_IWGRP) && level >= 2) ? -EACCES : 0;
}

/* May an existing file be opened as asked (its flags), through `found`:
 * 1, 0, or -EACCES (the kernel's may_create_in_sticky). */
static int existing_opens(int base, const char *path, int compat, unsigned long long flags,
			  int found, struct stat *st)
{
	int r;

	if (!plain(found) || fstat(found, st) != 0 || too_large(compat, flags, st))
		return 0;
	if (!(flags & O_CREAT) || st->st_uid == geteuid())
		return !((flags & O_CREAT) && ((flags & O_EXCL) || S_ISDIR(st->st_mode)));
	if ((flags & O_EXCL) || S_ISDIR(st->st_mode))
		return 0;
	return (r = sticky_answer(base, path, st)) == -EACCES ? -EACCES : r == 0;
}

/* Open as asked, without the flags `drop` (eatmydata's: the sync flags),
 * never blocking, through no magic link, with the caller's umask; -1 when
 * this cannot be the caller's own open (the kernel then makes it, and
 * answers exactly: EEXIST, EISDIR, ELOOP...), -EACCES when the kernel
 * refuses it before it opens anything (fs.protected_regular).  A name that
 * is not there yet is created exclusively.  An existing file is opened
 * with O_CREAT only where the kernel's sticky-directory rule would let it,
 * as if without. */
int open_here(int base, const char *path, struct open_how how, mode_t their_umask, int compat,
	      unsigned long long drop)
{
	struct stat st;
	unsigned long long flags = (how.flags & ~drop) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int found = find_here(base, path, how.flags), fd = -1, nonblock = how.flags & O_NONBLOCK;
	mode_t mine = umask(their_umask); /* this thread's own: see worker() */
	int opens = found >= 0 ? existing_opens(base, path, compat, how.flags, found, &st) : 0;

	if (opens == 1)
		fd = reopen(found, flags, (mode_t)how.mode);
	if (found == -ENOENT && (how.flags & O_CREAT)) {
		how.flags = flags;
		fd = create_here(base, path, how);
	}
	umask(mine);
	if (found >= 0)
		close(found);
	if (fd >= 0 && (!plain(fd) ||
			(!nonblock && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0))) {
		close(fd);
		fd = -1;
	}
	return opens == -EACCES ? -EACCES : fd < 0 ? -1 : fd;
}

/* Hand the new descriptor over; the caller's answer is the kernel's
 * (EMFILE at its own descriptor limit). */
int hand_over(struct call *c, int fd, int cloexec)
{
	struct seccomp_notif_addfd add = {.id = c->req->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
					  .srcfd = fd, .newfd_flags = cloexec ? O_CLOEXEC : 0};
	int r = ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add), err = errno;

	close(fd);
	if (r >= 0)
		return ANSWERED;
	return err == ENOENT ? ANSWERED : reply_error(c, err);
}

/* The options that would have eaten an open left to the kernel: the
 * supervisor allowed to make it, for a caller under the launcher's own
 * filter. */
static int open_needs(const struct call *c)
{
	return (c->on_behalf ? 0 : EMD_REC_NEEDS_ON_BEHALF) |
	       (c->trusted ? 0 : EMD_REC_NEEDS_SECCOMP_ON);
}

int open_on_behalf(struct call *c)
{
	char path[PATH_MAX];
	struct open_how how;
	mode_t their_umask = 022;
	int dirfd, base, fd, in_memory = c->request->test == EMD_TEST_MEMORY, cleared;

	if (in_memory) {
		if (!(cleared = clear_in_place(c)))
			return left_to_kernel(c, 0); /* read-only memory */
		if (cleared == 2)
			record_eaten(c, -1);
		return CONTINUE;
	}
	/* An open the kernel refuses (EFAULT) syncs nothing; one that cannot
	 * be made here whatever the options syncs. */
	if (!read_open(c, &dirfd, path, &how))
		return CONTINUE;
	if (!flags_known(c, how.flags) || !same_rights(c->req->pid, &their_umask))
		return left_to_kernel(c, 0);
	if (!c->on_behalf || !c->trusted)
		return left_to_kernel(c, open_needs(c));
	/* At its descriptor limit the kernel fails before the open has any
	 * effect (a file created or truncated): it answers that, and EBADF,
	 * ENOTDIR... for its directory. */
	if (!caller_fd_room(c->req->pid) || (base = caller_dir(c, dirfd)) < 0)
		return CONTINUE;
	fd = open_here(base, path, how, their_umask, c->compat, EMD_OPEN_SYNC_FLAGS);
	close(base);
	if (fd == -EACCES) /* refused before it opened anything: the kernel's answer, no sync */
		return reply_error(c, EACCES);
	if (fd < 0 || !still_pending(c)) {
		if (fd >= 0)
			close(fd);
		return left_to_kernel(c, 0);
	}
	note(fd);
	record_eaten(c, fd);
	return hand_over(c, fd, how.flags & O_CLOEXEC);
}

/* Can a write made here run into a limit the caller's would not, or miss
 * one it would meet?  Only when neither has a file size limit. */
static int no_size_limit(pid_t tid)
{
	struct rlimit theirs, mine;

	return prlimit(tid, RLIMIT_FSIZE, NULL, &theirs) == 0 &&
	       getrlimit(RLIMIT_FSIZE, &mine) == 0 && theirs.rlim_cur == RLIM_INFINITY &&
	       mine.rlim_cur == RLIM_INFINITY;
}

/* The caller's iovecs and their total; 0 if they cannot be written here as
 * the kernel would (too many, too large, misaligned for O_DIRECT). */
static int read_iovecs(const struct call *c, int fd, struct iovec *iov, int cnt, size_t *total)
{
	int direct = fcntl(fd, F_GETFL) & O_DIRECT;

	if (cnt < 1 || cnt > IOV_MAX_HERE || their_iovecs(c, call_arg(c, 1), iov, cnt) != 0)
		return 0;
	*total = 0;
	for (int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > WRITE_MAX - *total ||
		    (direct && (unsigned long)iov[i].iov_base % DIRECT_ALIGN))
			return 0;
		*total += iov[i].iov_len;
	}
	return 1;
}

/* The write, made on the caller's own open file (same position, same
 * O_APPEND and O_DIRECT) from an aligned copy of its data: 1 and its
 * result (or -errno) in *r, or 0 to let the kernel make it instead (a
 * short read of the caller's buffers: EFAULT or a partial write there). */
static int write_here(const struct call *c, int fd, const struct iovec *remote, int cnt,
		      size_t total, ssize_t *r)
{
	char *buf = aligned_alloc(DIRECT_ALIGN, (total + DIRECT_ALIGN) & ~(DIRECT_ALIGN - 1));
	struct iovec local[IOV_MAX_HERE];
	size_t at = 0;
	int done = 0;

	if (!buf)
		return 0;
	for (int i = 0; i < cnt; at += remote[i++].iov_len)
		local[i] = (struct iovec){buf + at, remote[i].iov_len};
	if (process_vm_readv(c->req->pid, local, cnt, remote, cnt, 0) == (ssize_t)total &&
	    still_pending(c)) {
		*r = pwritev2(fd, local, cnt, (off_t)call_arg64(c, 3),
			      (int)call_arg(c, 5) & ~EMD_RWF_SYNC_FLAGS);
		*r = *r < 0 ? -errno : *r;
		done = 1;
	}
	free(buf);
	return done;
}

/* pwritev2 with RWF_SYNC or RWF_DSYNC on a file of a plain file system.
 * Pipes and sockets go on: the flags sync nothing there, and what the
 * kernel answers depends on them. */
int write_on_behalf(struct call *c)
{
	struct iovec remote[IOV_MAX_HERE];
	struct statx stx;
	int fd = (int)call_arg(c, 0), cnt = (int)call_arg(c, 2), done = 0;
	int r0 = their_range_check(c, fd, 0, 0, 0, &stx);
	size_t total;
	ssize_t r = 0;

	/* on what fsync would not act on (none, a pipe, a socket) the flags
	 * sync nothing: no durability request */
	if (r0 == -EBADF || r0 == -ESPIPE)
		return CONTINUE;
	if (r0 < 0 || (fd = their_fd(c, fd, NULL)) < 0)
		return left_to_kernel(c, 0);
	/* Without --on-behalf=on, whether it would have been made here. */
	if (same_rights(c->req->pid, NULL) && no_size_limit(c->req->pid) && plain(fd) &&
	    read_iovecs(c, fd, remote, cnt, &total))
		done = c->on_behalf ? write_here(c, fd, remote, cnt, total, &r) : -1;
	if (done > 0 && r >= 0)
		note(fd);
	close(fd);
	if (done <= 0)
		return left_to_kernel(c, done < 0 ? EMD_REC_NEEDS_ON_BEHALF : 0);
	c->resp->val = r;
	return r < 0 ? reply_error(c, (int)-r) : 0;
}
