/* SPDX-License-Identifier: MIT */
/* crash.c -- crashtest's policy (supervisor.h): a program crashtest's
 * library cannot enter (static, Go) is followed here, call by call, and
 * journaled as the library journals the programs it enters.
 *
 * A change is made here, on the caller's own open file (pidfd_getfd: the
 * same struct file, its position, O_APPEND, O_SYNC) or in the directory its
 * path names, under one lock with its record, so that the journal has what
 * the kernel did, in the order it did it: the bytes a write wrote, the inode
 * a create made.  A durability call is made here too, and is a crash point
 * once it returned.  Only for a caller with this process's rights
 * (rights.c), within its file size limit: otherwise, and for what cannot be
 * followed from here (a shared writable mapping of a file of the copy, the
 * kernel copying into one, io_uring, Linux AIO, a 32-bit program), the call
 * goes on to the kernel and the journal says the run is unknown from there.
 * A call on anything but the copy goes on unchanged.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "crash.h"
#include "maps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAX_WRITE (16 << 20) /* a larger write is unknown */
#define ALIGN 4096           /* O_DIRECT's */
#define EMD_RWF_NOAPPEND 0x20 /* Linux 6.9: an O_APPEND file written where asked */

EMD_CHANGE_TABLE(changes);

/* What the caller's descriptor num is, as a struct stat (the records'). */
static void stat_of(const struct statx *x, struct stat *st)
{
	*st = (struct stat){.st_dev = makedev(x->stx_dev_major, x->stx_dev_minor),
			    .st_ino = x->stx_ino, .st_mode = x->stx_mode,
			    .st_size = (off_t)x->stx_size};
}

enum crash_where crash_where_fd(pid_t tid, int num, const struct stat *st)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode))
		return CW_CLAIMED;
	if (!S_ISREG(st->st_mode))
		return CW_NONE;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", tid, num);
	if ((n = readlink(link, path, sizeof(path) - 1)) <= 0 || path[0] != '/' ||
	    (size_t)n >= sizeof(path) - 1) {
		/* past PATH_MAX: on the copy's file system, it may be the copy's */
		if (crash_on_copy_dev(st->st_dev))
			crash_note(tid, CT_UNKNOWN, st, "a write to a file whose path cannot be told");
		return CW_NONE;
	}
	path[n] = '\0';
	if (crash_in_root(path))
		return CW_FILE;
	if (!crash_in_run(path) && ct_outside_ok(path, getenv(CT_ENV_OUTSIDE_OK)))
		crash_note(tid, CT_IGNORED, st, path);
	else if (!crash_in_run(path))
		crash_note(tid, CT_UNKNOWN, st, "a file outside the directory was written");
	return CW_NONE;
}

/* The run is unknown from here: `what` of a file of the copy went on to
 * the kernel, past the journal. */
static int unfollowed(struct call *c, const struct stat *st, const char *what)
{
	char why[256];

	snprintf(why, sizeof(why), "%s, by a program crashtest's supervisor follows: not journaled",
		 what);
	crash_note(c->req->pid, CT_UNKNOWN, st, why);
	return CONTINUE;
}

/* Why a duplicate of a caller's descriptor (their_fd's err) was not had. */
static const char *undup(int err)
{
	return err == NOT_QUIET ? "a change on a file system that sees its files' closes (FUSE, "
				  "NFS...), made by the kernel"
	       : fds_short(err) ? "a change left to the kernel: the supervisor had no descriptor free"
				: "a change to a file the supervisor could not hold";
}

/* The caller's descriptor in argument i, here, if it is a regular file of
 * the copy; CLAIMED for a pipe or a socket (what goes there is a claim:
 * crash_claims.c), else -1.  What it is is seen without a duplicate of it
 * (fds.c). */
