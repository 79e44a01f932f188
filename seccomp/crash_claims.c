/* SPDX-License-Identifier: MIT */
/* crash_claims.c -- crashtest's supervisor and what a program tells
 * others: a write or a send on a pipe or a socket, a vmsplice, splice, tee
 * or sendfile into one, is a claim once it went, as the library records it
 * after the call returned more than nothing.  The call is made here, on
 * the caller's own open files, its data read from its memory, and the
 * claim journaled only if it succeeded.
 *
 * Made as the caller would: what the kernel would signal it (SIGPIPE with
 * EPIPE) is its own: such a call, which sent nothing, goes on to the
 * kernel, which signals it.  A Unix socket's receiver may be told who
 * sent (SO_PASSCRED, SO_PASSPIDFD): the caller's credentials go with the
 * data here (SCM_CREDENTIALS: only root may give another process's), else
 * it goes on to the kernel.  So does a message with control data of its
 * own (descriptors passed), or sent to a Unix socket by its path (which
 * would be resolved here): whether those went cannot be seen, and the run
 * is unknown, said.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "crash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_SENT (16 << 20) /* bytes a call made here; a larger one is unknown */
#define MAX_MSGS 1024       /* sendmmsg's vlen the kernel takes (UIO_MAXIOV) */

/* The claim, journaled, once n > 0 went to the pipe or socket st. */
static void went(struct call *c, const struct stat *st, long n)
{
	struct ct_record h = {.kind = CT_CLAIM, .dev = st->st_dev, .ino = st->st_ino};

	if (n > 0)
		crash_record(c->req->pid, &h, NULL, 0);
}

/* The answer: n, an error the kernel gave here, or (EPIPE, nothing sent)
 * the kernel's own call, which signals the caller SIGPIPE. */
static int answered(struct call *c, long n)
{
	if (n == -EPIPE)
		return CONTINUE;
	if (n < 0)
		return reply_error(c, (int)-n);
	c->resp->val = n;
	return 0;
}

/* What cannot be followed from here: the kernel's, the run unknown. */
static int unseen(struct call *c, const struct stat *st, const char *what)
{
	char why[256];

	snprintf(why, sizeof(why), "%s, by a program crashtest's supervisor follows: whether it "
		 "went cannot be seen", what);
	crash_note(c->req->pid, CT_UNKNOWN, st, why);
	return CONTINUE;
}

/* The caller's buffers iov[0..n) copied here into *out (to free): their
 * total, or -1 when they cannot be read whole (the kernel's own EFAULT, or
 * memory only it reaches), -2 past MAX_SENT. */
static ssize_t their_bytes(const struct call *c, const struct iovec *iov, int n, char **out)
{
	size_t total = 0;
	struct iovec local;
	ssize_t got;

	*out = NULL;
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > MAX_SENT - total)
			return -2;
		total += iov[i].iov_len;
	}
	if (!(*out = malloc(total ? total : 1)))
		return -1;
	local = (struct iovec){*out, total};
	got = total ? process_vm_readv(c->req->pid, &local, 1, iov, (unsigned long)n, 0) : 0;
	if (got == (ssize_t)total)
		return got;
	free(*out);
	*out = NULL;
	return -1;
}

#define NOT_AS_CALLER (-EPERM - 4096) /* a Unix socket's send, not made here as the caller */

static int unix_socket(int fd)
{
	int domain = 0;
	socklen_t len = sizeof(domain);

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_UNIX;
}

/* sendmsg of m on fd here, as the caller: on a Unix socket, with its
 * credentials (pid, user, group), which the receiver may be told; n, or
 * -errno, or NOT_AS_CALLER where this process may not give them. */
static long sent_as(const struct call *c, int fd, struct msghdr *m, int flags)
{
	char ctl[CMSG_SPACE(sizeof(struct ucred))] = {0};
	struct ucred u = {caller_pid(c->req->pid), getuid(), getgid()};
	struct cmsghdr *h;
	long n;

	if (unix_socket(fd)) {
		if (u.pid <= 0)
			return NOT_AS_CALLER;
		m->msg_control = ctl;
		m->msg_controllen = sizeof(ctl);
		h = CMSG_FIRSTHDR(m);
		*h = (struct cmsghdr){.cmsg_len = CMSG_LEN(sizeof(u)), .cmsg_level = SOL_SOCKET,
				      .cmsg_type = SCM_CREDENTIALS};
		memcpy(CMSG_DATA(h), &u, sizeof(u));
	}
	n = sendmsg(fd, m, flags | MSG_NOSIGNAL);
	if (n < 0 && errno == EPERM && m->msg_control)
		return NOT_AS_CALLER; /* another's pid: CAP_SYS_ADMIN's */
	return n < 0 ? -errno : n;
}

