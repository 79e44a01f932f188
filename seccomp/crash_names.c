/* SPDX-License-Identifier: MIT */
/* crash_names.c -- crashtest's supervisor and the names of the copy: a
 * create, a link, a symlink, a FIFO, a rename, an unlink, a directory made
 * or removed by a program it follows is made here and journaled as
 * libcrashtest journals it: by the inode of its directory and its one name
 * there, and the inode it names.
 *
 * The directory is found from the caller's own (its working directory or
 * descriptor) through openat2 with RESOLVE_NO_MAGICLINKS, so that a path
 * through /proc/self cannot name this process's files: such a path is the
 * kernel's to follow, and the run unknown if it may reach the copy.  The
 * call is then made on that directory and the last component as the
 * caller gave it (trailing slashes and all: the kernel's own checks), with
 * the caller's umask, under the journal's lock.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "crash.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

struct cname {
	int dir, in;                /* O_PATH descriptor; in the copy */
	struct stat parent;
	char base[CT_NAME_MAX + 1]; /* the one name, as recorded */
	char last[PATH_MAX];        /* as given, for the call */
};

/* A directory that does not resolve here: may it for the caller?  Only a
 * symlink can make a difference (/proc/self is this process here), or a
 * magic link, which is not followed here. */
static int not_here(int base, const char *dir, unsigned long long resolve)
{
	struct open_how plain = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				 .resolve = RESOLVE_NO_SYMLINKS | (resolve & RESOLVE_IN_ROOT)};
	int fd = (int)syscall(SYS_openat2, base, dir, &plain, sizeof(plain)), err = errno;

	if (fd >= 0)
		close(fd);
	return fd >= 0 || err == ELOOP;
}

/* The directory a caller's path resolves from, here, and the resolve
 * flags that make it resolve as it does for the caller: its working
 * directory or descriptor; for a caller in another root (chroot) or
 * mount namespace, an
 * absolute path from that root, as the root (RESOLVE_IN_ROOT), and a
 * relative one through no symlink (whose absolute target would be
 * resolved in this root).  -errno if it cannot be told. */
static int path_base(struct call *c, int dirfd, int absolute, unsigned long long *resolve)
{
	char root[64], ns[64];
	struct stat mine, theirs, my_ns, their_ns;
	int fd;

	snprintf(root, sizeof(root), "/proc/%d/root", c->req->pid);
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", c->req->pid);
	if (stat("/", &mine) != 0 || stat(root, &theirs) != 0 ||
	    stat("/proc/self/ns/mnt", &my_ns) != 0 || stat(ns, &their_ns) != 0)
		return -errno;
	/* the same root, in the same mount namespace (its mounts, crossed
	 * from its root, are another tree's than this root's) */
	if (mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino &&
	    my_ns.st_ino == their_ns.st_ino && my_ns.st_dev == their_ns.st_dev)
		return caller_dir(c, dirfd);
	if (!absolute) {
		*resolve |= RESOLVE_NO_SYMLINKS;
		return caller_dir(c, dirfd);
	}
	*resolve |= RESOLVE_IN_ROOT;
	if ((fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		fds_note();
	return fd < 0 ? -errno : fd;
}

/* path split into its directory (returned: "." for none) and its one
 * name, kept in n->base; n->last is the name as given (trailing slashes
 * and all, for the call).  NULL for ".", "..", none or one too long. */
static const char *split(char *path, struct cname *n)
{
	size_t len = strlen(path);
	char *slash, *name = path;

	snprintf(n->last, sizeof(n->last), "%s", path);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if ((slash = strrchr(path, '/'))) {
		*slash = '\0';
		name = slash + 1;
		memmove(n->last, n->last + (name - path), strlen(n->last + (name - path)) + 1);
	}
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > CT_NAME_MAX)
		return NULL;
	strcpy(n->base, name);
	return slash ? (slash == path ? "/" : path) : ".";
}

/* Is the directory n->dir the copy's?  1 if it is told (n->in), -1 if it
 * cannot be (closed then): a directory of the copy's file system whose path
 * is past PATH_MAX, or the copy by another name (a bind mount, another
 * namespace's path). */
static int placed(struct cname *n)
{
	char dir[PATH_MAX];

	if (fstat(n->dir, &n->parent) != 0)
		return 1;
	if (crash_fd_path(n->dir, dir, sizeof(dir)) != 0)
		return crash_on_copy_fs(n->dir) ? (close(n->dir), n->dir = -1, n->in = 1, -1) : 1;
	n->in = crash_in_root(dir);
	if (!n->in && crash_on_copy_fs(n->dir) && crash_below_root(n->dir))
		return close(n->dir), n->dir = -1, n->in = 1, -1;
	return 1;
}

/* The caller's path (from its directory dirfd, AT_FDCWD: its working
 * directory) as a directory here and one name: as cname_of. */
static int cname_at(struct call *c, int dirfd, char *path, struct cname *n)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_MAGICLINKS};
	const char *dir;
	int base, absolute = *path == '/';

	if (!(dir = split(path, n)))
		return 0;
	if ((base = path_base(c, dirfd, absolute, &how.resolve)) < 0)
		return base == -EPERM || base == -EACCES ? -1 : 0;
	n->dir = (int)syscall(SYS_openat2, base, dir, &how, sizeof(how));
	if (n->dir < 0) {
		fds_note();
		n->in = not_here(base, dir, how.resolve);
	}
	close(base);
	if (n->dir < 0)
		return n->in ? -1 : 0;
	return placed(n);
}