#define CLAIMED (-2)
static int copy_file(struct call *c, int i, struct stat *st)
{
	int num = (int)call_arg(c, i), fd, r;
	struct statx stx;
	enum crash_where w;

	/* a caller this process may not inspect (not dumpable): its file
	 * cannot be told, and may be the copy's */
	if ((r = their_file(c, num, &stx)) == -EPERM || r == -EACCES)
		unfollowed(c, NULL, "a change by a program the supervisor may not inspect");
	if (r < 0)
		return -1;
	stat_of(&stx, st);
	if ((w = crash_where_fd(c->req->pid, num, st)) != CW_FILE)
		return w == CW_CLAIMED ? CLAIMED : -1;
	if ((fd = their_fd(c, num, NULL)) < 0 && fd != -EBADF && fd != -ESRCH)
		unfollowed(c, st, undup(fd));
	return fd < 0 ? -1 : fd;
}

/* Before a change of file st's contents through fd: claims, then the
 * journal's lock, under which st is taken again, since another process
 * may have changed the file since copy_file looked: its size then is the
 * one the change starts from (a write past the end or not, the size a
 * truncation left). */
static void lock_file(pid_t tid, int fd, struct stat *st)
{
	struct stat now;

	crash_claims(tid);
	crash_lock();
	if (fstat(fd, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino)
		*st = now;
}

/* Records of at most CT_CHUNK bytes each for the n bytes of buf at off. */
static void wrote(pid_t tid, const struct stat *st, long long off, const char *buf, size_t n,
		  int flags)
{
	for (size_t at = 0; at < n;) {
		size_t part = n - at < CT_CHUNK ? n - at : CT_CHUNK;
		struct ct_record h = {.kind = CT_WRITE, .flags = (uint16_t)flags, .dev = st->st_dev,
				      .ino = st->st_ino, .off = off + (long long)at,
				      .size = st->st_size};
		struct iovec v = {(void *)(buf + at), part};

		crash_record(tid, &h, &v, 1);
		at += part;
	}
}

/* Where a write of r bytes began (libcrashtest's began_at): the end, less
 * r, for an append (O_APPEND but for RWF_NOAPPEND, or RWF_APPEND); else
 * pos, or the file offset now, less r. */
static int appends(int fl, int rwf)
{
	return ((fl & O_APPEND) && !(rwf & EMD_RWF_NOAPPEND)) || (rwf & RWF_APPEND);
}

static long long began_at(int fd, int fl, int rwf, long long pos, ssize_t r)
{
	struct stat st;

	if (appends(fl, rwf))
		return fstat(fd, &st) == 0 ? st.st_size - r : -1;
	if (pos >= 0)
		return pos;
	pos = lseek(fd, 0, SEEK_CUR);
	return pos < 0 ? -1 : pos - r;
}

/* The caller's buffers and their total: 0, or -ESRCH when they cannot be
 * read (the kernel's EFAULT, EINVAL), -E2BIG past MAX_WRITE. */
static int their_buffers(const struct call *c, const struct emd_change *r, struct iovec *iov,
			 unsigned *cnt, size_t *total)
{
	*cnt = r->vec ? (unsigned)call_arg(c, 2) : 1;
	if (!r->vec)
		iov[0] = (struct iovec){(void *)call_arg(c, 1), (size_t)call_arg(c, 2)};
	else if (call_arg(c, 2) > THEIR_IOV_MAX ||
		 their_iovecs(c, call_arg(c, 1), iov, (int)*cnt) != 0)
		return -ESRCH;
	*total = 0;
	for (unsigned i = 0; i < *cnt; i++) {
		if (iov[i].iov_len > MAX_WRITE - *total)
			return -E2BIG;
		*total += iov[i].iov_len;
	}
	return 0;
}

/* The caller's data, as far as it is mapped (the kernel writes what it
 * could copy), into buf: how much, or -errno, or UNREACHABLE. */
#define UNREACHABLE (-EFAULT - 4096)
static ssize_t their_data(const struct call *c, const struct iovec *iov, unsigned cnt, char *buf,
			  size_t total)
{
	struct iovec local = {buf, total};
	ssize_t got;

	int e;

	if (!total)
		return 0;
	got = process_vm_readv(c->req->pid, &local, 1, iov, cnt, 0);
	e = errno;
	/* memory only the caller reaches (memfd_secret, a device's mapping):
	 * the caller's own write takes it */
	if (got < (ssize_t)total && caller_unreachable(c, iov, (int)cnt, got < 0 ? 0 : (size_t)got))
		return UNREACHABLE;
	return got > 0 ? got : e == EFAULT || got == 0 ? -EFAULT : -ESRCH;
}

/* The write of got bytes of buf made, within the caller's file size limit
 * where it lands (limit.c): how many, -errno, or PAST_LIMIT (nothing
 * written: the kernel's to refuse, and to signal). */
#define PAST_LIMIT (-EFBIG - 4096)
static ssize_t written(const struct call *c, int fd, const char *buf, ssize_t got, long long pos,
		       int rwf)
{
	struct iovec v = {(void *)buf, (size_t)got};
	struct change ch = {.kind = CHANGE_WRITE, .fd = fd, .iov = &v, .cnt = 1, .rwf = rwf,
			    .pos = pos};
	int limited;
	long n = change_within(c->req->pid, &ch, &limited);

	return n == -EFBIG && limited ? PAST_LIMIT : n;
}

/* The write of the caller's `got` bytes, read into buf beforehand (never
 * under the journal's lock: the caller's memory may wait on a thread of
 * its own, userfaultfd, which may itself change the copy first), made on
 * its open file and journaled; 0, or CONTINUE when it cannot be made. */
static int write_here(struct call *c, const struct emd_change *r, int fd, const struct stat *st,
		      const char *buf, ssize_t got)
{
	long long pos = r->pos >= 0 ? call_arg64(c, r->pos) : -1;
	int rwf = r->flags >= 0 ? (int)call_arg(c, r->flags) : 0, fl = fcntl(fd, F_GETFL), flags;
	ssize_t n = -1;
	int e = got == -EFAULT ? EFAULT : 0;
	/* at the file's position, which another thread of the caller may move
	 * (lseek) between the write and began_at's look at it */
	long long before = pos < 0 ? lseek(fd, 0, SEEK_CUR) : -1, at;

	if (got >= 0 && crash_acts(c) && (n = written(c, fd, buf, got, pos, rwf)) < 0)
		e = (int)-n;
	if (n == PAST_LIMIT)
		return unfollowed(c, st, "a write past the file size limit");
	if (n < 0)
		return e ? reply_error(c, e) : CONTINUE;
	flags = (fl & O_DSYNC) || (rwf & (RWF_DSYNC | RWF_SYNC)) ? CT_F_DSYNC : 0;
	flags |= ((fl & O_SYNC) == O_SYNC) || (rwf & RWF_SYNC) ? CT_F_SYNC : 0;
	at = n > 0 ? began_at(fd, fl, rwf, pos, n) : -1;
	if (pos < 0 && !appends(fl, rwf) && at != before)
		at = -1; /* moved under the write: where it went cannot be told */
	if (n > 0 && at >= 0)
		wrote(c->req->pid, st, at, buf, (size_t)n, flags);
	else if (n > 0)
		crash_note(c->req->pid, CT_UNKNOWN, st, "where a write went cannot be told");
	c->resp->val = n;
	return 0;
}

/* Can the write be made here: the offset the kernel would take, within the
 * caller's limits?  CONTINUE for the kernel's own answer, or unfollowed. */
static int writable(struct call *c, const struct emd_change *r, int fd, const struct stat *st,
		    int buffers, size_t total)
{
	long long pos = r->pos >= 0 ? call_arg64(c, r->pos) : -1;

	if (buffers == -ESRCH || pos < -1 || (pos == -1 && r->pos >= 0 && r->flags < 0))
		return CONTINUE; /* EFAULT, EINVAL: the kernel's */
	if (buffers == -E2BIG)
		return unfollowed(c, st, "a write of more than 16 MiB");
	if (!same_rights(c->req->pid, NULL) || !waits_killably())
		return unfollowed(c, st, "a write by a program of other rights");
	if (!within_limit(c->req->pid, fd, fcntl(fd, F_GETFL), pos < 0 ? lseek(fd, 0, SEEK_CUR) : pos,
			  total))
		return unfollowed(c, st, "a write past the file size limit");
	return 0;
}

/* An O_DIRECT write the kernel may refuse (EINVAL) for where the caller's
 * buffers lie, which the aligned copy made here would not: the file
 * system's alignments unknown, or not met. */
static int direct_misaligned(int fd, const struct iovec *iov, unsigned cnt, long long pos)
{
	struct statx sx;

	if (!(fcntl(fd, F_GETFL) & O_DIRECT))
		return 0;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0 ||
	    !(sx.stx_mask & STATX_DIOALIGN) || !sx.stx_dio_mem_align || !sx.stx_dio_offset_align)
		return 1;
	if ((pos < 0 ? lseek(fd, 0, SEEK_CUR) : pos) % sx.stx_dio_offset_align)
		return 1;
	for (unsigned i = 0; i < cnt; i++)
		if ((unsigned long)iov[i].iov_base % sx.stx_dio_mem_align ||
		    iov[i].iov_len % sx.stx_dio_offset_align)
			return 1;
	return 0;
}