/* May a call be made here for the caller: its rights this process's, and
 * no signal able to make it ask again for what was sent (supervisor.h). */
static int may_send(struct call *c, const struct stat *st)
{
	if (!waits_killably() || !same_rights(c->req->pid, NULL)) {
		unseen(c, st, "a send by a program of other rights");
		return 0;
	}
	return 1;
}

/* The caller's buffers could not be read whole (their_bytes' r): its own
 * call fails (EFAULT, nothing told), unless they are memory only it
 * reaches, or too much for this process to hold. */
static int unread(struct call *c, const struct stat *st, const struct iovec *iov, int n, long r)
{
	if (r == -2)
		return unseen(c, st, "a send of more than 16 MiB");
	if (caller_unreachable(c, iov, n, 0))
		return unseen(c, st, "a send from memory only the program reaches");
	return CONTINUE;
}

/* buf, n bytes, sent or written on the caller's descriptor num (a pipe or
 * a socket: quiet to hold), as its own write or send with `flags` would:
 * n sent, -errno, NOT_AS_CALLER, or -EBADF when num could not be held. */
static long put(struct call *c, int num, char *buf, size_t n, int rwf, int flags,
		const struct sockaddr_storage *to, socklen_t to_len)
{
	struct iovec v = {buf, n};
	struct msghdr m = {.msg_name = (void *)to, .msg_namelen = to ? to_len : 0, .msg_iov = &v,
			   .msg_iovlen = 1};
	int fd = their_fd(c, num, NULL);
	long r;

	if (fd < 0)
		return -EBADF;
	if (unix_socket(fd) || to || flags)
		r = rwf ? NOT_AS_CALLER : sent_as(c, fd, &m, flags);
	else
		r = pwritev2(fd, &v, 1, -1, rwf) < 0 ? -errno : (long)n; /* a pipe's or socket's */
	close(fd);
	return r;
}

/* The result of a call made here: claimed once it went, answered. */
static int made(struct call *c, const struct stat *st, long n, const char *what)
{
	if (n == NOT_AS_CALLER || n == -EBADF)
		return unseen(c, st, what);
	went(c, st, n);
	return answered(c, n);
}

int crash_claim_write(struct call *c, const struct emd_change *r, int num, const struct stat *st)
{
	struct iovec iov[THEIR_IOV_MAX];
	int cnt = r->vec ? (int)call_arg(c, 2) : 1, rwf = r->flags >= 0 ? (int)call_arg(c, r->flags) : 0;
	long long pos = r->pos >= 0 ? call_arg64(c, r->pos) : -1;
	char *buf;
	long n;

	/* at an offset (pwrite): the kernel's ESPIPE, nothing told */
	if (pos != -1 || !may_send(c, st))
		return CONTINUE;
	if (!r->vec)
		iov[0] = (struct iovec){(void *)call_arg(c, 1), (size_t)call_arg(c, 2)};
	else if (cnt < 0 || cnt > THEIR_IOV_MAX || their_iovecs(c, call_arg(c, 1), iov, cnt) != 0)
		return CONTINUE; /* EINVAL, EFAULT: the kernel's */
	if ((n = their_bytes(c, iov, cnt, &buf)) < 0)
		return unread(c, st, iov, cnt, n);
	crash_claims(c->req->pid);
	n = put(c, num, buf, (size_t)n, rwf, 0, NULL, 0);
	free(buf);
	return made(c, st, n, "a write to a pipe or a socket");
}

/* An address the caller gives (at, of len bytes): 1 read into *to, 0 none
 * (at 0), -1 the kernel's to refuse (EINVAL, EFAULT), -2 a Unix socket's
 * path, which would be resolved here (this process's root and working
 * directory), not where the caller is. */
static int their_address(const struct call *c, unsigned long at, socklen_t len,
			 struct sockaddr_storage *to)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)to;

	if (!at)
		return 0;
	memset(to, 0, sizeof(*to));
	if (len > sizeof(*to) || read_theirs(c->req->pid, at, to, len, 0) != 0)
		return -1;
	if (to->ss_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
	    un->sun_path[0])
		return -2;
	return 1;
}