/* The caller's path in argument i (its directory before it if at) as a
 * directory here and one name: 1, with n->dir open; 0 when there is none
 * to follow (the kernel fails the call, or it names "." or ".."); -1 when
 * the path goes through a magic link, whose target this cannot tell. */
static int cname_of(struct call *c, int at, int i, struct cname *n)
{
	char path[PATH_MAX];

	n->dir = -1;
	n->in = 0;
	/* a caller this process may not inspect (not dumpable, for a
	 * supervisor without CAP_SYS_PTRACE): its path cannot be told */
	if (read_theirs(c->req->pid, call_arg(c, i), path, sizeof(path), 1) != 0 || !*path)
		return errno == EPERM ? -1 : 0;
	return cname_at(c, at ? (int)call_arg(c, i - 1) : AT_FDCWD, path, n);
}

static void done(struct cname *n)
{
	if (n->dir >= 0)
		close(n->dir);
	n->dir = -1;
}

/* A record about the entry n, for inode st, with a string after its name. */
static void note_name(pid_t tid, enum ct_kind kind, const struct cname *n, const struct stat *st,
		      const char *more)
{
	struct ct_record h = {.kind = (uint16_t)kind, .dev = n->parent.st_dev,
			      .ino = n->parent.st_ino, .ino2 = st->st_ino, .off = st->st_mode,
			      .size = (int64_t)((uint64_t)st->st_uid << 32 | st->st_gid)};
	struct iovec v[2] = {{(void *)n->base, strlen(n->base) + 1},
			     {(void *)more, more ? strlen(more) + 1 : 0}};

	crash_record(tid, &h, v, more ? 2 : 1);
}

/* The inode at entry n (ino 0: none). */
static struct stat entry(const struct cname *n)
{
	struct stat st = {0};

	if (fstatat(n->dir, n->base, &st, AT_SYMLINK_NOFOLLOW) != 0)
		st.st_ino = 0;
	return st;
}

static void unknown(struct call *c, const char *what)
{
	char why[200];

	snprintf(why, sizeof(why), "%s, by a program crashtest's supervisor follows: not journaled",
		 what);
	crash_note(c->req->pid, CT_UNKNOWN, NULL, why);
}

/* The call made on the names found (b: a rename's or link's new one), as
 * the caller asked: 0 or an errno. */
