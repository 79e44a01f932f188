/* SPDX-License-Identifier: MIT */
/* osync.c -- writes on descriptors whose open file has O_SYNC or O_DSYNC,
 * each of which syncs: recorded for syncstat, passed straight through
 * otherwise.
 *
 * The flag belongs to the open file, which a descriptor shares with its
 * copies (dup, dup2, dup3, F_DUPFD), a forked child and, across exec, the
 * program it becomes; F_SETFL can neither set nor clear it.  So a
 * descriptor is not followed from its open but asked (F_GETFL) at its
 * first write, and the answer kept until the library sees its number
 * change hands (fdid.c's forget: a close, a dup2 or dup3 onto it, an
 * open returning it).  A number is only reused once closed, so a copy
 * made past the library (libc's fcntl, a descriptor received or
 * inherited) is a number never asked about.  The answer "syncs" is
 * checked again at each write, which syncs anyway; "does not" costs a
 * load and a test.
 *
 * Followed only while recording without eating (syncstat): then every
 * wrapper that lets a number go calls the forget (emd_fd_ids is mapped
 * from the start).  What can still make a kept "does not" wrong: a number
 * closed and given again past the library (a raw system call, a close of
 * libc's own) to a descriptor received or inherited, and a vfork child
 * that writes to a descriptor of its own (it asks in its parent's memory).
 */
#include "emd.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define FOLLOWED_FDS 65536 /* higher descriptors are asked at every write */

int emd_follow_writes;

/* Two bits a descriptor: KNOWN, asked since its number was last let go;
 * SYNC, its writes sync (set by the answer, or by an open with O_SYNC). */
#define KNOWN 1UL
#define SYNC 2UL
#define PER_WORD (sizeof(unsigned long) * CHAR_BIT / 2)
static unsigned long states[FOLLOWED_FDS / PER_WORD];
/* Above every descriptor with a state: a forget walks only that far. */
static unsigned states_end;

#define WORD(fd) states[(unsigned)(fd) / PER_WORD]
#define SHIFT(fd) ((unsigned)(fd) % PER_WORD * 2)

static void set_state(int fd, unsigned long bits)
{
	for (unsigned end = __atomic_load_n(&states_end, __ATOMIC_RELAXED); end <= (unsigned)fd;)
		__atomic_compare_exchange_n(&states_end, &end, (unsigned)fd + 1, 1, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED);
	__atomic_fetch_or(&WORD(fd), bits << SHIFT(fd), __ATOMIC_SEQ_CST);
}

void emd_mark_sync_fd(int fd)
{
	if (fd >= 0 && fd < FOLLOWED_FDS)
		set_state(fd, KNOWN | SYNC);
}

/* After the close the caller made, and a fence (fdid.c's forget): a state
 * set before the close is seen. */
void emd_sync_forget_range(unsigned lo, unsigned hi)
{
	unsigned end = __atomic_load_n(&states_end, __ATOMIC_SEQ_CST);

	for (unsigned fd = lo; fd < end && fd <= hi; fd++)
		if (__atomic_load_n(&WORD(fd), __ATOMIC_RELAXED) & (3UL << SHIFT(fd)))
			__atomic_fetch_and(&WORD(fd), ~(3UL << SHIFT(fd)), __ATOMIC_SEQ_CST);
}

/* EMD_K_WRITE_SYNC or EMD_K_WRITE_DSYNC if fd's writes sync now, else -1
 * (-2: fd is no descriptor). */
static int ask(int fd)
{
	int saved = errno;
	long flags = emd_syscall(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);

	errno = saved;
	if (flags < 0)
		return -2;
	if (!(flags & EMD_OPEN_SYNC_FLAGS))
		return -1;
	return (flags & O_SYNC) == O_SYNC ? EMD_K_WRITE_SYNC : EMD_K_WRITE_DSYNC;
}

/* Ask, and keep the answer.  A "syncs" kept that no longer holds (its
 * number closed and given again past the library) is cleared, then asked
 * once more: an open with O_SYNC in another thread may have marked the
 * number between the first answer and the clear. */
