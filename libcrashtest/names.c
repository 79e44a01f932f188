/* SPDX-License-Identifier: MIT */
/* names.c -- directory entries: creates, links, renames, unlinks and
 * directories of the copy, recorded with the directory whose fsync makes
 * them durable.
 *
 * What an unlink or a replacing rename removes is first hard-linked into the
 * run's keep/ directory (on the same file system: the copy lives in the run
 * directory), so that the launcher can bring the entry back with its inode.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct name {
	char abs[PATH_MAX];
	struct stat parent;
};

/* The absolute path of (dirfd, path) and its directory; 1 when in the copy. */
static int name_of(int dirfd, const char *path, struct name *n)
{
	char buf[PATH_MAX], dir[PATH_MAX];
	const char *parent = ".", *base = buf;
	size_t len = path ? strlen(path) : 0;
	char *slash;
	int pfd, in;

	if (!ct_active() || !len || len >= sizeof(buf))
		return 0;
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	slash = strrchr(buf, '/');
	if (slash) {
		*slash = '\0';
		parent = slash == buf ? "/" : buf;
		base = slash + 1;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return 0;
	pfd = (int)ct_sys(SYS_openat, dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return 0;
	in = fstat(pfd, &n->parent) == 0 && ct_fd_path(pfd, dir, sizeof(dir)) == 0 &&
	     snprintf(n->abs, sizeof(n->abs), "%s/%s", dir, base) < (int)sizeof(n->abs) &&
	     ct_in_root(n->abs);
	close(pfd);
	return in;
}

/* A record about parents p1 (and p2) whose payload is the strings given,
 * up to a NULL, each with its NUL; with off and size as given. */
static void note_names(enum ct_kind kind, const struct stat *p1, const struct stat *p2,
		       long long off, long long size, ...)
{
	struct ct_record h = {.kind = kind, .dev = p1->st_dev, .ino = p1->st_ino, .off = off,
			      .size = size};
	char payload[3 * PATH_MAX];
	size_t len = 0;
	const char *s;
	va_list ap;

	if (p2) {
		h.dev2 = p2->st_dev;
		h.ino2 = p2->st_ino;
	}
	va_start(ap, size);
	while ((s = va_arg(ap, const char *)) && len + strlen(s) < sizeof(payload)) {
		memcpy(payload + len, s, strlen(s) + 1);
		len += strlen(s) + 1;
	}
	va_end(ap);
	ct_record(&h, payload, len);
}

/* The entry (dirfd, path) is about to go: a link to it in keep/, or "".
 * Not when it is `moved` itself: a rename between two links of one inode
 * does nothing and removes nothing. */
static void keep(int dirfd, const char *path, const struct name *n, const struct stat *moved,
		 char *out, size_t size)
{
	struct stat st;

	out[0] = '\0';
	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode) ||
	    (moved && st.st_dev == moved->st_dev && st.st_ino == moved->st_ino))
		return;
	ct_keep_name(out, size);
	if (ct_sys(SYS_linkat, AT_FDCWD, n->abs, AT_FDCWD, out, 0) != 0) {
		ct_note(CT_UNKNOWN, &st, "cannot keep a removed file");
		out[0] = '\0';
	}
}

static void drop_keep(const char *k)
{
	if (*k)
		ct_sys(SYS_unlinkat, AT_FDCWD, k, 0);
}

/* After a rename in the copy: recorded with the inode it moved, counted;
 * one that replaced a file makes its data durable under ext4-ordered. */
static void note_rename(const struct name *a, const struct name *b, const char *k,
			ino_t moved)
{
	note_names(CT_RENAME, &a->parent, &b->parent, (long long)moved, 0, a->abs, b->abs, k,
		   (char *)NULL);
	if (*k)
		ct_bump();
	ct_step("rename", -1, b->abs);
}

