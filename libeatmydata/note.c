/* SPDX-License-Identifier: MIT */
/* note.c -- remembers which file systems had durability eaten, so that
 * `eatmydata --sync-on-exit` can sync just those at the end.
 *
 * The launcher opens a private directory and leaves it open for the whole
 * tree: EATMYDATA_SYNC_FD is the descriptor, EATMYDATA_SYNC_ID the
 * directory's "DEV:INO", EATMYDATA_SYNC_DIR its path.  A descriptor reaches
 * the directory from a chroot, a mount namespace with its own /tmp, or any
 * working directory, where a path would not.  Each process makes one entry
 * "MAJOR:MINOR" per file system (or "all" for sync(2) and msync, whose file
 * system is unknown) with a single mkdirat, which is atomic across processes
 * and survives a process killed with SIGKILL.
 *
 * A process started without the descriptor (sudo closes them all) opens the
 * path again, if it leads to the same directory; if not, it eats nothing.
 * A note refused later (the descriptor closed or reused since, ENOSPC, a
 * process now of a user without write access) is replaced by a sync at
 * once, and the process eats nothing from then on (an O_SYNC file it opens
 * later keeps its flag).  Either way the run is durable at its end, as
 * --sync-on-exit claims.
 */
#include "emd.h"

#include <sys/auxv.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static int note_fd = -1;
static int note_wanted;
static dev_t note_dev;
static ino_t note_ino;

/* The last few file systems this process noted, to skip the mkdirat; a racy
 * update costs at most one redundant mkdirat. */
#define SEEN_SLOTS 8
static dev_t seen[SEEN_SLOTS];
static unsigned seen_next;

/* Is note_fd still the launcher's directory?  The number may have been
 * closed and reused since (closefrom in a daemon, a shell's `exec 9>f`). */
static int note_dir_ok(void)
{
	struct stat st;

	return note_fd >= 0 && fstat(note_fd, &st) == 0 && S_ISDIR(st.st_mode) &&
	       st.st_dev == note_dev && st.st_ino == note_ino;
}

/* "DEV:INO" and, when a descriptor was inherited, "N" from the
 * environment; 0 when they are well formed (note_fd -1 without "N": a
 * program that cleaned its environment or descriptors, sudo). */
static int read_env(const char *fd_text, const char *id)
{
	char *end;
	unsigned long long dev, ino;
	long fd = fd_text ? strtol(fd_text, &end, 10) : -1;

	if (fd_text && (fd < 0 || fd > 0x7fffffff || end == fd_text || *end))
		return -1;
	dev = strtoull(id, &end, 10);
	if (*end != ':')
		return -1;
	ino = strtoull(end + 1, &end, 10);
	if (*end)
		return -1;
	note_fd = (int)fd;
	note_dev = (dev_t)dev;
	note_ino = (ino_t)ino;
	return 0;
}

/* The directory by its path, when the inherited descriptor is gone. */
static int reopen_by_path(void)
{
	const char *dir = secure_getenv("EATMYDATA_SYNC_DIR");

	if (!dir || *dir != '/')
		return 0;
	/* Not open(): this library's own wrapper, and this runs in its
	 * constructor. */
	note_fd = (int)emd_syscall(SYS_openat, AT_FDCWD, (long)dir,
				   O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				   0, 0, 0);
	return note_dir_ok();
}

int emd_note_init(void)
{
	const char *id = secure_getenv("EATMYDATA_SYNC_ID");
	int saved = errno, ok;

	/* A set-user-ID program takes no directory from its caller: it cannot
	 * note, so it syncs as natively. */
	if (!id && getauxval(AT_SECURE) && getenv("EATMYDATA_SYNC_ID"))
		return -1;
	if (!id || !*id)
		return 0;
	note_wanted = 1;
	ok = read_env(secure_getenv("EATMYDATA_SYNC_FD"), id) == 0 &&
	     (note_dir_ok() || reopen_by_path());
	errno = saved;
	return ok ? 0 : -1;
}

/* Make the entry `name`; 0 when it is there. */
static int note_name(const char *name)
{
	int saved = errno, ok;

	ok = note_dir_ok() &&
	     (mkdirat(note_fd, name, 0700) == 0 || errno == EEXIST);
	errno = saved;
	return ok ? 0 : -1;
}

/* The note was refused: make good now what it stood for, and stop eating. */
static void cannot_note(int fd)
{
	int mode = __atomic_load_n(&emd_mode, __ATOMIC_RELAXED);

	__atomic_store_n(&emd_mode, (mode & ~EMD_EAT) | EMD_PASS,
			 __ATOMIC_RELAXED);
	if (fd >= 0)
		emd_syscall(SYS_syncfs, fd, 0, 0, 0, 0, 0);
	else
		emd_syscall(SYS_sync, 0, 0, 0, 0, 0, 0);
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

	if (EMD_LIKELY(!note_wanted) || !emd_eating())
		return;
	if (fstat(fd, &st) != 0) {
		errno = saved;
		return;
	}
	errno = saved;
	for (unsigned i = 0; i < SEEN_SLOTS; i++)
		if (seen[i] == st.st_dev && st.st_dev != 0)
			return;
	p = put_uint(name, major(st.st_dev));
	*p++ = ':';
	*put_uint(p, minor(st.st_dev)) = '\0';
	if (note_name(name) != 0) {
		cannot_note(fd);
		return;
	}
	seen[seen_next++ % SEEN_SLOTS] = st.st_dev;
}

void emd_note_all(void)
{
	if (note_wanted && emd_eating() && note_name("all") != 0)
		cannot_note(-1);
}
