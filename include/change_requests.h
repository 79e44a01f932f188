/* SPDX-License-Identifier: MIT */
/* change_requests.h -- what crashtest's supervisor journals for a program
 * its library cannot enter (seccomp/crash*.c): every call that changes a
 * file or a name, and every durability call, once.  The filter notifies
 * them (shared/filter.c) when the run's policy is crashtest's, in the
 * native ABI and in the 32-bit one the kernel also runs (whose calls on
 * the copy are not followed: the run is unknown).
 *
 * Columns:
 *   name, nr, nr32  the call, its number here and in the 32-bit ABI
 *                   (EMD_COMPAT(i386, arm)), -1 where the ABI lacks it;
 *   test, arg, bits when the filter notifies it (requests.h's tests: FD,
 *                   the descriptor in `arg` is not negative; BITS, any of
 *                   `bits` set in `arg`; ALWAYS);
 *   how             what the supervisor does with it (enum emd_change_how);
 *   at              1 if each path follows its directory's descriptor;
 *   path, path2     the arguments holding the paths (-1: none): the one it
 *                   makes or changes, and a rename's or link's new one;
 *   flags, pos, vec the argument of its flags and of its offset (-1: none),
 *                   and 1 if it takes an iovec array.
 */
#ifndef EMD_CHANGE_REQUESTS_H
#define EMD_CHANGE_REQUESTS_H

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "platform.h"
#include "requests.h"

/* glibc's __O_TMPFILE holds O_DIRECTORY too: its own bit alone, so that
 * an open of a directory is not taken for a change. */
#define EMD_OPEN_CHANGES (O_CREAT | O_TRUNC | (__O_TMPFILE & ~O_DIRECTORY))

