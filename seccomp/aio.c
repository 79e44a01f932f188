/* SPDX-License-Identifier: MIT */
/* aio.c -- Linux AIO (io_submit, libaio's io_prep_fsync and friends) under
 * the filter: before the kernel copies them, the caller's control blocks
 * that would sync are rewritten in its memory (include/iocb.h), each after
 * its descriptor is checked as the library checks fsync's.  Then the
 * submission goes on to the kernel, which completes them as it would have,
 * without the sync.
 */
#include "common/common.h"
#include "supervisor.h"
#include "iocb.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_IOCBS 4096 /* a larger submission syncs past these */

/* The address of control block i, from the caller's array of pointers
 * (32-bit ones in the compat ABI); 0 if it cannot be read. */
static unsigned long iocb_at(const struct call *c, unsigned long list, long i)
{
	unsigned long long wide = 0;
	unsigned narrow = 0;

	if (c->compat)
		return read_theirs(c->req->pid, list + 4 * (unsigned long)i, &narrow, 4, 0) ? 0 : narrow;
	return read_theirs(c->req->pid, list + 8 * (unsigned long)i, &wide, 8, 0) ? 0 : wide;
}

/* One control block: rewritten if it would sync a file fsync acts on. */
static void unsync(const struct call *c, unsigned long at)
{
	struct iocb cb;
	struct iovec remote = {(void *)at, sizeof(cb)};
	struct statx stx;
	size_t room;
	int flags, mem;

	if (!at || read_theirs(c->req->pid, at, &cb, sizeof(cb), 0) || !emd_iocb_syncs(&cb))
		return;
	/* Regular files only: a directory has no read to stand for its fsync.
	 * Looked at without a duplicate (fds.c). */
	if (their_range_check(c, (int)cb.aio_fildes, 0, 0, 0, &stx) == 0 &&
	    S_ISREG(stx.stx_mode) && (flags = their_open_flags(c, (int)cb.aio_fildes)) >= 0 &&
	    emd_iocb_unsync(&cb, flags & O_ACCMODE) && (mem = caller_mem(c, &remote, 1, &room)) >= 0) {
		/* Into the caller's memory, held open: never a process that
		 * took its number since (behalf.c). */
		if (room == sizeof(cb) && write_mem(mem, (const char *)&cb, sizeof(cb), &remote, 1) ==
					      sizeof(cb))
			note_file(&stx);
		close(mem);
	}
}

void aio_each_iocb(const struct call *c, void (*fn)(const struct call *c, unsigned long at))
{
	long n = (long)call_arg(c, 1);
	unsigned long list = call_arg(c, 2);

	for (long i = 0; i < n && i < MAX_IOCBS; i++)
		fn(c, iocb_at(c, list, i));
}

int aio_submit(struct call *c)
{
	aio_each_iocb(c, unsync);
	return CONTINUE;
}