static int renamed(int od, const char *o, int nd, const char *nw, unsigned flags,
		   int (*call)(int, const char *, int, const char *, unsigned))
{
	struct name a, b;
	struct stat st = {0};
	char k[PATH_MAX] = "";
	int before = errno, in_a = name_of(od, o, &a), in_b = name_of(nd, nw, &b), r, saved;

	if (in_a)
		fstatat(od, o, &st, AT_SYMLINK_NOFOLLOW);
	if (in_b && !(flags & RENAME_EXCHANGE))
		keep(nd, nw, &b, in_a ? &st : NULL, k, sizeof(k));
	r = call(od, o, nd, nw, flags);
	saved = r == 0 ? before : errno; /* keep() found no file to replace: ENOENT */
	if (r != 0)
		drop_keep(k);
	else if (in_a && in_b && !(flags & RENAME_EXCHANGE))
		note_rename(&a, &b, k, st.st_ino);
	else if (in_a || in_b)
		ct_note(CT_UNKNOWN, NULL, "a rename across the directory's edge or an exchange");
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
	struct stat st = {0};
	char k[PATH_MAX] = "";
	int before = errno, in = name_of(dirfd, path, &n), r, saved;
	long long mode = 0755, owner = -1; /* a directory's: uid << 32 | gid */

	if (in && (flags & AT_REMOVEDIR) && fstatat(dirfd, path, &st, 0) == 0) {
		mode = st.st_mode & 07777;
		owner = (long long)((uint64_t)st.st_uid << 32 | st.st_gid);
	} else if (in)
		keep(dirfd, path, &n, NULL, k, sizeof(k));
	r = REAL(unlinkat)(dirfd, path, flags);
	saved = r == 0 ? before : errno;
	if (r != 0)
		drop_keep(k);
	else if (in) {
		note_names(flags & AT_REMOVEDIR ? CT_RMDIR : CT_UNLINK, &n.parent,
			   flags & AT_REMOVEDIR ? &st : NULL, mode, owner, n.abs, k, (char *)NULL);
		ct_step(flags & AT_REMOVEDIR ? "rmdir" : "unlink", -1, n.abs);
	}
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

/* After a call that made the entry (dirfd, path): recorded as `kind`. */
int ct_made(int r, int dirfd, const char *path, enum ct_kind kind)
{
	static const char *const call[] = {[CT_CREATE] = "create", [CT_MKDIR] = "mkdir",
					   [CT_LINK] = "link"};
	struct name n;
	struct stat st = {0};
	int saved = errno;

	if (r == 0 && name_of(dirfd, path, &n)) {
		fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW);
		note_names(kind, &n.parent, &st, 0, 0, n.abs, (char *)NULL);
		ct_step(call[kind], -1, n.abs);
	}
	errno = saved;
	return r;
}

PL_EXPORT int mkdir(const char *path, mode_t mode)
{
	return ct_made(REAL(mkdirat)(AT_FDCWD, path, mode), AT_FDCWD, path, CT_MKDIR);
}

PL_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	return ct_made(REAL(mkdirat)(dirfd, path, mode), dirfd, path, CT_MKDIR);
}

PL_EXPORT int link(const char *o, const char *n)
{
	return ct_made(REAL(linkat)(AT_FDCWD, o, AT_FDCWD, n, 0), AT_FDCWD, n, CT_LINK);
}

PL_EXPORT int linkat(int od, const char *o, int nd, const char *n, int flags)
{
	return ct_made(REAL(linkat)(od, o, nd, n, flags), nd, n, CT_LINK);
}

PL_EXPORT int symlink(const char *target, const char *n)
{
	return ct_made(REAL(symlinkat)(target, AT_FDCWD, n), AT_FDCWD, n, CT_LINK);
}

PL_EXPORT int symlinkat(const char *target, int nd, const char *n)
{
	return ct_made(REAL(symlinkat)(target, nd, n), nd, n, CT_LINK);
}

