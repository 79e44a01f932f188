/* SPDX-License-Identifier: MIT */
/* env.h -- the environment variables by which the launchers configure the
 * libraries and the supervisor, named once, and what makes one true.
 *
 * Those that name an inherited descriptor are never taken from the
 * environment of a set-user-ID program (secure_getenv).
 */
#ifndef EMD_ENV_H
#define EMD_ENV_H

/* The user's: turn eating off, or on for some programs only. */
#define EMD_ENV_DISABLE "EATMYDATA_DISABLE"
#define EMD_ENV_ONLY "EATMYDATA_ONLY"
#define EMD_ENV_LIBDIR "EATMYDATA_LIBDIR"

/* syncstat and --stats: the record file, its path and "N:DEV:INO" (the
 * descriptor the tree inherits and the file it must be), its size, and
 * whether the audit's events are recorded too. */
#define EMD_ENV_RECORD "EATMYDATA_RECORD"
#define EMD_ENV_RECORD_FD "EATMYDATA_RECORD_FD"
#define EMD_ENV_RECORD_SLOTS "EATMYDATA_RECORD_SLOTS"
#define EMD_ENV_AUDIT "EATMYDATA_AUDIT"

/* --sync-on-exit: the notes directory, its descriptor "N", its "DEV:INO"
 * and its path. */
#define EMD_ENV_SYNC_FD "EATMYDATA_SYNC_FD"
#define EMD_ENV_SYNC_ID "EATMYDATA_SYNC_ID"
#define EMD_ENV_SYNC_DIR "EATMYDATA_SYNC_DIR"

/* The run's seccomp supervisor, by name (filter.h: started by the first
 * process that needs it); the launcher, which that process runs as the
 * supervisor and which stands in for a program posix_spawn starts;
 * --no-io-uring. */
#define EMD_ENV_SECCOMP "EATMYDATA_SECCOMP"
#define EMD_ENV_SECCOMP_EXEC "EATMYDATA_SECCOMP_EXEC"
#define EMD_ENV_NO_IO_URING "EATMYDATA_NO_IO_URING"

/* The tool whose policy the supervisor serves (seccomp/supervisor.c):
 * "eatmydata" (eat the request, the default) or "syncstat" (make it and
 * time it); the launcher sets it with EATMYDATA_SECCOMP. */
#define EMD_ENV_SECCOMP_POLICY "EATMYDATA_SECCOMP_POLICY"

/* --on-behalf=on: the supervisor may open and write for a filtered program
 * (read from the launcher's environment, never a caller's). */
#define EMD_ENV_ON_BEHALF "EATMYDATA_ON_BEHALF"

/* The launchers a link-mode launcher came through (loop guard). */
#define EMD_ENV_LINKS "EATMYDATA_LINKS"

/* A flag variable is true when set, not empty and not "0": the library,
 * the supervisor (reading a caller's environment) and the launchers agree. */
static inline int emd_env_true(const char *value)
{
	return value && *value && !(value[0] == '0' && value[1] == '\0');
}

#endif
