/* SPDX-License-Identifier: MIT */
/* supervisor.c -- what the supervisor answers to each durability request
 * the seccomp filter sends (serve.c receives them), from outside the process
 * that made it, as the library answers it inside: the kernel's verdict on
 * the arguments, no I/O.  One handler per way of eating in the request
 * table (include/requests.h).
 *
 * A descriptor is fetched with pidfd_getfd and asked with
 * sync_file_range(fd, 0, 0, 0).  Opens and writes with sync flags are in
 * behalf.c, io_uring submissions in uring.c.  Anything that cannot be
 * answered faithfully goes on to the kernel unchanged
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE): it then syncs, but it is answered.
 */
#include "common/common.h"
#include "seccomp.h"
#include "supervisor.h"
#include "common/sync_on_exit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int reply_error(struct call *c, int err)
{
	c->resp->error = -err;
	return 0;
}

int still_pending(const struct call *c)
{
	return ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &c->req->id) == 0;
}

void note(int fd)
{
	sync_on_exit_note(fd);
}

void note_file(const struct statx *stx)
{
	sync_on_exit_note_dev(makedev(stx->stx_dev_major, stx->stx_dev_minor));
}

int fd_check(int fd)
{
	return syscall(SYS_sync_file_range, fd, 0L, 0L, 0U) ? -errno : 0;
}

/* A descriptor's check: the kernel's answer r, or CONTINUE where it
 * cannot be had (another user's caller, no descriptor free here: said). */
static int checked(struct call *c, const struct statx *stx, int r)
{
	if (r == 0)
		note_file(stx);
	if (r == 0 || r == -EBADF || r == -EINVAL || r == -ESPIPE)
		return r ? reply_error(c, -r) : 0;
	return left_to_kernel(c, 0);
}

/* fsync, fdatasync, syncfs: the descriptor checked as the library checks
 * it (emd_check_fd), with `espipe` the answer for pipes and sockets;
 * without a duplicate of it (fds.c: whose close its file system sees). */
static int check_fd(struct call *c, int espipe)
{
	struct statx stx;
	int r = their_range_check(c, (int)call_arg(c, 0), 0, 0, 0, &stx);

	return checked(c, &stx, r == -ESPIPE ? espipe : r);
}

static int sync_fd(struct call *c)
{
	return check_fd(c, -EINVAL);
}

static int sync_fs(struct call *c)
{
	return check_fd(c, 0);
}

static int sync_all(struct call *c)
{
	(void)c;
	note(-1);
	return 0;
}

/* The offsets follow the descriptor, or on arm's sync_file_range2 the
 * flags (argument 1); each is two arguments in the compat ABI. */
static int sync_range(struct call *c)
{
	int flags_arg = c->compat ? c->request->arg32 : c->request->arg;
	int off_arg = flags_arg == 1 ? 2 : 1, width = c->compat ? 2 : 1;
	struct statx stx;

	return checked(c, &stx, their_range_check(c, (int)call_arg(c, 0), call_arg64(c, off_arg),
						  call_arg64(c, off_arg + width),
						  (unsigned)call_arg(c, flags_arg), &stx));
}

/* msync's checks, in the kernel's order; MS_INVALIDATE of locked pages
 * (EBUSY) is not seen from here. */
