/* SPDX-License-Identifier: MIT */
/* note.c -- remembers which file systems had durability eaten, so that
 * `eatmydata --sync-on-exit` can sync just those at the end (the protocol:
 * include/notes.h).  A descriptor reaches the directory from a chroot, a
 * mount namespace with its own /tmp, or any working directory, where a
 * path would not.
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
#include "notes.h"

#include <sys/auxv.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct emd_notes notes = {-1, 0, 0};
static int note_wanted;

/* The last few file systems this process noted, to skip the mkdirat; a racy
 * update costs at most one redundant mkdirat. */
#define SEEN_SLOTS 8
static dev_t seen[SEEN_SLOTS];
static unsigned seen_next;

/* The directory by its path, when the inherited descriptor is gone. */
static int reopen_by_path(void)
{
	const char *dir = secure_getenv(EMD_ENV_SYNC_DIR);

	if (!dir || *dir != '/')
		return 0;
	/* Not open(): this library's own wrapper, and this runs in its
	 * constructor. */
	notes.fd = (int)emd_syscall(SYS_openat, AT_FDCWD, (long)dir,
				    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				    0, 0, 0);
	return emd_notes_ok(&notes);
}

int emd_note_init(void)
{
	const char *id = secure_getenv(EMD_ENV_SYNC_ID);
	int saved = errno, ok;

	/* A set-user-ID program takes no directory from its caller: it cannot
	 * note, so it syncs as natively. */
	if (!id && getauxval(AT_SECURE) && getenv(EMD_ENV_SYNC_ID))
		return -1;
	if (!id || !*id)
		return 0;
	note_wanted = 1;
	ok = emd_notes_parse(&notes, secure_getenv(EMD_ENV_SYNC_FD), id) == 0 &&
	     (emd_notes_ok(&notes) || reopen_by_path());
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

void emd_note_fd(int fd)
{
	struct stat st;
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
	if (emd_notes_add(&notes, st.st_dev, 0) != 0) {
		cannot_note(fd);
		return;
	}
	seen[seen_next++ % SEEN_SLOTS] = st.st_dev;
}

void emd_note_all(void)
{
	if (note_wanted && emd_eating() && emd_notes_add(&notes, 0, 1) != 0)
		cannot_note(-1);
}
