/* SPDX-License-Identifier: MIT */
/* uring.c -- io_uring submissions under eatmydata --seccomp: before the
 * kernel reads them, the pending SQEs that would sync are rewritten in the
 * caller's memory: IORING_OP_FSYNC and IORING_OP_SYNC_FILE_RANGE become
 * IORING_OP_NOP (completing with 0), writes lose RWF_SYNC and RWF_DSYNC,
 * IORING_OP_OPENAT loses O_SYNC and O_DSYNC.
 *
 * The ring's fdinfo names the pending SQEs (between the kernel's head and
 * the tail the caller has published) and the ring's inode, which finds its
 * SQE array in /proc/PID/maps.  A ring the kernel polls itself (SQPOLL)
 * never calls io_uring_enter to submit: --no-io-uring is for those.  A
 * ring entered through its registered index (IORING_ENTER_REGISTERED_RING)
 * is not rewritten: nothing outside the process maps that index to a ring.
 */
#include "common/common.h"
#include "supervisor.h"
#include "maps.h"

#include <fcntl.h>
#include <stddef.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define SQE_OFF_FLAGS 28 /* rw_flags, fsync_flags, open_flags... */
#define ENTER_REGISTERED_RING (1U << 4)

struct pending {
	unsigned long ino;
	unsigned idx[256];
	int n, stride;
};

/* The pending SQEs of ring `fd`, from its fdinfo. */
static int read_fdinfo(pid_t pid, int fd, struct pending *p)
{
	char path[64], line[512];
	unsigned idx;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	if (!(f = fopen(path, "re")))
		return -1;
	p->ino = 0;
	p->n = 0;
	p->stride = 64;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "ino: %lu", &p->ino);
		if (sscanf(line, " %u: opcode:", &idx) == 1 && strstr(line, "opcode:") &&
		    p->n < (int)(sizeof(p->idx) / sizeof(*p->idx))) {
			p->idx[p->n++] = idx;
			if (strstr(line, ", e0:"))
				p->stride = 128; /* IORING_SETUP_SQE128 */
		}
	}
	fclose(f);
	return p->ino ? 0 : -1;
}

struct ring_query {
	unsigned long ino, found;
};

static int is_sqe_array(const struct emd_map *m, void *arg)
{
	struct ring_query *q = arg;

	if (m->inode != q->ino || m->offset != IORING_OFF_SQES)
		return 0;
	q->found = m->lo;
	return 1;
}

/* Where the ring's SQE array is mapped in the caller. */
static unsigned long sqe_array(pid_t pid, unsigned long ino)
{
	struct ring_query q = {ino, 0};
	int fd = open_proc(pid, "maps");

	if (fd >= 0) {
		emd_maps_each(fd, is_sqe_array, &q);
		close(fd);
	}
	return q.found;
}

/* len bytes into the caller at addr, through its memory held open once
 * it is known to be the caller's (caller_mem): never into a process that
 * took the number since; only where the caller could write itself. */
static int poke(const struct call *c, unsigned long addr, const void *data, size_t len)
{
	struct iovec remote = {(void *)addr, len};
	size_t room;
	int mem = caller_mem(c, &remote, 1, &room), ok;

	if (mem < 0)
		return 0;
	ok = room == len && write_mem(mem, data, len, &remote, 1) == (ssize_t)len;
	close(mem);
	return ok;
}

/* Rewrite one SQE; returns 1 if it would have synced. */
static int rewrite(const struct call *c, unsigned long sqe)
{
	pid_t pid = c->req->pid;
	unsigned char head[32];
	struct iovec local = {head, sizeof(head)}, remote = {(void *)sqe, sizeof(head)};
	unsigned flags, zero = 0;
	unsigned char nop = IORING_OP_NOP;

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != sizeof(head))
		return 0;
	memcpy(&flags, head + SQE_OFF_FLAGS, sizeof(flags));
	switch (head[0]) {
	case IORING_OP_FSYNC:
	case IORING_OP_SYNC_FILE_RANGE:
		return poke(c, sqe + SQE_OFF_FLAGS, &zero, sizeof(zero)) &&
		       poke(c, sqe, &nop, 1);
	case IORING_OP_WRITEV:
	case IORING_OP_WRITE_FIXED:
	case IORING_OP_WRITE:
		flags &= ~(unsigned)EMD_RWF_SYNC_FLAGS;
		break;
	case IORING_OP_OPENAT:
		flags &= ~(unsigned)EMD_OPEN_SYNC_FLAGS;
		break;
	default:
		return 0;
	}
	return memcmp(&flags, head + SQE_OFF_FLAGS, sizeof(flags)) != 0 &&
	       poke(c, sqe + SQE_OFF_FLAGS, &flags, sizeof(flags));
}

int uring_each_sqe(struct call *c, int (*fn)(struct call *c, unsigned long sqe, void *arg),
		   void *arg)
{
	pid_t pid = c->req->pid;
	int fd = (int)call_arg(c, 0), r = 0;
	struct pending p;
	unsigned long base;

	/* A registered ring's index names no descriptor, and which ring it is
	 * cannot be seen from outside: the kernel runs its SQEs as they are. */
	if ((unsigned)call_arg(c, 3) & ENTER_REGISTERED_RING)
		return 0;
	if (fd < 0 || read_fdinfo(pid, fd, &p) != 0 || !(base = sqe_array(pid, p.ino)))
		return 0;
	/* Read and written by pid: only while the caller is still there to be
	 * it. */
	for (int i = 0; i < p.n && still_pending(c); i++)
		r |= fn(c, base + (unsigned long)p.idx[i] * p.stride, arg);
	return r;
}

static int rewrite_sqe(struct call *c, unsigned long sqe, void *arg)
{
	(void)arg;
	return rewrite(c, sqe);
}

int uring_submit(struct call *c)
{
	if (uring_each_sqe(c, rewrite_sqe, NULL))
		note(-1);
	return CONTINUE;
}

/* io_uring_setup of a ring the kernel would poll itself (SQPOLL): its
 * submissions would never come through io_uring_enter to be rewritten.
 * The ring is made one that is entered, as the caller's own parameters
 * then say (liburing reads them back and enters); its results are the
 * same, without the polling thread. */
int uring_setup(struct call *c)
{
	unsigned long at = call_arg(c, 1) + offsetof(struct io_uring_params, flags);
	unsigned flags;

	if (read_theirs(c->req->pid, at, &flags, sizeof(flags), 0) != 0 ||
	    !(flags & IORING_SETUP_SQPOLL))
		return CONTINUE;
	flags &= ~(unsigned)(IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF);
	poke(c, at, &flags, sizeof(flags));
	return CONTINUE;
}
