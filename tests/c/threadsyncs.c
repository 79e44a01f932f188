/* SPDX-License-Identifier: MIT */
/* threadsyncs.c -- threads that each make a known number of fdatasyncs of
 * a file of their own, for syncstat's per-thread report (built dynamic and
 * static: tests/py/test_syncstat_threads.py).  Each thread says who it is
 * as the kernel names it (getpid, gettid), on a line of its own:
 * "NAME PID TID COUNT".
 * Usage: threadsyncs DIR N...  one thread per N, started together, each
 *                              making N fdatasyncs of DIR/tI
 *        threadsyncs DIR fork  the main thread syncs once; a thread syncs
 *                              twice, then forks: its child (one thread,
 *                              its tid its pid) syncs 3 times and starts a
 *                              thread that syncs 4 times; the main thread
 *                              then syncs once more
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;
static pthread_barrier_t together;

struct job {
	char name[16];
	int count;
	pthread_t thread;
};

/* `n` fdatasyncs of DIR/name, then the line that says who made them. */
static int syncs(const char *name, int n)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (write(fd, "x", 1) != 1 || fdatasync(fd) != 0)
			return -1;
	close(fd);
	printf("%s %d %ld %d\n", name, (int)getpid(), (long)syscall(SYS_gettid), n);
	fflush(stdout);
	return 0;
}

static void *counted(void *arg)
{
	struct job *j = arg;

	pthread_barrier_wait(&together);
	return (void *)(long)syncs(j->name, j->count);
}

/* One thread per count, all started before any syncs. */
static int threads(int n, char **counts)
{
	struct job *jobs = calloc((size_t)n, sizeof(*jobs));
	void *r;
	int bad = 0;

	if (!jobs || pthread_barrier_init(&together, NULL, (unsigned)n) != 0)
		return 2;
	for (int i = 0; i < n; i++) {
		snprintf(jobs[i].name, sizeof(jobs[i].name), "t%d", i);
		jobs[i].count = atoi(counts[i]);
		if (pthread_create(&jobs[i].thread, NULL, counted, &jobs[i]) != 0)
			return 2;
	}
	for (int i = 0; i < n; i++)
		bad |= pthread_join(jobs[i].thread, &r) != 0 || r != NULL;
	return bad;
}

static void *after(void *arg)
{
	(void)arg;
	return (void *)(long)syncs("after", 4);
}

/* Run in a thread that has synced (and so learnt who it is) before it
 * forks: the child's thread is a copy of it. */
static void *forking(void *arg)
{
	pthread_t t;
	void *r;
	int status;
	pid_t child;

	(void)arg;
	if (syncs("before", 2) != 0 || (child = fork()) < 0)
		return (void *)1L;
	if (child == 0) {
		if (syncs("child", 3) != 0 || pthread_create(&t, NULL, after, NULL) != 0 ||
		    pthread_join(t, &r) != 0 || r != NULL)
			_exit(1);
		_exit(0);
	}
	if (waitpid(child, &status, 0) != child || status != 0)
		return (void *)1L;
	return NULL;
}

static int forked(void)
{
	pthread_t t;
	void *r;

	if (syncs("main", 1) != 0 || pthread_create(&t, NULL, forking, NULL) != 0 ||
	    pthread_join(t, &r) != 0 || r != NULL)
		return 1;
	return syncs("main", 1) != 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: threadsyncs DIR N... | threadsyncs DIR fork\n");
		return 2;
	}
	dir = argv[1];
	if (argc == 3 && !strcmp(argv[2], "fork"))
		return forked();
	return threads(argc - 2, argv + 2);
}
