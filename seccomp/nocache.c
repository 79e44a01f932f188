/* SPDX-License-Identifier: MIT */
/* nocache.c -- nocache's policy (supervisor.h): a read or a write of a
 * regular file by a program the library cannot reach is made here, on the
 * caller's own open file (pidfd_getfd: the same struct file, its position,
 * O_APPEND and access mode), as libnocache makes its own: a write with
 * RWF_DONTCACHE, whose pages go once written back; a read as asked, what
 * it brought in dropped once the caller has read past it
 * (nocache_behind.c).  Pages cached before stay.  A read is one preadv2 at
 * the caller's position (its own,
 * moved under the kernel's lock: concurrent readers of the open file get
 * ranges of their own); a write, one pwritev2.  The caller's own preadv2
 * and pwritev2 are served alike, their flags passed on where they mean the
 * same here (SERVED_RWF), else left to the kernel.  The data comes from the
 * caller's memory with process_vm_readv, and goes into it through
 * /proc/TID/mem (behalf.c's caller_mem: the file opened holds the caller's
 * memory, so a thread number reused by another process since cannot be
 * written).
 *
 * Nothing is done that the caller could not do itself: the file is its
 * open file, read or written as it asked, for a caller with this process's
 * rights (rights.c: a writer without CAP_FSETID clears a set-user-ID bit,
 * one without CAP_SYS_RESOURCE stops at quotas and reserved blocks); a
 * write that its RLIMIT_FSIZE would refuse, anything but a regular file,
 * O_DIRECT, a write to a file system without RWF_DONTCACHE, and a call of more than
 * MAX_IO bytes (or lengths the kernel refuses: EFAULT, EINVAL) go on to
 * the kernel as asked.  A buffer of the caller's that is partly unmapped
 * (or read-only) gets what the kernel gives: the bytes before the hole (a
 * short count, the file position moved by those only, as much being read
 * as the buffer takes), and a read into none is the kernel's.  A policy that
 * judges the reader (fanotify permission events) sees this process, not
 * the program.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"
#include "io_requests.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x00000020
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#define MAX_IO (16 << 20) /* bytes made here per call; a larger call is the kernel's */
/* preadv2's and pwritev2's flags that mean the same made here, on the
 * caller's open file, with RWF_DONTCACHE added: they go into this call as
 * given (the kernel's own refusals, RWF_APPEND with RWF_NOAPPEND, are then
 * this call's too).  Any other goes on to the kernel: RWF_NOWAIT (a call
 * that must not wait, whose EAGAIN is the kernel's judgement of the
 * caller's own call, waits here on the caller's memory and on the worker),
 * RWF_ATOMIC (direct I/O only, never made here), RWF_NOSIGNAL and flags
 * unknown to this build (which the kernel may refuse, EOPNOTSUPP, or mean
 * something by). */
#define SERVED_RWF (RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_APPEND | RWF_NOAPPEND | RWF_DONTCACHE)
EMD_IO_TABLE(io_requests);

/* The caller's buffers: its iovec array (a 32-bit caller's widened), or
 * the one buffer; 0 when read and within MAX_IO in all (then no length is
 * past SSIZE_MAX, nor a 32-bit caller's past INT32_MAX, either). */
static int their_iov(const struct call *c, const struct emd_io_request *r, struct iovec *iov,
		     int *n, size_t *total)
{
	unsigned long long count = call_arg(c, 2);

	if (!r->vec) {
		*n = 1;
		iov[0] = (struct iovec){(void *)call_arg(c, 1), (size_t)count};
	} else if (count > THEIR_IOV_MAX || their_iovecs(c, call_arg(c, 1), iov, (int)count)) {
		return -1;
	} else {
		*n = (int)count;
	}
	*total = 0;
	for (int i = 0; i < *n; i++) {
		if (iov[i].iov_len > MAX_IO - *total)
			return -1;
		*total += iov[i].iov_len;
	}
	return 0;
}

