/* SPDX-License-Identifier: MIT */
/* uring-fsyncs.c -- N IORING_OP_FSYNC through liburing, each after a
 * write, each waited for: the io_uring row of the supervised syncstat
 * tests (built dynamic and static); with "libc", N fsyncs through libc as
 * well (a dynamic program under the filter, whose libc calls the library
 * sees too: counted once).  Usage: uring-fsyncs FILE N [libc] */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int n = argc > 2 ? atoi(argv[2]) : 0, fd;

	if (argc < 3 || (fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644)) < 0 ||
	    io_uring_queue_init(4, &ring, 0) != 0)
		return 2;
	for (int i = 0; i < n; i++) {
		if (write(fd, "record\n", 7) != 7)
			return 1;
		io_uring_prep_fsync(io_uring_get_sqe(&ring), fd, 0);
		if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe) != 0 || cqe->res)
			return 1;
		io_uring_cqe_seen(&ring, cqe);
		if (argc > 3 && fsync(fd) != 0)
			return 1;
	}
	printf("ok\n");
	return 0;
}
