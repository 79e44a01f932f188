/* SPDX-License-Identifier: MIT */
/* rw.c -- a plain reader or writer, for nocache through the supervisor
 * (built static: tests/py/test_nocache_supervised.py): read FILE whole in
 * 64 KiB reads, or write MIB MiB to it in 64 KiB writes (pwrite with -p,
 * readv/writev with -v, preadv/pwritev with -P).
 * Usage: rw read|write [-p|-v|-P] FILE [MIB] */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static char buf[65536];

static ssize_t io(int w, const char *how, int fd, off_t at)
{
	struct iovec v[2] = {{buf, sizeof(buf) / 2}, {buf + sizeof(buf) / 2, sizeof(buf) / 2}};

	if (!strcmp(how, "-p"))
		return w ? pwrite(fd, buf, sizeof(buf), at) : pread(fd, buf, sizeof(buf), at);
	if (!strcmp(how, "-v"))
		return w ? writev(fd, v, 2) : readv(fd, v, 2);
	if (!strcmp(how, "-P"))
		return w ? pwritev(fd, v, 2, at) : preadv(fd, v, 2, at);
	return w ? write(fd, buf, sizeof(buf)) : read(fd, buf, sizeof(buf));
}

int main(int argc, char **argv)
{
	int w = argc > 2 && !strcmp(argv[1], "write"), plain = argc > 2 && argv[2][0] != '-';
	const char *how = plain ? "" : argv[2], *file = argv[plain ? 2 : 3];
	long mib = argc > (plain ? 3 : 4) ? atol(argv[plain ? 3 : 4]) : 0;
	int fd = open(file, w ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY, 0644);
	off_t at = 0;
	ssize_t n;

	if (fd < 0)
		return 2;
	memset(buf, 'x', sizeof(buf));
	if (w) {
		for (long i = 0; i < mib * 16; i++, at += n)
			if ((n = io(1, how, fd, at)) != (ssize_t)sizeof(buf))
				return 1;
	} else {
		while ((n = io(0, how, fd, at)) > 0)
			at += n;
		if (n < 0)
			return 1;
	}
	printf("%lld\n", (long long)at);
	return close(fd) != 0;
}
