/* SPDX-License-Identifier: MIT */
/* rwflags.c -- preadv2 and pwritev2 as a static program makes them, for
 * nocache through the supervisor (built static, 64- and 32-bit:
 * tests/py/test_nocache_preadv2.py).  Each call is syscall(2)'s, so that the
 * offset's two words and the flags are exactly what is written here: a
 * 64-bit caller's pos_h is garbage (the kernel takes pos_l alone), a
 * 32-bit caller's the offset's high word.
 * Usage: rwflags read FILE | write FILE MIB | flags FILE KERNEL | append FILE
 *   read   FILE whole in 64 KiB preadv2 calls (two iovecs), by turns at the
 *          file position (-1) and at an explicit offset (the position then
 *          moved with lseek); prints the bytes read, their FNV-1a sum, and
 *          how many calls left the position elsewhere than the kernel's
 *          rule (-1: moved by what was read; an offset: unmoved)
 *   write  MIB MiB to FILE the same way with pwritev2, 64 KiB chunk k
 *          filled with 'a' + k % 26
 *   flags  one line per call (result, errno, position, sum of what was
 *          read): preadv2 of FILE with flags served (RWF_HIPRI, RWF_DSYNC,
 *          RWF_SYNC, RWF_DONTCACHE, a flag in a 64-bit register's upper
 *          half) and not (RWF_APPEND with RWF_NOAPPEND, RWF_ATOMIC, an
 *          unknown bit), at odd offsets (-2; the low word -1 alone);
 *          pwritev2 the same to FILE.w, with RWF_APPEND, RWF_NOAPPEND on an
 *          O_APPEND descriptor; on a pipe; and the calls whose pages are
 *          the kernel's (RWF_NOWAIT, RWF_NOSIGNAL) on KERNEL, not cached.
 *          Then FILE.w's size and sum.
 *   append pwritev2 of 8 KiB at offset 0 with RWF_APPEND (at the end of
 *          FILE: past RLIMIT_FSIZE, the test's, a short write); the size */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif
#ifndef RWF_NOSIGNAL
#define RWF_NOSIGNAL 0x00000100
#endif
#define RWF_UNKNOWN 0x00100000
#define CHUNK 65536

static char buf[CHUNK];
static volatile long upper_flag = (long)(sizeof(long) == 8 ? 1UL << (4 * sizeof(long)) : 0);

/* The syscall, the offset in pos_l and pos_h as the caller's ABI has them. */
static long v2(long nr, int fd, const struct iovec *v, int n, long long off, long flags)
{
	long hi = sizeof(long) == 8 ? 0x5a5a5a5aL : (long)((unsigned long long)off >> 32);

	return syscall(nr, fd, v, n, (long)off, hi, flags);
}

static uint64_t fnv(uint64_t h, const char *p, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
	return h;
}

/* Call k of a run: at the file position when k is even, else at `at`
 * (the position moved after, as read(2) would); a wrong position counted. */
static long step(long nr, int fd, long k, long long at, const struct iovec *v, long *wrong)
{
	long n = v2(nr, fd, v, 2, k % 2 ? at : -1, 0);

	if (n > 0 && lseek(fd, 0, SEEK_CUR) != (k % 2 ? at : at + n))
		++*wrong;
	if (n > 0 && k % 2 && lseek(fd, n, SEEK_CUR) < 0)
		++*wrong;
	return n;
}

static int read_all(const char *file)
{
	struct iovec v[2] = {{buf, CHUNK / 2}, {buf + CHUNK / 2, CHUNK / 2}};
	uint64_t sum = 0xcbf29ce484222325ULL;
	long long at = 0;
	long n, wrong = 0;
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return 2;
	for (long k = 0; (n = step(SYS_preadv2, fd, k, at, v, &wrong)) > 0; k++, at += n)
		sum = fnv(sum, buf, n);
	if (n < 0)
		return perror("preadv2"), 1;
	printf("read %lld sum %016llx wrong-pos %ld\n", at, (unsigned long long)sum, wrong);
	return 0;
}

static int write_all(const char *file, long mib)
{
	struct iovec v[2] = {{buf, CHUNK / 2}, {buf + CHUNK / 2, CHUNK / 2}};
	long long at = 0;
	long wrong = 0;
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return 2;
	for (long k = 0; k < mib * 16; k++, at += CHUNK) {
		memset(buf, 'a' + k % 26, CHUNK);
		if (step(SYS_pwritev2, fd, k, at, v, &wrong) != CHUNK)
			return perror("pwritev2"), 1;
	}
	printf("write %lld wrong-pos %ld\n", at, wrong);
	return close(fd) != 0;
}