static int make(struct call *c, const struct emd_change *r, const struct cname *a,
		const struct cname *b, const char *target)
{
	unsigned flags = r->flags >= 0 ? (unsigned)call_arg(c, r->flags) : 0;
	mode_t mode = (mode_t)call_arg(c, r->path + 1);
	int e;

	switch (r->how) {
	case EMD_CH_MKDIR:
		e = mkdirat(a->dir, a->last, mode);
		break;
	case EMD_CH_MKNOD:
		/* the kernel's device number is 32 bits, the register's upper
		 * half ignored (glibc's mknodat refuses one past 32 bits) */
		e = (int)syscall(SYS_mknodat, a->dir, a->last, mode, (unsigned)call_arg(c, r->path + 2));
		break;
	case EMD_CH_SYMLINK:
		e = symlinkat(target, a->dir, a->last);
		break;
	case EMD_CH_LINK:
		/* not through a symlink (find_names): AT_SYMLINK_FOLLOW is moot */
		e = linkat(a->dir, a->last, b->dir, b->last, 0);
		break;
	case EMD_CH_RENAME:
		e = renameat2(a->dir, a->last, b->dir, b->last, flags);
		break;
	default: /* unlink, rmdir */
		e = unlinkat(a->dir, a->last, r->how == EMD_CH_RMDIR ? AT_REMOVEDIR : (int)flags);
	}
	return e ? errno : 0;
}

/* What the call did, journaled as the library does (names.c there):
 * before, the inodes at the names it replaces or removes. */
static void journal(struct call *c, const struct emd_change *r, const struct cname *a,
		    const struct cname *b, const struct stat *was_a, const struct stat *was_b,
		    const char *target)
{
	pid_t tid = c->req->pid;
	unsigned flags = r->flags >= 0 ? (unsigned)call_arg(c, r->flags) : 0;
	struct stat now = entry(r->how == EMD_CH_LINK ? b : a);
	int rmdir = r->how == EMD_CH_RMDIR || (r->how == EMD_CH_UNLINK && (flags & AT_REMOVEDIR));

	if (r->how == EMD_CH_RENAME && a->in && b->in && !(flags & RENAME_WHITEOUT) &&
	    was_a->st_ino != was_b->st_ino) {
		struct ct_record h = {.kind = CT_RENAME, .dev = a->parent.st_dev,
				      .ino = a->parent.st_ino, .dev2 = b->parent.st_dev,
				      .ino3 = b->parent.st_ino, .ino2 = was_a->st_ino,
				      .off = (int64_t)was_b->st_ino,
				      .flags = flags & RENAME_EXCHANGE ? CT_F_EXCHANGE : 0};
		struct iovec v[2] = {{(void *)a->base, strlen(a->base) + 1},
				     {(void *)b->base, strlen(b->base) + 1}};

		crash_record(tid, &h, v, 2);
	} else if (r->how == EMD_CH_RENAME && (flags & RENAME_WHITEOUT)) {
		unknown(c, "a rename that leaves a whiteout");
	} else if ((r->how == EMD_CH_UNLINK || r->how == EMD_CH_RMDIR) && a->in && was_a->st_ino) {
		note_name(tid, rmdir ? CT_RMDIR : CT_UNLINK, a, was_a, NULL);
	} else if (r->how != EMD_CH_RENAME && r->how != EMD_CH_UNLINK && r->how != EMD_CH_RMDIR &&
		   (r->how == EMD_CH_LINK ? b : a)->in && now.st_ino) {
		enum ct_kind kind = r->how == EMD_CH_MKDIR ? CT_MKDIR : r->how == EMD_CH_MKNOD ? CT_MKNOD :
				    r->how == EMD_CH_SYMLINK ? CT_SYMLINK : CT_LINK;

		note_name(tid, kind, r->how == EMD_CH_LINK ? b : a, &now, target);
	}
}

/* The kernel's VALID_OPEN_FLAGS: openat2 refuses any other (open and
 * openat ignore them), and O_PATH with any but O_PATH_FLAGS. */
#define OPEN_FLAGS                                                                          \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC | \
	 FASYNC | O_DIRECT | EMD_COMPAT_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |   \
	 O_CLOEXEC | O_SYNC | O_PATH | __O_TMPFILE)
#define PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)

/* Would openat2 take this struct of `size` bytes at addr (the kernel's
 * copy_struct_from_user and build_open_flags)?  Else it fails, EINVAL or
 * E2BIG, having changed nothing. */
