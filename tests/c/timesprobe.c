/* SPDX-License-Identifier: MIT */
/* timesprobe.c -- times() against the kernel's own clocks: burns CPU in
 * itself and in a waited-for child, then prints, in seconds, what times()
 * and sysconf(_SC_CLK_TCK) say and the kernel's clocks read just before and
 * just after. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time, not wall time: a loaded machine must not shorten what is
 * burnt, or the child's share would vanish below the assertion.  The clock
 * is a system call, so it is read seldom: the time is user time. */
static void burn(double seconds)
{
	double end = clock_s(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	volatile unsigned long x = 0;

	while (clock_s(CLOCK_PROCESS_CPUTIME_ID) < end)
		for (int i = 0; i < 100000; i++)
			x++;
}

static double tv(struct timeval t)
{
	return t.tv_sec + t.tv_usec / 1e6;
}

/* Each figure of times() is printed between the kernel's readings taken
 * just before and just after it, so the check holds however long the
 * process waits for a CPU in between. */
int main(void)
{
	double hz = sysconf(_SC_CLK_TCK), m0a, m0b, m1a, m1b;
	struct rusage s0, s1, k0, k1;
	struct tms t;
	clock_t c0, c1;
	pid_t pid;

	m0a = clock_s(CLOCK_MONOTONIC);
	c0 = times(&t);
	m0b = clock_s(CLOCK_MONOTONIC);
	burn(0.0237);
	if ((pid = fork()) == 0) {
		burn(0.0311);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	getrusage(RUSAGE_SELF, &s0);
	getrusage(RUSAGE_CHILDREN, &k0);
	m1a = clock_s(CLOCK_MONOTONIC);
	c1 = times(&t);
	m1b = clock_s(CLOCK_MONOTONIC);
	getrusage(RUSAGE_SELF, &s1);
	getrusage(RUSAGE_CHILDREN, &k1);
	printf("hz %.0f\n", hz);
	printf("elapsed %.6f %.6f %.6f\n", (c1 - c0) / hz, m1a - m0b, m1b - m0a);
	printf("utime %.6f %.6f %.6f\n", t.tms_utime / hz, tv(s0.ru_utime),
	       tv(s1.ru_utime));
	printf("cutime %.6f %.6f %.6f\n", t.tms_cutime / hz, tv(k0.ru_utime),
	       tv(k1.ru_utime));
	return 0;
}
