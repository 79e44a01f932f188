/* SPDX-License-Identifier: MIT */
/* exec.c -- a process that execs lets go of the files it held (image.c):
 * its streams' buffers are gone with it, its mappings too.  Each is
 * pictured and released before the exec, and held again if the exec fails.
 * glibc's own exec functions call the system call directly, so each entry
 * point is wrapped (the list forms in preload/exec_list.c).
 */
#include "ct.h"

#include <errno.h>
#include <unistd.h>

PL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	int r;

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
	int r;

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

	ct_image_exec(0);
	r = REAL(fexecve)(fd, argv, envp);
	ct_image_exec(1);
	return r;
}

PL_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	int r;

	ct_image_exec(0);
	r = REAL(execveat)(dirfd, path, argv, envp, flags);
	ct_image_exec(1);
	return r;
}
