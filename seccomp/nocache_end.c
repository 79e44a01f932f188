/* SPDX-License-Identifier: MIT */
/* nocache_end.c -- the end of a static or Go program's use of a file whose
 * reads or writes nocache's supervisor made (nocache.c): its close, which
 * nocache's filter notifies too (io_requests.h).  What the program wrote
 * there is written back and what it brought in dropped (nocache_behind.c's
 * behind_end), before the call goes on to the kernel.  Else what it wrote
 * stayed: a write with RWF_DONTCACHE is dropped by the kernel only once
 * written back, and a small one to a page the kernel had dropped reads the
 * page in again, which then stays (a log, a write-ahead log: a record and
 * an fdatasync each, 4 KiB of each file left); and so did what the kernel
 * read ahead of a program that stops short of a file's end.
 *
 * A file still open at the process's end (its exit, or a signal: etcd
 * kills itself with the SIGTERM it caught) is closed by the kernel, which
 * no filter sees; and exit_group is not notified, since a process whose
 * exit fails (ENOSYS, the supervisor killed) never ends.  Once every
 * process under the filter is gone (its listener hung up, nocache_gone),
 * each file whose I/O was made for them last is opened again by the path
 * it had then and dropped (nocache_behind.c), with what they had mapped of
 * it (bbolt reads its database so).
 *
 * Writing back and dropping are what the caller could do itself with its
 * own open file (sync_file_range, posix_fadvise), done only for files whose
 * I/O was made here and a caller with this process's rights (rights.c):
 * the cost of a close of anything else is a statx of /proc/TID/fd/N.  A
 * close the kernel refuses (EBADF) is the kernel's: nothing is done.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"
#include "io_requests.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

EMD_END_TABLE(io_ends);

/* Which end the notified call is (EMD_END_*), -1 if none. */
static int end_of(struct call *c)
{
	c->compat = c->req->data.arch == EMD_ARCH_COMPAT;
	if (c->req->data.arch != EMD_ARCH_NATIVE && !c->compat)
		return -1;
	for (int i = 0; i < EMD_NENDS; i++)
		if ((long)c->req->data.nr == (c->compat ? io_ends[i].nr32 : io_ends[i].nr))
			return i;
	return -1;
}

/* The caller's descriptor `theirs`, here, if its file is one whose I/O was
 * made here (its statx in *st); else -1.  Looked at through /proc first:
 * the close of a pipe or of a file never served costs no duplicate. */
static int served_file(const struct call *c, int theirs, struct statx *st)
{
	int fd;

	if (their_file(c, theirs, st) < 0 || !S_ISREG(st->stx_mode) || !behind_known(st))
		return -1;
	/* the number may name another file by now: the duplicate is judged */
	if ((fd = their_fd(c, theirs, st)) < 0)
		return -1;
	if (S_ISREG(st->stx_mode) && behind_known(st))
		return fd;
	close(fd);
	return -1;
}

static int at_close(struct call *c)
{
	struct statx st;
	int fd = served_file(c, (int)call_arg(c, 0), &st);

	if (fd >= 0 && same_rights(c->req->pid, NULL))
		behind_end(fd, &st);
	if (fd >= 0)
		close(fd);
	return CONTINUE;
}

void nocache_gone(int listener)
{
	behind_gone(listener);
}

int nocache_end(struct call *c)
{
	return end_of(c) == EMD_END_close ? at_close(c) : -1;
}
