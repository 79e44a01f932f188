/* SPDX-License-Identifier: MIT */
/* exec_list.c -- execl, execle and execlp, for the libraries that wrap the
 * exec family (eatmydata, nocache; not hirestimes): glibc's own call its
 * internal execve, past every wrapper.  Each builds its argument vector on
 * the stack, as glibc does, and calls execve or execvpe by name: the first
 * preloaded library's wrapper, which calls the next.
 */
#define _GNU_SOURCE 1
#include "preload.h"

#include <stdarg.h>
#include <unistd.h>

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
static int exec_list(const char *path, const char *arg, va_list ap, int search,
		     int envp_after)
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
