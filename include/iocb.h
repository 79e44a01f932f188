/* SPDX-License-Identifier: MIT */
/* iocb.h -- Linux AIO control blocks that sync, made not to
 * (shared/iocb.c): for the library's syscall(SYS_io_submit) and the
 * supervisor's io_submit alike. */
#ifndef EMD_IOCB_H
#define EMD_IOCB_H

#include <linux/aio_abi.h>

/* Would `cb` sync (IOCB_CMD_FSYNC, IOCB_CMD_FDSYNC, a write with RWF_SYNC
 * or RWF_DSYNC)?  Its descriptor is then to be checked as fsync would
 * check it before emd_iocb_unsync. */
int emd_iocb_syncs(const struct iocb *cb);

/* Is `cb` a write (which syncs without flags of its own when its
 * descriptor's open file has O_SYNC or O_DSYNC)? */
int emd_iocb_writes(const struct iocb *cb);

/* Make `cb`, on a regular file fsync would act on, open with `accmode`
 * (O_RDONLY...), not sync: an fsync becomes a read, or on a descriptor
 * open for writing only a write, of nothing, which completes with 0 as
 * the fsync would have; a write loses RWF_SYNC and RWF_DSYNC.  1 if it
 * changed. */
int emd_iocb_unsync(struct iocb *cb, int accmode);

/* The record kind (record.h) of a `cb` that syncs: fsync, fdatasync, or a
 * pwritev2 with RWF_SYNC or RWF_DSYNC. */
int emd_iocb_kind(const struct iocb *cb);

#endif
