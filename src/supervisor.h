/* SPDX-License-Identifier: MIT */
/* supervisor.h -- what the supervisor's files share: one notification
 * being answered. */
#ifndef EMD_SUPERVISOR_H
#define EMD_SUPERVISOR_H

#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/types.h>

/* How a notification was handled: 0, reply with resp's val and error;
 * CONTINUE, let the call go on to the kernel; ANSWERED, already done. */
enum { CONTINUE = 1, ANSWERED = 2 };

struct call {
	int listener;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
};

/* Reply with -err. */
int fail(struct call *c, int err);

/* A descriptor of the calling process, duplicated here, or -errno. */
int their_fd(const struct call *c, int fd);

/* Copy the caller's memory (a string: up to its NUL, a page at a time, so
 * that its end may sit just before unmapped memory); 0 or -1. */
int read_theirs(pid_t pid, unsigned long addr, void *out, size_t size, int string);

/* --sync-on-exit: note the file system behind fd (-1: all of them). */
void note(int fd);

/* open, openat, openat2 with O_SYNC or O_DSYNC (behalf.c). */
int open_on_behalf(struct call *c);

/* pwritev2 with RWF_SYNC or RWF_DSYNC (behalf.c). */
int write_on_behalf(struct call *c);

/* io_uring_enter submitting SQEs (uring.c). */
int uring_submit(struct call *c);

#endif
