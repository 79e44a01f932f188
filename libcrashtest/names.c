/* SPDX-License-Identifier: MIT */
/* names.c -- directory entries of the copy: creates, links, symlinks, FIFOs
 * and sockets, renames, unlinks and directories, each recorded by the inode
 * of its directory, its one name there and the inode it names -- never by a
 * path, so that crashtest places each change in the directory it was made
 * in, wherever that directory went since.
 *
 * The directory is found before the call, through an O_PATH descriptor (the
 * close of one keeps the process's POSIX locks, unlike any other), and kept
 * until the record is made, under the library's lock.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

struct name {
	int dir;                     /* O_PATH descriptor of the directory */
	struct stat parent;
	char base[CT_NAME_MAX + 1]; /* the one name in it */
};

/* (dirfd, path) as a directory of the copy and one name in it: 1 if so,
 * with n->dir open (the caller closes it with done()). */
static int name_of(int dirfd, const char *path, struct name *n)
{
	char buf[PATH_MAX], dir[PATH_MAX];
	const char *parent = ".", *base = buf;
	size_t len = path ? strlen(path) : 0;
	char *slash;

	n->dir = -1;
	if (!ct_active() || !len || len >= sizeof(buf))
		return 0;
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	if ((slash = strrchr(buf, '/'))) {
		*slash = '\0';
		parent = slash == buf ? "/" : buf;
		base = slash + 1;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || strlen(base) > CT_NAME_MAX)
		return 0;
	n->dir = (int)ct_sys(SYS_openat, dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (n->dir < 0 || fstat(n->dir, &n->parent) != 0 ||
	    ct_fd_path(n->dir, dir, sizeof(dir)) != 0 || !ct_in_root(dir)) {
		if (n->dir >= 0)
			close(n->dir);
		return n->dir = -1, 0;
	}
	strcpy(n->base, base);
	return 1;
}

static void done(struct name *n)
{
	if (n->dir >= 0)
		close(n->dir);
	n->dir = -1;
}

/* A record about the entry n, for inode st, with strings after its name. */
static void note_name(enum ct_kind kind, const struct name *n, const struct stat *st,
		      const char *more)
{
	struct ct_record h = {.kind = (uint16_t)kind, .dev = n->parent.st_dev,
			      .ino = n->parent.st_ino, .ino2 = st->st_ino,
			      .off = st->st_mode, .size = (int64_t)((uint64_t)st->st_uid << 32 | st->st_gid)};
	struct iovec v[2] = {{(void *)n->base, strlen(n->base) + 1},
			     {(void *)more, more ? strlen(more) + 1 : 0}};

	ct_record(&h, v, more ? 2 : 1);
}

/* Before a call that changes names: a claim first, then the lock. */
static int begin_change(int in)
{
	if (in) {
		ct_claims();
		ct_lock();
	}
	return errno;
}

static void rename_record(const struct name *a, const struct name *b, const struct stat *moved,
			  const struct stat *replaced, unsigned flags)
{
	struct ct_record h = {.kind = CT_RENAME, .dev = a->parent.st_dev, .ino = a->parent.st_ino,
			      .dev2 = b->parent.st_dev, .ino3 = b->parent.st_ino,
			      .ino2 = moved->st_ino, .off = (int64_t)replaced->st_ino,
			      .flags = flags & RENAME_EXCHANGE ? CT_F_EXCHANGE : 0};
	struct iovec v[2] = {{(void *)a->base, strlen(a->base) + 1},
			     {(void *)b->base, strlen(b->base) + 1}};

	ct_record(&h, v, 2);
}

static int renamed(int od, const char *o, int nd, const char *nw, unsigned flags,
		   int (*call)(int, const char *, int, const char *, unsigned))
{
	struct name a, b;
	struct stat moved = {0}, replaced = {0};
	int in_a = name_of(od, o, &a), in_b = name_of(nd, nw, &b), before, r, saved;

	before = begin_change(in_a || in_b);
	if (in_a)
		fstatat(a.dir, a.base, &moved, AT_SYMLINK_NOFOLLOW);
	if (in_b && fstatat(b.dir, b.base, &replaced, AT_SYMLINK_NOFOLLOW) != 0)
		replaced.st_ino = 0;
	r = call(od, o, nd, nw, flags);
	saved = r == 0 ? before : errno; /* fstatat of no file: ENOENT */
	if (r == 0 && in_a && in_b && !(flags & RENAME_WHITEOUT) && moved.st_ino != replaced.st_ino)
		rename_record(&a, &b, &moved, &replaced, flags);
	else if (r == 0 && (in_a != in_b || (flags & RENAME_WHITEOUT)))
		ct_note(CT_UNKNOWN, NULL, "a rename across the directory's edge, or a whiteout");
	if (in_a || in_b)
		ct_unlock();
	done(&a);
	done(&b);
	errno = saved;
	return r;
}

static int real_renameat2(int od, const char *o, int nd, const char *n, unsigned f)
{
	return f ? REAL(renameat2)(od, o, nd, n, f) : REAL(renameat)(od, o, nd, n);
}

PL_EXPORT int rename(const char *o, const char *n)
{
	return renamed(AT_FDCWD, o, AT_FDCWD, n, 0, real_renameat2);
}

PL_EXPORT int renameat(int od, const char *o, int nd, const char *n)
{
	return renamed(od, o, nd, n, 0, real_renameat2);
}

PL_EXPORT int renameat2(int od, const char *o, int nd, const char *n, unsigned f)
{
	return renamed(od, o, nd, n, f, real_renameat2);
}

static int unlinked(int dirfd, const char *path, int flags)
{
	struct name n;
	struct stat st;
	int in = name_of(dirfd, path, &n), before = begin_change(in), r, saved;

	if (in && fstatat(n.dir, n.base, &st, AT_SYMLINK_NOFOLLOW) != 0)
		st.st_ino = 0;
	r = REAL(unlinkat)(dirfd, path, flags);
	saved = r == 0 ? before : errno;
	if (r == 0 && in && st.st_ino)
		note_name(flags & AT_REMOVEDIR ? CT_RMDIR : CT_UNLINK, &n, &st, NULL);
	if (in)
		ct_unlock();
	done(&n);
	errno = saved;
	return r;
}

PL_EXPORT int unlink(const char *path)
{
	return unlinked(AT_FDCWD, path, 0);
}

PL_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	return unlinked(dirfd, path, flags);
}

