/* SPDX-License-Identifier: MIT */
/* seccomp.c -- a program the library cannot reach (static, Go, musl's
 * loader: elf_kind.c), started by a process of the tree: just before the
 * exec, this process puts itself under nocache's seccomp filter and hands
 * the listener to the run's supervisor (shared/filter.c,
 * rendezvous.c), whose policy makes the program's reads and writes with
 * RWF_DONTCACHE (seccomp/nocache.c).  One that cannot have the filter is
 * named on stderr: its pages stay cached.
 *
 * Only the exec forms that name a file are served (execve, execv, execvp,
 * execvpe); nothing is done unless the launcher named a supervisor.  Files
 * are opened and closed with raw system calls: the library's own open and
 * close wrappers are for the command's files.
 */
#include "nocache.h"
#include "elf_kind.h"
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Is the program at path one the library cannot reach, and one this
 * process may run?  Opened for reading only once it is known to be a
 * regular file (emd_program_file), through its O_PATH descriptor. */
static int unreachable(const char *path)
{
	int look = (int)syscall(SYS_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC), fd = -1, r;
	char self[32];
	struct stat st;

	if (look >= 0 && emd_program_file(look, &st)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", look);
		fd = (int)syscall(SYS_openat, AT_FDCWD, self, READ_FLAGS);
	}
	r = fd >= 0 && emd_exec_allowed(fd, "") && emd_elf_unreachable(fd);
	if (fd >= 0)
		syscall(SYS_close, fd);
	if (look >= 0)
		syscall(SYS_close, look);
	return r;
}

static void say(const char *path, const char *why)
{
	char line[PATH_MAX + 160];
	int n = snprintf(line, sizeof(line), "nocache: %s: its reads and writes stay cached: %s\n",
			 path, why);

	if (n > 0)
		syscall(SYS_write, 2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void nc_before_exec(const char *file, int search_path, char *const argv[], char *const envp[])
{
	const char *name = secure_getenv("EATMYDATA_SECCOMP");
	const char *policy = secure_getenv("EATMYDATA_SECCOMP_POLICY");
	char buf[PATH_MAX];
	const char *path = file && search_path ? emd_program_in_path(file, buf, sizeof(buf)) : file;
	int saved = errno, sock, r;

	/* An exec foreseen to fail (E2BIG) leaves this process as it was:
	 * unfiltered, without no_new_privs, a set-user-ID program run next
	 * keeping its privilege. */
	if (!name || !policy || strcmp(policy, "nocache") != 0 || !path ||
	    !emd_args_fit(path, argv, envp) || !unreachable(path)) {
		errno = saved;
		return;
	}
	sock = emd_supervisor(name, secure_getenv("EATMYDATA_SECCOMP_EXEC"), 0);
	r = sock < 0 ? -ECHILD : emd_filter_self(sock, 0, 0);
	if (sock >= 0)
		syscall(SYS_close, sock);
	if (r != 0 && r != -EBUSY) /* EBUSY: under the command's filter already */
		say(path, emd_why_unfiltered(r));
	errno = saved;
}
