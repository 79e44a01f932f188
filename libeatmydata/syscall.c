/* SPDX-License-Identifier: MIT */
/* syscall.c -- durability requested through libc's syscall(): each request
 * takes the path of its libc wrapper (the same helper for the opens,
 * pwritev2 and the audit's renames and links; the same recording and noting
 * for the sync calls), with the raw system call as the real one.
 *
 * syscall() is how a program reaches calls libc has no wrapper for, openat2
 * among them; programs that make the system call themselves (static and Go
 * binaries) are out of reach of any preloaded library.
 */
#include "emd.h"

#include <linux/openat2.h>
#include <stdarg.h>

/* openat2's struct open_how is extensible; larger ones than this pass
 * through unchanged. */
#define HOW_MAX 256

/* One call to syscall(): its number, arguments and a copy of open_how. */
struct sys_call {
	long nr;
	long a[6];
	int flags_arg;
	_Alignas(struct open_how) unsigned char how[HOW_MAX]; /* read as one */
};

static long raw(const struct sys_call *c)
{
	return EMD_REAL(syscall)(c->nr, c->a[0], c->a[1], c->a[2], c->a[3],
				 c->a[4], c->a[5]);
}

/* The kernel copies open_how from the caller, so a bad pointer is EFAULT,
 * not a crash: read it the same way; 0 if it cannot be read. */
static int read_how(struct sys_call *c)
{
	size_t size = (size_t)c->a[3];
	struct iovec local = {c->how, size}, remote = {(void *)c->a[2], size};

	if (size < sizeof(struct open_how) || size > HOW_MAX)
		return 0;
	return emd_syscall(SYS_process_vm_readv, getpid(), (long)&local, 1,
			   (long)&remote, 1, 0) == (long)size;
}

/* emd_open's real call: the flags it dropped are cleared in the arguments
 * (for openat2, in the copy of open_how passed instead of the caller's). */
static long call_open(const struct emd_open *op, int flags)
{
	struct sys_call *c = op->arg;
	unsigned drop = (unsigned)(op->flags & ~flags);
	struct open_how *how = (struct open_how *)c->how;

	if (drop && c->nr == SYS_openat2) {
		how->flags &= ~(unsigned long long)drop;
		c->a[2] = (long)how;
	} else if (drop) {
		c->a[c->flags_arg] &= ~(long)drop;
	}
	return raw(c);
}

/* The open request `c` is, if it is one. */
static int open_request(struct sys_call *c, struct emd_open *op)
{
	long *a = c->a;

	*op = (struct emd_open){AT_FDCWD, (const char *)a[0], (int)a[1], 0,
				call_open, c};
	c->flags_arg = 1;
	switch (c->nr) {
#ifdef SYS_open
	case SYS_open:
		return 1;
#endif
#ifdef SYS_creat
	case SYS_creat:
		op->flags = O_CREAT | O_WRONLY | O_TRUNC;
		return 1;
#endif
	case SYS_openat:
		c->flags_arg = 2;
		*op = (struct emd_open){(int)a[0], (const char *)a[1], (int)a[2],
					0, call_open, c};
		return 1;
	case SYS_open_by_handle_at: /* no path: no entry for the audit */
		c->flags_arg = 2;
		*op = (struct emd_open){(int)a[0], NULL, (int)a[2] & ~O_CREAT,
					0, call_open, c};
		return 1;
	case SYS_openat2:
		*op = (struct emd_open){(int)a[0], (const char *)a[1], 0, 0,
					call_open, c};
		if (read_how(c))
			op->flags = (int)((struct open_how *)c->how)->flags;
		return 1;
	default:
		return 0;
	}
}

/* emd_pwritev2's real call. */
static long call_pwritev2(void *arg, int flags)
{
	struct sys_call *c = arg;

	c->a[EMD_PWRITEV2_FLAGS_ARG] = flags;
	return raw(c);
}

EMD_REQUEST_TABLE(requests);

/* The row of system call nr in the request table, or -1. */
static int request_of(long nr)
{
	if (nr < 0) /* a row this ABI lacks is -1 (aarch64's open) */
		return -1;
	switch (nr) {
		EMD_REQUESTS(EMD_REQ_CASE)
	default:
		return -1;
	}
}

/* A request answered here, as its libc wrapper answers it when eating:
 * checked and noted without the call, or made without its sync bits and
 * noted when it worked. */
static long eat(const struct emd_request *r, struct sys_call *c)
{
	long *a = c->a, res;

	switch (r->eat) {
	case EMD_EAT_FD_SYNC:
		return emd_eat_fd_sync((int)a[r->arg], -EINVAL);
	case EMD_EAT_FS_SYNC:
		return emd_eat_fd_sync((int)a[r->arg], 0);
	case EMD_EAT_ALL_SYNC:
		emd_note_all();
		return 0;
	case EMD_EAT_MAPPING:
		a[r->arg] = emd_msync_flags((int)a[r->arg]);
		if ((res = raw(c)) == 0)
			emd_note_all();
		return res;
	case EMD_EAT_RANGE:
		a[r->arg] &= ~(long)r->bits;
		return emd_note_result((int)a[0], raw(c));
	default:
		return raw(c);
	}
}

