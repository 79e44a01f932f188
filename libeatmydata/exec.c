/* SPDX-License-Identifier: MIT */
/* exec.c -- programs the library cannot reach (static or Go, 32- or
 * 64-bit: elf_kind.c), started by a process it serves.  Just before the
 * exec, that process puts itself under the seccomp filter and hands the
 * listener to the tree's supervisor (filter.c), so the program starts
 * filtered; only it, and what it starts, pays for a filter.  posix_spawn
 * runs no code of ours between its fork and its exec: the launcher, in its
 * --seccomp-exec mode, is spawned in the program's place to do the same.
 *
 * Every exec entry point is here, because glibc's own (execvp, execl,
 * posix_spawn) call the system call directly, past any wrapper.  Nothing
 * happens unless the launcher named a supervisor (EATMYDATA_SECCOMP);
 * then the program's ELF headers are read once per exec.  Runs in vfork
 * children: no allocation, stack buffers only.
 */
#include "emd.h"
#include "elf_kind.h"
#include "filter.h"

#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is the program at dirfd/path (or dirfd itself, path "") one the library
 * cannot reach? */
static int unreachable_at(int dirfd, const char *path)
{
	int fd = *path ? (int)emd_syscall(SYS_openat, dirfd, (long)path,
					  O_RDONLY | O_CLOEXEC, 0, 0, 0)
		       : dirfd;
	int r = fd >= 0 && emd_elf_unreachable(fd);

	if (fd >= 0 && fd != dirfd)
		close(fd);
	return r;
}

/* Before the exec of dirfd/path: under the filter, if that program needs
 * it and there is a supervisor to hand it to. */
static void before_exec(int dirfd, const char *path)
{
	const char *id = secure_getenv(EMD_ENV_SECCOMP);
	int sock, opened;

	if (!id || !path || !unreachable_at(dirfd, path))
		return;
	sock = emd_supervisor(id, secure_getenv(EMD_ENV_SECCOMP_PATH), &opened);
	if (sock >= 0)
		emd_filter_self(sock, secure_getenv(EMD_ENV_NO_IO_URING) != NULL, 0);
	if (opened)
		close(sock);
}

/* The file execvp would run for `name`: itself if it has a slash, else
 * the first executable one along PATH (glibc's default when unset). */
static const char *find_program(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *end;
	int n;

	if (strchr(name, '/'))
		return name;
	for (path = path ? path : "/bin:/usr/bin"; *name; path = end + 1) {
		end = strchrnul(path, ':');
		n = end == path ? snprintf(buf, size, "%s", name)
				: snprintf(buf, size, "%.*s/%s", (int)(end - path), path, name);
		if (n > 0 && (size_t)n < size && faccessat(AT_FDCWD, buf, X_OK, AT_EACCESS) == 0)
			return buf;
		if (!*end)
			break;
	}
	return NULL;
}

EMD_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec(AT_FDCWD, path);
	return EMD_REAL(execve)(path, argv, envp);
}

EMD_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	before_exec(dirfd, path);
	return EMD_REAL(execveat)(dirfd, path, argv, envp, flags);
}

EMD_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec(fd, "");
	return EMD_REAL(fexecve)(fd, argv, envp);
}

EMD_EXPORT int execv(const char *path, char *const argv[])
{
	before_exec(AT_FDCWD, path);
	return EMD_REAL(execv)(path, argv);
}

EMD_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];

	before_exec(AT_FDCWD, find_program(file, buf, sizeof(buf)));
	return EMD_REAL(execvpe)(file, argv, envp);
}

EMD_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl, execle, execlp: how many arguments up to the NULL... */
static size_t list_length(const char *first, va_list ap)
{
	size_t n = first != NULL;

	while (first && va_arg(ap, char *))
		n++;
	return n;
}

/* ...and they as an array, with the NULL; *envp: execle's, after it. */
static void list_fill(char **args, const char *first, va_list ap, size_t n, char ***envp)
{
	args[0] = (char *)first;
	for (size_t i = 1; i < n; i++)
		args[i] = va_arg(ap, char *);
	args[n] = NULL;
	if (envp) {
		if (n)
			(void)va_arg(ap, char *); /* the NULL */
		*envp = va_arg(ap, char **);
	}
}

EMD_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, arg);
	n = list_length(arg, ap);
	va_end(ap);
	char *args[n + 1];
	va_start(ap, arg);
	list_fill(args, arg, ap, n, NULL);
	va_end(ap);
	return execve(path, args, environ);
}

EMD_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **envp;
	size_t n;

	va_start(ap, arg);
	n = list_length(arg, ap);
	va_end(ap);
	char *args[n + 1];
	va_start(ap, arg);
	list_fill(args, arg, ap, n, &envp);
	va_end(ap);
	return execve(path, args, envp);
}

EMD_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, arg);
	n = list_length(arg, ap);
	va_end(ap);
	char *args[n + 1];
	va_start(ap, arg);
	list_fill(args, arg, ap, n, NULL);
	va_end(ap);
	return execvpe(file, args, environ);
}

/* posix_spawn of `found` (the file `file` names, or NULL): the launcher
 * stands in for a program that needs the filter, and execs it under it. */
static int spawn(int (*real)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			     const posix_spawnattr_t *, char *const[], char *const[]),
		 pid_t *pid, const char *file, const char *found,
		 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		 char *const argv[], char *const envp[])
{
	const char *stand_in = secure_getenv(EMD_ENV_SECCOMP_EXEC);
	const char *sock = secure_getenv(EMD_ENV_SECCOMP);
	char opt[96];
	size_t argc = 0;

	if (!stand_in || *stand_in != '/' || !sock || !found || !unreachable_at(AT_FDCWD, found) ||
	    snprintf(opt, sizeof(opt), "--seccomp-exec=%s", sock) >= (int)sizeof(opt))
		return real(pid, file, fa, attr, argv, envp);
	while (argv && argv[argc])
		argc++;
	char *args[argc + 5];
	args[0] = (char *)stand_in;
	args[1] = opt;
	args[2] = (char *)found;
	args[3] = argc ? argv[0] : (char *)found;
	for (size_t i = 1; i <= argc; i++)
		args[3 + i] = argv[i];
	args[argc + 4] = NULL;
	return EMD_REAL(posix_spawn)(pid, stand_in, fa, attr, args, envp);
}

EMD_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn(EMD_REAL(posix_spawn), pid, path, path, fa, attr, argv, envp);
}

EMD_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];

	return spawn(EMD_REAL(posix_spawnp), pid, file, find_program(file, buf, sizeof(buf)), fa,
		     attr, argv, envp);
}
