/* SPDX-License-Identifier: MIT */
/* sync_on_exit.c -- eatmydata --sync-on-exit.
 *
 * Each process of the tree makes an entry "MAJOR:MINOR" (or "all") in a
 * directory for every file system whose durability it had eaten (the
 * protocol: include/inherit.h).  At the end, one syncfs per entry makes all
 * that durable.  The supervisor notes here too (sync_on_exit_note).  A
 * process that cannot note syncs at once.
 */
#include "common.h"
#include "sync_on_exit.h"
#include "env.h"
#include "inherit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char note_dir[PATH_MAX];
static int note_fd = -1;

void sync_on_exit_prepare(void)
{
	struct stat st;
	char number[16], id[48];
	int fd;

	private_tmpdir("eatmydata-sync", note_dir, sizeof(note_dir));
	/* Inherited (no O_CLOEXEC), and above the low numbers that shell
	 * scripts take for themselves (debconf's 3). */
	fd = open(note_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) != 0)
		die("cannot open %s: %s", note_dir, strerror(errno));
	note_fd = fcntl(fd, F_DUPFD, 100);
	if (note_fd < 0)
		note_fd = fd;
	else
		close(fd);
	snprintf(number, sizeof(number), "%d", note_fd);
	snprintf(id, sizeof(id), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	if (setenv(EMD_ENV_SYNC_FD, number, 1) != 0 ||
	    setenv(EMD_ENV_SYNC_ID, id, 1) != 0 ||
	    setenv(EMD_ENV_SYNC_DIR, note_dir, 1) != 0)
		die("cannot set up %s: %s", note_dir, strerror(errno));
}

/* The directory the environment names, if the descriptor is still it. */
static int inherited_dir(struct emd_inherited *n)
{
	const char *number = getenv(EMD_ENV_SYNC_FD), *id = getenv(EMD_ENV_SYNC_ID);

	if (!number || !id || emd_notes_parse(n, number, id) != 0 || !emd_inherited_ok(n, S_IFDIR))
		return -1;
	return n->fd;
}

int sync_on_exit_keep(int at)
{
	struct emd_inherited n;
	int fd = inherited_dir(&n);
	char number[16];

	if (fd < 0 || (fd != at && dup2(fd, at) < 0))
		return at;
	snprintf(number, sizeof(number), "%d", at);
	setenv(EMD_ENV_SYNC_FD, number, 1);
	return at + 1;
}

/* 0 once the file system of dev (all: every one) is noted. */
static int noted(dev_t dev, int all)
{
	struct emd_inherited n;

	return inherited_dir(&n) < 0 || emd_notes_add(&n, dev, all) != 0 ? -1 : 0;
}

void sync_on_exit_note(int fd)
{
	int saved = errno;
	struct stat st;
	int known = fd >= 0 && fstat(fd, &st) == 0;

	if (!getenv(EMD_ENV_SYNC_ID))
		return;
	if (noted(known ? st.st_dev : 0, !known) != 0) {
		if (fd >= 0)
			syncfs(fd);
		else
			sync();
	}
	errno = saved;
}

void sync_on_exit_note_dev(dev_t dev)
{
	int saved = errno;

	if (getenv(EMD_ENV_SYNC_ID) && noted(dev, 0) != 0)
		sync();
	errno = saved;
}

/* Undo the escapes mountinfo puts in a path (\040 for a space...). */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* A mount point of the file system "MAJOR:MINOR", or 0. */
static int mount_point(const char *dev, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], id[64], root[PATH_MAX], mnt[PATH_MAX];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*d %*d %63s %4095s %4095s", id, root, mnt) != 3)
			continue;
		if (strcmp(id, dev) == 0) {
			unescape(mnt);
			found = snprintf(out, size, "%s", mnt) < (int)size;
		}
	}
	fclose(f);
	return found;
}

static int sync_one(const char *dev)
{
	char mnt[PATH_MAX];
	int fd, ok;

	if (!mount_point(dev, mnt, sizeof(mnt)))
		return 0;
	fd = open(mnt, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	ok = syncfs(fd) == 0;
	close(fd);
	return ok;
}

void sync_on_exit_finish(void)
{
	int fd = openat(note_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *d;
	int all = !dir;

	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (!all && (strcmp(d->d_name, "all") == 0 || !sync_one(d->d_name)))
			all = 1;
		unlinkat(dirfd(dir), d->d_name, AT_REMOVEDIR);
	}
	if (all)
		sync();
	if (dir)
		closedir(dir);
	if (rmdir(note_dir) != 0)
		warn("cannot remove %s: %s", note_dir, strerror(errno));
}
