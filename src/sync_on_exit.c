/* SPDX-License-Identifier: MIT */
/* sync_on_exit.c -- eatmydata --sync-on-exit.
 *
 * Each process of the tree makes an entry "MAJOR:MINOR" (or "all") in a
 * directory for every file system whose durability it had eaten (see
 * libeatmydata/note.c).  At the end, one syncfs per entry makes all that durable.
 */
#include "common.h"
#include "sync_on_exit.h"

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

void sync_on_exit_prepare(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(note_dir, sizeof(note_dir), "%s/eatmydata-sync.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(note_dir))
		die("cannot create %s: %s", note_dir, strerror(errno));
	/* Processes of the tree that change user must still leave a note. */
	if (chmod(note_dir, 01733) != 0 ||
	    setenv("EATMYDATA_SYNC_DIR", note_dir, 1) != 0)
		die("cannot set up %s: %s", note_dir, strerror(errno));
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
	DIR *dir = opendir(note_dir);
	struct dirent *d;
	int all = !dir;
	char path[PATH_MAX + 256];

	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (!all && (strcmp(d->d_name, "all") == 0 || !sync_one(d->d_name)))
			all = 1;
		snprintf(path, sizeof(path), "%s/%s", note_dir, d->d_name);
		rmdir(path);
	}
	if (all)
		sync();
	if (dir)
		closedir(dir);
	if (rmdir(note_dir) != 0)
		warn("cannot remove %s: %s", note_dir, strerror(errno));
}
