/* SPDX-License-Identifier: MIT */
/* exec.c -- the exec family: a new program knows nothing of the files this
 * one left to drop, and the parked descriptors close on exec, so what is
 * pending is written back and dropped first.
 *
 * glibc's execl, execv and execvp call its internal execve, which no
 * wrapper sees: each name is wrapped.  The list forms build their argument
 * vector on the stack, as glibc does.
 */
#include "nocache.h"

#include <stdarg.h>
#include <unistd.h>

extern char **environ;

PL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	nc_drop_all();
	return NC_REAL(execve)(path, argv, envp);
}

PL_EXPORT int execv(const char *path, char *const argv[])
{
	nc_drop_all();
	return NC_REAL(execv)(path, argv);
}

PL_EXPORT int execvp(const char *file, char *const argv[])
{
	nc_drop_all();
	return NC_REAL(execvp)(file, argv);
}

PL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	nc_drop_all();
	return NC_REAL(execvpe)(file, argv, envp);
}

PL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	nc_drop_all();
	return NC_REAL(fexecve)(fd, argv, envp);
}

PL_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		       char *const envp[], int flags)
{
	nc_drop_all();
	return NC_REAL(execveat)(dirfd, path, argv, envp, flags);
}

/* The arguments after `arg` up to the NULL, counted. */
static size_t count_args(const char *arg, va_list ap)
{
	size_t n = 1;

	while (arg && va_arg(ap, const char *))
		n++;
	return n;
}

/* The list forms: arg, then the rest up to the NULL; execle's environment
 * follows the NULL (`envp_after`); execlp searches PATH (`search`). */
static int exec_list(const char *path, const char *arg, va_list ap,
		     int search, int envp_after)
{
	char *const *envp = environ;
	size_t n;
	va_list again;

	va_copy(again, ap);
	n = count_args(arg, ap);
	char *argv[n + 1];

	argv[0] = (char *)arg;
	for (size_t i = 1; i <= n; i++)
		argv[i] = arg ? va_arg(again, char *) : NULL; /* the NULL too */
	if (envp_after)
		envp = va_arg(again, char *const *);
	va_end(again);
	return search ? execvpe(path, argv, envp) : execve(path, argv, envp);
}

PL_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(path, arg, ap, 0, 0);
	va_end(ap);
	return r;
}

PL_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(file, arg, ap, 1, 0);
	va_end(ap);
	return r;
}

PL_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(path, arg, ap, 0, 1);
	va_end(ap);
	return r;
}
