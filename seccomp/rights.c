/* SPDX-License-Identifier: MIT */
/* rights.c -- may the supervisor do something for a caller?  Only when it
 * can do nothing the caller could not, in every respect the kernel weighs:
 *
 * - the same user and group ids (real, effective, saved, file system),
 *   groups and capability sets: /proc/TID/status, per thread;
 * - the same LSM label (/proc/TID/attr/current: SELinux, AppArmor, Smack),
 *   and the same label for the files it creates (attr/fscreate, SELinux);
 * - no seccomp filter of its own: only the one eatmydata installed on top
 *   of what the supervisor has (Seccomp_filters);
 * - no Landlock domain of its own: the filter reports every
 *   landlock_restrict_self of the tree, and after the first one nothing is
 *   done for anyone (a domain is inherited and cannot be seen from outside);
 * - the same cgroups, whose limits (memory, I/O) a write is charged to;
 * - the same mount and user namespaces, and the same root directory, by
 *   mount and inode (a chroot into a bind mount of / is another root).
 *
 * What depends on the call itself (the caller's working directory, its
 * umask, its file size limit, /proc/self) is for the caller of this. */
#include "common/common.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *my_status;
static int my_filters;
static int landlock_seen;

/* The status lines that decide what a process may do, whole however long
 * (Groups: holds up to 65536 ids), and its umask and number of seccomp
 * filters; *out is to free.  -1 if any of it cannot be read. */
static int read_status(const char *pid, char **out, mode_t *umask_out, int *filters)
{
	static const char *const keys[] = {"Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:",
					   "CapEff:", "CapBnd:", "CapAmb:"};
	char path[64], *line = NULL;
	size_t cap = 0, size;
	unsigned um;
	FILE *f, *keep;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	*out = NULL;
	*filters = -1;
	if (!(f = fopen(path, "re")))
		return -1;
	if (!(keep = open_memstream(out, &size))) {
		fclose(f);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		if (umask_out && sscanf(line, "Umask: %o", &um) == 1)
			*umask_out = um;
		sscanf(line, "Seccomp_filters: %d", filters);
		for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
			if (!strncmp(line, keys[i], strlen(keys[i])))
				fputs(line, keep);
	}
	free(line);
	if (ferror(f) || fclose(keep) != 0)
		*filters = -1;
	fclose(f);
	return *filters < 0 ? -1 : 0;
}

void rights_init(void)
{
	if (read_status("self", &my_status, NULL, &my_filters) != 0)
		my_filters = -1; /* then nothing is done on anyone's behalf */
}

void rights_note_landlock(void)
{
	__atomic_store_n(&landlock_seen, 1, __ATOMIC_RELEASE);
}

/* The contents of /proc/PID/<what>, or of the error reading it, compared. */
static int same_file_text(const char *pid, const char *what, int link)
{
	char pa[64], pb[64], a[4096] = "", b[4096] = "";
	ssize_t na, nb;
	int fd;

	snprintf(pa, sizeof(pa), "/proc/%s/%s", pid, what);
	snprintf(pb, sizeof(pb), "/proc/self/%s", what);
	if (link) {
		na = readlink(pa, a, sizeof(a));
		nb = readlink(pb, b, sizeof(b));
	} else {
		na = (fd = open(pa, O_RDONLY | O_CLOEXEC)) >= 0 ? read(fd, a, sizeof(a)) : -1;
		na = na < 0 ? -errno : na;
		if (fd >= 0)
			close(fd);
		nb = (fd = open(pb, O_RDONLY | O_CLOEXEC)) >= 0 ? read(fd, b, sizeof(b)) : -1;
		nb = nb < 0 ? -errno : nb;
		if (fd >= 0)
			close(fd);
	}
	return na == nb && na < (ssize_t)sizeof(a) && (na <= 0 || !memcmp(a, b, na));
}

/* The same root directory: the same mount, the same inode. */
static int same_root(const char *pid)
{
	char path[64];
	struct statx a, b;

	snprintf(path, sizeof(path), "/proc/%s/root", pid);
	return statx(AT_FDCWD, path, 0, STATX_INO | STATX_MNT_ID, &a) == 0 &&
	       statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &b) == 0 &&
	       (a.stx_mask & b.stx_mask & STATX_MNT_ID) && a.stx_mnt_id == b.stx_mnt_id &&
	       a.stx_ino == b.stx_ino && a.stx_dev_major == b.stx_dev_major &&
	       a.stx_dev_minor == b.stx_dev_minor;
}

int same_rights(pid_t tid, mode_t *umask_out)
{
	char pid[16], *theirs;
	int filters, same;

	snprintf(pid, sizeof(pid), "%d", tid);
	if (my_filters < 0 || !my_status || __atomic_load_n(&landlock_seen, __ATOMIC_ACQUIRE))
		return 0;
	same = read_status(pid, &theirs, umask_out, &filters) == 0 &&
	       filters == my_filters + 1 && !strcmp(theirs, my_status);
	free(theirs);
	return same && same_file_text(pid, "attr/current", 0) &&
	       same_file_text(pid, "attr/fscreate", 0) && same_file_text(pid, "cgroup", 0) &&
	       same_file_text(pid, "ns/mnt", 1) && same_file_text(pid, "ns/user", 1) &&
	       same_root(pid);
}