/* Opens: what O_TRUNC is about to drop, and whether O_CREAT made a file. */
static void before_open(int dirfd, const char *path, int flags, struct ct_before_open *b)
{
	struct stat st;
	int fd;

	b->existed = 1;
	b->truncated = 0;
	if (!ct_active() || !(flags & (O_CREAT | O_TRUNC)))
		return;
	b->existed = fstatat(dirfd, path, &st, 0) == 0;
	if (!b->existed || !(flags & O_TRUNC) || !S_ISREG(st.st_mode))
		return;
	fd = (int)ct_sys(SYS_openat, dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		ct_lock();
		b->truncated = ct_save_truncate(fd, 0, &b->st);
		ct_unlock();
		close(fd);
	} else {
		ct_note(CT_UNKNOWN, &st, "a truncated file was unreadable");
	}
}

/* errno as the caller left it: the fstatat of a file not made yet fails
 * (ENOENT), and a call that succeeds must not say so. */
void ct_before_open(int dirfd, const char *path, int flags, struct ct_before_open *b)
{
	int saved = errno;

	before_open(dirfd, path, flags, b);
	errno = saved;
}

int ct_after_open(int fd, int dirfd, const char *path, const struct ct_before_open *b)
{
	char made_path[PATH_MAX];
	int saved = errno;

	/* Named by the descriptor: through a dangling symlink, what was made
	 * is its target, and the link was there before. */
	if (fd >= 0 && !b->existed && ct_fd_path(fd, made_path, sizeof(made_path)) == 0)
		ct_made(0, AT_FDCWD, made_path, CT_CREATE);
	else if (fd >= 0 && !b->existed)
		ct_made(0, dirfd, path, CT_CREATE);
	else if (fd >= 0 && b->truncated) {
		ct_truncated(&b->st, 0);
		ct_step("O_TRUNC", fd, NULL);
	}
	errno = saved;
	return fd;
}

#define MODE_ARG(flags)                                                        \
	mode_t mode = 0;                                                       \
	if ((flags) & (O_CREAT | __O_TMPFILE)) {                               \
		va_list ap;                                                    \
		va_start(ap, flags);                                           \
		mode = va_arg(ap, mode_t);                                     \
		va_end(ap);                                                    \
	}

#define OPENED(call, dirfd, path, flags)                                       \
	struct ct_before_open b;                                               \
	ct_before_open(dirfd, path, flags, &b);                                \
	return ct_after_open(call, dirfd, path, &b);

PL_EXPORT int open(const char *path, int flags, ...)
{
	MODE_ARG(flags)
	OPENED(REAL(open)(path, flags, mode), AT_FDCWD, path, flags)
}

PL_EXPORT int open64(const char *path, int flags, ...)
{
	MODE_ARG(flags)
	OPENED(REAL(open64)(path, flags, mode), AT_FDCWD, path, flags)
}

PL_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags)
	OPENED(REAL(openat)(dirfd, path, flags, mode), dirfd, path, flags)
}

PL_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags)
	OPENED(REAL(openat64)(dirfd, path, flags, mode), dirfd, path, flags)
}

PL_EXPORT int creat(const char *path, mode_t mode)
{
	OPENED(REAL(creat)(path, mode), AT_FDCWD, path, O_CREAT | O_TRUNC)
}

PL_EXPORT int creat64(const char *path, mode_t mode)
{
	OPENED(REAL(creat64)(path, mode), AT_FDCWD, path, O_CREAT | O_TRUNC)
}

/* _FORTIFY_SOURCE's opens: no mode, since no O_CREAT. */
PL_EXPORT int __open_2(const char *path, int flags)
{
	OPENED(REAL(__open_2)(path, flags), AT_FDCWD, path, flags)
}

PL_EXPORT int __open64_2(const char *path, int flags)
{
	OPENED(REAL(__open64_2)(path, flags), AT_FDCWD, path, flags)
}

PL_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	OPENED(REAL(__openat_2)(dirfd, path, flags), dirfd, path, flags)
}

PL_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	OPENED(REAL(__openat64_2)(dirfd, path, flags), dirfd, path, flags)
}
