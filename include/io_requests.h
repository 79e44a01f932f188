/* SPDX-License-Identifier: MIT */
/* io_requests.h -- the reads and writes nocache's supervisor serves for a
 * program the library cannot reach (seccomp/nocache.c), once: the filter
 * notifies them (shared/filter.c) when the run's policy is nocache's, in
 * the native ABI and in the 32-bit one the kernel also runs.
 *
 * Columns: name; nr; write (1: a write); vec (1: an iovec array and its
 * count); pos (the argument of the offset, -1: the file position); nr32
 * and pos32, the same in the 32-bit ABI (EMD_COMPAT(i386, arm)), where the
 * offset is two arguments, low word first: arm's pread64 and pwrite64
 * leave argument 3 unused (a 64-bit value starts at an even register),
 * the kernel's compat preadv and pwritev take pos_l, pos_h at 3 and 4;
 * rwf, the argument of preadv2's and pwritev2's RWF_ flags (-1: none).
 * Those two take an offset of -1 for the file position, and their native
 * pos_h (argument 4) is ignored: the kernel's pos_from_hilo shifts it by
 * 32 twice on a 64-bit long, so only pos_l counts; the compat ones join
 * both words, as preadv does.
 */
#ifndef EMD_IO_REQUESTS_H
#define EMD_IO_REQUESTS_H

#include <sys/syscall.h>

#include "platform.h"

/* clang-format off */
#define EMD_IO_REQUESTS(X)                                                       \
	/* name      nr            write vec pos nr32                  pos32             rwf */ \
	X(read,      SYS_read,     0,    0,  -1, EMD_COMPAT(3, 3),     -1,               -1) \
	X(pread64,   SYS_pread64,  0,    0,  3,  EMD_COMPAT(180, 180), EMD_COMPAT(3, 4), -1) \
	X(readv,     SYS_readv,    0,    1,  -1, EMD_COMPAT(145, 145), -1,               -1) \
	X(preadv,    SYS_preadv,   0,    1,  3,  EMD_COMPAT(333, 361), 3,                -1) \
	X(preadv2,   SYS_preadv2,  0,    1,  3,  EMD_COMPAT(378, 392), 3,                5) \
	X(write,     SYS_write,    1,    0,  -1, EMD_COMPAT(4, 4),     -1,               -1) \
	X(pwrite64,  SYS_pwrite64, 1,    0,  3,  EMD_COMPAT(181, 181), EMD_COMPAT(3, 4), -1) \
	X(writev,    SYS_writev,   1,    1,  -1, EMD_COMPAT(146, 146), -1,               -1) \
	X(pwritev,   SYS_pwritev,  1,    1,  3,  EMD_COMPAT(334, 362), 3,                -1) \
	X(pwritev2,  SYS_pwritev2, 1,    1,  3,  EMD_COMPAT(379, 393), 3,                5)
/* clang-format on */

struct emd_io_request {
	const char *name;
	long nr, nr32;
	int write, vec, pos, pos32, rwf;
};

#define EMD_IO_ROW(name_, nr_, write_, vec_, pos_, nr32_, pos32_, rwf_)                            \
	{.name = #name_, .nr = (nr_), .write = (write_), .vec = (vec_), .pos = (pos_),             \
	 .nr32 = (nr32_), .pos32 = (pos32_), .rwf = (rwf_)},
#define EMD_IO_TABLE(var)                                                                           \
	static const struct emd_io_request var[] = {EMD_IO_REQUESTS(EMD_IO_ROW)}
#define EMD_NIO (sizeof((struct emd_io_request[]){EMD_IO_REQUESTS(EMD_IO_ROW)}) /                   \
		 sizeof(struct emd_io_request))

/* The ends of a program's use of its files, which the filter notifies too
 * (seccomp/nocache_end.c): a close (of a descriptor that is not negative:
 * the kernel's own EBADF), where what the supervisor's reads and writes
 * left cached is dropped.  Never exit_group: with the supervisor killed,
 * the kernel answers a notified call ENOSYS, and a process whose exit
 * fails never ends (a Go program hung so).  Columns: name; nr; nr32. */
/* clang-format off */
#define EMD_IO_ENDS(X)                                             \
	X(close,      SYS_close,      EMD_COMPAT(6, 6))
/* clang-format on */

#define EMD_END_ID(name_, nr_, nr32_) EMD_END_##name_,
enum { EMD_IO_ENDS(EMD_END_ID) EMD_NENDS };

struct emd_io_end {
	const char *name;
	long nr, nr32;
};

#define EMD_END_ROW(name_, nr_, nr32_) {.name = #name_, .nr = (nr_), .nr32 = (nr32_)},
#define EMD_END_TABLE(var) static const struct emd_io_end var[] = {EMD_IO_ENDS(EMD_END_ROW)}

#endif