static int write_change(struct call *c, const struct emd_change *r)
{
	struct iovec iov[THEIR_IOV_MAX];
	struct stat st;
	size_t total = 0;
	unsigned cnt;
	int fd = copy_file(c, r->arg, &st), how, buffers;

	if (fd == CLAIMED)
		return crash_claim_write(c, r, (int)call_arg(c, r->arg), &st);
	if (fd < 0)
		return CONTINUE;
	buffers = their_buffers(c, r, iov, &cnt, &total);
	how = writable(c, r, fd, &st, buffers, total);
	if (!how && direct_misaligned(fd, iov, cnt, r->pos >= 0 ? call_arg64(c, r->pos) : -1))
		how = unfollowed(c, &st, "an O_DIRECT write from memory the file system may refuse");
	if (!how) {
		char *buf = aligned_alloc(ALIGN, (total + ALIGN) & ~(size_t)(ALIGN - 1));
		ssize_t got = buf ? their_data(c, iov, cnt, buf, total) : -ENOMEM;

		if (got == UNREACHABLE) {
			how = unfollowed(c, &st, "a write from memory only the program reaches "
					 "(memfd_secret, a device's)");
		} else {
			lock_file(c->req->pid, fd, &st);
			how = write_here(c, r, fd, &st, buf, got);
			crash_unlock();
		}
		free(buf);
	}
	close(fd);
	return how;
}