static int openat2_takes(pid_t tid, unsigned long addr, unsigned long size,
			 const struct open_how *how)
{
	char tail[4096];
	int creates = (how->flags & O_CREAT) || (how->flags & __O_TMPFILE) == __O_TMPFILE;

	if (size > sizeof(*how) &&
	    read_theirs(tid, addr + sizeof(*how), tail, size - sizeof(*how), 0) != 0)
		return 0;
	for (size_t i = 0; i + sizeof(*how) < size; i++)
		if (tail[i])
			return 0;
	return !(how->flags & ~(unsigned long long)OPEN_FLAGS) && !(how->mode & ~07777ULL) &&
	       (creates || !how->mode) &&
	       (!(how->flags & O_PATH) || !(how->flags & ~(unsigned long long)PATH_FLAGS));
}

/* The open's flags and mode, as the kernel reads them; 0 if they cannot
 * be had (openat2's struct unreadable, one openat2 refuses, or with
 * resolve flags: the kernel's to make). */
static int open_args(struct call *c, const struct emd_change *r, struct open_how *how)
{
	*how = (struct open_how){0};
	if (r->nr == SYS_openat2) {
		unsigned long size = call_arg(c, 3);

		if (size < sizeof(*how) || size > 4096 ||
		    read_theirs(c->req->pid, call_arg(c, 2), how, sizeof(*how), 0) != 0 ||
		    !openat2_takes(c->req->pid, call_arg(c, 2), size, how))
			return *how = (struct open_how){0}, 0;
		if (how->resolve)
			return 0;
	} else if (r->flags < 0) { /* creat */
		how->flags = O_CREAT | O_WRONLY | O_TRUNC;
		how->mode = call_arg(c, r->path + 1);
	} else {
		how->flags = (unsigned)call_arg(c, r->flags);
		how->mode = call_arg(c, r->flags + 1);
	}
	how->mode &= 07777;
	return 1;
}

/* Does the open leave the entry found as it is (an existing FIFO or
 * device, a file it neither makes nor empties, nor would make again)? */
static int leaves_it(const struct stat *was, unsigned long long flags)
{
	/* an empty file to be emptied is opened here too, under the
	 * journal's lock: left to the kernel, it could empty what another
	 * caller wrote meanwhile, past the journal; and an existing file
	 * opened with O_CREAT, which the kernel would make again, unseen, if
	 * another caller removed it meanwhile */
	return was->st_ino && (!S_ISREG(was->st_mode) || !(flags & (O_TRUNC | O_CREAT)));
}

/* An existing file the open keeps as it is (O_CREAT, no O_TRUNC): made
 * here, under the journal's lock, where it can be; where it cannot (a
 * program of other rights, a file of another owner, the caller at its
 * descriptor limit), left to the kernel as an open that changes nothing,
 * and the window is another caller's unlink between the look here and the
 * kernel's open: the comparison of the copy with the journal finds it. */
static int keeps_it(const struct stat *was, unsigned long long flags)
{
	return was->st_ino && S_ISREG(was->st_mode) && !(flags & O_TRUNC);
}

/* The open, made here, and what it changed journaled: a file made, one
 * emptied.  ANSWERED; CONTINUE if it leaves the entry as it is; -1 if it
 * could not be made here, -2 if it goes through a symlink.  The entry is
 * judged again here, under the journal's lock (another caller's create,
 * unlink or symlink may have come since it was first). */
static int open_made(struct call *c, struct cname *n, struct open_how how, mode_t um)
{
	struct stat st, was = entry(n);
	int fd;

	if (S_ISLNK(was.st_mode))
		return -2;
	if (leaves_it(&was, how.flags))
		return CONTINUE;
	if (!crash_acts(c) || (fd = open_here(n->dir, n->last, how, um, 0, 0)) == -1)
		return keeps_it(&was, how.flags) ? CONTINUE : -1;
	if (fd == -EACCES) /* refused before it opened anything, as the kernel would */
		return reply_error(c, EACCES);
	if (!was.st_ino && fstat(fd, &st) == 0) {
		note_name(c->req->pid, CT_CREATE, n, &st, NULL);
	} else if (was.st_ino && was.st_size && (how.flags & O_TRUNC)) {
		struct ct_record h = {.kind = CT_TRUNC, .dev = was.st_dev, .ino = was.st_ino,
				      .off = was.st_size, .size = 0};

		crash_record(c->req->pid, &h, NULL, 0);
	}
	return hand_over(c, fd, how.flags & O_CLOEXEC);
}

/* O_TMPFILE in a directory of the copy: a file with no name, which the
 * supervisor does not follow (its writes name an inode the journal never
 * made: the run is unknown). */
