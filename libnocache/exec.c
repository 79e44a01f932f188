/* SPDX-License-Identifier: MIT */
/* exec.c -- the exec family: a new program knows nothing of the files this
 * one left to drop, and the parked descriptors close on exec, so what is
 * pending is written back and dropped first.
 *
 * glibc's execl, execv and execvp call its internal execve, which no
 * wrapper sees: each name is wrapped (the list forms in
 * preload/exec_list.c).  A static or Go program is put under nocache's
 * seccomp filter first, whichever names it: a path, a directory's
 * descriptor and a path (execveat), or its own descriptor (fexecve,
 * execveat's AT_EMPTY_PATH) (seccomp.c).
 */
#include "nocache.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

extern char **environ;

PL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	nc_drop_all();
	nc_before_exec(AT_FDCWD, path, 0, argv, envp);
	return NC_REAL(execve)(path, argv, envp);
}

PL_EXPORT int execv(const char *path, char *const argv[])
{
	nc_drop_all();
	nc_before_exec(AT_FDCWD, path, 0, argv, environ);
	return NC_REAL(execv)(path, argv);
}

PL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];

	nc_drop_all();
	nc_before_exec(AT_FDCWD, nc_find_program(file, buf, sizeof(buf)), 0, argv, envp);
	return NC_REAL(execvpe)(file, argv, envp);
}

PL_EXPORT int execvp(const char *file, char *const argv[])
{
	char buf[PATH_MAX];

	nc_drop_all();
	nc_before_exec(AT_FDCWD, nc_find_program(file, buf, sizeof(buf)), 0, argv, environ);
	return NC_REAL(execvp)(file, argv);
}

PL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	nc_drop_all();
	nc_before_exec(fd, "", 0, argv, envp);
	return NC_REAL(fexecve)(fd, argv, envp);
}

PL_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		       char *const envp[], int flags)
{
	nc_drop_all();
	/* "" names dirfd itself only with AT_EMPTY_PATH (else ENOENT). */
	if (*path || (flags & AT_EMPTY_PATH))
		nc_before_exec(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, argv, envp);
	return NC_REAL(execveat)(dirfd, path, argv, envp, flags);
}
