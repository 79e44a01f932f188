/* SPDX-License-Identifier: MIT */
/* exec.c -- programs the library cannot reach (static or Go, 32- or
 * 64-bit: elf_kind.c), started by a process it serves.  Just before the
 * exec, that process puts itself under the seccomp filter and hands the
 * listener to the tree's supervisor (filter.c), so the program starts
 * filtered; only it, and what it starts, pays for a filter.  posix_spawn
 * runs no code of ours between its fork and its exec: the launcher, in its
 * --seccomp-exec mode, is spawned in the program's place to do the same.
 *
 * Every exec entry point is here (the list forms, execl..., in
 * preload/exec_list.c), because glibc's own (execvp, execl, posix_spawn)
 * call the system call directly, past any wrapper.  Nothing happens
 * unless the launcher named a supervisor (EATMYDATA_SECCOMP); then the
 * program's ELF headers are read once per exec, and the supervisor is
 * found or started only for a program that needs it.  Runs in vfork
 * children: no allocation, stack buffers only.
 */
#include "emd.h"
#include "elf_kind.h"
#include "filter.h"

#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* The stand-in's arguments are on the stack: a longer list runs the
 * program as it is (the kernel's own limit is near 2^21 bytes anyway). */
#define MAX_ARGS 32768

#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* The program at dirfd/path (or dirfd itself, path ""), opened for reading
 * only once it is known to be a regular file (emd_program_file): through
 * its O_PATH descriptor's own link in /proc, so that the file opened is the
 * file looked at; without /proc (a chroot), by name.  `nofollow`: a final
 * symlink is none (execveat's AT_SYMLINK_NOFOLLOW, ELOOP). */
static int open_program(int dirfd, const char *path, int nofollow)
{
	char self[32];
	struct stat st;
	int look = *path ? (int)emd_syscall(SYS_openat, dirfd, (long)path,
					    O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0), 0, 0, 0)
			 : dirfd;
	int fd = -1;

	if (look >= 0 && emd_program_file(look, &st)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", look);
		fd = (int)emd_syscall(SYS_openat, AT_FDCWD, (long)self, READ_FLAGS, 0, 0, 0);
		if (fd < 0 && *path)
			fd = (int)emd_syscall(SYS_openat, dirfd, (long)path, READ_FLAGS, 0, 0, 0);
	}
	if (look >= 0 && look != dirfd)
		close(look);
	return fd;
}

/* Is the program at dirfd/path (or dirfd itself, path "") one the library
 * cannot reach, and one the kernel will run with these arguments?  A
 * filter put on for an exec that then fails could not be taken off, and
 * no_new_privs neither: every check the kernel makes that can be made
 * beforehand is made (the rest, a file opened for writing meanwhile,
 * ETXTBSY, is a known limit). */
static int needs_filter(int dirfd, const char *path, int nofollow, char *const argv[],
			char *const envp[])
{
	int fd = open_program(dirfd, path, nofollow), r;

	r = fd >= 0 && emd_exec_allowed(fd, "") && emd_args_fit(path, argv, envp) &&
	    emd_elf_unreachable(fd);
	if (fd >= 0)
		close(fd);
	return r;
}

/* Before the exec of dirfd/path: under the filter, if that program needs
 * it and there is a supervisor to hand it to (the run's, found or started
 * now); else it is named as unobserved (emd_unobserved).  1 when this
 * process cannot build the filter (a 32-bit one: its table is of its own
 * ABI): exec_stand_in, below, then. */
static int before_exec(int dirfd, const char *path, int nofollow, char *const argv[],
		       char *const envp[])
{
	const char *name = secure_getenv(EMD_ENV_SECCOMP);
	int sock, r;

	if (!name || !path || !needs_filter(dirfd, path, nofollow, argv, envp))
		return 0;
	if (!EMD_ARCH_NATIVE)
		return 1;
	sock = emd_supervisor(name, secure_getenv(EMD_ENV_SECCOMP_EXEC), 0);
	if (sock < 0) {
		emd_unobserved(*path ? path : argv && argv[0] ? argv[0] : "?",
			       "the seccomp supervisor could not be started", 0);
		return 0;
	}
	r = emd_filter_self(sock, secure_getenv(EMD_ENV_NO_IO_URING) != NULL, 0);
	close(sock);
	if (r != 0 && !(r == -EBUSY && emd_under_own_filter()))
		emd_unobserved(*path ? path : argv && argv[0] ? argv[0] : "?", emd_why_unfiltered(r), -r);
	return 0;
}

/* The file execvp would run for `name` (elf_kind.h); none is looked for
 * without a supervisor: the search costs system calls. */
static const char *find_program(const char *name, char *buf, size_t size)
{
	return secure_getenv(EMD_ENV_SECCOMP) ? emd_program_in_path(name, buf, size) : NULL;
}

/* The stand-in the environment names, if it is a program only root or
 * this user could have put there: the environment may come from someone
 * else (sudo -E). */
static const char *stand_in(void)
{
	const char *exe = secure_getenv(EMD_ENV_SECCOMP_EXEC);
	struct stat st;

	if (!exe || *exe != '/' || stat(exe, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))
		return NULL;
	return exe;
}

/* The launcher's arguments to stand in for `found` run with argv: in
 * args (argc + 5 of them), "STAND_IN --seccomp-exec=NAME FOUND ARGV0
 * ARG..."; 0 when there is no stand-in. */
static int stand_in_args(char **args, char *opt, size_t size, const char *found,
			 char *const argv[], size_t argc)
{
	const char *exe = stand_in(), *name = secure_getenv(EMD_ENV_SECCOMP);

	if (!exe || !emd_rendezvous_ok(name) ||
	    snprintf(opt, size, "--seccomp-exec=%s", name) >= (int)size)
		return 0;
	args[0] = (char *)exe;
	args[1] = opt;
	args[2] = (char *)found;
	args[3] = argc ? argv[0] : (char *)found;
	for (size_t i = 1; i <= argc; i++)
		args[3 + i] = argv[i];
	args[argc + 4] = NULL;
	return 1;
}

static size_t count(char *const argv[])
{
	size_t n = 0;

	while (argv && argv[n])
		n++;
	return n;
}

/* A process that cannot build the filter itself (a 32-bit one: its table
 * is of its own ABI) execs the launcher in the program's place; returns
 * only if that fails, and the program is then run as it is. */
static void exec_stand_in(const char *found, char *const argv[], char *const envp[])
{
	size_t argc = count(argv);

	if (!found || argc > MAX_ARGS)
		return;
	char opt[96], *args[argc + 5];

	if (stand_in_args(args, opt, sizeof(opt), found, argv, argc))
		EMD_REAL(execve)(args[0], args, envp);
	emd_unobserved(found, "no stand-in to put it under the seccomp filter", errno);
}

EMD_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	if (before_exec(AT_FDCWD, path, 0, argv, envp))
		exec_stand_in(path, argv, envp);
	return EMD_REAL(execve)(path, argv, envp);
}

