/* SPDX-License-Identifier: MIT */
/* exec_filter.c -- programs a preload library cannot reach (static or Go,
 * 32- or 64-bit: elf_kind.c), started by a process it serves
 * (include/exec_filter.h), for eatmydata's library and nocache's.  Just
 * before the exec, that process puts itself under the seccomp filter and
 * hands the listener to the run's supervisor (filter.c), so the program
 * starts filtered; only it, and what it starts, pays for a filter.
 * posix_spawn runs no code of ours between its fork and its exec: the
 * launcher, in its --seccomp-exec mode, is spawned in the program's place
 * to do the same.
 *
 * Each library wraps every exec entry point (the list forms, execl...,
 * in preload/exec_list.c), because glibc's own (execvp, execl,
 * posix_spawn) call the system call directly, past any wrapper; the
 * program's ELF headers are read once per exec, and the supervisor is
 * found or started only for a program that needs it.  Runs in vfork
 * children: no allocation, stack buffers only; files are opened through
 * the library's raw system call, past its own wrappers.
 */
#define _GNU_SOURCE 1
#include "exec_filter.h"
#include "elf_kind.h"
#include "env.h"
#include "filter.h"
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

/* The stand-in's arguments are on the stack, which may be a small
 * thread's or a vfork child's (16 KiB at most: nothing is allocated, in a
 * vfork child); a longer list runs the program as it is, and says so. */
#define MAX_ARGS 2048

#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static int open_at(const struct emd_exec_ops *ops, int dirfd, const char *path, int flags)
{
	return (int)ops->syscall(SYS_openat, dirfd, (long)path, flags, 0, 0, 0);
}

/* The program at dirfd/path (or dirfd itself, path ""), opened for reading
 * only once it is known to be a regular file (emd_program_file): through
 * its O_PATH descriptor's own link in /proc, so that the file opened is the
 * file looked at; without /proc (a chroot), by name.  `nofollow`: a final
 * symlink is none (execveat's AT_SYMLINK_NOFOLLOW, ELOOP). */
static int open_program(const struct emd_exec_ops *ops, int dirfd, const char *path, int nofollow)
{
	char self[32];
	struct stat st;
	int look = *path ? open_at(ops, dirfd, path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0))
			 : dirfd;
	int fd = look < 0 ? look : -1;

	if (look >= 0 && emd_program_file(look, &st)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", look);
		fd = open_at(ops, AT_FDCWD, self, READ_FLAGS);
		if (fd < 0 && *path)
			fd = open_at(ops, dirfd, path, READ_FLAGS);
	}
	if (look >= 0 && look != dirfd)
		ops->syscall(SYS_close, look, 0, 0, 0, 0, 0);
	return fd;
}

/* The program could not be opened to be looked at, though the exec may
 * well run it: no descriptor free (the process's limit, the system's), no
 * memory. */
static int unlooked(int fd)
{
	return fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM;
}

/* Is the program at dirfd/path (or dirfd itself, path "") one the library
 * cannot reach, and one the kernel will run with these arguments?  A
 * filter put on for an exec that then fails could not be taken off, and
 * no_new_privs neither: every check the kernel makes that can be made
 * beforehand is made (the rest, a file opened for writing meanwhile,
 * ETXTBSY, is a known limit). */
static int needs_filter(const struct emd_exec_ops *ops, int dirfd, const char *path, int nofollow,
			char *const argv[], char *const envp[])
{
	int fd = open_program(ops, dirfd, path, nofollow), r = 0;

	if (unlooked(fd))
		return -1;
	if (fd >= 0 && emd_exec_allowed(fd, "") && emd_args_fit(path, argv, envp))
		r = emd_elf_unreachable(fd);
	if (fd >= 0)
		ops->syscall(SYS_close, fd, 0, 0, 0, 0, 0);
	return r;
}

/* needs_filter's answer (the program's kind, elf_kind.h), where it is
 * needed: for a supervisor to hand the program to, or where its loader
 * could refuse our LD_PRELOAD entry aloud (the musl build alone). */
static int judged(const struct emd_exec_ops *ops, int dirfd, const char *path, int nofollow,
		  char *const argv[], char *const envp[])
{
	if (!secure_getenv(EMD_ENV_SECCOMP) && !emd_preload_refusable())
		return 0;
	return needs_filter(ops, dirfd, path, nofollow, argv, envp);
}

/* Under the filter, if the program needs it (`r`: needs_filter's answer)
 * and there is a supervisor to hand it to (the run's, found or started
 * now); else it is named as unobserved.  1 when this process cannot build
 * the filter (a 32-bit one: its table is of its own ABI): exec_stand_in,
 * below, then. */
static int filter_for(const struct emd_exec_ops *ops, int r, const char *path, char *const argv[])
{
	const char *name = secure_getenv(EMD_ENV_SECCOMP);
	const char *shown = *path ? path : argv && argv[0] ? argv[0] : "?";
	int sock;

	if (!name || !r)
		return 0;
	if (r < 0) {
		ops->unobserved(shown, "it could not be opened to be looked at (no descriptor free)",
				0);
		return 0;
	}
	if (!EMD_ARCH_NATIVE)
		return 1;
	sock = emd_supervisor(name, secure_getenv(EMD_ENV_SECCOMP_EXEC), 0);
	if (sock < 0) {
		ops->unobserved(shown, emd_why_unfiltered(sock), 0);
		return 0;
	}
	r = emd_filter_self(sock, secure_getenv(EMD_ENV_NO_IO_URING) != NULL, 0, ops->syscall);
	close(sock);
	if (r != 0 && !(r == -EBUSY && (!ops->own_filter || ops->own_filter())))
		ops->unobserved(shown, emd_why_unfiltered(r), -r);
	return 0;
}