/* What ftruncate or fallocate did to file st (now of size `now`): zeros
 * (libcrashtest's rule: up to the new end), a new size. */
static void resized(pid_t tid, const struct stat *st, int mode, long long off, long long end,
		    long long now)
{
	struct ct_record z = {.kind = CT_ZERO, .dev = st->st_dev, .ino = st->st_ino, .off = off};
	struct ct_record t = {.kind = CT_TRUNC, .dev = st->st_dev, .ino = st->st_ino,
			      .off = st->st_size, .size = now};

	end = end < now ? end : now;
	if ((mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) && end > off) {
		z.size = end - off;
		crash_record(tid, &z, NULL, 0);
	}
	if (now != st->st_size)
		crash_record(tid, &t, NULL, 0);
}

/* ftruncate or fallocate made, within the caller's file size limit as the
 * kernel applies it (limit.c): 0, an errno, or -2 past the limit (nothing
 * changed: the kernel's to refuse, and to signal). */
static int resize(const struct call *c, int fd, int alloc, int mode, long long off, long long len)
{
	struct change ch = {.kind = alloc ? CHANGE_ALLOCATE : CHANGE_TRUNCATE, .fd = fd,
			    .mode = mode, .pos = off, .len = len};
	int limited;
	long r = change_within(c->req->pid, &ch, &limited);

	return r == -EFBIG && limited ? -2 : (int)-r;
}