PL_EXPORT int rmdir(const char *path)
{
	return unlinked(AT_FDCWD, path, AT_REMOVEDIR);
}

/* A call that makes the entry (dirfd, path): its directory found before,
 * the inode it made recorded after. */
struct making {
	struct name n;
	int in, before;
};

static void begin_made(int dirfd, const char *path, struct making *m)
{
	m->in = name_of(dirfd, path, &m->n);
	m->before = begin_change(m->in);
}

/* The entry was made as `kind` if r is 0: recorded; returns r, keeps the
 * caller's errno on success and the call's on failure. */
static int end_made(int r, struct making *m, enum ct_kind kind, const char *target)
{
	int saved = r == 0 ? m->before : errno;
	struct stat st;

	if (r == 0 && m->in && fstatat(m->n.dir, m->n.base, &st, AT_SYMLINK_NOFOLLOW) == 0)
		note_name(kind, &m->n, &st, target);
	if (m->in)
		ct_unlock();
	done(&m->n);
	errno = saved;
	return r;
}

int ct_made(int r, int dirfd, const char *path, enum ct_kind kind, const char *target)
{
	struct making m;

	begin_made(dirfd, path, &m);
	return end_made(r, &m, kind, target);
}

#define MADE(call, dirfd, path, kind, target)                                  \
	struct making m;                                                       \
	begin_made(dirfd, path, &m);                                           \
	return end_made(call, &m, kind, target);

PL_EXPORT int mkdir(const char *path, mode_t mode)
{
	MADE(REAL(mkdirat)(AT_FDCWD, path, mode), AT_FDCWD, path, CT_MKDIR, NULL)
}

PL_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	MADE(REAL(mkdirat)(dirfd, path, mode), dirfd, path, CT_MKDIR, NULL)
}

PL_EXPORT int link(const char *o, const char *n)
{
	MADE(REAL(linkat)(AT_FDCWD, o, AT_FDCWD, n, 0), AT_FDCWD, n, CT_LINK, NULL)
}

PL_EXPORT int linkat(int od, const char *o, int nd, const char *n, int flags)
{
	MADE(REAL(linkat)(od, o, nd, n, flags), nd, n, CT_LINK, NULL)
}

PL_EXPORT int symlink(const char *target, const char *n)
{
	MADE(REAL(symlinkat)(target, AT_FDCWD, n), AT_FDCWD, n, CT_SYMLINK, target)
}

PL_EXPORT int symlinkat(const char *target, int nd, const char *n)
{
	MADE(REAL(symlinkat)(target, nd, n), nd, n, CT_SYMLINK, target)
}

PL_EXPORT int mkfifo(const char *path, mode_t mode)
{
	MADE(REAL(mkfifoat)(AT_FDCWD, path, mode), AT_FDCWD, path, CT_MKNOD, NULL)
}

PL_EXPORT int mkfifoat(int dirfd, const char *path, mode_t mode)
{
	MADE(REAL(mkfifoat)(dirfd, path, mode), dirfd, path, CT_MKNOD, NULL)
}

PL_EXPORT int mknod(const char *path, mode_t mode, dev_t dev)
{
	MADE(REAL(mknodat)(AT_FDCWD, path, mode, dev), AT_FDCWD, path, CT_MKNOD, NULL)
}

PL_EXPORT int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	MADE(REAL(mknodat)(dirfd, path, mode, dev), dirfd, path, CT_MKNOD, NULL)
}

/* A unix socket bound to a path makes an entry there (no data). */
PL_EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
	char path[sizeof(un->sun_path) + 1] = "";

	if (addr && addr->sa_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
	    un->sun_path[0])
		memcpy(path, un->sun_path, len - offsetof(struct sockaddr_un, sun_path) <
				sizeof(un->sun_path) ? len - offsetof(struct sockaddr_un, sun_path) :
				sizeof(un->sun_path));
	if (!path[0])
		return REAL(bind)(fd, addr, len);
	MADE(REAL(bind)(fd, addr, len), AT_FDCWD, path, CT_MKNOD, NULL)
}
