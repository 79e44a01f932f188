/* SPDX-License-Identifier: MIT */
/* fsyncs.c -- N durability calls of one kind on one file, each after a
 * write, for the counts the kernel's tracepoints check (built dynamic,
 * static and 32-bit static: tests/py/test_syncstat_supervised.py).
 * Usage: fsyncs FILE N fsync|fdatasync|uring|aio [FILE...]
 * uring: N IORING_OP_FSYNC through a raw ring (no liburing, so the
 * static build needs nothing); aio: N IOCB_CMD_FSYNC through io_submit.
 * Each further FILE is opened once the one before is closed, at the same
 * descriptor number, and gets N more (tests/py/test_supervisor_behalf_attack.py:
 * a number reused for a file of another file system).
 * With FSYNCS_LOOP_NS set, the loop's own time, in ns, on stderr: a tool's
 * cost in the process, without its start and report (bench/). */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int by_aio(int fd)
{
	aio_context_t ctx = 0;
	struct iocb cb = {.aio_lio_opcode = IOCB_CMD_FSYNC, .aio_fildes = (unsigned)fd};
	struct iocb *list[] = {&cb};
	struct io_event ev;

	if (syscall(SYS_io_setup, 1, &ctx) || syscall(SYS_io_submit, ctx, 1, list) != 1 ||
	    syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1 || ev.res != 0)
		return -1;
	return (int)syscall(SYS_io_destroy, ctx);
}

/* One ring, kept: its SQ and CQ mapped once. */
static struct {
	int fd;
	unsigned *sq_tail, *sq_array, *cq_head, *cq_tail, mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
} ring = {.fd = -1};

static int ring_open(void)
{
	struct io_uring_params p;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	if ((ring.fd = (int)syscall(SYS_io_uring_setup, 4, &p)) < 0)
		return -1;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * 4, PROT_READ | PROT_WRITE, MAP_SHARED,
		  ring.fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED, ring.fd, IORING_OFF_CQ_RING);
	ring.sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
			 MAP_SHARED, ring.fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || ring.sqes == MAP_FAILED)
		return -1;
	ring.sq_tail = (unsigned *)(sq + p.sq_off.tail);
	ring.sq_array = (unsigned *)(sq + p.sq_off.array);
	ring.mask = *(unsigned *)(sq + p.sq_off.ring_mask);
	ring.cq_head = (unsigned *)(cq + p.cq_off.head);
	ring.cq_tail = (unsigned *)(cq + p.cq_off.tail);
	ring.cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

static int by_uring(int fd)
{
	unsigned tail, head;
	int res;

	if (ring.fd < 0 && ring_open() != 0)
		return -1;
	tail = *ring.sq_tail;
	memset(&ring.sqes[tail & ring.mask], 0, sizeof(struct io_uring_sqe));
	ring.sqes[tail & ring.mask].opcode = IORING_OP_FSYNC;
	ring.sqes[tail & ring.mask].fd = fd;
	ring.sq_array[tail & ring.mask] = tail & ring.mask;
	__atomic_store_n(ring.sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, ring.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) != 1)
		return -1;
	head = *ring.cq_head;
	if (head == __atomic_load_n(ring.cq_tail, __ATOMIC_ACQUIRE))
		return -1;
	res = ring.cqes[head & ring.mask].res;
	__atomic_store_n(ring.cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* n writes, each followed by a durability call of kind `how`: 0, or 1. */
static int calls(int fd, int n, const char *how)
{
	for (int i = 0; i < n; i++) {
		int r;

		if (write(fd, "record\n", 7) != 7)
			return 1;
		if (!strcmp(how, "fdatasync"))
			r = fdatasync(fd);
		else if (!strcmp(how, "uring"))
			r = by_uring(fd);
		else if (!strcmp(how, "aio"))
			r = by_aio(fd);
		else
			r = fsync(fd);
		if (r != 0) {
			perror(how);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0, fd = -1;
	const char *how = argc > 3 ? argv[3] : "fsync";
	struct timespec t0, t1;

	if (argc < 4)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 1; i < argc; i += i == 1 ? 3 : 1) {
		if ((fd >= 0 && close(fd) != 0) ||
		    (fd = open(argv[i], O_CREAT | O_WRONLY | O_TRUNC, 0644)) < 0)
			return 2;
		if (calls(fd, n, how))
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("FSYNCS_LOOP_NS"))
		fprintf(stderr, "%lld\n", (t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec);
	printf("ok\n");
	return 0;
}
