/* SPDX-License-Identifier: MIT */
/* exec.c -- programs the library cannot reach (static or Go, 32- or
 * 64-bit), started by a process it serves: every exec entry point (the
 * list forms, execl..., in preload/exec_list.c) and posix_spawn put such
 * a program under the seccomp filter first, as shared/exec_filter.c does
 * for both preload libraries, in this library's words for a program that
 * runs unobserved (emd_unobserved).
 */
#include "emd.h"
#include "exec_filter.h"

#include <limits.h>
#include <spawn.h>

static int real_execve(const char *path, char *const argv[], char *const envp[])
{
	return EMD_REAL(execve)(path, argv, envp);
}

static int real_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return EMD_REAL(posix_spawn)(pid, path, fa, attr, argv, envp);
}

static const struct emd_exec_ops ops = {
	.syscall = emd_syscall,
	.execve = real_execve,
	.posix_spawn = real_spawn,
	.unobserved = emd_unobserved,
	.own_filter = emd_under_own_filter,
};

EMD_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	emd_before_exec(&ops, AT_FDCWD, path, 0, argv, envp);
	return EMD_REAL(execve)(path, argv, envp);
}

EMD_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	/* "" names dirfd itself only with AT_EMPTY_PATH (else ENOENT). */
	if (*path || (flags & AT_EMPTY_PATH))
		emd_before_exec(&ops, dirfd, path, flags & AT_SYMLINK_NOFOLLOW, argv, envp);
	return EMD_REAL(execveat)(dirfd, path, argv, envp, flags);
}

EMD_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	emd_before_exec(&ops, fd, "", 0, argv, envp);
	return EMD_REAL(fexecve)(fd, argv, envp);
}

EMD_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

EMD_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];

	emd_before_exec(&ops, AT_FDCWD, emd_find_program(file, buf, sizeof(buf)), 0, argv, envp);
	return EMD_REAL(execvpe)(file, argv, envp);
}

EMD_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

EMD_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return emd_spawn(&ops, EMD_REAL(posix_spawn), pid, path, path, fa, attr, argv, envp);
}

EMD_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];

	return emd_spawn(&ops, EMD_REAL(posix_spawnp), pid, file,
			 emd_find_program(file, buf, sizeof(buf)), fa, attr, argv, envp);
}
