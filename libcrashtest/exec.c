/* SPDX-License-Identifier: MIT */
/* exec.c -- a process that execs lets go of the files it held (image.c):
 * its streams' buffers are gone with it, its mappings too.  Each is
 * pictured and released before the exec, and held again if the exec fails.
 * glibc's own exec functions call the system call directly, so each entry
 * point is wrapped (the list forms in preload/exec_list.c), and
 * posix_spawn too.
 *
 * A program the library cannot enter (static, Go, another loader's, or one
 * naming io_uring or Linux AIO: elf_kind.h) changes the copy past it: the
 * journal says so, naming the program, and the points from there on are
 * unknown (an exec that then fails leaves them unknown too).
 */
#include "ct.h"
#include "elf_kind.h"

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

/* The program execvp or posix_spawnp runs for `file`. */
static void unseen_in_path(const char *file)
{
	char buf[PATH_MAX];
	const char *found = file ? emd_program_in_path(file, buf, sizeof(buf)) : NULL;

	unseen(AT_FDCWD, found, 0);
}

PL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	int r;

	unseen(AT_FDCWD, path, 0);
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

	unseen_in_path(file);
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

	unseen(fd, "", 0);
	ct_image_exec(0);
	r = REAL(fexecve)(fd, argv, envp);
	ct_image_exec(1);
	return r;
}

PL_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	int r;

	unseen(dirfd, path, flags & AT_SYMLINK_NOFOLLOW);
	ct_image_exec(0);
	r = REAL(execveat)(dirfd, path, argv, envp, flags);
	ct_image_exec(1);
	return r;
}

/* The spawning process keeps its files: only the program is looked at. */
PL_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	unseen(AT_FDCWD, path, 0);
	return REAL(posix_spawn)(pid, path, actions, attr, argv, envp);
}

PL_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	unseen_in_path(file);
	return REAL(posix_spawnp)(pid, file, actions, attr, argv, envp);
}
