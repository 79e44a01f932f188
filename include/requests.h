/* SPDX-License-Identifier: MIT */
/* requests.h -- every durability request the toolkit knows, once.
 *
 * One row per system call: the library's syscall() path, the seccomp
 * filter, the supervisor's dispatch and the tests' lists of kernel events
 * are all made from this table (tests/c/requests.c prints it for pytest).
 * Adding a request is one row here plus its handler on each side that
 * eats it (libeatmydata/syscall.c, seccomp/supervisor.c).
 *
 * Columns:
 *   name   the system call, and the request's name in the tests;
 *   nr     its number in the ABI being built, -1 where the ABI lacks it;
 *   arg    the argument that makes it a request (see test), in that ABI;
 *   nr32   its number in the 32-bit ABI that a 64-bit kernel also runs
 *          (EMD_COMPAT(i386, arm)), for the filter;
 *   arg32  the argument's position there;
 *   field  that argument's name in the kernel's syscalls:sys_enter_* event;
 *   bits   with test BITS, the bits of it that ask for durability;
 *   test   when a call is a request: ALWAYS; FD, when the descriptor in
 *          `arg` is not negative (a negative one is the kernel's EBADF);
 *          BITS, when any of `bits` is set; MEMORY, always looked at (the
 *          flags are in the caller's memory); WRITE, a write on a
 *          descriptor whose open file has O_SYNC or O_DSYNC (recorded,
 *          never eaten: the open lost the flag already; syncstat's filter
 *          notifies every such call, emd_file_write);
 *   kind   the record kind syncstat reports it as (include/record.h), the
 *          first of two where the flags tell O_SYNC from O_DSYNC;
 *   eat    how it is eaten, the handler each side has for it.
 *
 * Must be included with _GNU_SOURCE defined (RWF_SYNC, O_DSYNC).
 */
#ifndef EMD_REQUESTS_H
#define EMD_REQUESTS_H

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "platform.h"
#include "record.h"

#define EMD_OPEN_SYNC_FLAGS (O_SYNC | O_DSYNC)
#define EMD_RWF_SYNC_FLAGS (RWF_SYNC | RWF_DSYNC)
/* SYNC_FILE_RANGE_WAIT_BEFORE | _WRITE | _WAIT_AFTER */
#define EMD_SFR_VALID 7

/* clang-format off */
#define EMD_REQUESTS(X)                                                                                            \
	/* name            nr                   arg                nr32                  arg32           field      bits                 test    kind             eat */ \
	X(fsync,           SYS_fsync,           0,                 EMD_COMPAT(118, 118), 0,              fd,        0,                   FD,     FSYNC,           FD_SYNC)  \
	X(fdatasync,       SYS_fdatasync,       0,                 EMD_COMPAT(148, 148), 0,              fd,        0,                   FD,     FDATASYNC,       FD_SYNC)  \
	X(syncfs,          SYS_syncfs,          0,                 EMD_COMPAT(344, 373), 0,              fd,        0,                   FD,     SYNCFS,          FS_SYNC)  \
	X(sync,            SYS_sync,            0,                 EMD_COMPAT(36, 36),   0,              none,      0,                   ALWAYS, SYNC,            ALL_SYNC) \
	X(sync_file_range, SYS_sync_file_range, EMD_SFR_FLAGS_ARG, EMD_COMPAT(314, 341), EMD_COMPAT(5, 1), flags,    EMD_SFR_VALID,       BITS,   SYNC_FILE_RANGE, RANGE)    \
	X(msync,           SYS_msync,           2,                 EMD_COMPAT(144, 144), 2,              flags,     MS_SYNC,             BITS,   MSYNC,           MAPPING)  \
	X(open,            EMD_SYS_OPEN,        1,                 EMD_COMPAT(5, 5),     1,              flags,     EMD_OPEN_SYNC_FLAGS, BITS,   OPEN_SYNC,       OPEN)     \
	X(openat,          SYS_openat,          2,                 EMD_COMPAT(295, 322), 2,              flags,     EMD_OPEN_SYNC_FLAGS, BITS,   OPEN_SYNC,       OPEN)     \
	X(openat2,         SYS_openat2,         2,                 EMD_COMPAT(437, 437), 2,              how,       0,                   MEMORY, OPEN_SYNC,       OPEN)     \
	X(open_by_handle_at, SYS_open_by_handle_at, 2,             EMD_COMPAT(342, 371), 2,              flags,     EMD_OPEN_SYNC_FLAGS, BITS,   OPEN_SYNC,       OPEN_HANDLE)     \
	X(pwritev2,        SYS_pwritev2,        5,                 EMD_COMPAT(379, 393), 5,              flags,     EMD_RWF_SYNC_FLAGS,  BITS,   PWRITEV2_SYNC,   WRITE)    \
	X(io_uring_enter,  SYS_io_uring_enter,  1,                 EMD_COMPAT(426, 426), 1,              to_submit, ~0u,                 BITS,   NONE,            URING)    \
	X(io_uring_setup,  SYS_io_uring_setup,  1,                 EMD_COMPAT(425, 425), 1,              p,         0,                   MEMORY, NONE,            RING)     \
	X(io_submit,       SYS_io_submit,       1,                 EMD_COMPAT(248, 246), 1,              nr,        ~0u,                 BITS,   NONE,            AIO)      \
	X(write,           SYS_write,           0,                 EMD_COMPAT(4, 4),     0,              fd,        0,                   WRITE,  WRITE_SYNC,      NONE)     \
	X(writev,          SYS_writev,          0,                 EMD_COMPAT(146, 146), 0,              fd,        0,                   WRITE,  WRITE_SYNC,      NONE)     \
	X(pwrite64,        SYS_pwrite64,        0,                 EMD_COMPAT(181, 181), 0,              fd,        0,                   WRITE,  WRITE_SYNC,      NONE)     \
	X(pwritev,         SYS_pwritev,         0,                 EMD_COMPAT(334, 362), 0,              fd,        0,                   WRITE,  WRITE_SYNC,      NONE)
