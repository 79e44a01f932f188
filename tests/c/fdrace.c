/* SPDX-License-Identifier: MIT */
/* fdrace.c -- threads that open, sync and close files as fast as they can,
 * so that descriptor numbers change hands between threads all the time:
 * each file is synced exactly once, so a record that named a number's
 * earlier file would show one file twice and another never.  A third of
 * the closes are close_range's.
 * Usage: fdrace DIR THREADS FILES_PER_THREAD */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *dir;
static int per;

static void *worker(void *arg)
{
	long t = (long)arg;
	char name[4200];

	for (int i = 0; i < per; i++) {
		int fd;

		snprintf(name, sizeof(name), "%s/t%ld-%d", dir, t, i);
		if ((fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0 || write(fd, "x", 1) != 1 ||
		    fsync(fd) != 0)
			exit(2);
		if (i % 3 == 1)
			close_range((unsigned)fd, (unsigned)fd, 0);
		else
			close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[2]) : 0;
	pthread_t th[64];

	if (argc != 4 || n < 1 || n > 64)
		return 1;
	dir = argv[1];
	per = atoi(argv[3]);
	for (long t = 0; t < n; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t) != 0)
			return 3;
	for (int t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	return 0;
}
