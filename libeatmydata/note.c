/* SPDX-License-Identifier: MIT */
/* note.c -- remembers which file systems had durability eaten, so that
 * `eatmydata --sync-on-exit` can sync just those at the end.
 *
 * The launcher names a directory in EATMYDATA_SYNC_DIR; each process of the
 * tree makes one entry "MAJOR:MINOR" per file system (or "all" for sync(2)
 * and msync, whose file system is unknown) with a single mkdir, which is
 * atomic across processes and survives a process killed with SIGKILL.
 */
#include "emd.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static char note_dir[PATH_MAX - 32];
static size_t note_len;

/* The last few file systems this process noted, to skip the mkdir; a racy
 * update costs at most one redundant mkdir. */
#define SEEN_SLOTS 8
static dev_t seen[SEEN_SLOTS];
static unsigned seen_next;

void emd_note_init(void)
{
	const char *dir = getenv("EATMYDATA_SYNC_DIR");
	size_t len = dir ? strlen(dir) : 0;

	if (len == 0 || len >= sizeof(note_dir))
		return;
	memcpy(note_dir, dir, len + 1);
	note_len = len;
}

static void note_name(const char *name)
{
	char path[PATH_MAX];
	int saved = errno;

	memcpy(path, note_dir, note_len);
	path[note_len] = '/';
	strcpy(path + note_len + 1, name);
	mkdir(path, 0700);
	errno = saved;
}

/* Decimal digits of v at p; returns the end. */
static char *put_uint(char *p, unsigned v)
{
	char tmp[12];
	int n = 0;

	do
		tmp[n++] = '0' + v % 10;
	while ((v /= 10) != 0);
	while (n)
		*p++ = tmp[--n];
	return p;
}

void emd_note_fd(int fd)
{
	struct stat st;
	char name[32], *p;
	int saved = errno;

	if (EMD_LIKELY(note_len == 0))
		return;
	if (fstat(fd, &st) != 0) {
		errno = saved;
		return;
	}
	errno = saved;
	for (unsigned i = 0; i < SEEN_SLOTS; i++)
		if (seen[i] == st.st_dev && st.st_dev != 0)
			return;
	seen[seen_next++ % SEEN_SLOTS] = st.st_dev;
	p = put_uint(name, major(st.st_dev));
	*p++ = ':';
	*put_uint(p, minor(st.st_dev)) = '\0';
	note_name(name);
}

void emd_note_all(void)
{
	if (note_len != 0)
		note_name("all");
}