const char *emd_find_program(const char *name, char *buf, size_t size)
{
	return name && (secure_getenv(EMD_ENV_SECCOMP) || emd_preload_refusable())
		       ? emd_program_in_path(name, buf, size)
		       : NULL;
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

/* A process that cannot build the filter itself execs the launcher in
 * the program's place; returns only if that fails, and the program is
 * then run as it is. */
static void exec_stand_in(const struct emd_exec_ops *ops, const char *found, char *const argv[],
			  char *const envp[])
{
	size_t argc = count(argv);

	if (!found)
		return;
	if (argc > MAX_ARGS) {
		ops->unobserved(found, "too many arguments for the stand-in that would filter it", 0);
		return;
	}
	char opt[96], *args[argc + 5];

	if (stand_in_args(args, opt, sizeof(opt), found, argv, argc))
		ops->execve(args[0], args, envp);
	ops->unobserved(found, "no stand-in to put it under the seccomp filter", errno);
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

/* envp with our LD_PRELOAD entry left out, into env (count(envp) + 1
 * pointers) and preload (the new LD_PRELOAD=, as long as the old one at
 * most); an LD_PRELOAD left empty goes.  0 if the list would not fit. */
static int without_ours(char *const envp[], char **env, char *preload, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; envp && envp[i]; i++) {
		if (strncmp(envp[i], "LD_PRELOAD=", 11) != 0) {
			env[n++] = envp[i];
			continue;
		}
		memcpy(preload, "LD_PRELOAD=", 11);
		if (size < 12 || emd_preload_without_ours(envp[i] + 11, preload + 11, size - 11) < 0)
			return 0;
		if (preload[11])
			env[n++] = preload;
	}
	env[n] = NULL;
	return 1;
}

/* The bytes LD_PRELOAD= takes in envp, and one. */
static size_t preload_size(char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0)
			return strlen(envp[i]) + 1;
	return 1;
}

/* A program whose loader would say it cannot preload our entry (a glibc
 * program beside the musl build alone: elf_kind.h) is exec'd here with the
 * entry left out of its environment; returns only if that fails, and the
 * exec asked for is made then. */
static void exec_without_ours(const struct emd_exec_ops *ops, const char *path, char *const argv[],
			      char *const envp[])
{
	size_t n = count(envp), size = preload_size(envp);

	if (!path || n > MAX_ARGS || size > PATH_MAX)
		return;
	char preload[size], *env[n + 1];

	if (without_ours(envp, env, preload, size))
		ops->execve(path, argv, env);
}

void emd_before_exec(const struct emd_exec_ops *ops, int dirfd, const char *path, int nofollow,
		     char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];
	int kind = path ? judged(ops, dirfd, path, nofollow, argv, envp) : 0;

	if (filter_for(ops, kind, path ? path : "", argv))
		exec_stand_in(ops, fd_path(dirfd, path, buf, sizeof(buf)), argv, envp);
	if (kind == EMD_ELF_NO_GLIBC_LIB)
		exec_without_ours(ops, fd_path(dirfd, path, buf, sizeof(buf)), argv, envp);
}

/* posix_spawn of a program as exec_without_ours execs it. */
static int spawn_without_ours(emd_spawn_fn *real, pid_t *pid, const char *file,
			      const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
			      char *const argv[], char *const envp[])
{
	size_t n = count(envp), size = preload_size(envp);

	if (n > MAX_ARGS || size > PATH_MAX)
		return real(pid, file, fa, attr, argv, envp);
	char preload[size], *env[n + 1];

	return real(pid, file, fa, attr, argv, without_ours(envp, env, preload, size) ? env : envp);
}

int emd_spawn(const struct emd_exec_ops *ops, emd_spawn_fn *real, pid_t *pid, const char *file,
	      const char *found, const posix_spawn_file_actions_t *fa,
	      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char *const *env = envp ? envp : environ;
	int named = secure_getenv(EMD_ENV_SECCOMP) != NULL, needs;
	size_t argc;

	needs = found ? judged(ops, AT_FDCWD, found, 0, argv, env) : 0;
	if (needs < 0 && named)
		ops->unobserved(found, "it could not be opened to be looked at (no descriptor free)",
				0);
	if (needs == EMD_ELF_NO_GLIBC_LIB && !named)
		return spawn_without_ours(real, pid, file, fa, attr, argv, env);
	if (needs <= 0 || !named)
		return real(pid, file, fa, attr, argv, envp);
	if ((argc = count(argv)) > MAX_ARGS) {
		ops->unobserved(found, "too many arguments for the stand-in that would filter it", 0);
		return real(pid, file, fa, attr, argv, envp);
	}
	char opt[96], *args[argc + 5];

	if (!stand_in_args(args, opt, sizeof(opt), found, argv, argc)) {
		ops->unobserved(found, "no stand-in to put it under the seccomp filter", 0);
		return real(pid, file, fa, attr, argv, envp);
	}
	return ops->posix_spawn(pid, args[0], fa, attr, args, envp);
}