/* clang-format off */
#define EMD_CHANGES(X)                                                                                       \
	/* name          nr                        nr32                   test   arg bits              how       at path path2 flags pos vec */ \
	X(write,         SYS_write,                EMD_COMPAT(4, 4),      FD,    0,  0,                WRITE,    0, -1,  -1,   -1,  -1, 0) \
	X(pwrite64,      SYS_pwrite64,             EMD_COMPAT(181, 181),  FD,    0,  0,                WRITE,    0, -1,  -1,   -1,  3,  0) \
	X(writev,        SYS_writev,               EMD_COMPAT(146, 146),  FD,    0,  0,                WRITE,    0, -1,  -1,   -1,  -1, 1) \
	X(pwritev,       SYS_pwritev,              EMD_COMPAT(334, 362),  FD,    0,  0,                WRITE,    0, -1,  -1,   -1,  3,  1) \
	X(pwritev2,      SYS_pwritev2,             EMD_COMPAT(379, 393),  FD,    0,  0,                WRITE,    0, -1,  -1,   5,   3,  1) \
	X(ftruncate,     SYS_ftruncate,            EMD_COMPAT(194, 194),  FD,    0,  0,                TRUNCATE, 0, -1,  -1,   -1,  1,  0) \
	X(fallocate,     SYS_fallocate,            EMD_COMPAT(324, 352),  FD,    0,  0,                ALLOCATE, 0, -1,  -1,   1,   2,  0) \
	X(truncate,      SYS_truncate,             EMD_COMPAT(193, 193),  ALWAYS, 0, 0,                FOREIGN,  0, 0,   -1,   -1,  -1, 0) \
	X(copy_file_range, SYS_copy_file_range,    EMD_COMPAT(377, 391),  FD,    2,  0,                COPY,     0, -1,  -1,   -1,  -1, 0) \
	X(sendfile,      SYS_sendfile,             EMD_COMPAT(239, 239),  FD,    0,  0,                COPY,     0, -1,  -1,   -1,  -1, 0) \
	X(splice,        SYS_splice,               EMD_COMPAT(313, 340),  FD,    2,  0,                COPY,     0, -1,  -1,   -1,  -1, 0) \
	X(fsync,         SYS_fsync,                EMD_COMPAT(118, 118),  FD,    0,  0,                FSYNC,    0, -1,  -1,   -1,  -1, 0) \
	X(fdatasync,     SYS_fdatasync,            EMD_COMPAT(148, 148),  FD,    0,  0,                FDATASYNC, 0, -1, -1,   -1,  -1, 0) \
	X(syncfs,        SYS_syncfs,               EMD_COMPAT(344, 373),  FD,    0,  0,                SYNCFS,   0, -1,  -1,   -1,  -1, 0) \
	X(sync,          SYS_sync,                 EMD_COMPAT(36, 36),    ALWAYS, 0, 0,                SYNC,     0, -1,  -1,   -1,  -1, 0) \
	X(sync_file_range, SYS_sync_file_range,    EMD_COMPAT(314, 341),  FD,    0,  0,                RANGE,    0, -1,  -1,   EMD_SFR_FLAGS_ARG, 1, 0) \
	X(msync,         SYS_msync,                EMD_COMPAT(144, 144),  BITS,  2,  MS_SYNC,          MSYNC,    0, -1,  -1,   -1,  -1, 0) \
	X(mmap,          SYS_mmap,                 EMD_COMPAT(192, 192),  BITS,  3,  MAP_SHARED,       MAP,      0, -1,  -1,   3,   -1, 0) \
	X(mprotect,      SYS_mprotect,             EMD_COMPAT(125, 125),  BITS,  2,  PROT_WRITE,       PROTECT,  0, -1,  -1,   -1,  -1, 0) \
	X(pkey_mprotect, SYS_pkey_mprotect,        EMD_COMPAT(380, 394),  BITS,  2,  PROT_WRITE,       PROTECT,  0, -1,  -1,   -1,  -1, 0) \
	X(tee,           SYS_tee,                  EMD_COMPAT(315, 342),  FD,    1,  0,                COPY,     0, -1,  -1,   -1,  -1, 0) \
	X(sendto,        SYS_sendto,               EMD_COMPAT(369, 290),  FD,    0,  0,                CLAIM,    0, -1,  -1,   -1,  -1, 0) \
	X(sendmsg,       SYS_sendmsg,              EMD_COMPAT(370, 296),  FD,    0,  0,                CLAIM,    0, -1,  -1,   -1,  -1, 0) \
	X(sendmmsg,      SYS_sendmmsg,             EMD_COMPAT(345, 374),  FD,    0,  0,                CLAIM,    0, -1,  -1,   -1,  -1, 0) \
	X(vmsplice,      SYS_vmsplice,             EMD_COMPAT(316, 343),  FD,    0,  0,                CLAIM,    0, -1,  -1,   -1,  -1, 0) \
	X(bind,          SYS_bind,                 EMD_COMPAT(361, 282),  FD,    0,  0,                BIND,     0, -1,  -1,   -1,  -1, 0) \
	X(io_uring_setup, SYS_io_uring_setup,      EMD_COMPAT(425, 425),  ALWAYS, 0, 0,                FOREIGN,  0, -1,  -1,   -1,  -1, 0) \
	X(io_setup,      SYS_io_setup,             EMD_COMPAT(245, 243),  ALWAYS, 0, 0,                FOREIGN,  0, -1,  -1,   -1,  -1, 0) \
	X(open,          EMD_SYS_OPEN,             EMD_COMPAT(5, 5),      BITS,  1,  EMD_OPEN_CHANGES, OPEN,     0, 0,   -1,   1,   -1, 0) \
	X(creat,         EMD_SYS_PATHS(creat),     EMD_COMPAT(8, 8),      ALWAYS, 0, 0,                OPEN,     0, 0,   -1,   -1,  -1, 0) \
	X(openat,        SYS_openat,               EMD_COMPAT(295, 322),  BITS,  2,  EMD_OPEN_CHANGES, OPEN,     1, 1,   -1,   2,   -1, 0) \
	X(openat2,       SYS_openat2,              EMD_COMPAT(437, 437),  ALWAYS, 0, 0,                OPEN,     1, 1,   -1,   -1,  -1, 0) \
	X(mkdir,         EMD_SYS_PATHS(mkdir),     EMD_COMPAT(39, 39),    ALWAYS, 0, 0,                MKDIR,    0, 0,   -1,   -1,  -1, 0) \
	X(mkdirat,       SYS_mkdirat,              EMD_COMPAT(296, 323),  ALWAYS, 0, 0,                MKDIR,    1, 1,   -1,   -1,  -1, 0) \
	X(mknod,         EMD_SYS_PATHS(mknod),     EMD_COMPAT(14, 14),    ALWAYS, 0, 0,                MKNOD,    0, 0,   -1,   -1,  -1, 0) \
	X(mknodat,       SYS_mknodat,              EMD_COMPAT(297, 324),  ALWAYS, 0, 0,                MKNOD,    1, 1,   -1,   -1,  -1, 0) \
	X(symlink,       EMD_SYS_PATHS(symlink),   EMD_COMPAT(83, 83),    ALWAYS, 0, 0,                SYMLINK,  0, 1,   -1,   -1,  -1, 0) \
	X(symlinkat,     SYS_symlinkat,            EMD_COMPAT(304, 331),  ALWAYS, 0, 0,                SYMLINK,  1, 2,   -1,   -1,  -1, 0) \
	X(link,          EMD_SYS_PATHS(link),      EMD_COMPAT(9, 9),      ALWAYS, 0, 0,                LINK,     0, 0,   1,    -1,  -1, 0) \
	X(linkat,        SYS_linkat,               EMD_COMPAT(303, 330),  ALWAYS, 0, 0,                LINK,     1, 1,   3,    4,   -1, 0) \
	X(unlink,        EMD_SYS_PATHS(unlink),    EMD_COMPAT(10, 10),    ALWAYS, 0, 0,                UNLINK,   0, 0,   -1,   -1,  -1, 0) \
	X(unlinkat,      SYS_unlinkat,             EMD_COMPAT(301, 328),  ALWAYS, 0, 0,                UNLINK,   1, 1,   -1,   2,   -1, 0) \
	X(rmdir,         EMD_SYS_PATHS(rmdir),     EMD_COMPAT(40, 40),    ALWAYS, 0, 0,                RMDIR,    0, 0,   -1,   -1,  -1, 0) \
	X(rename,        EMD_SYS_PATHS(rename),    EMD_COMPAT(38, 38),    ALWAYS, 0, 0,                RENAME,   0, 0,   1,    -1,  -1, 0) \
	X(renameat,      SYS_renameat,             EMD_COMPAT(302, 329),  ALWAYS, 0, 0,                RENAME,   1, 1,   3,    -1,  -1, 0) \
	X(renameat2,     SYS_renameat2,            EMD_COMPAT(353, 382),  ALWAYS, 0, 0,                RENAME,   1, 1,   3,    4,   -1, 0)
