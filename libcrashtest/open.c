/* SPDX-License-Identifier: MIT */
/* open.c -- opens that change the copy: O_CREAT makes a file (through a
 * dangling symlink, where the link points), O_TRUNC empties one, O_TMPFILE
 * makes one with no name.  An open that can do neither costs nothing.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The directory (dirfd, path) names, if it is one of the copy: O_TMPFILE's. */
static int copy_dir(int dirfd, const char *path, struct stat *st)
{
	char where[PATH_MAX];
	int fd = (int)ct_sys(SYS_openat, dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int in = fd >= 0 && fstat(fd, st) == 0 && ct_fd_path(fd, where, sizeof(where)) == 0 &&
		 ct_in_root(where);

	if (fd >= 0)
		close(fd);
	return in;
}

/* The entry (dirfd, path): 1 if it exists, in *st. */
static int entry(int dirfd, const char *path, int flags, struct stat *st)
{
	return fstatat(dirfd, path, st, (flags & (O_NOFOLLOW | O_EXCL)) ? AT_SYMLINK_NOFOLLOW : 0) == 0;
}

/* The entry is judged under the journal's lock, and the lock held over the
 * open, so that no other process's change of the name comes between: its
 * create (this open would journal a second one, over what it wrote), its
 * unlink (this open would make the file again, unseen), its write (into a
 * file found empty, emptied past the journal).  Not for an existing FIFO
 * or device, whose open changes nothing and may block. */
void ct_before_open(int dirfd, const char *path, int flags, struct ct_before_open *b)
{
	struct stat st;
	int saved = errno, tmpfile = (flags & __O_TMPFILE) == __O_TMPFILE;

	*b = (struct ct_before_open){.existed = 1};
	if (!(flags & (O_CREAT | O_TRUNC | __O_TMPFILE)) || !path || !ct_active() ||
	    (tmpfile && !copy_dir(dirfd, path, &st)) ||
	    (!tmpfile && entry(dirfd, path, flags, &st) && !S_ISREG(st.st_mode)))
		return errno = saved, (void)0;
	ct_claims();
	ct_lock();
	b->locked = 1;
	b->existed = !tmpfile && entry(dirfd, path, flags, &st);
	if (b->existed && !S_ISREG(st.st_mode)) { /* one made since */
		ct_unlock();
		b->locked = 0;
	}
	b->truncates = b->existed && (flags & O_TRUNC) && st.st_size > 0;
	b->existed |= !tmpfile && !(flags & O_CREAT);
	errno = saved;
}

/* O_TMPFILE made a file with no name in directory (dirfd, path). */
static void made_nameless(int fd, int dirfd, const char *path)
{
	struct stat dir, st;

	if (copy_dir(dirfd, path, &dir) && fstat(fd, &st) == 0) {
		struct ct_record h = {.kind = CT_CREATE, .flags = CT_F_ANON, .dev = dir.st_dev,
				      .ino = dir.st_ino, .ino2 = st.st_ino, .off = st.st_mode,
				      .size = (int64_t)((uint64_t)st.st_uid << 32 | st.st_gid)};

		ct_record(&h, NULL, 0);
	}
}

/* O_CREAT made a file: at (dirfd, path), or, through a dangling symlink
 * there, at the path the descriptor now has. */
static void made(int fd, int dirfd, const char *path)
{
	char now[PATH_MAX];
	struct stat st, at;

	if (fstat(fd, &st) == 0 && fstatat(dirfd, path, &at, AT_SYMLINK_NOFOLLOW) == 0 &&
	    at.st_ino == st.st_ino && at.st_dev == st.st_dev)
		ct_made(0, dirfd, path, CT_CREATE, NULL);
	else if (ct_fd_path(fd, now, sizeof(now)) == 0)
		ct_made(0, AT_FDCWD, now, CT_CREATE, NULL);
}

int ct_after_open(int fd, int dirfd, const char *path, int flags, const struct ct_before_open *b)
{
	struct stat st;
	int saved = errno;

	if (!b->locked)
		return fd;
	if (fd >= 0 && (flags & __O_TMPFILE) == __O_TMPFILE)
		made_nameless(fd, dirfd, path);
	else if (fd >= 0 && !b->existed)
		made(fd, dirfd, path);
	else if (fd >= 0 && b->truncates && ct_where_fd(fd, &st) == CT_FILE) {
		ct_truncated(&(struct stat){.st_dev = st.st_dev, .st_ino = st.st_ino,
					    .st_size = st.st_size}, 0);
		ct_release_truncated(fd);
	}
	ct_unlock();
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
	return ct_after_open(call, dirfd, path, flags, &b);

PL_EXPORT int open(const char *path, int flags, ...)
{
	MODE_ARG(flags)
	OPENED(REAL(open)(path, flags, mode), AT_FDCWD, path, flags)
}

#ifdef EMD_LFS64
PL_EXPORT int open64(const char *path, int flags, ...)
{
	MODE_ARG(flags)
	OPENED(REAL(open64)(path, flags, mode), AT_FDCWD, path, flags)
}
#endif

PL_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags)
	OPENED(REAL(openat)(dirfd, path, flags, mode), dirfd, path, flags)
}

#ifdef EMD_LFS64
PL_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags)
	OPENED(REAL(openat64)(dirfd, path, flags, mode), dirfd, path, flags)
}
#endif

PL_EXPORT int creat(const char *path, mode_t mode)
{
	OPENED(REAL(creat)(path, mode), AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC)
}

#ifdef EMD_LFS64
PL_EXPORT int creat64(const char *path, mode_t mode)
{
	OPENED(REAL(creat64)(path, mode), AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC)
}
#endif

/* _FORTIFY_SOURCE's opens: no mode, since no O_CREAT. */
#ifdef EMD_HAVE_FORTIFY_OPEN
PL_EXPORT int __open_2(const char *path, int flags)
{
	OPENED(REAL(__open_2)(path, flags), AT_FDCWD, path, flags)
}
#endif

#ifdef EMD_HAVE_FORTIFY_OPEN
PL_EXPORT int __open64_2(const char *path, int flags)
{
	OPENED(REAL(__open64_2)(path, flags), AT_FDCWD, path, flags)
}
#endif

#ifdef EMD_HAVE_FORTIFY_OPEN
PL_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	OPENED(REAL(__openat_2)(dirfd, path, flags), dirfd, path, flags)
}
#endif

#ifdef EMD_HAVE_FORTIFY_OPEN
PL_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	OPENED(REAL(__openat64_2)(dirfd, path, flags), dirfd, path, flags)
}
#endif
