/* SPDX-License-Identifier: MIT */
/* seccomp.h -- eatmydata --seccomp: durability asked for with system calls
 * that no preloaded library sees (static and Go programs, glibc's own
 * helper threads as in aio_fsync). */
#ifndef EMD_SECCOMP_H
#define EMD_SECCOMP_H

struct seccomp_options {
	const char *mode;  /* "auto", "on" or "off" */
	const char *only;  /* --only's globs, or NULL */
	int no_io_uring;   /* io_uring_setup fails with ENOSYS */
};

/* Is the filter wanted for running `file` (as found in PATH)?  "auto":
 * yes for a statically linked or Go program, which the library cannot
 * reach; dies on a mode it does not know. */
int seccomp_wanted(const struct seccomp_options *opt, const char *file);

/* In the process about to exec: start the supervisor, then install the
 * filter (with no_new_privs unless privileged) and hand it the listener.
 * The supervisor outlives this process and ends with the last process of
 * the tree. */
void seccomp_install(const struct seccomp_options *opt);

/* The supervisor's loop (supervisor.c): writes a byte to `ready` once it
 * answers, answers each notification, then exits when no filtered process
 * is left. */
noreturn void supervise(int listener, int ready, const char *only);

#endif
