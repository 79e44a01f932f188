/* SPDX-License-Identifier: MIT */
/* io_requests.h -- the reads and writes nocache's supervisor serves for a
 * program the library cannot reach (seccomp/nocache.c), once: the filter
 * notifies them (shared/filter.c) when the run's policy is nocache's,
 * in the native ABI only (a 32-bit static program's pages stay cached).
 *
 * Columns: name; nr; write (1: a write); vec (1: an iovec array and its
 * count); pos (the argument of the offset, -1: the file position).
 */
#ifndef EMD_IO_REQUESTS_H
#define EMD_IO_REQUESTS_H

#include <sys/syscall.h>

/* clang-format off */
#define EMD_IO_REQUESTS(X)                      \
	/* name      nr            write vec pos */ \
	X(read,      SYS_read,     0,    0,  -1)    \
	X(pread64,   SYS_pread64,  0,    0,  3)     \
	X(readv,     SYS_readv,    0,    1,  -1)    \
	X(preadv,    SYS_preadv,   0,    1,  3)     \
	X(write,     SYS_write,    1,    0,  -1)    \
	X(pwrite64,  SYS_pwrite64, 1,    0,  3)     \
	X(writev,    SYS_writev,   1,    1,  -1)    \
	X(pwritev,   SYS_pwritev,  1,    1,  3)
/* clang-format on */

struct emd_io_request {
	const char *name;
	long nr;
	int write, vec, pos;
};

#define EMD_IO_ROW(name_, nr_, write_, vec_, pos_)                                                  \
	{.name = #name_, .nr = (nr_), .write = (write_), .vec = (vec_), .pos = (pos_)},
#define EMD_IO_TABLE(var)                                                                           \
	static const struct emd_io_request var[] = {EMD_IO_REQUESTS(EMD_IO_ROW)}
#define EMD_NIO (sizeof((struct emd_io_request[]){EMD_IO_REQUESTS(EMD_IO_ROW)}) /                   \
		 sizeof(struct emd_io_request))

#endif