static int tmpfile_open(struct call *c, const struct emd_change *r)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_MAGICLINKS};
	char path[PATH_MAX], where[PATH_MAX];
	int base, dir, in;

	if (read_theirs(c->req->pid, call_arg(c, r->path), path, sizeof(path), 1) != 0 || !*path ||
	    (base = path_base(c, r->at ? (int)call_arg(c, r->path - 1) : AT_FDCWD, *path == '/',
			      &how.resolve)) < 0)
		return CONTINUE; /* EFAULT, ENOENT: the kernel's */
	dir = (int)syscall(SYS_openat2, base, path, &how, sizeof(how));
	if (dir < 0)
		in = not_here(base, path, how.resolve);
	else if (crash_fd_path(dir, where, sizeof(where)) != 0)
		in = crash_on_copy_fs(dir);
	else
		in = crash_in_root(where) || (crash_on_copy_fs(dir) && crash_below_root(dir));
	if (in)
		unknown(c, "an O_TMPFILE open");
	if (dir >= 0)
		close(dir);
	close(base);
	return CONTINUE;
}

/* An open whose name is not in the copy: may it reach a file of it for
 * the caller?  Its last component is followed, and may be a magic link
 * (/proc/self/fd/N, /dev/stdout: here, this process's), or a symlink to a
 * file of the copy, or a dangling one. */
