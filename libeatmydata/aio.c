/* SPDX-License-Identifier: MIT */
/* aio.c -- Linux AIO and io_uring set-up asked through syscall(): the
 * process's own control blocks that would sync are made not to before the
 * kernel reads them (iocb.h), as the supervisor does for a filtered
 * process; a ring the kernel would poll itself is made one that is entered
 * (seccomp/uring.c says why).  The memory is read and written with
 * process_vm_readv/writev on this process, so that a bad pointer is the
 * kernel's EFAULT, not a crash.
 */
#include "emd.h"
#include "iocb.h"

#include <linux/io_uring.h>
#include <stddef.h>
#include <sys/stat.h>

#define MAX_IOCBS 4096

static int copy_own(void *to, const void *from, size_t size, int write)
{
	struct iovec mine = {write ? (void *)from : to, size};
	struct iovec theirs = {write ? to : (void *)from, size};

	return emd_syscall(write ? SYS_process_vm_writev : SYS_process_vm_readv, getpid(),
			   (long)&mine, 1, (long)&theirs, 1, 0) == (long)size;
}

static void unsync(struct iocb *at)
{
	struct iocb cb;
	struct stat st;
	long flags;

	/* Regular files only: a directory has no read to stand for its fsync. */
	if (!copy_own(&cb, at, sizeof(cb), 0) || !emd_iocb_syncs(&cb) ||
	    emd_check_fd((int)cb.aio_fildes, -ESPIPE) != 0 ||
	    fstat((int)cb.aio_fildes, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	flags = emd_syscall(SYS_fcntl, (long)cb.aio_fildes, F_GETFL, 0, 0, 0, 0);
	if (flags >= 0 && emd_iocb_unsync(&cb, (int)flags & O_ACCMODE) &&
	    copy_own(at, &cb, sizeof(cb), 1))
		emd_note_fd((int)cb.aio_fildes);
}

void emd_aio_unsync(long nr, struct iocb **list)
{
	struct iocb *at;

	if (!emd_eating())
		return;
	for (long i = 0; i < nr && i < MAX_IOCBS; i++)
		if (copy_own(&at, &list[i], sizeof(at), 0) && at)
			unsync(at);
}

/* syncstat: each sync submitted, counted at its submission (its
 * completion is the kernel's, unseen from here): a write on a descriptor
 * whose open file syncs too. */
void emd_aio_record(long nr, struct iocb **list, const void *site)
{
	struct iocb *at, cb;
	int kind;

	if (!(emd_mode_now() & EMD_RECORD))
		return;
	for (long i = 0; i < nr && i < MAX_IOCBS; i++) {
		if (!copy_own(&at, &list[i], sizeof(at), 0) || !at ||
		    !copy_own(&cb, at, sizeof(cb), 0))
			continue;
		if (emd_iocb_syncs(&cb))
			emd_rec_counted(emd_iocb_kind(&cb), (int)cb.aio_fildes, site);
		else if (emd_iocb_writes(&cb) && (kind = emd_write_kind((int)cb.aio_fildes)) >= 0)
			emd_rec_counted(kind, (int)cb.aio_fildes, site);
	}
}

void emd_ring_unpolled(struct io_uring_params *p)
{
	unsigned flags, *at = &p->flags;

	if (emd_eating() && copy_own(&flags, at, sizeof(flags), 0) &&
	    (flags & IORING_SETUP_SQPOLL)) {
		flags &= ~(unsigned)(IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF);
		copy_own(at, &flags, sizeof(flags), 1);
	}
}
