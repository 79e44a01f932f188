/* SPDX-License-Identifier: MIT */
/* timesprobe.c -- times() against the kernel's own clocks: burns CPU in
 * itself and in a waited-for child, then prints, in seconds, what times()
 * and sysconf(_SC_CLK_TCK) say next to CLOCK_MONOTONIC and getrusage. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void burn(double seconds)
{
	double end = now() + seconds;
	volatile unsigned long x = 0;

	while (now() < end)
		x++;
}

static double tv(struct timeval t)
{
	return t.tv_sec + t.tv_usec / 1e6;
}

int main(void)
{
	double hz = sysconf(_SC_CLK_TCK), m0, m1;
	struct rusage self, kids;
	struct tms t;
	clock_t c0, c1;
	pid_t pid;

	m0 = now();
	c0 = times(&t);
	burn(0.0237);
	if ((pid = fork()) == 0) {
		burn(0.0311);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	c1 = times(&t);
	m1 = now();
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("hz %.0f\n", hz);
	printf("elapsed %.6f monotonic %.6f\n", (c1 - c0) / hz, m1 - m0);
	printf("utime %.6f rusage %.6f\n", t.tms_utime / hz, tv(self.ru_utime));
	printf("cutime %.6f rusage %.6f\n", t.tms_cutime / hz, tv(kids.ru_utime));
	return 0;
}