static int sync_mapping(struct call *c)
{
	unsigned long addr = call_arg(c, 0), len = call_arg(c, 1);
	unsigned long page = sysconf(_SC_PAGESIZE);
	int flags = (int)call_arg(c, 2), m;

	if ((flags & ~(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) || (addr & (page - 1)) ||
	    ((flags & MS_ASYNC) && (flags & MS_SYNC)))
		return reply_error(c, EINVAL);
	len = (len + page - 1) & ~(page - 1);
	if (addr + len < addr)
		return reply_error(c, ENOMEM);
	if (len == 0)
		return 0;
	if ((m = caller_mapped(c->req->pid, addr, addr + len)) < 0)
		return left_to_kernel(c, 0);
	note(-1);
	return m ? 0 : reply_error(c, ENOMEM);
}

EMD_REQUEST_TABLE(requests);

/* Whether a caller eats is its image's: the library decides it once, from
 * the environment it started with (and --only, from its name).  Kept per
 * worker and thread while the thread runs the image it was stamped with:
 * one read a request (same_image), not the environment's open, reads and
 * close.  Stamped before it is looked at: an exec after is seen next. */
#define EATERS_KEPT 16
static __thread struct eater {
	pid_t tid;
	int eats;
	struct image_stamp image;
} eaters[EATERS_KEPT];
static __thread unsigned eaters_next;

static int eats(struct call *c, const char *only)
{
	pid_t tid = c->req->pid;
	struct eater *e;

	for (int i = 0; i < EATERS_KEPT; i++)
		if (eaters[i].tid == tid && same_image(tid, &eaters[i].image))
			return eaters[i].eats;
	e = &eaters[eaters_next++ % EATERS_KEPT];
	e->tid = image_stamp(tid, &e->image) == 0 ? tid : 0;
	return e->eats = caller_eats(tid, only);
}

void unserved(struct call *c, const char *why)
{
	if (c->policy && c->policy->unserved)
		c->policy->unserved(c, why);
}

/* eatmydata's requests left to the kernel sync, and are counted as such
 * (left.c; the record file with --stats); one left for a reason of the
 * supervisor's own is said at once on the caller's standard error. */
static void eat_unserved(struct call *c, const char *why)
{
	char name[32];
	pid_t tgid;

	if (!recording())
		teller_ask(c, why, "eatmydata", "its durability calls go on to the kernel (they sync)",
			   name, sizeof(name), &tgid);
}

/* eatmydata's: each request answered without its I/O. */
const struct policy eat_policy = {
	.name = "eatmydata",
	.handlers = {
		[EMD_EAT_FD_SYNC] = sync_fd,
		[EMD_EAT_FS_SYNC] = sync_fs,
		[EMD_EAT_ALL_SYNC] = sync_all,
		[EMD_EAT_RANGE] = sync_range,
		[EMD_EAT_MAPPING] = sync_mapping,
		[EMD_EAT_OPEN] = open_on_behalf,
		[EMD_EAT_WRITE] = write_on_behalf,
		[EMD_EAT_URING] = uring_submit,
		[EMD_EAT_RING] = uring_setup,
		[EMD_EAT_AIO] = aio_submit,
	},
	.applies = eats,
	.unserved = eat_unserved,
};

static const struct policy *const policies[] = {&eat_policy, &time_policy, &nocache_policy,
						&crash_policy};

const struct policy *policy_named(const char *name)
{
	for (size_t i = 0; i < sizeof(policies) / sizeof(*policies); i++)
		if (!strcmp(policies[i]->name, name))
			return policies[i];
	return NULL;
}

/* Does p's filter notify the row's calls (shared/filter.c)? */
static int notified(const struct policy *p, const struct emd_request *r)
{
	return emd_supervised(r) || (p->file_writes && emd_file_write(r));
}

int supervisor_table_agrees(void)
{
	for (size_t p = 0; p < sizeof(policies) / sizeof(*policies); p++)
		for (int i = 0; !policies[p]->answer && i < EMD_NREQUESTS; i++)
			if ((policies[p]->handlers[requests[i].eat] != NULL) !=
			    notified(policies[p], &requests[i]))
				return 0;
	return 1;
}

/* The row of the notified call, by its ABI and number; NULL for Landlock
 * (through any entry: x32 sets a bit in the number). */
static const struct emd_request *request_of(const struct policy *p, const struct seccomp_data *d,
					    int *compat)
{
	*compat = d->arch == EMD_ARCH_COMPAT;
	if (d->arch != EMD_ARCH_NATIVE && !*compat)
		return NULL;
	for (int i = 0; i < EMD_NREQUESTS; i++)
		if ((long)d->nr == (*compat ? requests[i].nr32 : requests[i].nr) &&
		    notified(p, &requests[i]))
			return &requests[i];
	return NULL;
}

/* A request the policy's handler let go on to the kernel after an open
 * here failed for want of a descriptor (since `before`): said. */
static int said(struct call *c, int how, unsigned before)
{
	if (how == CONTINUE && fds_shortages() != before)
		unserved(c, "the supervisor had no descriptor free");
	return how;
}

/* The request's own handler, as policy p says; eatmydata --stats counts
 * what was eaten (not what went on to the kernel, nor a call the kernel's
 * checks refused). */
static int handled(struct call *c, const struct policy *p, const char *only)
{
	int how;

	if (p->answer && (c->req->data.nr & ~EMD_X32_BIT) != SYS_landlock_restrict_self)
		return p->answer(c);
	c->request = request_of(p, &c->req->data, &c->compat);
	if (!c->request) {
		if ((c->req->data.nr & ~EMD_X32_BIT) == SYS_landlock_restrict_self)
			rights_note_landlock();
		return CONTINUE;
	}
	/* A program that does not eat: eatmydata --stats counts it apart. */
	if (p->applies && !p->applies(c, only)) {
		if (p == &eat_policy)
			record_left(c, EMD_REC_NOT_EATING);
		return CONTINUE;
	}
	how = p->handlers[c->request->eat](c);
	/* eatmydata --stats counts what was eaten (not what went on to the
	 * kernel, nor a call the kernel's checks refused); an open made here
	 * is counted before it is handed over (behalf.c). */
	if (p == &eat_policy && how == 0 && !c->resp->error)
		record_eaten(c, -1);
	return how;
}

int supervisor_answer(struct call *c, const struct policy *p, const char *only)
{
	unsigned before = fds_shortages();

	/* A caller this pid namespace does not see (one of its processes
	 * entered another below none of ours): nothing of it can be named. */
	if (!c->req->pid) {
		if ((c->req->data.nr & ~EMD_X32_BIT) == SYS_landlock_restrict_self)
			rights_note_landlock();
		unserved(c, "a process of another pid namespace than the supervisor's");
		return CONTINUE;
	}
	return said(c, handled(c, p, only), before);
}
