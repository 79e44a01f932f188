/* SPDX-License-Identifier: MIT */
/* seccomp.c -- a program the library cannot reach (static, Go, musl's
 * loader: elf_kind.c), started by a process of the tree by any exec or by
 * posix_spawn: it is put under nocache's seccomp filter first, as
 * shared/exec_filter.c does for both preload libraries, so that the run's
 * supervisor makes its reads and writes with RWF_DONTCACHE
 * (seccomp/nocache.c).  One that cannot have the filter is named on
 * stderr: its pages stay cached.
 *
 * Nothing is done unless the launcher named a supervisor of nocache's
 * policy.  Files are opened and closed with raw system calls: the
 * library's own wrappers are for the command's files.
 */
#include "nocache.h"
#include "exec_filter.h"
#include "filter.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

/* The library's own, past its syscall wrapper: a program file it looked
 * at (through its pread wrapper) and closes is not the command's, to be
 * dropped just before the exec reads it again. */
static long raw_syscall(long nr, long a, long b, long c, long d, long e, long f)
{
	int saved = errno;
	long r;

	if (nr == SYS_close)
		nc_disown((int)a);
	r = NC_REAL(syscall)(nr, a, b, c, d, e, f);

	if (r == -1)
		r = -errno;
	errno = saved;
	return r;
}

static int real_execve(const char *path, char *const argv[], char *const envp[])
{
	return NC_REAL(execve)(path, argv, envp);
}

static int real_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return NC_REAL(posix_spawn)(pid, path, fa, attr, argv, envp);
}

static void say(const char *path, const char *why, int err)
{
	char line[PATH_MAX + 160];
	int n = snprintf(line, sizeof(line), "nocache: %s: its reads and writes stay cached: %s\n",
			 path, why);

	(void)err;
	if (n > 0)
		syscall(SYS_write, 2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Under a filter already (EBUSY): one of a nocache run's (an outer
 * nocache's, which serves the program), or another's (eatmydata's, a
 * container's), which does not: then said. */
static int own_filter(void)
{
	return emd_under_filter_of("nocache");
}

static const struct emd_exec_ops ops = {
	.syscall = raw_syscall,
	.execve = real_execve,
	.posix_spawn = real_spawn,
	.unobserved = say,
	.own_filter = own_filter,
};

/* Is the run's supervisor nocache's? */
static int ours(void)
{
	const char *policy = secure_getenv("EATMYDATA_SECCOMP_POLICY");

	return secure_getenv("EATMYDATA_SECCOMP") && policy && !strcmp(policy, "nocache");
}

void nc_before_exec(int dirfd, const char *path, int nofollow, char *const argv[],
		    char *const envp[])
{
	int saved = errno;

	if (ours())
		emd_before_exec(&ops, dirfd, path, nofollow, argv, envp);
	errno = saved;
}

const char *nc_find_program(const char *file, char *buf, size_t size)
{
	return ours() ? emd_find_program(file, buf, size) : NULL;
}

int nc_spawn(emd_spawn_fn *real, pid_t *pid, const char *file, const char *found,
	     const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
	     char *const argv[], char *const envp[])
{
	if (!ours())
		return real(pid, file, fa, attr, argv, envp);
	return emd_spawn(&ops, real, pid, file, found, fa, attr, argv, envp);
}
