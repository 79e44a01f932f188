/* SPDX-License-Identifier: MIT */
/* stdio.c -- streams, whose reads and writes are libc's own (no wrapper
 * sees them): the file is classified when the stream is opened, before any
 * of its I/O, and at fclose all of it is taken as touched, and as written if
 * the stream could write.  Pages cached at the open still stay.
 *
 * Streams never closed (stdout into a file, most often) are flushed by libc
 * after the library's destructor has run, and are not covered.
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

/* What fclose is about to flush goes first, so that it is written back
 * with the rest; the real fclose then finds an empty buffer, or the same
 * error again. */
static void closing(FILE *stream)
{
	int saved = errno, fd = stream ? fileno(stream) : -1;
	struct nc_file *f = nc_file(fd);
	int wrote = stream && __fwritable(stream);
	struct stat st;

	if (f && f->stdio && f->mode != NC_PLAIN) {
		if (wrote)
			fflush(stream);
		if (fstat(fd, &st) == 0 && st.st_size > 0)
			nc_touched(fd, f, st.st_size, st.st_size,
				   NC_COUNTED | (wrote ? NC_WROTE : 0));
	}
	if (fd >= 0)
		nc_forget(fd);
	errno = saved;
}

PL_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return opened(NC_REAL(fopen)(path, mode));
}

#ifdef EMD_LFS64 /* musl's fopen64 is fopen */
PL_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return opened(NC_REAL(fopen64)(path, mode));
}
#endif

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

#ifdef EMD_LFS64
PL_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	closing(stream);
	return opened(NC_REAL(freopen64)(path, mode, stream));
}
#endif

PL_EXPORT int fclose(FILE *stream)
{
	closing(stream);
	return NC_REAL(fclose)(stream);
}
