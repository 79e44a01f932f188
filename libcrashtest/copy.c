/* SPDX-License-Identifier: MIT */
/* copy.c -- writes that do not look like write(): copy_file_range and
 * sendfile (the kernel copies into the file: what it copied is read back
 * from the source), fallocate and posix_fallocate (they extend, zero, punch
 * or shift a file); and sends on sockets and what goes into a pipe
 * (sendmmsg, vmsplice, splice, tee, sendfile), which are claims.  glibc's
 * posix_fallocate reaches the kernel past fallocate, so both are wrapped.
 */
#include "ct.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

/* A descriptor's offset for a call given `off` (NULL: the file offset). */
static long long offset_of(int fd, const long long *off)
{
	return off ? *off : lseek64(fd, 0, SEEK_CUR);
}

ssize_t ct_claimed(int fd, ssize_t r)
{
	struct stat st;
	int saved = errno;

	if (r > 0 && ct_where_fd(fd, &st) == CT_CLAIMED) {
		struct ct_record h = {.kind = CT_CLAIM, .dev = st.st_dev, .ino = st.st_ino};

		ct_record(&h, NULL, 0);
	}
	errno = saved;
	return r;
}

/* The kernel copied r bytes from in at in_pos into out, a file of the
 * copy, at out_pos: recorded; keeps errno, returns r. */
static ssize_t copied(ssize_t r, int in, long long in_pos, const struct stat *st,
		      long long out_pos)
{
	int saved = errno;

	if (r > 0 && in_pos >= 0 && out_pos >= 0)
		ct_copied(in, in_pos, st, out_pos, r);
	else if (r > 0)
		ct_note(CT_UNKNOWN, st, "where a copy went cannot be told");
	ct_unlock();
	errno = saved;
	return r;
}

PL_EXPORT ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off,
				  size_t len, unsigned int flags)
{
	struct stat st;
	long long from, to;

	if (ct_where_fd(out, &st) != CT_FILE)
		return REAL(copy_file_range)(in, in_off, out, out_off, len, flags);
	ct_lock_file(out, &st);
	from = offset_of(in, (long long *)in_off);
	to = offset_of(out, (long long *)out_off);
	return copied(REAL(copy_file_range)(in, in_off, out, out_off, len, flags), in, from, &st, to);
}

/* sendfile's offset is the source's: it writes at the target's offset, or
 * its end with O_APPEND. */
static ssize_t sent(int out, int in, long long *off, size_t n,
		    ssize_t (*call)(int, int, long long *, size_t))
{
	struct stat st;
	long long from, to;

	if (ct_where_fd(out, &st) != CT_FILE)
		return ct_claimed(out, call(out, in, off, n)); /* into a socket or a pipe: a claim */
	ct_lock_file(out, &st);
	from = offset_of(in, off);
	to = (fcntl(out, F_GETFL) & O_APPEND) ? st.st_size : offset_of(out, NULL);
	return copied(call(out, in, off, n), in, from, &st, to);
}

static ssize_t real_sendfile(int out, int in, long long *off, size_t n)
{
	return REAL(sendfile64)(out, in, (off64_t *)off, n);
}

PL_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	return sent(out, in, (long long *)off, n, real_sendfile);
}

#ifdef EMD_LFS64
PL_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	return sent(out, in, (long long *)off, n, real_sendfile);
}
#endif

/* What fallocate did to file st (fd now of size `now`): zeros, a new size,
 * or the rest of the file shifted (read back). */
static void allocated(int fd, const struct stat *st, int mode, long long off, long long len,
		      long long now)
{
	if (mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE)) {
		ct_copied(fd, off, st, off, now > off ? now - off : 0);
	} else if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		long long end = off + len < now ? off + len : now;

		if (end > off)
			ct_zeroed(st, off, end - off);
	}
	if (now != st->st_size)
		ct_truncated(st, now);
}

