/* SPDX-License-Identifier: MIT */
/* check.h -- states built and checked by workers, -j of them at once: each
 * a child of crashtest's that builds its state in a directory of its own
 * and runs the checker there, seen at the path the command ran in.
 */
#ifndef CT_CHECK_H
#define CT_CHECK_H

#include "crashtest/build.h"
#include "crashtest/run.h"

#include <sys/types.h>

/* The most workers at once (-j). */
#define MAX_JOBS 256

struct worker {
	pid_t pid; /* 0: a free slot */
	int fd;    /* its result comes on this pipe */
	size_t check;
};

struct workers {
	int n, running;
	/* With more than one, each checker runs in mount and network
	 * namespaces of its own (and a user namespace, not as root): its
	 * slot's directory is mounted on the run directory, so that its state
	 * is at the path the command ran in, and its loopback is its own. */
	int isolated, user;
	struct worker w[MAX_JOBS];
	/* Called after each worker's result came in (the points it finished
	 * can be reported). */
	void (*done)(void *arg);
	void *arg;
};

/* What a worker builds and checks: state b (its tree applied, as the
 * worker inherits it), with the command's first `out` and `err` bytes of
 * output, for check c (from 1). */
struct job {
	const struct built *b;
	uint64_t out, err;
	long point;
	const char *what;
	size_t check;
};

/* Up to n workers: isolated if n > 1 and the kernel lets this user have
 * namespaces, else one, and a warning says why. */
void workers_init(struct workers *w, struct run *run, int n);

/* Start the job in a worker, once one is free: 0, or -1 if a signal to
 * crashtest or the budget came while it waited (`stop`), and it was not
 * started. */
int workers_start(struct workers *w, struct run *run, const struct options *o,
		  const struct job *j, int (*stop)(void));

/* Wait for a worker to end (if `wait`, else only one that has) and take
 * its result into run->checked; 0 if none ended. */
int workers_reap(struct workers *w, struct run *run, int wait);

#endif
