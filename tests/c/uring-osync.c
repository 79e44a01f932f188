/* SPDX-License-Identifier: MIT */
/* uring-osync.c -- io_uring writes (liburing) on a file opened with
 * O_DSYNC: three writes without flags of their own (write, writev, and
 * write on a copy of the descriptor), each of which the kernel syncs,
 * since the flag is the open file's.  Usage: uring-osync FILE */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096] = "data";
	struct iovec iov = {buf, sizeof(buf)};
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int fd, bad = 0;

	if (argc != 2 || io_uring_queue_init(4, &ring, 0) != 0 ||
	    (fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_DSYNC, 0644)) < 0)
		return 2;
	for (int i = 0; i < 3; i++) {
		sqe = io_uring_get_sqe(&ring);
		if (i == 1)
			io_uring_prep_writev(sqe, fd, &iov, 1, 4096 * i);
		else
			io_uring_prep_write(sqe, i == 2 ? dup(fd) : fd, buf, sizeof(buf), 4096 * i);
		io_uring_submit(&ring);
		if (io_uring_wait_cqe(&ring, &cqe) != 0)
			return 1;
		bad |= cqe->res != sizeof(buf);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return bad;
}