/* A sync request, recorded: the file is its descriptor's, or for sync and
 * msync (no descriptor) the mapping's or none. */
static long sync_request(const struct emd_request *r, struct sys_call *c,
			 const void *site)
{
	struct emd_rec rec;
	int fd = (int)c->a[0];
	const void *addr = NULL;

	if (r->test == EMD_TEST_BITS && !((unsigned long)c->a[r->arg] & r->bits))
		return raw(c);
	if (r->eat == EMD_EAT_ALL_SYNC || r->eat == EMD_EAT_MAPPING) {
		fd = -1;
		addr = r->eat == EMD_EAT_MAPPING ? (const void *)c->a[0] : NULL;
	}
	emd_rec_start(&rec, r->kind, fd, addr, site);
	return emd_rec_finish(&rec, emd_eating() ? eat(r, c) : raw(c));
}

/* A write, recorded when its descriptor was opened with O_SYNC. */
static long write_request(struct sys_call *c, const void *site)
{
	struct emd_rec rec;
	int kind = emd_write_kind((int)c->a[0]);

	if (EMD_LIKELY(kind < 0))
		return raw(c);
	emd_rec_start(&rec, kind, (int)c->a[0], NULL, site);
	return emd_rec_finish(&rec, raw(c));
}

/* Each request takes its libc wrapper's path. */
static long as_wrapper(int id, struct sys_call *c, const void *site)
{
	const struct emd_request *r = &requests[id];
	struct emd_open op;

	switch (r->eat) {
	case EMD_EAT_OPEN:
	case EMD_EAT_OPEN_HANDLE:
		open_request(c, &op);
		return op.flags & EMD_OPEN_SLOW_FLAGS ? emd_open(&op, site) : raw(c);
	case EMD_EAT_WRITE:
		return emd_pwritev2((int)c->a[0], (int)c->a[r->arg], call_pwritev2,
				    c, site);
	case EMD_EAT_NONE:
		return r->test == EMD_TEST_WRITE ? write_request(c, site) : raw(c);
	case EMD_EAT_AIO:
		emd_aio_record(c->a[1], (struct iocb **)c->a[2], site);
		emd_aio_unsync(c->a[1], (struct iocb **)c->a[2]);
		return raw(c);
	case EMD_EAT_RING:
		emd_ring_unpolled((struct io_uring_params *)c->a[1]);
		return raw(c);
	case EMD_EAT_URING: /* the submissions are in the ring, seen by the filter */
		return raw(c);
	default:
		return sync_request(r, c, site);
	}
}

/* The directory entries --audit follows, made as their wrappers make them;
 * 1 when `c` is one, its result in *res. */
static int entry_call(const struct sys_call *c, long *res, const void *site)
{
	const long *a = c->a;
	const char *p1 = (const char *)a[1];

	if (EMD_LIKELY(!emd_audit_now()))
		return 0;
	switch (c->nr) {
#ifdef SYS_rename
	case SYS_rename:
		*res = emd_audit_rename(AT_FDCWD, (const char *)a[0], AT_FDCWD, p1, 0, site);
		return 1;
#endif
#ifdef SYS_link
	case SYS_link:
		*res = emd_audit_link(AT_FDCWD, (const char *)a[0], AT_FDCWD, p1, 0, site);
		return 1;
#endif
#ifdef SYS_renameat
	case SYS_renameat:
#endif
	case SYS_renameat2:
		*res = emd_audit_rename((int)a[0], p1, (int)a[2],
					(const char *)a[3],
					c->nr == SYS_renameat2 ? (unsigned)a[4] : 0,
					site);
		return 1;
	case SYS_linkat:
		*res = emd_audit_link((int)a[0], p1, (int)a[2],
				      (const char *)a[3], (int)a[4], site);
		return 1;
	default:
		return 0;
	}
}

EMD_EXPORT long syscall(long nr, ...)
{
	struct sys_call c = {.nr = nr};
	struct emd_open op;
	long res;
	int id;

	PL_SYSCALL_ARGS(c.a, nr);
	if ((id = request_of(nr)) >= 0)
		res = as_wrapper(id, &c, EMD_CALLER);
	else if (open_request(&c, &op)) /* creat: a create for the audit, a mode */
		res = emd_open(&op, EMD_CALLER);
	else if (!entry_call(&c, &res, EMD_CALLER))
		res = raw(&c);
	return emd_fd_syscall(nr, c.a, res);
}