static int reaches_copy(struct call *c, const struct emd_change *r, const struct open_how *how,
			const struct cname *n, int found)
{
	struct open_how here = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
	char path[PATH_MAX], where[PATH_MAX];
	int base, fd, err, reaches = 0;

	struct statfs fs;
	struct stat last = found > 0 ? entry(n) : (struct stat){0};

	/* a symlink there, or nothing in a directory of /proc (whose self is
	 * the caller's there: its fd/N may be a magic link to the copy) */
	if (found > 0 && (S_ISLNK(last.st_mode) ||
			  (!last.st_ino && fstatfs(n->dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC)))
		return 1;
	if ((how->flags & O_NOFOLLOW) || (how->flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return 0; /* the last component is not followed: the directory says */
	if (read_theirs(c->req->pid, call_arg(c, r->path), path, sizeof(path), 1) != 0 || !*path ||
	    (base = path_base(c, r->at ? (int)call_arg(c, r->path - 1) : AT_FDCWD, *path == '/',
			      &here.resolve)) < 0)
		return 0;
	fd = (int)syscall(SYS_openat2, base, path, &here, sizeof(here));
	err = errno;
	close(base);
	if (fd < 0)
		return err == ELOOP;
	reaches = crash_fd_path(fd, where, sizeof(where)) == 0 && crash_in_root(where);
	close(fd);
	return reaches;
}

/* May the open of entry n be made here?  0 if so (*um the caller's
 * umask); else CONTINUE, the kernel's: there is none to open (ENOENT), an
 * existing FIFO or device, a file it neither makes nor empties; and named
 * unknown, through a symlink, for a program of other rights, at its
 * descriptor limit (where the kernel fails before it creates or empties
 * anything: hand_over's EMFILE would come after), unless it keeps an
 * existing file. */
static int open_judged(struct call *c, const struct cname *n, unsigned long long flags,
		       mode_t *um)
{
	struct stat was = entry(n);

	if ((!was.st_ino && !(flags & O_CREAT)) || leaves_it(&was, flags)) {
		if (S_ISLNK(was.st_mode))
			unknown(c, "an open through a symlink");
		return CONTINUE;
	}
	if (!same_rights(c->req->pid, um)) {
		if (!keeps_it(&was, flags))
			unknown(c, "an open that creates or truncates, by a program of other rights");
	} else if (!caller_fd_room(c->req->pid)) {
		if (!keeps_it(&was, flags))
			unknown(c, "an open at the descriptor limit, left to the kernel");
	} else {
		return 0;
	}
	return CONTINUE;
}

/* An open that may create or truncate a file of the copy. */
static int crash_open(struct call *c, const struct emd_change *r)
{
	struct open_how how;
	struct cname n;
	mode_t um;
	int found, made;

	/* O_PATH opens nothing (open and openat drop the other flags) */
	if (!open_args(c, r, &how) || !(how.flags & EMD_OPEN_CHANGES) || (how.flags & O_PATH))
		return r->nr == SYS_openat2 && how.resolve ? crash_foreign_path(c, r, "an openat2")
							   : CONTINUE;
	if ((how.flags & __O_TMPFILE) == __O_TMPFILE)
		return tmpfile_open(c, r);
	if ((found = cname_of(c, r->at, r->path, &n)) <= 0 || !n.in) {
		if (found >= 0 && reaches_copy(c, r, &how, &n, found))
			found = -1;
		done(&n);
		if (found < 0)
			unknown(c, "an open through /proc's links, or a symlink that may reach the "
				   "directory");
		return CONTINUE;
	}
	if ((made = open_judged(c, &n, how.flags, &um)) != 0) {
		done(&n);
		return made;
	}
	crash_claims(c->req->pid);
	crash_lock();
	made = open_made(c, &n, how, um);
	crash_unlock();
	done(&n);
	if (made < 0)
		unknown(c, made == -2 ? "an open through a symlink"
				      : "an open that creates or truncates, made by the kernel");
	return made < 0 ? CONTINUE : made;
}

int crash_foreign_path(struct call *c, const struct emd_change *r, const char *what)
{
	struct cname n;
	int found = cname_of(c, r->at, r->path, &n);

	if (found < 0 || (found > 0 && n.in))
		unknown(c, what);
	done(&n);
	return CONTINUE;
}

/* Is the entry n the copy's directory, or one above it? */
static int holds_root(const struct cname *n)
{
	char dir[PATH_MAX], path[PATH_MAX + CT_NAME_MAX + 2];

	if (crash_fd_path(n->dir, dir, sizeof(dir)) != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", n->base);
	return crash_above_root(path);
}

/* Found both names the call takes; 1 if it touches the copy, 0 if it is
 * the kernel's (CONTINUE), -1 if it may reach the copy unseen. */
static int find_names(struct call *c, const struct emd_change *r, struct cname *a,
		      struct cname *b)
{
	int fa = cname_of(c, r->at, r->path, a), fb = 1;

	b->dir = -1;
	b->in = 0;
	if (r->path2 >= 0)
		fb = cname_of(c, r->at, r->path2, b);
	if (fa < 0 || fb < 0)
		return -1;
	/* the copy itself, or a directory above it, moved or removed: its
	 * paths are no longer the copy's, and what is made there goes unseen */
	if ((fa > 0 && !a->in && holds_root(a)) || (fb > 0 && b->dir >= 0 && !b->in && holds_root(b)))
		return -1;
	/* linkat(AT_EMPTY_PATH) with no old name: the file is a descriptor's
	 * (an O_TMPFILE's, one of the copy), linked in by the kernel */
	if (r->how == EMD_CH_LINK && r->flags >= 0 && (call_arg(c, r->flags) & AT_EMPTY_PATH) && !fa)
		return fb > 0 && b->in ? -1 : 0;
	if (!fa || !fb || !(a->in || b->in))
		return 0;
	/* across the copy's edge: nothing a state could show */
	if (r->path2 >= 0 && a->in != b->in)
		return -1;
	/* linkat(AT_EMPTY_PATH): the old file is a descriptor, not a name;
	 * AT_SYMLINK_FOLLOW through a symlink, which may be a magic link:
	 * the kernel's to follow, as the caller. */
	if (r->how == EMD_CH_LINK && r->flags >= 0 &&
	    (call_arg(c, r->flags) & ~(unsigned long long)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)))
		return 0; /* the kernel's EINVAL */
	if (r->how == EMD_CH_LINK && r->flags >= 0 &&
	    ((call_arg(c, r->flags) & AT_EMPTY_PATH) ||
	     ((call_arg(c, r->flags) & AT_SYMLINK_FOLLOW) && S_ISLNK(entry(a).st_mode))))
		return b->in ? -1 : 0;
	return 1;
}

/* The socket sock bound to the name n, through this worker's own working
 * directory (bind takes no directory; serve.c: each worker has its own):
 * 0 or an errno. */
static int bound(int sock, const struct cname *n)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int e;

	if (strlen(n->last) >= sizeof(a.sun_path))
		return ENAMETOOLONG;
	strcpy(a.sun_path, n->last);
	if (fchdir(n->dir) != 0)
		return -1;
	e = bind(sock, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
	if (chdir("/") != 0)
		(void)0; /* its own working directory, used for nothing else */
	return e;
}

/* The Unix socket path a bind names (the caller's sockaddr), or 0: none
 * (another family, an abstract or no name, one the kernel refuses). */
static int bind_path(const struct call *c, char *path, size_t size)
{
	struct sockaddr_un un;
	socklen_t len = (socklen_t)call_arg(c, 2);
	size_t off = offsetof(struct sockaddr_un, sun_path);

	if (len <= off || len > sizeof(un) || size < sizeof(un.sun_path) + 1 ||
	    read_theirs(c->req->pid, call_arg(c, 1), &un, len, 0) != 0 ||
	    un.sun_family != AF_UNIX || !un.sun_path[0])
		return 0;
	snprintf(path, size, "%.*s", (int)(len - off), un.sun_path);
	return 1;
}

/* bind of a Unix socket to a path makes a name there (journaled as the
 * library journals it, a node made); made here on the caller's socket. */
static int crash_bind(struct call *c)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	struct cname n = {.dir = -1};
	struct stat now;
	mode_t their_umask, mine;
	int found, sock = -1, e = -1;

	if (!bind_path(c, path, sizeof(path)) || (found = cname_at(c, AT_FDCWD, path, &n)) == 0 ||
	    (found > 0 && !n.in))
		return done(&n), CONTINUE;
	if (c->compat) { /* a 32-bit program's changes are not followed */
		unknown(c, "a bind by a 32-bit program");
		return done(&n), CONTINUE;
	}
	if (found < 0 || !same_rights(c->req->pid, &their_umask) ||
	    (sock = their_fd(c, (int)call_arg(c, 0), NULL)) < 0) {
		unknown(c, found < 0 ? "a bind through /proc's links" : "a bind the supervisor could "
			"not make (other rights, a socket it could not hold)");
		return done(&n), CONTINUE;
	}
	crash_claims(c->req->pid);
	crash_lock();
	mine = umask(their_umask); /* this thread's own: see serve.c */
	if (crash_acts(c))
		e = bound(sock, &n);
	umask(mine);
	if (e == 0 && (now = entry(&n)).st_ino)
		note_name(c->req->pid, CT_MKNOD, &n, &now, NULL);
	crash_unlock();
	close(sock);
	done(&n);
	return e < 0 ? CONTINUE : e ? reply_error(c, e) : 0;
}

int crash_names(struct call *c, const struct emd_change *r)
{
	struct cname a, b;
	struct stat was_a, was_b;
	char target[PATH_MAX] = "";
	mode_t their_umask, mine;
	int found, e;

	if (r->how == EMD_CH_OPEN)
		return crash_open(c, r);
	if (r->how == EMD_CH_BIND)
		return crash_bind(c);
	found = find_names(c, r, &a, &b);
	if (found == 1 && !same_rights(c->req->pid, &their_umask))
		found = -2;
	if (found == 1 && r->how == EMD_CH_SYMLINK &&
	    read_theirs(c->req->pid, call_arg(c, 0), target, sizeof(target), 1) != 0)
		found = 0; /* the kernel's EFAULT, ENAMETOOLONG */
	if (found <= 0) {
		if (found < 0)
			unknown(c, found == -1 ? "a change of names through /proc's links, "
					       "or across the directory's edge"
					       : "a change of names by a program of other rights");
		done(&a), done(&b);
		return CONTINUE;
	}
	crash_claims(c->req->pid);
	crash_lock();
	was_a = entry(&a);
	was_b = b.dir >= 0 ? entry(&b) : (struct stat){0};
	mine = umask(their_umask); /* this thread's own: see serve.c */
	e = crash_acts(c) ? make(c, r, &a, &b, target) : -1;
	umask(mine);
	if (!e)
		journal(c, r, &a, &b, &was_a, &was_b, r->how == EMD_CH_SYMLINK ? target : NULL);
	crash_unlock();
	done(&a), done(&b);
	return e < 0 ? CONTINUE : e ? reply_error(c, e) : 0;
}