/* ftruncate, fallocate (but its shifts): made here, and journaled. */
static int size_change(struct call *c, const struct emd_change *r)
{
	int alloc = r->how == EMD_CH_ALLOCATE, mode = alloc ? (int)call_arg(c, r->flags) : 0, fd;
	long long off = call_arg64(c, r->pos), len = alloc ? call_arg64(c, 3) : 0;
	struct stat st, now;
	int e = 0;

	if ((fd = copy_file(c, r->arg, &st)) < 0)
		return CONTINUE;
	if (off < 0 || len < 0 || len > INT64_MAX - off)
		e = -1; /* the kernel's EINVAL, EFBIG */
	else if ((mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) ||
		 !same_rights(c->req->pid, NULL) || !waits_killably() ||
		 !within_limit(c->req->pid, fd, 0, off, len))
		e = -2;
	if (e) {
		close(fd);
		return e == -1 ? CONTINUE : unfollowed(c, &st, "a truncation or an fallocate");
	}
	lock_file(c->req->pid, fd, &st);
	if (!crash_acts(c))
		e = -1;
	else
		e = resize(c, fd, alloc, mode, off, len);
	if (!e && fstat(fd, &now) == 0)
		resized(c->req->pid, &st, mode, off, alloc ? off + len : off, now.st_size);
	crash_unlock();
	close(fd);
	if (e == -2)
		return unfollowed(c, &st, "a truncation or an fallocate past the file size limit");
	return e < 0 ? CONTINUE : e ? reply_error(c, e) : 0;
}

/* fsync, fdatasync, syncfs, made here on the caller's open file: a crash
 * point once it returned (failed or not), covering what was journaled
 * before it began. */
static int sync_change(struct call *c, const struct emd_change *r)
{
	int fd = their_fd(c, (int)call_arg(c, 0), NULL), e, all = r->how == EMD_CH_SYNCFS;
	struct ct_record h = {.kind = all ? CT_SYNC_ALL : CT_SYNC};
	struct stat st = {0};

	if (fd < 0)
		return fd == -EBADF ? reply_error(c, EBADF) : fd == -ESRCH ? CONTINUE
			       : unfollowed(c, NULL, "a durability call the supervisor could not make");
	crash_claims(c->req->pid);
	h.begin = crash_journal_size() + 1;
	e = (all ? syncfs(fd) : r->how == EMD_CH_FDATASYNC ? fdatasync(fd) : fsync(fd)) ? errno : 0;
	if (!all && fstat(fd, &st) == 0) {
		h.dev = st.st_dev;
		h.ino = st.st_ino;
	}
	h.flags = (uint16_t)((r->how == EMD_CH_FDATASYNC ? CT_F_DATA : 0) | (e ? CT_F_FAILED : 0) |
			     (all && !crash_on_copy_fs(fd) ? CT_F_OUTSIDE : 0));
	crash_record(c->req->pid, &h, NULL, 0);
	close(fd);
	return e ? reply_error(c, e) : 0;
}

/* sync_file_range: no crash point, but a journaling file system makes what
 * it waited for durable at its next commit (crashtest/durable.c). */
