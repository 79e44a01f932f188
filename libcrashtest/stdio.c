/* SPDX-License-Identifier: MIT */
/* stdio.c -- streams and temporary files, whose glibc implementations open
 * and write through glibc-internal calls that no preload sees.
 *
 * A stream opened for writing on a file of the copy is held (image.c): its
 * contents saved before, imaged at each durability call after.  What the
 * open itself does (truncate, create) is recorded as open() records it.
 * mkstemp and its kin create a file; mkdtemp a directory.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

/* The open(2) flags of an fopen mode; -1 for a stream that never writes. */
static int open_flags(const char *mode)
{
	int flags;

	if (!mode)
		return -1;
	if (mode[0] == 'w')
		flags = O_WRONLY | O_CREAT | O_TRUNC;
	else if (mode[0] == 'a')
		flags = O_WRONLY | O_CREAT | O_APPEND;
	else
		flags = O_RDONLY;
	if (strchr(mode, '+'))
		flags = (flags & ~O_ACCMODE) | O_RDWR;
	if (strchr(mode, 'x'))
		flags |= O_EXCL;
	return (flags & O_ACCMODE) == O_RDONLY ? -1 : flags;
}

/* After a stream was opened on path with flags (-1: not for writing). */
static FILE *opened(FILE *f, const char *path, int flags, const struct ct_before_open *b)
{
	int saved = errno;

	if (flags >= 0)
		ct_after_open(f ? fileno(f) : -1, AT_FDCWD, path, flags, b);
	if (f && flags >= 0)
		ct_image_hold(fileno(f), f, NULL, 0, 0);
	errno = saved;
	return f;
}

/* A stream opened by call(path, mode, stream); `name` is the file's path for
 * the records (freopen's path may be NULL). */
static FILE *open_stream(const char *path, const char *name, const char *mode, FILE *stream,
			 FILE *(*call)(const char *, const char *, FILE *))
{
	struct ct_before_open b = {.existed = 1};
	int flags = name ? open_flags(mode) : -1;

	if (flags >= 0)
		ct_before_open(AT_FDCWD, name, flags, &b);
	return opened(call(path, mode, stream), name, flags, &b);
}

static FILE *real_fopen(const char *path, const char *mode, FILE *stream)
{
	(void)stream;
	return REAL(fopen)(path, mode);
}

PL_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return open_stream(path, path, mode, NULL, real_fopen);
}

#ifdef EMD_LFS64
static FILE *real_fopen64(const char *path, const char *mode, FILE *stream)
{
	(void)stream;
	return REAL(fopen64)(path, mode);
}

PL_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return open_stream(path, path, mode, NULL, real_fopen64);
}
#endif

/* freopen closes the stream's file first; with no path it reopens the same
 * file (and "w" truncates it), recorded under the name it has. */
static FILE *reopen(const char *path, const char *mode, FILE *stream,
		    FILE *(*call)(const char *, const char *, FILE *))
{
	char same[PATH_MAX];
	const char *name = path;
	int saved = errno;

	if (stream && ct_active()) {
		if (!path && ct_fd_path(fileno(stream), same, sizeof(same)) == 0)
			name = same;
		ct_image_free_fd(fileno(stream));
	}
	errno = saved;
	return open_stream(path, name, mode, stream, call);
}

PL_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	return reopen(path, mode, stream, REAL(freopen));
}

#ifdef EMD_LFS64
PL_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	return reopen(path, mode, stream, REAL(freopen64));
}
#endif

/* fdopen neither truncates nor creates: the descriptor's file is held. */
PL_EXPORT FILE *fdopen(int fd, const char *mode)
{
	FILE *f = REAL(fdopen)(fd, mode);
	int saved = errno;

	if (f && open_flags(mode) >= 0)
		ct_image_hold(fd, f, NULL, 0, 0);
	errno = saved;
	return f;
}

/* The stream's last picture is taken once fclose has flushed it. */
PL_EXPORT int fclose(FILE *f)
{
	int fd = f ? fileno(f) : -1, r, release;
	struct stat st;

	ct_image_closing(f);
	release = ct_release_before(fd, &st);
	r = REAL(fclose)(f);
	ct_image_free_fd(fd);
	if (release)
		ct_release_after(&st);
	return r;
}

/* mkstemp and its kin, mkdtemp: made under the journal's lock, as every
 * change is (a kill past the point --at asks for must not come between
 * the entry and its record); 1 if it is taken. */
static int temp_begin(void)
{
	int saved = errno, on = ct_active();

	if (on) {
		ct_claims();
		ct_lock();
	}
	errno = saved;
	return on;
}

/* A new file at the name they wrote into tmpl. */
static int temp_made(int locked, int fd, const char *tmpl)
{
	ct_made(fd >= 0 ? 0 : -1, AT_FDCWD, tmpl, CT_CREATE, NULL);
	if (locked)
		ct_unlock();
	return fd;
}

PL_EXPORT int mkstemp(char *tmpl)
{
	int locked = temp_begin();

	return temp_made(locked, REAL(mkstemp)(tmpl), tmpl);
}

#ifdef EMD_LFS64
PL_EXPORT int mkstemp64(char *tmpl)
{
	int locked = temp_begin();

	return temp_made(locked, REAL(mkstemp64)(tmpl), tmpl);
}
#endif

PL_EXPORT int mkostemp(char *tmpl, int flags)
{
	int locked = temp_begin();

	return temp_made(locked, REAL(mkostemp)(tmpl, flags), tmpl);
}

#ifdef EMD_LFS64
PL_EXPORT int mkostemp64(char *tmpl, int flags)
{
	int locked = temp_begin();

	return temp_made(locked, REAL(mkostemp64)(tmpl, flags), tmpl);
}
#endif

PL_EXPORT int mkstemps(char *tmpl, int suffix)
{
	int locked = temp_begin();

	return temp_made(locked, REAL(mkstemps)(tmpl, suffix), tmpl);
}

#ifdef EMD_LFS64
PL_EXPORT int mkstemps64(char *tmpl, int suffix)
{
	int locked = temp_begin();

	return temp_made(locked, REAL(mkstemps64)(tmpl, suffix), tmpl);
}
#endif

PL_EXPORT int mkostemps(char *tmpl, int suffix, int flags)
{
	int locked = temp_begin();

	return temp_made(locked, REAL(mkostemps)(tmpl, suffix, flags), tmpl);
}

#ifdef EMD_LFS64
PL_EXPORT int mkostemps64(char *tmpl, int suffix, int flags)
{
	int locked = temp_begin();

	return temp_made(locked, REAL(mkostemps64)(tmpl, suffix, flags), tmpl);
}
#endif

PL_EXPORT char *mkdtemp(char *tmpl)
{
	int locked = temp_begin();
	char *dir = REAL(mkdtemp)(tmpl);

	ct_made(dir ? 0 : -1, AT_FDCWD, tmpl, CT_MKDIR, NULL);
	if (locked)
		ct_unlock();
	return dir;
}