int within_limit(pid_t tid, int fd, int flags, off_t pos, size_t len)
{
	struct rlimit lim;
	struct stat st;

	if (prlimit(tid, RLIMIT_FSIZE, NULL, &lim) != 0)
		return 0;
	if (lim.rlim_cur == RLIM_INFINITY)
		return 1;
	if ((flags & O_APPEND) && fstat(fd, &st) == 0)
		pos = st.st_size;
	return pos >= 0 && (unsigned long long)pos + len <= lim.rlim_cur;
}

/* One preadv2 of the file, as asked: no RWF_DONTCACHE, whose reads drop
 * the part of a folio they did not read; its pages are dropped behind the
 * caller instead (nocache_behind.c). */
static ssize_t read_behind(int fd, off_t pos, int rwf, char *buf, size_t want,
			   const struct statx *st)
{
	ssize_t got;
	off_t at;
	int some = behind_before(fd, st);

	if ((got = preadv2(fd, &(struct iovec){buf, want}, 1, pos, rwf)) < 0)
		return -errno;
	at = !some ? -1 : pos >= 0 ? pos : lseek(fd, 0, SEEK_CUR) - got;
	if (at >= 0)
		behind_after(fd, st, at, got, (size_t)got < want || at + got >= (off_t)st->stx_size);
	return got;
}

/* Read: the file into buf, then buf into the caller's buffers.  One
 * preadv2 at the position (-1: the file's own, moved under the kernel's
 * f_pos lock), of as much as the caller's buffers take before their first
 * fault: so that two readers of one open file each get a range of their
 * own, as from read(2), and nothing read has to be put back (but see
 * below).  -ESRCH: the caller's is the kernel's to make (its buffer faults at once, it asked
 * for nothing, or it is gone), nothing read. */
static ssize_t do_read(const struct call *c, int fd, off_t pos, int rwf, char *buf, size_t total,
		       const struct iovec *iov, int n, const struct statx *st)
{
	size_t room;
	ssize_t got = -ESRCH, copied = 0;
	int mem = caller_mem(c, iov, n, &room);

	if (mem < 0)
		return -ESRCH;
	if (room && total)
		got = read_behind(fd, pos, rwf, buf, room < total ? room : total, st);
	/* Short where a page the maps call writable faults (a guard region,
	 * a shared mapping past its file's end) or was unmapped meanwhile:
	 * the position is moved back by what was not given, as the kernel's
	 * copy leaves it (a reader of the same open file in between is then
	 * raced, as before the one preadv2: only on this path). */
	if (got > 0 && (copied = write_mem(mem, buf, (size_t)got, iov, n)) < got && pos < 0)
		lseek(fd, copied - got, SEEK_CUR);
	if (got > 0 && copied == 0)
		copied = -EFAULT;
	close(mem);
	return got > 0 ? copied : got;
}

/* Write: the caller's buffers into buf, as far as they are mapped (the
 * kernel writes what it could copy), then buf into the file. */
static ssize_t do_write(const struct call *c, int fd, off_t pos, int rwf, char *buf, size_t total,
			const struct iovec *iov, int n)
{
	struct iovec local = {buf, total};
	ssize_t r = 0;

	if (total && (r = process_vm_readv(c->req->pid, &local, 1, iov, (unsigned long)n, 0)) <= 0)
		return r == 0 || errno == EFAULT ? -EFAULT : -ESRCH;
	if (!still_pending(c)) /* the data may be another process's by now */
		return -ESRCH;
	local.iov_len = (size_t)r;
	r = pwritev2(fd, &local, 1, pos, rwf | RWF_DONTCACHE);
	return r < 0 ? -errno : r;
}

/* Does a caller wait killably once its call is taken here
 * (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19, which the filter asks
 * for where the kernel has it)?  Without it, a signal makes the caller ask
 * again for a read or write made here already: an append made twice, the
 * position moved twice.  The kernel knows the flag when it goes on to read
 * the program (EFAULT for none), not when it refuses the flags (EINVAL). */
int waits_killably(void)
{
	static int known; /* 1: it does, 2: it does not */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (!k) {
		k = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			    NULL) < 0 && errno == EFAULT ? 1 : 2;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k == 1;
}

/* The row of a notified call, in the native ABI or the 32-bit one (whose
 * arguments are 32 bits wide: c->compat); NULL if none. */