/* One call's line: what it returned, errno, the position, what it read. */
static void say(const char *what, long r, int fd)
{
	int e = errno;

	printf("%s %ld %s pos %lld sum %016llx\n", what, r, r < 0 ? strerrorname_np(e) : "ok",
	       (long long)lseek(fd, 0, SEEK_CUR),
	       (unsigned long long)fnv(0xcbf29ce484222325ULL, buf, r > 0 ? r : 0));
	memset(buf, 0, sizeof(buf));
}

#define RD(what, fd, off, flags) say(what, v2(SYS_preadv2, fd, v, 2, off, flags), fd)
#define WR(what, fd, off, flags) say(what, v2(SYS_pwritev2, fd, v, 2, off, flags), fd)

static void reads(int fd, const struct iovec *v)
{
	RD("read-hipri", fd, -1, RWF_HIPRI);
	RD("read-sync-at", fd, 65536, RWF_DSYNC | RWF_SYNC);
	RD("read-dontcache", fd, -1, RWF_DONTCACHE);
	RD("read-upper-half", fd, -1, upper_flag);
	RD("read-both-append", fd, -1, RWF_APPEND | RWF_NOAPPEND);
	RD("read-atomic", fd, 0, RWF_ATOMIC);
	RD("read-unknown", fd, -1, RWF_UNKNOWN);
	RD("read-minus-2", fd, -2, 0);
	/* -1 natively; 4 GiB - 1 (past the end) for a 32-bit caller. */
	say("read-low-word", syscall(SYS_preadv2, fd, v, 2, -1L, 0L, 0L), fd);
}

static void writes(int fd, int app, const struct iovec *v)
{
	memset(buf, 'w', sizeof(buf));
	WR("write", fd, -1, 0);
	WR("write-at", fd, 100, RWF_DSYNC);
	WR("write-append-at", fd, 0, RWF_APPEND);
	WR("write-append", fd, -1, RWF_APPEND | RWF_SYNC);
	WR("write-both-append", fd, -1, RWF_APPEND | RWF_NOAPPEND);
	WR("write-atomic", fd, 0, RWF_ATOMIC);
	WR("write-unknown", fd, -1, RWF_UNKNOWN);
	WR("write-minus-4096", fd, -4096, 0);
	RD("read-write-only", app, 0, 0);
	WR("write-noappend-at", app, 4096, RWF_NOAPPEND);
	WR("write-noappend", app, -1, RWF_NOAPPEND);
	WR("write-o-append", app, -1, RWF_HIPRI);
}

static int flags(const char *file, const char *kernel)
{
	struct iovec v[2] = {{buf, 4096}, {buf + 4096, 4096}};
	char out[4096];
	int fd = open(file, O_RDONLY), k = open(kernel, O_RDWR), p[2], w, app;
	struct stat st;
	uint64_t sum = 0xcbf29ce484222325ULL;
	long n;

	snprintf(out, sizeof(out), "%s.w", file);
	w = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644);
	app = open(out, O_WRONLY | O_APPEND);
	if (fd < 0 || k < 0 || w < 0 || app < 0 || pipe(p) != 0)
		return 2;
	RD("kernel-read-nowait", k, -1, RWF_NOWAIT);
	WR("kernel-write-nosignal", k, 1 << 20, RWF_NOSIGNAL);
	WR("kernel-write-nowait", k, -1, RWF_NOWAIT);
	reads(fd, v);
	writes(w, app, v);
	WR("pipe-write", p[1], -1, 0);
	RD("pipe-read-at", p[0], 0, 0);
	RD("pipe-read", p[0], -1, 0);
	if (fstat(w, &st) != 0 || lseek(w, 0, SEEK_SET) != 0)
		return 2;
	while ((n = read(w, buf, sizeof(buf))) > 0)
		sum = fnv(sum, buf, n);
	printf("%s size %lld sum %016llx\n", "file.w", (long long)st.st_size,
	       (unsigned long long)sum);
	return 0;
}

static int append(const char *file)
{
	struct iovec v[2] = {{buf, 4096}, {buf + 4096, 4096}};
	struct stat st;
	int fd = open(file, O_WRONLY);

	if (fd < 0)
		return 2;
	memset(buf, 'l', sizeof(buf));
	WR("append-to-limit", fd, 0, RWF_APPEND);
	if (fstat(fd, &st) != 0)
		return 2;
	printf("size %lld\n", (long long)st.st_size);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "read"))
		return read_all(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "write"))
		return write_all(argv[2], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "flags"))
		return flags(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "append"))
		return append(argv[2]);
	fprintf(stderr, "usage: rwflags read FILE | write FILE MIB | flags FILE KERNEL | append FILE\n");
	return 2;
}
