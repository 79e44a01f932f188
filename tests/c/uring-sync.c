/* SPDX-License-Identifier: MIT */
/* uring-sync.c -- durability through io_uring (liburing, plain rings): a
 * write with RWF_DSYNC, an fsync, a sync_file_range and an O_SYNC openat,
 * each printed with its completion.  Usage: uring-sync [-s] DIR
 * -s: a ring the kernel polls itself (IORING_SETUP_SQPOLL). */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int complete(struct io_uring *ring, int n)
{
	struct io_uring_cqe *cqe;
	int bad = 0;

	io_uring_submit(ring);
	for (int i = 0; i < n; i++) {
		if (io_uring_wait_cqe(ring, &cqe) != 0)
			return 1;
		printf("%llu:%d\n", (unsigned long long)cqe->user_data, cqe->res > 0 ? 1 : cqe->res);
		bad |= cqe->res < 0;
		io_uring_cqe_seen(ring, cqe);
	}
	return bad;
}

int main(int argc, char **argv)
{
	static char buf[8192];
	struct iovec iov = {buf, sizeof(buf)};
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	char path[4096];
	int fd, bad;

	unsigned setup = argc == 3 && !strcmp(argv[1], "-s") ? IORING_SETUP_SQPOLL : 0;

	argv += argc == 3;
	if ((argc != 2 && !setup) || io_uring_queue_init(8, &ring, setup) != 0)
		return 2;
	snprintf(path, sizeof(path), "%s/data", argv[1]);
	if ((fd = open(path, O_RDWR | O_CREAT, 0644)) < 0)
		return 2;
	memset(buf, 'u', sizeof(buf));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_writev(sqe, fd, &iov, 1, 0);
	sqe->rw_flags = RWF_DSYNC;
	sqe->user_data = 1;
	bad = complete(&ring, 1);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, fd, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 2;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	sqe->user_data = 3;
	bad |= complete(&ring, 2);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, fd, buf, sizeof(buf), 8192);
	sqe->user_data = 4;
	bad |= complete(&ring, 1);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_sync_file_range(sqe, fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
				      SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
	sqe->user_data = 5;
	bad |= complete(&ring, 1);
	snprintf(path, sizeof(path), "%s/osync", argv[1]);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, path, O_WRONLY | O_CREAT | O_SYNC, 0644);
	sqe->user_data = 6;
	bad |= complete(&ring, 1);
	io_uring_queue_exit(&ring);
	return bad;
}
