/* SPDX-License-Identifier: MIT */
/* cancel.c -- are the sync calls still cancellation points?  A thread with a
 * cancellation pending calls CALL; it must be cancelled there.
 * Usage: cancel CALL FILE   (CALL: fsync, fdatasync or msync)
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *call;
static int fd;
static char *map;
static volatile int passed;

static void *worker(void *arg)
{
	pthread_barrier_t *b = arg;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_barrier_wait(b);
	pthread_barrier_wait(b); /* the cancellation is pending now */
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	if (!strcmp(call, "fsync"))
		fsync(fd);
	else if (!strcmp(call, "fdatasync"))
		fdatasync(fd);
	else
		msync(map, 4096, MS_SYNC);
	passed = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_barrier_t b;
	pthread_t t;
	void *res;

	if (argc != 3)
		return 2;
	call = argv[1];
	fd = open(argv[2], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096) != 0)
		return 2;
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	pthread_barrier_init(&b, NULL, 2);
	pthread_create(&t, NULL, worker, &b);
	pthread_barrier_wait(&b);
	pthread_cancel(t);
	pthread_barrier_wait(&b);
	pthread_join(t, &res);
	puts(res == PTHREAD_CANCELED && !passed ? "cancelled" : "not cancelled");
	return 0;
}
