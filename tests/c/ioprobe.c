/* SPDX-License-Identifier: MIT */
/* ioprobe.c -- the reads and writes nocache wraps, against every kind of
 * descriptor and argument: one line each with the result and errno.
 * tests/py/test_nocache.py wants the same lines natively and under nocache.
 * Usage: ioprobe DIR
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define CANARY 4242

/* Bad arguments the compiler must not see through. */
static void *volatile bad_ptr = (void *)8;
static volatile int bad_count = -1;

static void report(const char *call, const char *kind, long r)
{
	if (r < 0)
		printf("%s %s: -1 %s\n", call, kind, strerrorname_np(errno));
	else
		printf("%s %s: %ld%s\n", call, kind, r,
		       errno == CANARY ? "" : " errno-changed");
	errno = CANARY;
}

static void calls(const char *kind, int fd)
{
	char buf[100];
	struct iovec iov = {buf, sizeof(buf)}, bad = {bad_ptr, 10};
	off64_t off = 0;
	off_t soff = 0; /* sendfile's own off_t: 32 bits in a 32-bit build */

	errno = CANARY;
	report("read", kind, read(fd, buf, sizeof(buf)));
	report("read-badbuf", kind, read(fd, bad_ptr, 10));
	report("pread", kind, pread(fd, buf, 10, 5));
	report("pread-neg", kind, pread(fd, buf, 10, -1));
	report("readv", kind, readv(fd, &iov, 1));
	report("readv-bad", kind, readv(fd, &bad, 1));
	report("readv-badcnt", kind, readv(fd, &iov, bad_count));
	report("preadv", kind, preadv(fd, &iov, 1, 3));
	report("preadv2", kind, preadv2(fd, &iov, 1, -1, 0));
	report("preadv2-badflag", kind, preadv2(fd, &iov, 1, 0, 0x40000));
	report("write", kind, write(fd, "hello", 5));
	report("write-big", kind, write(fd, calloc(1, 1 << 17), 1 << 17));
	report("pwrite", kind, pwrite(fd, "hello", 5, 2));
	report("pwrite-neg", kind, pwrite(fd, "hello", 5, -2));
	report("writev", kind, writev(fd, &iov, 1));
	report("writev-bad", kind, writev(fd, &bad, 1));
	report("pwritev2", kind, pwritev2(fd, &iov, 1, 0, RWF_DSYNC));
	report("sendfile", kind, sendfile(fd, fd, &soff, 10));
	report("copy_file_range", kind, copy_file_range(fd, NULL, fd, &off, 10, 0));
}

int main(int argc, char **argv)
{
	char path[4200];
	int p[2], s[2];

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/f", argv[1]);
	/* Non-blocking: a read of an empty pipe answers EAGAIN. */
	if (pipe2(p, O_NONBLOCK) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s))
		return 2;
	if (write(p[1], "pipe data", 9) != 9 || write(s[1], "sock data", 9) != 9)
		return 2;
	calls("file", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
	calls("file-ro", open(path, O_RDONLY));
	calls("file-append", open(path, O_WRONLY | O_APPEND));
	calls("dir", open(argv[1], O_RDONLY | O_DIRECTORY));
	calls("pipe-r", p[0]);
	calls("pipe-w", p[1]);
	calls("socket", s[0]);
	calls("dev-null", open("/dev/null", O_RDWR));
	calls("closed", 1000);
	calls("negative", -1);
	errno = CANARY;
	report("close", "closed", close(1000));
	report("close", "pipe", close(p[0]));
	report("dup2", "bad", dup2(1000, 5));
	report("dup3", "same", dup3(s[0], s[0], 0));
	return 0;
}
