/* SPDX-License-Identifier: MIT */
/* aio-submit.c -- Linux native AIO, as libaio's io_prep_fsync,
 * io_prep_fdsync and a write with RWF_DSYNC make it, through raw io_submit:
 * each printed with its completion, and an fsync of a pipe (EINVAL) and of
 * a descriptor open for writing only.  Usage: aio-submit DIR */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static aio_context_t ctx;

/* Submit one control block and print its completion. */
static int one(struct iocb *cb, int id)
{
	struct iocb *list[] = {cb};
	struct io_event ev;
	long r;

	cb->aio_data = (unsigned)id;
	r = syscall(SYS_io_submit, ctx, 1, list);
	if (r != 1) {
		printf("%d: submit %ld\n", id, r);
		return 0;
	}
	if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
		return 1;
	printf("%d: %lld\n", id, (long long)ev.res);
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[8192];
	char path[4096];
	int fd, wo, pipes[2], bad = 0;
	struct iocb cb;

	if (argc != 2 || syscall(SYS_io_setup, 8, &ctx) != 0 || pipe(pipes) != 0)
		return 2;
	snprintf(path, sizeof(path), "%s/aio", argv[1]);
	if ((fd = open(path, O_RDWR | O_CREAT, 0644)) < 0 || (wo = open(path, O_WRONLY)) < 0)
		return 2;
	memset(buf, 'a', sizeof(buf));
	cb = (struct iocb){.aio_lio_opcode = IOCB_CMD_PWRITE, .aio_fildes = fd,
			   .aio_buf = (unsigned long)buf, .aio_nbytes = sizeof(buf),
			   .aio_rw_flags = RWF_DSYNC};
	bad |= one(&cb, 1);
	if (write(fd, buf, sizeof(buf)) != sizeof(buf))
		return 2;
	bad |= one(&(struct iocb){.aio_lio_opcode = IOCB_CMD_FSYNC, .aio_fildes = fd}, 2);
	if (write(wo, buf, sizeof(buf)) != sizeof(buf))
		return 2;
	bad |= one(&(struct iocb){.aio_lio_opcode = IOCB_CMD_FDSYNC, .aio_fildes = wo}, 3);
	bad |= one(&(struct iocb){.aio_lio_opcode = IOCB_CMD_FSYNC, .aio_fildes = pipes[1]}, 4);
	bad |= one(&(struct iocb){.aio_lio_opcode = IOCB_CMD_FSYNC, .aio_fildes = 999}, 5);
	syscall(SYS_io_destroy, ctx);
	return bad;
}
