/* SPDX-License-Identifier: MIT */
/* filter.h -- putting a process under the seccomp filter and handing the
 * filter's listener to the tree's supervisor (libeatmydata/filter.c): the
 * launcher does it before it execs a command the library cannot reach,
 * the library before a process it serves execs one (exec.c), and
 * `eatmydata --seccomp-exec` in place of a posix_spawn'd one.
 *
 * The supervisor's socket is EATMYDATA_SECCOMP ("N:DEV:INO", inherit.h),
 * a SOCK_SEQPACKET socket; each message is one byte with one listener
 * (SCM_RIGHTS).  A process under a filter with a listener already (an
 * outer eatmydata, the launcher's, a container runtime's) gets no other:
 * the kernel allows one per filter chain.
 */
#ifndef EMD_FILTER_H
#define EMD_FILTER_H

#include <linux/filter.h>

/* The filter, made from the request table (requests.h) for every ABI the
 * kernel runs here; no_io_uring: io_uring_setup fails with ENOSYS. */
struct emd_filter {
	struct sock_filter insn[256];
	unsigned short n;
	int overflow;
};
void emd_filter_build(struct emd_filter *f, int no_io_uring);

/* The supervisor's socket: the inherited one `id` names ("N:DEV:INO",
 * EATMYDATA_SECCOMP), else a new connection to `path`
 * (EATMYDATA_SECCOMP_PATH) for a process that lost it (close_fds in
 * Python's subprocess); -1 if neither, or if its peer is neither this
 * user nor root.  *opened: the caller closes it. */
int emd_supervisor(const char *id, const char *path, int *opened);

/* Put the calling thread, and what it execs, under the filter (with
 * no_new_privs only when it may not do without), and send the listener to
 * the supervisor at socket `sock`, in a message of one byte `tag` (0; the
 * launcher's own says it is done, seccomp/seccomp.h).  0 when done; -EBUSY when a listener
 * is there already; -EPIPE when the supervisor is gone (nothing done);
 * other -errno when the kernel refused. */
int emd_filter_self(int sock, int no_io_uring, char tag);

#endif