/* One message of the caller's (struct msghdr at `at`), sent here: n, or
 * -errno, NOT_AS_CALLER, -EBADF; TOLD_ELSEWHERE when it cannot be made here
 * (control data, a Unix socket's path, memory only the caller reaches);
 * KERNELS when the kernel is to refuse it (its buffers or the message
 * unreadable: EFAULT, EINVAL). */
#define TOLD_ELSEWHERE (-EPERM - 8192)
#define KERNELS (-EFAULT - 8192)
static long one_message(struct call *c, int num, unsigned long at, int flags)
{
	struct iovec iov[THEIR_IOV_MAX];
	struct sockaddr_storage to;
	struct msghdr m;
	char *buf;
	long n;
	int has_to;

	if (read_theirs(c->req->pid, at, &m, sizeof(m), 0) != 0 || m.msg_iovlen > THEIR_IOV_MAX)
		return KERNELS;
	if (m.msg_controllen)
		return TOLD_ELSEWHERE; /* descriptors, credentials passed: not made here */
	has_to = their_address(c, (unsigned long)m.msg_name, m.msg_namelen, &to);
	if (has_to == -2)
		return TOLD_ELSEWHERE;
	if (has_to < 0 || their_iovecs(c, (unsigned long)m.msg_iov, iov, (int)m.msg_iovlen) != 0)
		return KERNELS;
	if ((n = their_bytes(c, iov, (int)m.msg_iovlen, &buf)) < 0)
		return n == -2 || caller_unreachable(c, iov, (int)m.msg_iovlen, 0) ? TOLD_ELSEWHERE
										 : KERNELS;
	n = put(c, num, buf, (size_t)n, 0, flags, has_to ? &to : NULL, m.msg_namelen);
	free(buf);
	return n;
}

/* The count a sendmmsg sent of message `at` written back in the caller's
 * memory (its msg_len), as the kernel writes it; 0 if it cannot be. */
static int count_back(const struct call *c, unsigned long at, unsigned n)
{
	struct iovec remote = {(void *)(at + offsetof(struct mmsghdr, msg_len)), sizeof(n)};
	size_t room;
	int mem = caller_mem(c, &remote, 1, &room), ok;

	if (mem < 0)
		return 0;
	ok = room == sizeof(n) && write_mem(mem, (const char *)&n, sizeof(n), &remote, 1) ==
					  (ssize_t)sizeof(n);
	close(mem);
	return ok;
}

/* sendmmsg: message after message, as the kernel sends them, stopping at
 * the first that fails (or cannot be made here: the count so far, which a
 * program sends the rest after, as after EAGAIN). */
static int claim_sendmmsg(struct call *c, int num, const struct stat *st)
{
	unsigned long at = call_arg(c, 1);
	unsigned vlen = (unsigned)call_arg(c, 2), i;
	long n = 0;

	for (i = 0; i < vlen && i < MAX_MSGS; i++) {
		n = one_message(c, num, at + i * sizeof(struct mmsghdr), (int)call_arg(c, 3));
		if (n < 0 || !count_back(c, at + i * sizeof(struct mmsghdr), (unsigned)n))
			break;
	}
	if (i == 0 && n == KERNELS)
		return CONTINUE;
	if (i == 0 && (n == TOLD_ELSEWHERE || n == NOT_AS_CALLER || n == -EBADF))
		return unseen(c, st, "a message with control data, or to a Unix socket by its path");
	return made(c, st, i ? (long)i : n, "a send");
}

int crash_claim_send(struct call *c, const struct emd_change *r, int num, const struct stat *st)
{
	struct sockaddr_storage to;
	struct iovec v = {(void *)call_arg(c, 1), (size_t)call_arg(c, 2)};
	int has_to;
	char *buf;
	long n;

	if (!may_send(c, st))
		return CONTINUE;
	crash_claims(c->req->pid);
	if (r->nr == SYS_sendmmsg)
		return claim_sendmmsg(c, num, st);
	if (r->nr == SYS_sendmsg) {
		n = one_message(c, num, call_arg(c, 1), (int)call_arg(c, 2));
		return n == KERNELS ? CONTINUE : n == TOLD_ELSEWHERE ? unseen(c, st, "a message with "
			"control data, or to a Unix socket by its path") : made(c, st, n, "a send");
	}
	if ((has_to = their_address(c, call_arg(c, 4), (socklen_t)call_arg(c, 5), &to)) == -2)
		return unseen(c, st, "a send to a Unix socket by its path");
	if (has_to < 0)
		return CONTINUE;
	if ((n = their_bytes(c, &v, 1, &buf)) < 0)
		return unread(c, st, &v, 1, n);
	n = put(c, num, buf, (size_t)n, 0, (int)call_arg(c, 3), has_to ? &to : NULL,
		(socklen_t)call_arg(c, 5));
	free(buf);
	return made(c, st, n, "a send");
}

