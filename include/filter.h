/* SPDX-License-Identifier: MIT */
/* filter.h -- putting a process under the seccomp filter and handing the
 * filter's listener to the run's supervisor (shared/filter.c), which
 * is found or started then (shared/rendezvous.c): the launcher does
 * it before it execs a command the library cannot reach, the library
 * before a process it serves execs one (exec.c), and `eatmydata
 * --seccomp-exec` in place of a posix_spawn'd one.
 *
 * The supervisor's socket is a SOCK_SEQPACKET one: it says it is ready
 * (one byte, EMD_READY), then each message is one byte with one listener
 * (SCM_RIGHTS).  A process under a filter with a listener already (an
 * outer eatmydata, the launcher's, a container runtime's) gets no other:
 * the kernel allows one per filter chain.
 */
#ifndef EMD_FILTER_H
#define EMD_FILTER_H

#include <errno.h>
#include <linux/filter.h>
#include <sys/socket.h>
#include <sys/un.h>

/* The filter for every ABI the kernel runs here, made from the table of the
 * run's policy: the request table (requests.h), nocache's reads and writes
 * (io_requests.h), or crashtest's changes (change_requests.h);
 * no_io_uring: io_uring_setup fails with ENOSYS. */
enum emd_filter_table { EMD_FILTER_REQUESTS, EMD_FILTER_IO, EMD_FILTER_CHANGES };
struct emd_filter {
	struct sock_filter insn[512];
	unsigned short n;
	int overflow;
	/* crashtest's: the number that lets the listener's own handoff, a
	 * sendmmsg (a claim, else), through (filter.c); 0: none. */
	unsigned handoff;
};
void emd_filter_build(struct emd_filter *f, int no_io_uring, int probe_errno,
		      enum emd_filter_table table);

/* The probe: under the filter, flock(EMD_PROBE_FD, 0) fails with the errno
 * of the policy it was built for (EATMYDATA_SECCOMP_POLICY), and with
 * EBADF as ever without it.  The library asks once per process image: a
 * program under syncstat's filter has its requests recorded by the
 * supervisor, which the library then leaves to it (else a dynamic program
 * under the filter, liburing's or cgo's, would have each libc call
 * recorded twice); and a program a library or the launcher finds under a
 * filter already (EBUSY) is served if that filter is one of its run's
 * policy: nocache's has an errno of its own, as its supervisor serves what
 * eatmydata's does not. */
#define EMD_PROBE_FD (-0x454d44)
/* flock, in the native ABI and the 32-bit one: no durability request, no
 * event any test or tool counts. */
#define EMD_PROBE_NR SYS_flock
#define EMD_PROBE_NR32 EMD_COMPAT(143, 143)
#define EMD_PROBE_EAT EOWNERDEAD
#define EMD_PROBE_TIME ENOTRECOVERABLE
#define EMD_PROBE_CACHE ESTALE /* nocache's: its supervisor serves reads and writes */
#define EMD_PROBE_CRASH ENOTUNIQ /* crashtest's: its supervisor journals changes */
static inline int emd_probe_errno(const char *policy)
{
	if (policy && policy[0] == 'c' && !__builtin_strcmp(policy, "crashtest"))
		return EMD_PROBE_CRASH;
	if (policy && policy[0] == 's' && !__builtin_strcmp(policy, "syncstat"))
		return EMD_PROBE_TIME;
	if (policy && policy[0] == 'n' && !__builtin_strcmp(policy, "nocache"))
		return EMD_PROBE_CACHE;
	return EMD_PROBE_EAT;
}

/* The table of a policy's filter. */
static inline enum emd_filter_table emd_filter_table_of(const char *policy)
{
	int probe = emd_probe_errno(policy);

	return probe == EMD_PROBE_CACHE ? EMD_FILTER_IO :
	       probe == EMD_PROBE_CRASH ? EMD_FILTER_CHANGES : EMD_FILTER_REQUESTS;
}

/* Is this process under the filter of a run of `policy`'s (the probe
 * answers as that policy's does)?  errno kept.  Through libc's syscall(),
 * which eatmydata's library wraps: it asks through its own. */
int emd_under_filter_of(const char *policy);

/* The supervisor's name for a run (EATMYDATA_SECCOMP): this many random
 * lowercase hex digits; is `name` one? */
#define EMD_RENDEZVOUS_LEN 32
int emd_rendezvous_ok(const char *name);

/* The abstract socket address this user's supervisor of `name` binds, and
 * its length. */
socklen_t emd_rendezvous_address(const char *name, struct sockaddr_un *addr);

/* What a supervisor sends on each connection once it answers; or, as it
 * starts, in place of it when it cannot serve the process that started it
 * (its /proc is not its pid namespace's, or that process is not in its
 * namespace): emd_supervisor then says EMD_FOREIGN. */
#define EMD_READY 'R'
#define EMD_REFUSED_PROC 'P'
#define EMD_FOREIGN (-ESRCH)

/* A socket to this user's supervisor of the run `name`: the one running,
 * else one started now from the launcher's binary `exe` (only a regular
 * file of root's or this user's that no one else may write), detached;
 * `trust`: always a new one, whose first listener is the launcher's own
 * (seccomp/supervisor.h).  -ECHILD if there is none to be had, EMD_FOREIGN
 * if the one started cannot serve this process (the program then runs
 * unfiltered).  The caller closes it. */
int emd_supervisor(const char *name, const char *exe, int trust);

/* Put the calling thread, and what it execs, under the filter (with
 * no_new_privs only when it may not do without), and send the listener to
 * the supervisor at socket `sock`, in a message of one byte `tag`.  0 when
 * done; -EBUSY when a listener is there already; -EPIPE when the
 * supervisor is gone (nothing done); other -errno when the kernel
 * refused.  `sys`: a library's raw system call (-errno on failure) to send
 * it past the library's own wrappers; NULL: libc's sendmsg. */
typedef long emd_raw_syscall(long nr, long a, long b, long c, long d, long e, long f);
int emd_filter_self(int sock, int no_io_uring, char tag, emd_raw_syscall *sys);

/* Why a program that needs the filter runs without it, in words, from
 * what emd_filter_self or emd_supervisor answered (-ECHILD: no supervisor
 * to be had). */
const char *emd_why_unfiltered(int r);

#endif
