/* SPDX-License-Identifier: MIT */
/* exec_filter.h -- the exec family and posix_spawn in a process a preload
 * library serves (shared/exec_filter.c), for eatmydata's library and
 * nocache's alike: a program the library cannot reach (elf_kind.h) is put
 * under the run's filter before it runs (filter.h), by the process that
 * execs it, or by the launcher standing in for it where that process runs
 * no code of ours between its fork and its exec (posix_spawn) or cannot
 * build the filter (a 32-bit one).
 *
 * Nothing happens unless the launcher named a supervisor
 * (EATMYDATA_SECCOMP).  Runs in vfork children: no allocation, stack
 * buffers only.
 */
#ifndef EMD_EXEC_FILTER_H
#define EMD_EXEC_FILTER_H

#include <spawn.h>
#include <stddef.h>
#include <sys/types.h>

typedef int emd_spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
			 const posix_spawnattr_t *, char *const[], char *const[]);

/* What a library gives: its real functions, past every wrapper, and its
 * words. */
struct emd_exec_ops {
	/* The raw system call, -errno on failure (errno kept). */
	long (*syscall)(long nr, long a, long b, long c, long d, long e, long f);
	int (*execve)(const char *path, char *const argv[], char *const envp[]);
	emd_spawn_fn *posix_spawn;
	/* A program that runs without the filter it needs, and why (err: an
	 * errno, or 0). */
	void (*unobserved)(const char *path, const char *why, int err);
	/* Under a filter already (EBUSY): is it one of the run's policy, so
	 * that nothing is to be said?  NULL: say nothing. */
	int (*own_filter)(void);
};

/* Before an exec of dirfd/path (path "": dirfd itself; `nofollow`: a
 * final symlink is none, execveat's AT_SYMLINK_NOFOLLOW): a program that
 * needs the filter is put under it, the launcher standing in for it (an
 * exec that returns only if that fails) when this process cannot build
 * it. */
void emd_before_exec(const struct emd_exec_ops *ops, int dirfd, const char *path, int nofollow,
		     char *const argv[], char *const envp[]);

/* The file execvp would run for `name` (elf_kind.h), in buf; none is
 * looked for without a supervisor: the search costs system calls. */
const char *emd_find_program(const char *name, char *buf, size_t size);

/* posix_spawn (`real`) of `file`, which is the file `found` (NULL: none):
 * the launcher is spawned in place of a program that needs the filter, to
 * exec it under the filter. */
int emd_spawn(const struct emd_exec_ops *ops, emd_spawn_fn *real, pid_t *pid, const char *file,
	      const char *found, const posix_spawn_file_actions_t *fa,
	      const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);

#endif
