/* SPDX-License-Identifier: MIT */
/* storm.c -- fsync from every shape of process tree, for syncstat's counts
 * to be compared with the kernel's.
 * Usage: storm threads N K DIR   N threads, K fsyncs each
 *        storm fork N K DIR      N children, K fsyncs each; odd ones _exit
 *        storm kill K DIR        a child fsyncs until killed with SIGKILL
 *                                after at least K
 *        storm exec N K DIR      K fsyncs, then exec itself N-1 more times
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;
static int per;

static int file(void)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/storm-%d-%lx", dir, getpid(),
		 (unsigned long)pthread_self());
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		exit(1);
	return fd;
}

static void *syncs(void *arg)
{
	int fd = file();

	(void)arg;
	for (int i = 0; i < per; i++)
		if (fsync(fd) != 0)
			exit(1);
	close(fd);
	return NULL;
}

static int threads(int n)
{
	pthread_t t[256];

	for (int i = 0; i < n && i < 256; i++)
		pthread_create(&t[i], NULL, syncs, NULL);
	for (int i = 0; i < n && i < 256; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int forks(int n)
{
	int status, bad = 0;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			syncs(NULL);
			if (i % 2)
				_exit(0);
			exit(0);
		}
	}
	while (wait(&status) > 0)
		bad |= status != 0;
	return bad;
}

/* The child says through a pipe each time an fsync returned. */
static int killed(int k)
{
	int p[2], fd, done = 0;
	char c;
	pid_t pid;

	if (pipe(p) != 0)
		return 1;
	if ((pid = fork()) == 0) {
		fd = file();
		for (;;)
			if (fsync(fd) == 0 && write(p[1], "x", 1) != 1)
				_exit(1);
	}
	while (done < k && read(p[0], &c, 1) == 1)
		done++;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	char n[16];

	if (argc < 4)
		return 2;
	dir = argv[argc - 1];
	if (!strcmp(argv[1], "threads") && argc == 5)
		return per = atoi(argv[3]), threads(atoi(argv[2]));
	if (!strcmp(argv[1], "fork") && argc == 5)
		return per = atoi(argv[3]), forks(atoi(argv[2]));
	if (!strcmp(argv[1], "kill") && argc == 4)
		return killed(atoi(argv[2]));
	if (!strcmp(argv[1], "exec") && argc == 5) {
		per = atoi(argv[3]);
		syncs(NULL);
		if (atoi(argv[2]) <= 1)
			return 0;
		snprintf(n, sizeof(n), "%d", atoi(argv[2]) - 1);
		execl("/proc/self/exe", argv[0], "exec", n, argv[3], dir, (char *)NULL);
		return 1;
	}
	return 2;
}