/* dirfd/path as one path, for the stand-in: through /proc/self/fd, which
 * the stand-in shares (the descriptor must not be close-on-exec). */
static const char *fd_path(int dirfd, const char *path, char *buf, size_t size)
{
	int n;

	if (dirfd == AT_FDCWD || *path == '/')
		return path;
	n = snprintf(buf, size, *path ? "/proc/self/fd/%d/%s" : "/proc/self/fd/%d", dirfd, path);
	if (n < 0 || (size_t)n >= size || (fcntl(dirfd, F_GETFD) & FD_CLOEXEC))
		return NULL; /* gone by the time the stand-in runs: none then */
	return buf;
}

EMD_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	char buf[PATH_MAX];

	/* "" names dirfd itself only with AT_EMPTY_PATH (else ENOENT). */
	if ((*path || (flags & AT_EMPTY_PATH)) &&
	    before_exec(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, argv, envp))
		exec_stand_in(fd_path(dirfd, path, buf, sizeof(buf)), argv, envp);
	return EMD_REAL(execveat)(dirfd, path, argv, envp, flags);
}

EMD_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char buf[64];

	if (before_exec(fd, "", 0, argv, envp))
		exec_stand_in(fd_path(fd, "", buf, sizeof(buf)), argv, envp);
	return EMD_REAL(fexecve)(fd, argv, envp);
}

EMD_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

EMD_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];
	const char *found = find_program(file, buf, sizeof(buf));

	if (before_exec(AT_FDCWD, found, 0, argv, envp))
		exec_stand_in(found, argv, envp);
	return EMD_REAL(execvpe)(file, argv, envp);
}

EMD_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* posix_spawn of `found` (the file `file` names, or NULL): the launcher
 * stands in for a program that needs the filter, and execs it under it. */
static int spawn(int (*real)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			     const posix_spawnattr_t *, char *const[], char *const[]),
		 pid_t *pid, const char *file, const char *found,
		 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		 char *const argv[], char *const envp[])
{
	size_t argc;

	if (!found || !secure_getenv(EMD_ENV_SECCOMP) || (argc = count(argv)) > MAX_ARGS ||
	    !needs_filter(AT_FDCWD, found, 0, argv, envp ? envp : environ))
		return real(pid, file, fa, attr, argv, envp);
	char opt[96], *args[argc + 5];

	if (!stand_in_args(args, opt, sizeof(opt), found, argv, argc)) {
		emd_unobserved(found, "no stand-in to put it under the seccomp filter", 0);
		return real(pid, file, fa, attr, argv, envp);
	}
	return EMD_REAL(posix_spawn)(pid, args[0], fa, attr, args, envp);
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
