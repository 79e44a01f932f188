/* SPDX-License-Identifier: MIT */
/* uring-rings.c -- two io_uring rings: A registered (io_uring_register_ring_fd)
 * and its descriptor closed, B an ordinary one with an fsync of argv[1]
 * published but not yet submitted.  A NOP is submitted on A through its
 * registered index: B's SQE must stay as the program wrote it.  Then B is
 * submitted and its fsync completes.  Prints what it saw. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct io_uring a, b;
	struct io_uring_sqe *sqe, *pending;
	struct io_uring_cqe *cqe;
	int fd = argc > 1 ? open(argv[1], O_WRONLY | O_CREAT, 0600) : -1;

	if (fd < 0 || io_uring_queue_init(8, &a, 0) || io_uring_queue_init(8, &b, 0) ||
	    io_uring_register_ring_fd(&a) != 1)
		return perror("setup"), 1;
	close(a.ring_fd);
	pending = io_uring_get_sqe(&b);
	io_uring_prep_fsync(pending, fd, 0);
	io_uring_smp_store_release(b.sq.ktail, b.sq.sqe_tail);
	sqe = io_uring_get_sqe(&a);
	io_uring_prep_nop(sqe);
	if (io_uring_submit_and_wait(&a, 1) != 1 || io_uring_wait_cqe(&a, &cqe))
		return perror("submit A"), 1;
	printf("B's SQE %s\n", pending->opcode == IORING_OP_FSYNC ? "untouched" : "rewritten");
	if (io_uring_submit_and_wait(&b, 1) < 0 || io_uring_wait_cqe(&b, &cqe))
		return perror("submit B"), 1;
	printf("B's fsync %s\n", cqe->res == 0 ? "ok" : strerror(-cqe->res));
	return 0;
}
