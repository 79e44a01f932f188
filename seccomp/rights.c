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

/* The supervisor's own side of each comparison, read once at its start
 * as its status is: nothing of the tree's can change them (an
 * administrator who moves the supervisor to another cgroup after its start
 * is not seen: the tree's cgroup is compared with the one it started in). */
static struct mine {
	char what[16]; /* not a pointer: no relocation makes the loader touch
			* (and copy) this array's pages at each launcher's start */
	int link;
	ssize_t n; /* the length read, or -errno */
	char text[4096];
} mine[] = {{.what = "attr/current"}, {.what = "attr/fscreate"}, {.what = "cgroup"},
	    {.what = "ns/mnt", .link = 1}, {.what = "ns/user", .link = 1}};
#define MINE (sizeof(mine) / sizeof(*mine))
static struct statx my_root;
static int my_root_known;

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
	if (!(f = fopen(path, "re"))) {
		fds_note();
		return -1;
	}
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

/* /proc/PID/<what> read (link: its target) into out; the length, or
 * -errno. */
static ssize_t file_text(const char *pid, const char *what, int link, char *out, size_t size)
{
	char path[64];
	ssize_t n;
	int fd = -1;

	snprintf(path, sizeof(path), "/proc/%s/%s", pid, what);
	if (link)
		n = readlink(path, out, size);
	else
		n = (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 ? read(fd, out, size) : -1;
	if (n < 0 && !link && fd < 0)
		fds_note();
	n = n < 0 ? -errno : n;
	if (fd >= 0)
		close(fd);
	return n;
}

void rights_init(void)
{
	if (read_status("self", &my_status, NULL, &my_filters) != 0)
		my_filters = -1; /* then nothing is done on anyone's behalf */
	for (size_t i = 0; i < MINE; i++)
		if ((mine[i].n = file_text("self", mine[i].what, mine[i].link, mine[i].text,
					   sizeof(mine[i].text))) >= (ssize_t)sizeof(mine[i].text))
			my_filters = -1; /* too long to be compared whole */
	my_root_known = statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &my_root) == 0 &&
			(my_root.stx_mask & STATX_MNT_ID);
}

void rights_note_landlock(void)
{
	__atomic_store_n(&landlock_seen, 1, __ATOMIC_RELEASE);
}

/* The contents of /proc/PID/<what>, or of the error reading it, against
 * the supervisor's own. */
static int same_file_text(const char *pid, const struct mine *m)
{
	char text[sizeof(m->text)];
	ssize_t n = file_text(pid, m->what, m->link, text, sizeof(text));

	return n == m->n && (n <= 0 || !memcmp(text, m->text, (size_t)n));
}

/* The same root directory: the same mount, the same inode. */
static int same_root(const char *pid)
{
	char path[64];
	struct statx a;

	snprintf(path, sizeof(path), "/proc/%s/root", pid);
	return my_root_known && statx(AT_FDCWD, path, 0, STATX_INO | STATX_MNT_ID, &a) == 0 &&
	       (a.stx_mask & STATX_MNT_ID) && a.stx_mnt_id == my_root.stx_mnt_id &&
	       a.stx_ino == my_root.stx_ino && a.stx_dev_major == my_root.stx_dev_major &&
	       a.stx_dev_minor == my_root.stx_dev_minor;
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
	for (size_t i = 0; same && i < MINE; i++)
		same = same_file_text(pid, &mine[i]);
	return same && same_root(pid);
}
