/* SPDX-License-Identifier: MIT */
/* servedread.c -- reads that nocache's supervisor makes for a static
 * program (built static: tests/py/test_nocache_served_reads.py), where
 * read(2)'s own guarantees are easy to lose: the file position shared by
 * the readers of one open file, and the caller's memory as the kernel
 * writes it.
 * Usage: servedread CASE FILE, FILE made of 8-byte words, word i being i.
 *   threads  two threads read FILE to its end through one descriptor,
 *            12 KiB at a time
 *   hole     the same, one of them into a buffer whose second page is
 *            unmapped (each of its reads is short: 4096)
 *   fork     a parent and its child do the same through the descriptor
 *            they share
 *   rdonly   read(2) into a read-only page, then the file position
 *   pastend  read(2) into two pages, the second a writable shared mapping
 *            past its file's end (maps calls it writable; touching it
 *            faults), then the file position
 * The three first print "each word once" when every word was read exactly
 * once, each read a run of consecutive words (as natively); otherwise how
 * many were read twice, missed, or torn. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK 12288

static int fd;
static size_t nwords;
static unsigned char *seen; /* shared with a child: MAP_SHARED */
static unsigned long *torn;
static pthread_barrier_t start;

/* One read's words, counted; a read that is not a run of words is torn. */
static void count(const uint64_t *w, ssize_t got)
{
	if (got % 8 || w[0] >= nwords) {
		__atomic_add_fetch(torn, 1, __ATOMIC_RELAXED);
		return;
	}
	for (ssize_t k = 0; k < got / 8; k++)
		if (w[k] != w[0] + (uint64_t)k || w[k] >= nwords)
			__atomic_add_fetch(torn, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&seen[w[k]], 1, __ATOMIC_RELAXED);
}

/* Read fd to its end into buf, len bytes at a time. */
static void read_all(char *buf, size_t len)
{
	ssize_t got;

	while ((got = read(fd, buf, len)) > 0)
		count((const uint64_t *)buf, got);
	if (got < 0)
		__atomic_add_fetch(torn, 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	static char buf[CHUNK] __attribute__((aligned(8)));
	char *hole = arg;

	pthread_barrier_wait(&start);
	if (hole)
		read_all(hole, 8192);
	else
		read_all(buf, CHUNK);
	return NULL;
}

/* Two pages, the second unmapped. */
static char *half_mapped(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p + 4096, 4096);
	return p;
}

static int report(void)
{
	unsigned long twice = 0, missed = 0;

	for (size_t i = 0; i < nwords; i++) {
		twice += seen[i] > 1;
		missed += seen[i] == 0;
	}
	if (!twice && !missed && !*torn)
		return printf("each word once\n") < 0;
	printf("%lu words twice, %lu missed, %lu reads torn\n", twice, missed, *torn);
	return 0;
}

static int two_readers(int hole)
{
	pthread_t t[2];
	char *h = hole ? half_mapped() : NULL;
	static char mine[CHUNK] __attribute__((aligned(8)));

	pthread_barrier_init(&start, NULL, 2);
	if (pthread_create(&t[0], NULL, reader, h) != 0)
		return perror("pthread_create"), 1;
	pthread_barrier_wait(&start);
	read_all(mine, CHUNK);
	pthread_join(t[0], NULL);
	return report();
}

static int forked(void)
{
	static char buf[CHUNK] __attribute__((aligned(8)));
	pid_t child = fork();
	int status;

	if (child < 0)
		return perror("fork"), 1;
	read_all(buf, CHUNK);
	if (child == 0)
		_exit(0);
	waitpid(child, &status, 0);
	return report();
}

static int rdonly(void)
{
	char *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ssize_t r;

	errno = 0;
	r = read(fd, p, 4096);
	printf("read-rdonly %zd %s first %d pos %lld\n", r, r < 0 ? strerrorname_np(errno) : "ok",
	       p[0], (long long)lseek(fd, 0, SEEK_CUR));
	return 0;
}

static int pastend(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int empty = memfd_create("empty", MFD_CLOEXEC);
	ssize_t r;

	if (p == MAP_FAILED || empty < 0 ||
	    mmap(p + 4096, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, empty, 0) == MAP_FAILED)
		return perror("mmap"), 1;
	errno = 0;
	r = read(fd, p, 8192);
	printf("read-pastend %zd %s pos %lld\n", r, r < 0 ? strerrorname_np(errno) : "ok",
	       (long long)lseek(fd, 0, SEEK_CUR));
	return 0;
}

int main(int argc, char **argv)
{
	struct stat st;

	if (argc != 3 || (fd = open(argv[2], O_RDONLY)) < 0 || fstat(fd, &st) != 0)
		return 2;
	nwords = (size_t)st.st_size / 8;
	seen = mmap(NULL, nwords, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	torn = mmap(NULL, sizeof(*torn), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (seen == MAP_FAILED || torn == MAP_FAILED)
		return 2;
	if (!strcmp(argv[1], "threads"))
		return two_readers(0);
	if (!strcmp(argv[1], "hole"))
		return two_readers(1);
	if (!strcmp(argv[1], "fork"))
		return forked();
	if (!strcmp(argv[1], "rdonly"))
		return rdonly();
	if (!strcmp(argv[1], "pastend"))
		return pastend();
	return 2;
}