/* clang-format on */

/* What the supervisor does: WRITE makes the write and journals its bytes;
 * TRUNCATE, ALLOCATE a size or a range; the durability calls are made and
 * are crash points; the name calls are made and journal their entries;
 * MAP, PROTECT look for a shared writable mapping of a file of the copy,
 * COPY for the kernel copying into one (into a pipe or a socket, a claim),
 * FOREIGN for a change it cannot follow: the run is unknown then; CLAIM, a
 * send or a vmsplice, is a claim once it went; BIND of a Unix socket to a
 * path makes a name. */
enum emd_change_how {
	EMD_CH_WRITE, EMD_CH_TRUNCATE, EMD_CH_ALLOCATE, EMD_CH_COPY,
	EMD_CH_FSYNC, EMD_CH_FDATASYNC, EMD_CH_SYNCFS, EMD_CH_SYNC, EMD_CH_RANGE, EMD_CH_MSYNC,
	EMD_CH_MAP, EMD_CH_PROTECT, EMD_CH_FOREIGN, EMD_CH_CLAIM,
	EMD_CH_OPEN, EMD_CH_MKDIR, EMD_CH_MKNOD, EMD_CH_SYMLINK, EMD_CH_LINK, EMD_CH_UNLINK,
	EMD_CH_RMDIR, EMD_CH_RENAME, EMD_CH_BIND,
};

struct emd_change {
	const char *name;
	long nr, nr32;
	unsigned char test, arg, how, at;
	signed char path, path2, flags, pos, vec;
	unsigned bits;
};

#define EMD_CHANGE_ROW(name_, nr_, nr32_, test_, arg_, bits_, how_, at_, path_, path2_, flags_,   \
		       pos_, vec_)                                                                 \
	{.name = #name_, .nr = (nr_), .nr32 = (nr32_), .test = EMD_TEST_##test_, .arg = (arg_),    \
	 .bits = (unsigned)(bits_), .how = EMD_CH_##how_, .at = (at_), .path = (path_),           \
	 .path2 = (path2_), .flags = (flags_), .pos = (pos_), .vec = (vec_)},
#define EMD_CHANGE_TABLE(var)                                                                      \
	static const struct emd_change var[] = {EMD_CHANGES(EMD_CHANGE_ROW)}
#define EMD_NCHANGES                                                                               \
	(sizeof((struct emd_change[]){EMD_CHANGES(EMD_CHANGE_ROW)}) / sizeof(struct emd_change))

#endif