/* vmsplice into a pipe (from its end open for reading, it reads: no
 * claim, the kernel's): the caller's pages written into it here. */
int crash_claim_vmsplice(struct call *c, int num, const struct stat *st)
{
	struct iovec iov[THEIR_IOV_MAX];
	int cnt = (int)call_arg(c, 2), flags = their_open_flags(c, num);
	char *buf;
	long n;

	if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY || !may_send(c, st))
		return CONTINUE;
	if (cnt < 0 || cnt > THEIR_IOV_MAX || their_iovecs(c, call_arg(c, 1), iov, cnt) != 0)
		return CONTINUE;
	if ((n = their_bytes(c, iov, cnt, &buf)) < 0)
		return unread(c, st, iov, cnt, n);
	crash_claims(c->req->pid);
	n = put(c, num, buf, (size_t)n, (call_arg(c, 3) & SPLICE_F_NONBLOCK) ? RWF_NOWAIT : 0, 0,
		NULL, 0);
	free(buf);
	return made(c, st, n, "a vmsplice");
}

/* An offset the caller passes by address (0: none), read into *off: 0, or
 * -1 the kernel's EFAULT. */
static int their_offset(const struct call *c, unsigned long at, loff_t *off)
{
	return at && read_theirs(c->req->pid, at, off, sizeof(*off), 0) != 0 ? -1 : 0;
}

/* ... and written back, as the kernel does after the copy: 0, or -EFAULT. */
static long offset_back(const struct call *c, unsigned long at, loff_t off, long n)
{
	struct iovec remote = {(void *)at, sizeof(off)};
	size_t room;
	int mem, ok;

	if (!at)
		return n;
	if ((mem = caller_mem(c, &remote, 1, &room)) < 0)
		return -EFAULT;
	ok = room == sizeof(off) &&
	     write_mem(mem, (const char *)&off, sizeof(off), &remote, 1) == (ssize_t)sizeof(off);
	close(mem);
	return ok ? n : -EFAULT;
}

/* The copy made on in and out, here: splice, tee or sendfile, with the
 * caller's arguments but its descriptors and offsets these. */
static long copied_here(const struct call *c, long nr, int in, int out, loff_t *off_in,
			loff_t *off_out)
{
	long n;

	if (nr == SYS_tee)
		n = tee(in, out, (size_t)call_arg(c, 2), (unsigned)call_arg(c, 3));
	else if (nr == SYS_sendfile)
		n = sendfile(out, in, off_in, (size_t)call_arg(c, 3));
	else
		n = splice(in, off_in, out, off_out, (size_t)call_arg(c, 4), (unsigned)call_arg(c, 5));
	return n < 0 ? -errno : n;
}

int crash_claim_copy(struct call *c, const struct emd_change *r, int out_num, const struct stat *st)
{
	int sf = r->nr == SYS_sendfile, tee_ = r->nr == SYS_tee, in, out;
	unsigned long at_in = tee_ ? 0 : call_arg(c, sf ? 2 : 1), at_out = sf || tee_ ? 0 : call_arg(c, 3);
	loff_t off_in = 0, off_out = 0;
	long n;

	if (!may_send(c, st))
		return CONTINUE;
	if (their_offset(c, at_in, &off_in) || their_offset(c, at_out, &off_out))
		return CONTINUE; /* the kernel's EFAULT */
	in = their_fd(c, (int)call_arg(c, sf ? 1 : 0), NULL);
	out = their_fd(c, out_num, NULL);
	n = in < 0 || out < 0 || (unix_socket(out) && r->nr != SYS_tee) ? NOT_AS_CALLER : 0;
	if (!n) {
		crash_claims(c->req->pid);
		n = copied_here(c, r->nr, in, out, at_in ? &off_in : NULL, at_out ? &off_out : NULL);
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (n >= 0)
		n = offset_back(c, at_in, off_in, offset_back(c, at_out, off_out, n));
	return made(c, st, n, "a copy into a pipe or a socket (splice, tee, sendfile)");
}
