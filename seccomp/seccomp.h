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
};

/* The byte the launcher sends on the supervisor's socket with its own
 * filter's listener, or alone, before the tree runs: the listeners that
 * come after it are the tree's (see `trusted` in supervisor.h). */
#define SUPERVISOR_END 'E'

/* The socket's name in the private directory EATMYDATA_SECCOMP_PATH names. */
#define SUPERVISOR_SOCKET "socket"

/* Before the command `file` (as found in PATH, or NULL): start the tree's
 * supervisor (auto, on), or leave an outer run's to serve, and name its
 * socket in the environment; off: none, and none of an outer run's
 * either.  Dies on a mode it does not know. */
void seccomp_prepare(const struct seccomp_options *opt, const char *file);

/* In the process about to exec `file` (as found in PATH, or NULL): put it
 * under the filter if the mode says so (on: always; auto: a program the
 * library cannot reach), and tell the supervisor the launcher is done. */
void seccomp_before_exec(const struct seccomp_options *opt, const char *file);

/* eatmydata --seccomp-exec=N:DEV:INO FILE ARGV0 [ARG]...: in the place of
 * a program the library cannot reach, which posix_spawn starts (no code of
 * the library runs between its fork and its exec): under the filter, exec
 * FILE with ARGV0 and ARGs, whatever fails. */
noreturn void seccomp_exec(const char *sock_id, char **argv);

/* The supervisor's loop (serve.c): writes a byte to `ready` once it
 * answers, then takes the listeners sent on `sock` or through connections
 * to `server` (listening at DIR/socket), and answers each notification as
 * `opt` says, until no process holds `sock` or a filter; then removes DIR.
 * No DIR (and no server): the launcher filters the whole tree. */
noreturn void supervise(int sock, int ready, int server, const char *dir,
			const struct seccomp_options *opt);

/* The supervisor's way out, also before it could start: DIR and its
 * socket are removed (DIR may be NULL), and the process exits. */
noreturn void supervisor_leave(const char *dir);

#endif
