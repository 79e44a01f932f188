/* SPDX-License-Identifier: MIT */
/* sync.c -- fsync, fdatasync, sync, syncfs, sync_file_range and msync.
 *
 * An eaten call still gets the kernel's verdict on its arguments, from one
 * system call that validates them and does no I/O: sync_file_range with no
 * flags for a descriptor, msync with MS_ASYNC for a mapping.  fsync and
 * fdatasync stay cancellation points.  Each call is recorded when asked.
 */
#include "emd.h"

#include <pthread.h>

int emd_eat_fd_sync(int fd, int espipe)
{
	int r = emd_check_fd(fd, espipe);

	if (r == 0)
		emd_note_fd(fd);
	return emd_ret(r);
}

/* What sync_file_range(fd, 0, 0, 0) answers is what fsync would, but for
 * the descriptors fsync rejects with EINVAL and sync_file_range with
 * ESPIPE (pipes, sockets, character devices): the caller says which. */
int emd_check_fd(int fd, int espipe)
{
	long r = emd_syscall(SYS_sync_file_range, fd, 0, 0, 0, 0, 0);

	return r == -ESPIPE ? espipe : (int)r;
}

/* fsync and fdatasync: `real` is the libc function of that kind. */
static int sync_file(int kind, int (*real)(int), int fd, const void *site)
{
	struct emd_rec rec;

	emd_rec_start(&rec, kind, fd, NULL, site);
	if (!emd_eating())
		return emd_rec_finish(&rec, real(fd));
	pthread_testcancel();
	return emd_rec_finish(&rec, emd_eat_fd_sync(fd, -EINVAL));
}

EMD_EXPORT int fsync(int fd)
{
	return sync_file(EMD_K_FSYNC, EMD_REAL(fsync), fd, EMD_CALLER);
}

EMD_EXPORT int fdatasync(int fd)
{
	return sync_file(EMD_K_FDATASYNC, EMD_REAL(fdatasync), fd, EMD_CALLER);
}

EMD_EXPORT void sync(void)
{
	struct emd_rec rec;

	emd_rec_start(&rec, EMD_K_SYNC, -1, NULL, EMD_CALLER);
	if (emd_eating())
		emd_note_all();
	else
		EMD_REAL(sync)();
	emd_rec_finish(&rec, 0);
}

/* syncfs works on any open descriptor, pipes and sockets included. */
EMD_EXPORT int syncfs(int fd)
{
	struct emd_rec rec;

	emd_rec_start(&rec, EMD_K_SYNCFS, fd, NULL, EMD_CALLER);
	if (!emd_eating())
		return emd_rec_finish(&rec, EMD_REAL(syncfs)(fd));
	return emd_rec_finish(&rec, emd_eat_fd_sync(fd, 0));
}

/* Clearing the known flags keeps the kernel's own checks of the rest. */
EMD_EXPORT int sync_file_range(int fd, off64_t offset, off64_t nbytes,
			       unsigned int flags)
{
	struct emd_rec rec;

	if (!(flags & EMD_SFR_VALID))
		return EMD_REAL(sync_file_range)(fd, offset, nbytes, flags);
	emd_rec_start(&rec, EMD_K_SYNC_FILE_RANGE, fd, NULL, EMD_CALLER);
	if (!emd_eating())
		return emd_rec_finish(&rec, EMD_REAL(sync_file_range)(fd, offset,
								   nbytes, flags));
	return emd_rec_finish(&rec, emd_note_result(fd, EMD_REAL(sync_file_range)(
						      fd, offset, nbytes,
						      flags & ~EMD_SFR_VALID)));
}

EMD_EXPORT int msync(void *addr, size_t length, int flags)
{
	struct emd_rec rec;
	int r;

	if (!(flags & MS_SYNC))
		return EMD_REAL(msync)(addr, length, flags);
	emd_rec_start(&rec, EMD_K_MSYNC, -1, addr, EMD_CALLER);
	if (!emd_eating())
		return emd_rec_finish(&rec, EMD_REAL(msync)(addr, length, flags));
	r = EMD_REAL(msync)(addr, length, emd_msync_flags(flags));
	if (r == 0)
		emd_note_all();
	return emd_rec_finish(&rec, r);
}
