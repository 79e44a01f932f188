/* SPDX-License-Identifier: MIT */
/* visible.c -- what would see a parked descriptor (park.c) still holding a
 * file the command has closed: a process it starts (which may unmount the
 * file system, or wait for the space of a file removed), an unmount of its
 * own, the removal of the parked file itself.  Each settles the parked
 * files first, so that the command can do what it could natively.
 *
 * glibc's system and popen start their process with an internal
 * posix_spawn, past the wrapper: each is wrapped by name.  vfork's child
 * runs on the caller's stack, so its wrapper jumps to the real one from the
 * caller's own frame (preload.h); elsewhere than x86 it is not wrapped.
 * posix_spawn and posix_spawnp also put a static or Go program under
 * nocache's filter (seccomp.c).  Another process, not the command's, that unmounts the file system while
 * the command runs on still finds it busy (doc/nocache.md, Limits).
 */
#include "nocache.h"

#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mount.h>

/* Every parked file settled and closed. */
static void settle_all(void)
{
	nc_unpark_range(0, -1u, 1);
}

PL_EXPORT pid_t fork(void)
{
	settle_all();
	return NC_REAL(fork)();
}

#ifdef PL_VFORK_WRAPPER
/* vfork's wrapper calls this, then the function it returns. */
void *nc_before_vfork(void);
void *nc_before_vfork(void)
{
	settle_all();
	return (void *)NC_REAL(vfork);
}
PL_VFORK_WRAPPER(nc_before_vfork);
#endif

PL_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	settle_all();
	return nc_spawn(NC_REAL(posix_spawn), pid, path, path, fa, attr, argv, envp);
}

PL_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];

	settle_all();
	return nc_spawn(NC_REAL(posix_spawnp), pid, file, nc_find_program(file, buf, sizeof(buf)),
			fa, attr, argv, envp);
}

PL_EXPORT int system(const char *command)
{
	settle_all();
	return NC_REAL(system)(command);
}

PL_EXPORT FILE *popen(const char *command, const char *type)
{
	settle_all();
	return NC_REAL(popen)(command, type);
}

PL_EXPORT int umount(const char *target)
{
	settle_all();
	return NC_REAL(umount)(target);
}

PL_EXPORT int umount2(const char *target, int flags)
{
	settle_all();
	return NC_REAL(umount2)(target, flags);
}

/* A name about to go (removed, or replaced by a rename): the file's space
 * must be free once it has, as natively. */
PL_EXPORT int unlink(const char *path)
{
	nc_unpark_name(AT_FDCWD, path);
	return NC_REAL(unlink)(path);
}

PL_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	nc_unpark_name(dirfd, path);
	return NC_REAL(unlinkat)(dirfd, path, flags);
}

PL_EXPORT int remove(const char *path)
{
	nc_unpark_name(AT_FDCWD, path);
	return NC_REAL(remove)(path);
}

PL_EXPORT int rename(const char *from, const char *to)
{
	nc_unpark_name(AT_FDCWD, to);
	return NC_REAL(rename)(from, to);
}

PL_EXPORT int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	nc_unpark_name(tofd, to);
	return NC_REAL(renameat)(fromfd, from, tofd, to);
}

PL_EXPORT int renameat2(int fromfd, const char *from, int tofd, const char *to,
			unsigned int flags)
{
	nc_unpark_name(tofd, to);
	return NC_REAL(renameat2)(fromfd, from, tofd, to, flags);
}