static int fallocated(int fd, int mode, long long off, long long len,
		      int (*call)(int, int, off64_t, off64_t))
{
	struct stat st, after;
	int r, saved;

	if (ct_where_fd(fd, &st) != CT_FILE)
		return call(fd, mode, off, len);
	ct_lock_file(fd, &st);
	r = call(fd, mode, off, len);
	saved = errno;
	if (r == 0 && fstat(fd, &after) == 0)
		allocated(fd, &st, mode < 0 ? 0 : mode, off, len, after.st_size);
	ct_unlock();
	errno = saved;
	return r;
}

static int real_fallocate(int fd, int mode, off64_t off, off64_t len)
{
	return REAL(fallocate64)(fd, mode, off, len);
}

/* posix_fallocate returns an error number: mode -1 says so. */
static int real_posix_fallocate(int fd, int mode, off64_t off, off64_t len)
{
	(void)mode;
	return REAL(posix_fallocate64)(fd, off, len);
}

PL_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	return fallocated(fd, mode, off, len, real_fallocate);
}

#ifdef EMD_LFS64
PL_EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	return fallocated(fd, mode, off, len, real_fallocate);
}
#endif

PL_EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	return fallocated(fd, -1, off, len, real_posix_fallocate);
}

#ifdef EMD_LFS64
PL_EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len)
{
	return fallocated(fd, -1, off, len, real_posix_fallocate);
}
#endif

PL_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	return ct_claimed(fd, REAL(send)(fd, buf, n, flags));
}

PL_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			 const struct sockaddr *to, socklen_t len)
{
	return ct_claimed(fd, REAL(sendto)(fd, buf, n, flags, to, len));
}

PL_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return ct_claimed(fd, REAL(sendmsg)(fd, msg, flags));
}

PL_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, emd_mmsg_flags flags)
{
	return (int)ct_claimed(fd, REAL(sendmmsg)(fd, v, n, flags));
}

/* vmsplice's pipe end open for writing is put into (for reading, it is
 * read from: no claim). */
PL_EXPORT ssize_t vmsplice(int fd, const struct iovec *iov, size_t n, unsigned int flags)
{
	ssize_t r = REAL(vmsplice)(fd, iov, n, flags);
	int saved = errno;

	if ((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY)
		return errno = saved, r;
	errno = saved;
	return ct_claimed(fd, r);
}

/* splice and tee into a pipe or a socket. */
PL_EXPORT ssize_t splice(int in, loff_t *in_off, int out, loff_t *out_off, size_t len,
			 unsigned int flags)
{
	return ct_claimed(out, REAL(splice)(in, in_off, out, out_off, len, flags));
}

PL_EXPORT ssize_t tee(int in, int out, size_t len, unsigned int flags)
{
	return ct_claimed(out, REAL(tee)(in, out, len, flags));
}

/* A shell's redirection of standard output or error to a file of the copy:
 * what it then prints through stdio is held. */
static int duplicated(int r, int newfd)
{
	int saved = errno;

	if (r >= 0 && newfd >= STDOUT_FILENO && newfd <= STDERR_FILENO && ct_active())
		ct_hold_std(newfd);
	errno = saved;
	return r;
}

/* What stream was on newfd is let go first: a shell restores its own
 * standard output so once the command it redirected ran.  That closes the
 * file newfd was on: its release, perhaps (release.c). */
PL_EXPORT int dup2(int fd, int newfd)
{
	struct stat st;
	int release = fd != newfd && ct_release_before(newfd, &st), r;

	if (fd != newfd)
		ct_image_free_fd(newfd);
	r = REAL(dup2)(fd, newfd);
	ct_release_duplicated(r, fd, release ? &st : NULL);
	return duplicated(r, newfd);
}

PL_EXPORT int dup3(int fd, int newfd, int flags)
{
	struct stat st;
	int release = fd != newfd && ct_release_before(newfd, &st), r;

	ct_image_free_fd(newfd);
	r = REAL(dup3)(fd, newfd, flags);
	ct_release_duplicated(r, fd, release ? &st : NULL);
	return duplicated(r, newfd);
}
