/* SPDX-License-Identifier: MIT */
/* crash.h -- what crashtest's supervisor files share (crash*.c): the run
 * it journals for, one call being followed, and the records it makes,
 * those libcrashtest makes (include/crashtest.h) for the same calls.
 */
#ifndef EMD_CRASH_H
#define EMD_CRASH_H

#include "change_requests.h"
#include "crashtest.h"
#include "supervisor.h"

#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

/* crash_journal.c: the run, read once from the supervisor's environment
 * (the tree's, where crashtest put it): 1 when its journal is open. */
int crash_on(void);

/* One change and its record at a time, in the order they were made. */
void crash_lock(void);
void crash_unlock(void);

/* A record for the calling thread tid's process (magic, pid, len filled
 * in): a crash point gets its number, and the tree stops there if it is
 * the point asked for.  A note is a record of kind CT_UNKNOWN (why) or
 * another without a payload. */
void crash_record(pid_t tid, struct ct_record *h, const struct iovec *payload, int n);
void crash_note(pid_t tid, enum ct_kind kind, const struct stat *st, const char *why);

/* May a change be made for the caller: still pending, and the crash point
 * --at asks for not passed (then nothing more is made: crash_stopped). */
int crash_acts(const struct call *c);
int crash_stopped(void);

/* Before a change or a durability call: what the tree printed since the
 * last is a claim.  Then where the journal ends, for a durability call. */
void crash_claims(pid_t tid);
uint64_t crash_journal_size(void);

/* Is the absolute path in the copy, in the run directory?  Is fd on the
 * copy's file system? */
int crash_in_root(const char *path);
int crash_in_run(const char *path);
/* Is the absolute path the copy's directory, or one above it? */
int crash_above_root(const char *path);
int crash_on_copy_fs(int fd);
int crash_on_copy_dev(dev_t dev);

/* Is the directory dir (a descriptor) the copy's or below it, whatever its
 * path (a bind mount of it, another mount namespace's)? */
int crash_below_root(int dir);

/* The absolute path of this process's fd, or -1. */
int crash_fd_path(int fd, char *out, size_t size);

/* crash.c: where the caller tid's descriptor num, the file st, is (CT_*
 * of ct.h's kind): a regular file of the copy, a pipe or socket (a claim),
 * or neither; a write on a regular file elsewhere is noted as unknown. */
enum crash_where { CW_NONE, CW_FILE, CW_CLAIMED };
enum crash_where crash_where_fd(pid_t tid, int num, const struct stat *st);

/* crash_claims.c: what the program tells others through its pipe or
 * socket num (the file st): a write (write, writev, pwritev2), a send
 * (sendto, sendmsg, sendmmsg), a vmsplice, a copy into it (splice, tee,
 * sendfile), made here and a claim once it went. */
int crash_claim_write(struct call *c, const struct emd_change *r, int num, const struct stat *st);
int crash_claim_send(struct call *c, const struct emd_change *r, int num, const struct stat *st);
int crash_claim_vmsplice(struct call *c, int num, const struct stat *st);
int crash_claim_copy(struct call *c, const struct emd_change *r, int num, const struct stat *st);

/* crash_names.c: the calls that make, move or remove names, and opens
 * that create or truncate; a path call the supervisor cannot follow
 * (FOREIGN: truncate by name). */
int crash_names(struct call *c, const struct emd_change *r);
int crash_foreign_path(struct call *c, const struct emd_change *r, const char *what);

#endif
