/* SPDX-License-Identifier: MIT */
/* stdio.c -- streams, whose reads and writes are libc's own (no wrapper
 * sees them): the file is classified before any of its I/O, and when the
 * command is done with it all of it is taken as touched, and as written if
 * the descriptor could write (drop.c).  Pages cached at the classification
 * still stay.
 *
 * A stream the command opens (fopen, fdopen, freopen) is classified there.
 * stdin, stdout and stderr are open before the command starts: their
 * descriptors are classified by the library's constructor (`seq > out`: the
 * shell's redirection), and again when the command puts a file of its own
 * under one (`sort -o FILE` dup2s FILE onto stdout).  A stream the command
 * never closes is flushed by libc's exit after the library's destructor:
 * stdout and stderr are flushed by the destructor first (below).
 */
#include "nocache.h"

#include <errno.h>
#include <stdio_ext.h>
#include <sys/stat.h>

static FILE *opened(FILE *stream)
{
	int saved = errno, fd = stream ? fileno(stream) : -1;
	struct nc_file *f = nc_file(fd);

	if (f && nc_mode(fd, f) != NC_PLAIN)
		f->stdio = 1;
	errno = saved;
	return stream;
}

/* One fstat tells a terminal or a pipe, most often there, from a file:
 * the descriptor is then known as one, with no cachestat. */
void nc_std_stream(int fd)
{
	struct nc_file *f = nc_file(fd);
	struct stat st;

	if (!f || fd > STDERR_FILENO)
		return;
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		*f = (struct nc_file){.kind = NC_KIND_OTHER, .mode = NC_PLAIN};
		return;
	}
	if (nc_mode(fd, f) != NC_PLAIN)
		f->stdio = 1;
}

__attribute__((constructor)) static void std_streams(void)
{
	int saved = errno;

	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		nc_std_stream(fd);
	errno = saved;
}

/* What the stream holds goes to its file now, with its lock if it can be
 * had at once (another thread may be in the middle of a printf at exit,
 * where libc's own flush takes no lock), so that it is written back and
 * dropped with the rest. */
static void flush_std(FILE *stream)
{
	int fd = fileno(stream);
	struct nc_file *f = nc_file(fd);

	if (f && f->stdio && f->mode != NC_PLAIN && __fpending(stream) &&
	    ftrylockfile(stream) == 0) {
		fflush_unlocked(stream);
		funlockfile(stream);
	}
}

void nc_flush_std(void)
{
	int saved = errno;

	flush_std(stdout);
	flush_std(stderr);
	errno = saved;
}

/* What fclose is about to flush goes first, so that it is written back
 * with the rest; the real fclose then finds an empty buffer, or the same
 * error again. */
static void closing(FILE *stream)
{
	int saved = errno, fd = stream ? fileno(stream) : -1;
	struct nc_file *f = nc_file(fd);

	if (f && f->stdio && f->mode != NC_PLAIN && __fwritable(stream))
		fflush(stream);
	if (fd >= 0)
		nc_forget(fd);
	errno = saved;
}

PL_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return opened(NC_REAL(fopen)(path, mode));
}

PL_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return opened(NC_REAL(fopen64)(path, mode));
}

PL_EXPORT FILE *fdopen(int fd, const char *mode)
{
	return opened(NC_REAL(fdopen)(fd, mode));
}

/* freopen closes the stream's descriptor with libc's own close. */
PL_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	closing(stream);
	return opened(NC_REAL(freopen)(path, mode, stream));
}

PL_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	closing(stream);
	return opened(NC_REAL(freopen64)(path, mode, stream));
}

PL_EXPORT int fclose(FILE *stream)
{
	closing(stream);
	return NC_REAL(fclose)(stream);
}