static const struct emd_io_request *io_request_of(struct call *c)
{
	long nr = (long)c->req->data.nr;

	c->compat = c->req->data.arch == EMD_ARCH_COMPAT;
	if (c->req->data.arch != EMD_ARCH_NATIVE && !c->compat)
		return NULL;
	for (size_t i = 0; i < EMD_NIO; i++)
		if (nr == (c->compat ? io_requests[i].nr32 : io_requests[i].nr))
			return &io_requests[i];
	return NULL;
}

/* Can the call be made here (see the top): a regular file, neither
 * O_DIRECT nor O_PATH, the write within the caller's limit. */
static int servable(const struct call *c, const struct emd_io_request *r, int fd, off_t pos,
		    int rwf, size_t total, struct statx *st)
{
	int flags = fcntl(fd, F_GETFL);
	/* A write appends with RWF_APPEND, or on an O_APPEND file unless
	 * RWF_NOAPPEND: its limit is judged at the end. */
	int append = (rwf & RWF_APPEND) || ((flags & O_APPEND) && !(rwf & RWF_NOAPPEND));

	return flags >= 0 && !(flags & (O_DIRECT | O_PATH)) &&
	       statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, st) == 0 &&
	       S_ISREG(st->stx_mode) &&
	       (!r->write || within_limit(c->req->pid, fd, append ? O_APPEND : 0,
					  pos < 0 ? lseek(fd, 0, SEEK_CUR) : pos, total));
}

/* The offset and flags the call asks for, as the kernel takes them: 0, or
 * -1 when it is the kernel's to answer.  *pos is -1 for the file position:
 * read(2)'s kind has no offset, preadv2's kind says -1 (its native pos_h
 * ignored, io_requests.h); any other negative offset is the kernel's
 * EINVAL.  The flags are an int (rwf_t): a native register's upper half is
 * not the kernel's either. */
static int asked(const struct call *c, const struct emd_io_request *r, off_t *pos, int *rwf)
{
	int at = c->compat ? r->pos32 : r->pos;

	*rwf = r->rwf < 0 ? 0 : (int)(unsigned)call_arg(c, r->rwf);
	*pos = at < 0 ? -1 : (off_t)call_arg64(c, at);
	if (*rwf & ~SERVED_RWF)
		return -1;
	return at >= 0 && *pos < 0 && !(r->rwf >= 0 && *pos == -1) ? -1 : 0;
}

static int dontcache_io(struct call *c)
{
	const struct emd_io_request *r = io_request_of(c);
	struct iovec iov[THEIR_IOV_MAX];
	struct statx st;
	size_t total;
	ssize_t done;
	off_t pos;
	char *buf;
	int n, fd, rwf, end = nocache_end(c);

	if (end >= 0)
		return end;
	if (!r || asked(c, r, &pos, &rwf) != 0 || !waits_killably() ||
	    !same_rights(c->req->pid, NULL) || (fd = their_fd(c, (int)call_arg(c, 0))) < 0)
		return CONTINUE;
	if (their_iov(c, r, iov, &n, &total) != 0 || !servable(c, r, fd, pos, rwf, total, &st) ||
	    !(buf = malloc(total ? total : 1))) {
		close(fd);
		return CONTINUE;
	}
	/* What was cached is recorded at the file's first call made here, a
	 * write's too: what the program wrote is not to stay. */
	if (r->write)
		behind_before(fd, &st);
	done = r->write ? do_write(c, fd, pos, rwf, buf, total, iov, n)
			: do_read(c, fd, pos, rwf, buf, total, iov, n, &st);
	behind_served(fd, &st, c->listener);
	free(buf);
	close(fd);
	/* Refused here (a write: no RWF_DONTCACHE on this file system): as
	 * asked. */
	if (done == -EOPNOTSUPP || done == -EINVAL || done == -ESRCH)
		return CONTINUE;
	if (done < 0)
		return reply_error(c, (int)-done);
	c->resp->val = done;
	return 0;
}

/* nocache's: the reads and writes of io_requests.h, not the request
 * table's durability requests (its filter notifies none of those). */
const struct policy nocache_policy = {
	.name = "nocache",
	.answer = dontcache_io,
	.gone = nocache_gone,
};