static int learn(int fd)
{
	int kind = ask(fd);
	unsigned long was;

	if (kind == -2 || fd >= FOLLOWED_FDS)
		return kind < 0 ? -1 : kind;
	if (kind >= 0) {
		set_state(fd, KNOWN | SYNC);
		return kind;
	}
	set_state(fd, KNOWN);
	was = __atomic_fetch_and(&WORD(fd), ~(SYNC << SHIFT(fd)), __ATOMIC_SEQ_CST);
	if (!(was & (SYNC << SHIFT(fd))) || (kind = ask(fd)) < 0)
		return -1;
	set_state(fd, SYNC);
	return kind;
}

int emd_sync_kind(int fd)
{
	int follow = __atomic_load_n(&emd_follow_writes, __ATOMIC_RELAXED), kind;

	if (follow == EMD_FOLLOW_UNSET) {
		emd_mode_now();
		follow = __atomic_load_n(&emd_follow_writes, __ATOMIC_RELAXED);
	}
	if (fd < 0 || follow == EMD_FOLLOW_OFF)
		return -1;
	if (follow == EMD_FOLLOW_ASK)
		return (kind = ask(fd)) < 0 ? -1 : kind;
	if (fd < FOLLOWED_FDS &&
	    ((__atomic_load_n(&WORD(fd), __ATOMIC_RELAXED) >> SHIFT(fd)) & 3) == KNOWN)
		return -1;
	return learn(fd);
}

/* A stdio stream's writes are the C library's own, out of reach: a stream
 * made to write on a descriptor that syncs is named, never counted as
 * nothing.  (The standard streams, whose descriptors a program may as
 * well write to itself, are not.) */
EMD_EXPORT FILE *fdopen(int fd, const char *mode)
{
	FILE *f = EMD_REAL(fdopen)(fd, mode);
	char proc[32], path[256];
	ssize_t n;

	if (!f || __atomic_load_n(&emd_follow_writes, __ATOMIC_RELAXED) != EMD_FOLLOW_ON ||
	    !mode || !strpbrk(mode, "wa+") || ask(fd) < 0)
		return f;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	emd_unobserved(path, "written through a stdio stream (fdopen), whose writes libc makes itself",
		       0);
	return f;
}

EMD_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(write)(fd, buf, n);
	emd_rec_start(&rec, kind, fd, NULL, EMD_CALLER);
	return emd_rec_finish(&rec, EMD_REAL(write)(fd, buf, n));
}

EMD_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(writev)(fd, iov, cnt);
	emd_rec_start(&rec, kind, fd, NULL, EMD_CALLER);
	return emd_rec_finish(&rec, EMD_REAL(writev)(fd, iov, cnt));
}

/* The bodies of pwrite and pwrite64, pwritev and pwritev64: the one name's
 * offset is the other's, or (32-bit off_t) widens to it. */
static ssize_t pwrite_at(int fd, const void *buf, size_t n, off64_t off,
			 const void *site)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(pwrite64)(fd, buf, n, off);
	emd_rec_start(&rec, kind, fd, NULL, site);
	return emd_rec_finish(&rec, EMD_REAL(pwrite64)(fd, buf, n, off));
}

static ssize_t pwritev_at(int fd, const struct iovec *iov, int cnt,
			  off64_t off, const void *site)
{
	struct emd_rec rec;
	int kind = emd_write_kind(fd);

	if (EMD_LIKELY(kind < 0))
		return EMD_REAL(pwritev64)(fd, iov, cnt, off);
	emd_rec_start(&rec, kind, fd, NULL, site);
	return emd_rec_finish(&rec, EMD_REAL(pwritev64)(fd, iov, cnt, off));
}

#ifdef EMD_LFS64
EMD_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	return pwrite_at(fd, buf, n, off, EMD_CALLER);
}
#endif

EMD_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite_at(fd, buf, n, off, EMD_CALLER);
}

#ifdef EMD_LFS64
EMD_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt,
			     off64_t off)
{
	return pwritev_at(fd, iov, cnt, off, EMD_CALLER);
}
#endif

EMD_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return pwritev_at(fd, iov, cnt, off, EMD_CALLER);
}