static int range_change(struct call *c, const struct emd_change *r)
{
	unsigned wait = SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	unsigned flags = (unsigned)call_arg(c, r->flags);
	long long off = call_arg64(c, 1), n = call_arg64(c, 2);
	int fd = their_fd(c, (int)call_arg(c, 0), NULL), e;
	struct stat st;
	char path[PATH_MAX];

	if (fd < 0)
		return fd == -EBADF ? reply_error(c, EBADF) : fd == -ESRCH ? CONTINUE
			       : unfollowed(c, NULL, "a sync_file_range the supervisor could not make");
	e = syscall(SYS_sync_file_range, fd, off, n, flags) ? errno : 0;
	if (!e && (flags & wait) == wait && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    crash_fd_path(fd, path, sizeof(path)) == 0 && crash_in_root(path)) {
		struct ct_record h = {.kind = CT_WRITEOUT, .dev = st.st_dev, .ino = st.st_ino,
				      .off = off, .size = n};

		crash_record(c->req->pid, &h, NULL, 0);
	}
	close(fd);
	return e ? reply_error(c, e) : 0;
}

static int sync_all(struct call *c, const struct emd_change *r)
{
	struct ct_record h = {.kind = CT_SYNC_ALL};

	(void)r;
	crash_claims(c->req->pid);
	h.begin = crash_journal_size() + 1;
	sync();
	crash_record(c->req->pid, &h, NULL, 0);
	return 0;
}

/* mmap: a shared writable mapping of a file of the copy changes it past
 * the supervisor. */
static int map_change(struct call *c, const struct emd_change *r)
{
	struct stat st;
	int fd = (int)call_arg(c, 4) >= 0 && (call_arg(c, 2) & PROT_WRITE) ? copy_file(c, 4, &st) : -1;

	(void)r;
	if (fd < 0)
		return CONTINUE;
	close(fd);
	return unfollowed(c, &st, "a shared writable mapping of a file of the copy");
}

/* A shared mapping of a file of the copy in [lo, hi)? */
struct span {
	unsigned long lo, hi;
};

static int shared_copy_file(const struct emd_map *m, void *arg)
{
	const struct span *s = arg;

	return m->lo < s->hi && s->lo < m->hi && m->perms[3] == 's' && m->path &&
	       crash_in_root(m->path);
}

/* mprotect making a shared mapping of a file of the copy writable. */
static int protect_change(struct call *c, const struct emd_change *r)
{
	struct span s = {call_arg(c, 0), call_arg(c, 0) + call_arg(c, 1)};
	int maps = open_proc(c->req->pid, "maps"), found;

	(void)r;
	if (maps < 0)
		return CONTINUE;
	found = emd_maps_each(maps, shared_copy_file, &s);
	close(maps);
	return found ? unfollowed(c, NULL, "a shared mapping of a file of the copy made writable")
		     : CONTINUE;
}

/* copy_file_range, sendfile, splice, tee: the kernel copies; into a pipe
 * or a socket, a claim (made here). */
static int copy_change(struct call *c, const struct emd_change *r)
{
	struct stat st;
	int fd = copy_file(c, r->arg, &st);

	if (fd == CLAIMED)
		return crash_claim_copy(c, r, (int)call_arg(c, r->arg), &st);
	if (fd < 0)
		return CONTINUE;
	close(fd);
	return unfollowed(c, &st, "the kernel copying into a file of the copy (copy_file_range, "
			  "sendfile, splice)");
}

/* A send on a socket (a pipe's write is a write): a claim once it went,
 * made here; vmsplice's into a pipe the same. */
static int claim_change(struct call *c, const struct emd_change *r)
{
	struct stat st;
	int fd = copy_file(c, r->arg, &st), num = (int)call_arg(c, r->arg);

	if (fd == CLAIMED)
		return r->nr == SYS_vmsplice ? crash_claim_vmsplice(c, num, &st)
					     : crash_claim_send(c, r, num, &st);
	if (fd >= 0)
		close(fd); /* ENOTSOCK, EBADF: the kernel's */
	return CONTINUE;
}