/* clang-format on */

#define EMD_REQ_ID(name, ...) EMD_REQ_##name,
enum emd_request_id { EMD_REQUESTS(EMD_REQ_ID) EMD_NREQUESTS };
#undef EMD_REQ_ID

/* A request that is no kind of its own in the records (io_uring's are
 * counted by what they submit). */
#define EMD_K_NONE (-1)

enum emd_req_test { EMD_TEST_ALWAYS, EMD_TEST_FD, EMD_TEST_BITS, EMD_TEST_MEMORY, EMD_TEST_WRITE };

/* The handlers: FD_SYNC checks the descriptor as fsync would (EINVAL for
 * pipes and sockets), FS_SYNC as syncfs would (any descriptor), ALL_SYNC
 * notes every file system, RANGE makes the call without its bits, MAPPING
 * msync with MS_ASYNC instead, OPEN and WRITE without their sync flags
 * (OPEN_HANDLE too, but the supervisor has no handler for it: a file
 * handle names no path it could open), URING rewrites the pending
 * submissions, RING makes a ring the kernel polls (SQPOLL) one that is
 * entered, AIO rewrites Linux AIO's control blocks; NONE is not eaten.  A side with no handler for a row
 * leaves it to the kernel: the filter does not notify it at all. */
enum emd_req_eat {
	EMD_EAT_NONE,
	EMD_EAT_FD_SYNC,
	EMD_EAT_FS_SYNC,
	EMD_EAT_ALL_SYNC,
	EMD_EAT_RANGE,
	EMD_EAT_MAPPING,
	EMD_EAT_OPEN,
	EMD_EAT_OPEN_HANDLE,
	EMD_EAT_WRITE,
	EMD_EAT_URING,
	EMD_EAT_RING,
	EMD_EAT_AIO,
	EMD_NEAT
};

struct emd_request {
	const char *name, *field;
	long nr, nr32;
	unsigned char arg, arg32, test, eat;
	unsigned bits;
	int kind; /* enum emd_rec_kind */
};

#define EMD_REQ_ROW(name_, nr_, arg_, nr32_, arg32_, field_, bits_, test_, kind_, eat_)                     \
	[EMD_REQ_##name_] = {.name = #name_, .field = #field_, .nr = (nr_), .nr32 = (nr32_),                 \
			     .arg = (arg_), .arg32 = (arg32_), .test = EMD_TEST_##test_,                     \
			     .eat = EMD_EAT_##eat_, .bits = (unsigned)(bits_), .kind = EMD_K_##kind_},

/* Does the supervisor answer the request (seccomp/supervisor.c has a
 * handler for its `eat`)?  The filter notifies only those. */
static inline int emd_supervised(const struct emd_request *r)
{
	return r->eat != EMD_EAT_NONE && r->eat != EMD_EAT_OPEN_HANDLE;
}

/* Is the row a write whose descriptor's open file may make it sync
 * (O_SYNC, O_DSYNC), whatever its own flags: syncstat's filter notifies
 * it for every descriptor not negative, and its supervisor asks. */
static inline int emd_file_write(const struct emd_request *r)
{
	return r->test == EMD_TEST_WRITE || r->eat == EMD_EAT_WRITE;
}

/* A case label per row, for the switch that finds a system call's row in
 * the ABI being built. */
#define EMD_REQ_CASE(name, nr, ...)                                                                          \
	case (nr):                                                                                           \
		return EMD_REQ_##name;

/* The table as data, for whoever includes it (record.h for the kinds):
 * static, so each side keeps its own copy in read-only memory. */
#define EMD_REQUEST_TABLE(var)                                                                             \
	static const struct emd_request var[EMD_NREQUESTS] = {EMD_REQUESTS(EMD_REQ_ROW)}

#endif
