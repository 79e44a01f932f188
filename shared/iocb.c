/* SPDX-License-Identifier: MIT */
/* iocb.c -- Linux AIO control blocks that sync, made not to (iocb.h).
 * Linked into the library and the supervisor: pure, no system call.
 *
 * The kernel's AIO fsync takes no buffer, length, offset or flags (else
 * EINVAL) and completes with 0; so does a read or a write of nothing at
 * offset 0 on the same descriptor, without I/O and without touching the
 * file's times.  An fsync with any of those set is left to the kernel,
 * which refuses it without syncing.
 */
#define _GNU_SOURCE 1
#include "iocb.h"
#include "record.h"
#include "requests.h"

#include <fcntl.h>

int emd_iocb_syncs(const struct iocb *cb)
{
	switch (cb->aio_lio_opcode) {
	case IOCB_CMD_FSYNC:
	case IOCB_CMD_FDSYNC:
		return !cb->aio_buf && !cb->aio_nbytes && !cb->aio_offset && !cb->aio_rw_flags;
	case IOCB_CMD_PWRITE:
	case IOCB_CMD_PWRITEV:
		return (cb->aio_rw_flags & EMD_RWF_SYNC_FLAGS) != 0;
	default:
		return 0;
	}
}

int emd_iocb_writes(const struct iocb *cb)
{
	return cb->aio_lio_opcode == IOCB_CMD_PWRITE || cb->aio_lio_opcode == IOCB_CMD_PWRITEV;
}

int emd_iocb_unsync(struct iocb *cb, int accmode)
{
	if (!emd_iocb_syncs(cb))
		return 0;
	if (emd_iocb_writes(cb))
		cb->aio_rw_flags &= ~EMD_RWF_SYNC_FLAGS;
	else
		cb->aio_lio_opcode = accmode == O_WRONLY ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
	return 1;
}

int emd_iocb_kind(const struct iocb *cb)
{
	if (cb->aio_lio_opcode == IOCB_CMD_FSYNC)
		return EMD_K_FSYNC;
	if (cb->aio_lio_opcode == IOCB_CMD_FDSYNC)
		return EMD_K_FDATASYNC;
	return (cb->aio_rw_flags & RWF_SYNC) ? EMD_K_PWRITEV2_SYNC : EMD_K_PWRITEV2_DSYNC;
}
