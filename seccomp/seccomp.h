/* SPDX-License-Identifier: MIT */
/* seccomp.h -- the seccomp side, as the launcher sees it: durability asked
 * for with system calls no preloaded library sees (static and Go programs,
 * 32- or 64-bit; glibc's own helper threads as in aio_fsync).
 *
 * --seccomp=auto (the default): the supervisor serves the tree, and only
 * the programs the library cannot reach run under the filter, each put
 * there at its exec (the launcher's for the command, the library's in the
 * tree).  on: the command and everything it starts.  off: no filter.
 */
#ifndef EMD_SECCOMP_H
#define EMD_SECCOMP_H

#include <stdnoreturn.h>

struct seccomp_options {
	const char *mode;  /* "auto", "on" or "off" */
	const char *only;  /* --only's globs, or NULL */
	int no_io_uring;   /* io_uring_setup fails with ENOSYS */
	int on_behalf;     /* the supervisor may open and write for a caller */
	const char *policy; /* the tool the supervisor serves (NULL: eatmydata) */
	int record_fd;     /* the supervisor's: the record file, or -1 */
};

/* Before the command `file` (as found in PATH, or NULL) is run: name the
 * run's supervisor in the environment (auto, on), which the first process
 * that needs it starts; off: none, and none of an outer run's either.
 * Starts nothing.  Dies on a mode it does not know. */
void seccomp_prepare(const struct seccomp_options *opt);

/* In the process about to exec `file` (as found in PATH, or NULL): put it
 * under the filter if the mode says so (on: always; auto: a program the
 * library cannot reach), with a supervisor started for it that trusts its
 * listener (supervisor.h). */
void seccomp_before_exec(const struct seccomp_options *opt, const char *file);

/* eatmydata --seccomp-exec=NAME FILE ARGV0 [ARG]...: in the place of a
 * program the library cannot reach, which posix_spawn starts (no code of
 * the library runs between its fork and its exec): under the filter of
 * the run NAME, exec FILE with ARGV0 and ARGs, whatever fails. */
noreturn void seccomp_exec(const char *name, char **argv);

/* eatmydata --seccomp-supervise=POLICY:FD:TRUST:RECORDS, as rendezvous.c
 * starts it: the supervisor of the run EATMYDATA_SECCOMP names, for this
 * user, answering as the tool POLICY does (eatmydata: eat; syncstat: make
 * the call and time it), its first connection on FD (its listener trusted
 * if TRUST is 1, supervisor.h), the record file at RECORDS (-1: none).
 * The options are the environment's (EATMYDATA_ONLY, _ON_BEHALF).
 * Returns only on a bad argument. */
void seccomp_supervise(const char *arg);

/* The launcher's hidden modes, for any tool whose tree the supervisor
 * serves: --seccomp-exec=NAME and --seccomp-supervise=ARG as argv[1]
 * (above); returns when argv is neither. */
void seccomp_hidden_modes(int argc, char **argv);

/* The supervisor's loop (serve.c): binds the run's name `name` for later
 * connections, says it is ready on `first`, takes the listeners sent on
 * it and on each connection, and answers each notification as `opt`
 * says; leaves once no listener is alive and no one has come for a
 * while. */
noreturn void supervise(int first, int trust_first, const char *name,
			const struct seccomp_options *opt);

#endif