/* truncate by name, io_uring, Linux AIO: past the supervisor. */
static int foreign_change(struct call *c, const struct emd_change *r)
{
	if (r->path >= 0)
		return crash_foreign_path(c, r, "a truncation by name");
	return unfollowed(c, NULL, r->nr == SYS_io_uring_setup ? "an io_uring ring, whose writes are"
			  " not followed" : "a Linux AIO context, whose writes are not followed");
}

/* msync: a writable shared mapping of the copy made the run unknown. */
static int msync_change(struct call *c, const struct emd_change *r)
{
	(void)c, (void)r;
	return CONTINUE;
}

static int (*const handlers[])(struct call *c, const struct emd_change *r) = {
	[EMD_CH_WRITE] = write_change,	 [EMD_CH_TRUNCATE] = size_change,
	[EMD_CH_ALLOCATE] = size_change, [EMD_CH_COPY] = copy_change,
	[EMD_CH_FSYNC] = sync_change,	 [EMD_CH_FDATASYNC] = sync_change,
	[EMD_CH_SYNCFS] = sync_change,	 [EMD_CH_SYNC] = sync_all,
	[EMD_CH_RANGE] = range_change,	 [EMD_CH_MSYNC] = msync_change,
	[EMD_CH_MAP] = map_change,	 [EMD_CH_PROTECT] = protect_change,
	[EMD_CH_FOREIGN] = foreign_change, [EMD_CH_CLAIM] = claim_change,
	[EMD_CH_OPEN] = crash_names,
	[EMD_CH_MKDIR] = crash_names,	 [EMD_CH_MKNOD] = crash_names,
	[EMD_CH_SYMLINK] = crash_names,	 [EMD_CH_LINK] = crash_names,
	[EMD_CH_UNLINK] = crash_names,	 [EMD_CH_RMDIR] = crash_names,
	[EMD_CH_RENAME] = crash_names,	 [EMD_CH_BIND] = crash_names,
};

/* A 32-bit program's change to the copy is not followed: named. */
static int compat_change(struct call *c, const struct emd_change *r)
{
	static const char what[] = "a change by a 32-bit program";
	struct stat st;
	int fd;

	if (r->path >= 0)
		return crash_foreign_path(c, r, what);
	if (r->how == EMD_CH_MAP || r->how == EMD_CH_PROTECT || r->how == EMD_CH_BIND)
		return handlers[r->how](c, r);
	if (r->test != EMD_TEST_FD || (fd = copy_file(c, r->arg, &st)) == -1)
		return CONTINUE;
	if (fd == CLAIMED)
		return unfollowed(c, &st, "a write or a send to a pipe or a socket by a 32-bit program "
				  "(whether it went cannot be seen)");
	close(fd);
	return unfollowed(c, &st, what);
}

static int crash_answer(struct call *c)
{
	long nr = (long)c->req->data.nr;

	c->compat = c->req->data.arch == EMD_ARCH_COMPAT;
	if (!crash_on() || (c->req->data.arch != EMD_ARCH_NATIVE && !c->compat))
		return CONTINUE;
	for (size_t i = 0; i < EMD_NCHANGES && !crash_stopped(); i++) {
		if (nr == (c->compat ? changes[i].nr32 : changes[i].nr)) {
			int how = c->compat ? compat_change(c, &changes[i])
					    : handlers[changes[i].how](c, &changes[i]);

			if (how != CONTINUE || !crash_stopped())
				return how;
			break;
		}
	}
	/* Past the point --at asks for, the power failed: no call goes on
	 * (its caller is being killed) */
	return crash_stopped() ? reply_error(c, EINTR) : CONTINUE;
}

/* The journal says it: the run is unknown from here. */
static void crash_unserved(struct call *c, const char *why)
{
	unfollowed(c, NULL, why);
}

/* crashtest's: the calls of change_requests.h. */
const struct policy crash_policy = {
	.name = "crashtest",
	.answer = crash_answer,
	.unserved = crash_unserved,
};
