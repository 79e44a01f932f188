/* SPDX-License-Identifier: MIT */
/* close.c -- the calls that let a descriptor number go, so that fdid.c
 * forgets which file it was (and osync.c whether its writes sync): close,
 * close_range, closefrom, dup2 and dup3 (whose target is closed first),
 * and fclose, pclose and closedir (libc closes their descriptor through
 * its own close, out of our reach).
 *
 * Every program closes and duplicates descriptors all the time, and only a
 * recording process (syncstat, eatmydata --stats) reads what the forget
 * keeps: close, dup2 and dup3 jump through an entry (emd.h) that is the
 * real function from the constructor on in any other process, one
 * indirect jump; the others are a load, a test and a call while nothing
 * is recorded.
 */
#include "emd.h"

#include <dirent.h>
#include <stdio.h>

static int close_forget(int fd)
{
	int r = EMD_REAL(close)(fd);

	emd_fd_forget(fd);
	return r;
}

static int dup2_forget(int old, int new)
{
	return (int)emd_fd_forget(EMD_REAL(dup2)(old, new));
}

static int dup3_forget(int old, int new, int flags)
{
	return (int)emd_fd_forget(EMD_REAL(dup3)(old, new, flags));
}

static __typeof__(close) *close_entry = close_forget;
static __typeof__(dup2) *dup2_entry = dup2_forget;
static __typeof__(dup3) *dup3_entry = dup3_forget;

void emd_close_entries(int forget)
{
	EMD_ENTRY_SET(close, forget);
	EMD_ENTRY_SET(dup2, forget);
	EMD_ENTRY_SET(dup3, forget);
}

EMD_EXPORT int close(int fd)
{
	return EMD_ENTRY(close)(fd);
}

EMD_EXPORT int close_range(unsigned int lo, unsigned int hi, int flags)
{
	int r = EMD_REAL(close_range)(lo, hi, flags);

	if (EMD_UNLIKELY(__atomic_load_n(&emd_fd_ids, __ATOMIC_RELAXED) != 0) && lo <= hi)
		emd_fd_forget_range(lo, hi);
	return r;
}

EMD_EXPORT void closefrom(int lo)
{
	EMD_REAL(closefrom)(lo);
	if (EMD_UNLIKELY(__atomic_load_n(&emd_fd_ids, __ATOMIC_RELAXED) != 0) && lo >= 0)
		emd_fd_forget_range((unsigned)lo, ~0u);
}

EMD_EXPORT int dup2(int old, int new)
{
	return EMD_ENTRY(dup2)(old, new);
}

EMD_EXPORT int dup3(int old, int new, int flags)
{
	return EMD_ENTRY(dup3)(old, new, flags);
}

/* A stream's number, read before the stream is freed; -1 if nothing is
 * kept.  fileno sets errno (EBADF) for a stream with no descriptor
 * (fmemopen, fopencookie), which fclose then leaves as it is on success. */
static int stream_fd(FILE *stream)
{
	int saved = errno, fd;

	fd = __atomic_load_n(&emd_fd_ids, __ATOMIC_RELAXED) && stream ? fileno_unlocked(stream) : -1;
	errno = saved;
	return fd;
}

EMD_EXPORT int fclose(FILE *stream)
{
	int fd = stream_fd(stream), r = EMD_REAL(fclose)(stream);

	emd_fd_forget(fd);
	return r;
}

/* popen's pipe is closed by libc's own close, as fclose's number. */
EMD_EXPORT int pclose(FILE *stream)
{
	int fd = stream_fd(stream), r = EMD_REAL(pclose)(stream);

	emd_fd_forget(fd);
	return r;
}

/* glibc's closedir(NULL) fails with EINVAL: dirfd(NULL) would crash.
 * <dirent.h> declares dir nonnull, so the compiler would drop a plain test
 * of it: the test is made on a copy it cannot see through. */
EMD_EXPORT int closedir(DIR *dir)
{
	DIR *d = dir;
	int fd, r;

	__asm__("" : "+r"(d));
	fd = __atomic_load_n(&emd_fd_ids, __ATOMIC_RELAXED) && d ? dirfd(d) : -1;
	r = EMD_REAL(closedir)(dir);

	emd_fd_forget(fd);
	return r;
}

/* A system call made through syscall() that opens, closes or duplicates. */
long emd_fd_syscall(long nr, const long *a, long res)
{
	if (EMD_LIKELY(!__atomic_load_n(&emd_fd_ids, __ATOMIC_RELAXED)))
		return res;
	switch (nr) {
	case SYS_close:
		emd_fd_forget(a[0]);
		break;
	case SYS_close_range:
		if ((unsigned)a[0] <= (unsigned)a[1])
			emd_fd_forget_range((unsigned)a[0], (unsigned)a[1]);
		break;
#ifdef SYS_dup2
	case SYS_dup2:
#endif
	case SYS_dup3:
		emd_fd_forget(a[1]);
		break;
	case SYS_fcntl:
#ifdef SYS_fcntl64
	case SYS_fcntl64:
#endif
		if (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC)
			emd_fd_forget(res);
		break;
#ifdef SYS_open
	case SYS_open:
#endif
#ifdef SYS_creat
	case SYS_creat:
#endif
	case SYS_openat:
	case SYS_openat2:
	case SYS_open_by_handle_at:
	case SYS_dup:
	case SYS_memfd_create:
	case SYS_pidfd_getfd:
	case SYS_accept4:
		emd_fd_forget(res);
		break;
	default:
		break;
	}
	return res;
}
