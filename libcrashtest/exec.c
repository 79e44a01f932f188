/* SPDX-License-Identifier: MIT */
/* exec.c -- a process that execs lets go of the files it held (image.c):
 * its streams' buffers are gone with it, its mappings too.  Each is
 * pictured and released before the exec, and held again if the exec fails.
 * glibc's own exec functions call the system call directly, so each entry
 * point is wrapped (the list forms in preload/exec_list.c), and
 * posix_spawn too.
 *
 * A program the library cannot enter (static, Go, another loader's, or one
 * naming io_uring or Linux AIO: elf_kind.h) is put under the run's seccomp
 * filter first, as shared/exec_filter.c does for every preload library, so
 * that crashtest's supervisor journals what it does (seccomp/crash.c).
 * Without a supervisor (--seccomp=off), or where the filter cannot be had,
 * it changes the copy past the journal: the journal says so, naming the
 * program, and the points from there on are unknown (an exec that then
 * fails leaves them unknown too).
 */
#include "ct.h"
#include "elf_kind.h"
#include "exec_filter.h"
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* The program at dirfd/path, looked at through O_PATH and opened for
 * reading only if it is a regular file (a FIFO is never opened). */
static void unseen(int dirfd, const char *path, int nofollow)
{
	char why[PATH_MAX + 128];
	int look, kind;

	if (!path || !ct_active())
		return;
	look = (int)ct_sys(SYS_openat, dirfd, path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	kind = emd_held_unreachable(look, REAL(syscall));
	if (look >= 0)
		ct_sys(SYS_close, look);
	if (kind) {
		snprintf(why, sizeof(why), "%s is %s: what it changes is past crashtest's library", path,
			 emd_elf_reason(kind));
		ct_note(CT_UNKNOWN, NULL, why);
	}
}

static long raw_syscall(long nr, long a, long b, long c, long d, long e, long f)
{
	int saved = errno;
	long r = ct_sys(nr, a, b, c, d, e, f);

	if (r == -1)
		r = -errno;
	errno = saved;
	return r;
}

static int real_execve(const char *path, char *const argv[], char *const envp[])
{
	return REAL(execve)(path, argv, envp);
}

static int real_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return REAL(posix_spawn)(pid, path, fa, attr, argv, envp);
}

static void unfollowed(const char *path, const char *why, int err)
{
	char line[PATH_MAX + 160];

	(void)err;
	snprintf(line, sizeof(line), "%s runs past crashtest's library and its supervisor: %s",
		 path, why);
	if (ct_active())
		ct_note(CT_UNKNOWN, NULL, line);
}

static int own_filter(void)
{
	return ct_sys(SYS_flock, EMD_PROBE_FD, 0) == -1 && errno == EMD_PROBE_CRASH;
}

static const struct emd_exec_ops ops = {
	.syscall = raw_syscall,
	.execve = real_execve,
	.posix_spawn = real_spawn,
	.unobserved = unfollowed,
	.own_filter = own_filter,
};

/* Does the run have crashtest's supervisor (--seccomp=auto)? */
static int supervised(void)
{
	const char *policy = secure_getenv("EATMYDATA_SECCOMP_POLICY");

	return secure_getenv("EATMYDATA_SECCOMP") && policy && !strcmp(policy, "crashtest");
}

/* Before an exec of dirfd/path: under the filter, or named. */
static void reach(int dirfd, const char *path, int nofollow, char *const argv[],
		  char *const envp[])
{
	int saved = errno;

	if (path && ct_active() && supervised())
		emd_before_exec(&ops, dirfd, path, nofollow, argv, envp);
	else
		unseen(dirfd, path, nofollow);
	errno = saved;
}

/* The program execvp or posix_spawnp runs for `file`. */
static const char *in_path(const char *file, char *buf, size_t size)
{
	return file ? emd_program_in_path(file, buf, size) : NULL;
}

PL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	int r;

	reach(AT_FDCWD, path, 0, argv, envp);
	ct_image_exec(0);
	r = REAL(execve)(path, argv, envp);
	ct_image_exec(1);
	return r;
}

PL_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

PL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];
	int r;

	reach(AT_FDCWD, in_path(file, buf, sizeof(buf)), 0, argv, envp);
	ct_image_exec(0);
	r = REAL(execvpe)(file, argv, envp);
	ct_image_exec(1);
	return r;
}

PL_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

PL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	int r;

	reach(fd, "", 0, argv, envp);
	ct_image_exec(0);
	r = REAL(fexecve)(fd, argv, envp);
	ct_image_exec(1);
	return r;
}

PL_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	int r;

	reach(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, argv, envp);
	ct_image_exec(0);
	r = REAL(execveat)(dirfd, path, argv, envp, flags);
	ct_image_exec(1);
	return r;
}

/* The spawning process keeps its files: only the program is looked at. */
PL_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	ct_release_forget_all();
	if (ct_active() && supervised())
		return emd_spawn(&ops, REAL(posix_spawn), pid, path, path, actions, attr, argv, envp);
	unseen(AT_FDCWD, path, 0);
	return REAL(posix_spawn)(pid, path, actions, attr, argv, envp);
}

PL_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];
	const char *found = in_path(file, buf, sizeof(buf));

	ct_release_forget_all();
	if (ct_active() && supervised())
		return emd_spawn(&ops, REAL(posix_spawnp), pid, file, found, actions, attr, argv,
				 envp);
	unseen(AT_FDCWD, found, 0);
	return REAL(posix_spawnp)(pid, file, actions, attr, argv, envp);
}
