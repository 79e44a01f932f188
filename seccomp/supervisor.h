/* SPDX-License-Identifier: MIT */
/* supervisor.h -- what the supervisor's files share: one notification
 * being answered, and what is known of the process that sent it.
 *
 * Each notification is answered on a worker thread of its own, so a call
 * that blocks (caller memory backed by FUSE or userfaultfd, a FIFO) stalls
 * only the caller that made it: everything here is thread-safe. */
#ifndef EMD_SUPERVISOR_H
#define EMD_SUPERVISOR_H

#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "requests.h"

/* How a notification was handled: 0, reply with resp's val and error;
 * CONTINUE, let the call go on to the kernel unchanged; ANSWERED, the
 * reply was sent already (SECCOMP_ADDFD_FLAG_SEND) or the caller is gone. */
enum { CONTINUE = 1, ANSWERED = 2 };

/* A notification: the request it is (a row of include/requests.h) and in
 * which ABI, native or the 32-bit one (compat), which says where each
 * argument is and how wide. */
struct call {
	int listener;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	const struct emd_request *request;
	int compat;
	/* The filter is the launcher's own, installed before the tree ran:
	 * every Landlock domain the tree entered since was notified.  A filter
	 * a process of the tree installed (the library, at an exec) may have
	 * come after one the filter did not see: nothing is opened for its
	 * callers, whose opens may be confined. */
	int trusted;
	/* Opens and writes may be made here for the caller (--on-behalf=on):
	 * a policy that judges the opener (fanotify permission events, audit
	 * rules on exe=, BPF-LSM) then sees eatmydata's, not the program. */
	int on_behalf;
	const struct policy *policy; /* the run's tool's */
};

/* Argument i as the kernel reads it: 32 bits wide in the compat ABI. */
static inline unsigned long long call_arg(const struct call *c, int i)
{
	unsigned long long a = c->req->data.args[i];

	return c->compat ? (unsigned)a : a;
}

/* A 64-bit value the compat ABI passes in two arguments from i on (low
 * word first), or the native ABI in argument i. */
static inline long long call_arg64(const struct call *c, int i)
{
	if (!c->compat)
		return (long long)c->req->data.args[i];
	return (long long)(call_arg(c, i) | call_arg(c, i + 1) << 32);
}

/* supervisor.c: the answer to one notification (0, CONTINUE or ANSWERED),
 * as policy p says; `only` is --only's globs or NULL. */
struct policy;
int supervisor_answer(struct call *c, const struct policy *p, const char *only);

/* Does each policy answer exactly the requests the filter notifies (the
 * table's emd_supervised)? */
int supervisor_table_agrees(void);

/* 0 when fsync would act on fd (a descriptor of this process's), else the
 * -errno of the kernel's check, sync_file_range(fd, 0, 0, 0), which does no
 * I/O: the library's emd_check_fd, on this side. */
int fd_check(int fd);

/* unserved.c: a call the policy serves goes on to the kernel for `why`
 * (the supervisor had no descriptor free...): said as the policy says it
 * (supervisor.c's unserved).  teller_ask: whether it is the first time
 * for the caller's process image and `why` (a string of the supervisor's
 * own, by address): 1, 0, or -1 if that cannot be told; the process (tgid)
 * and its name; and then, with a tool named, a line on the caller's own
 * standard error, "TOOL: NAME[TGID]: WHAT: WHY".  At this process's
 * descriptor limit too (unserved.c's teller). */
void unserved(struct call *c, const char *why);
void unserved_init(void);
int teller_ask(const struct call *c, const char *why, const char *tool, const char *what,
	       char *name, size_t size, pid_t *tgid);

/* Reply that the call failed with err; returns 0 (the reply is to send). */
int reply_error(struct call *c, int err);

/* Is the notification still pending?  Checked after reading anything of
 * the caller's, which may have been another process's by then. */
int still_pending(const struct call *c);

/* behalf.c: writing into the caller's memory.  /proc/TID/mem of the
 * caller, open for writing once the notification is found still pending
 * after the open (so that it holds the caller's memory, not a process's
 * that took its number since), or -1; *room is how much of remote[0..n),
 * in order, the kernel's own copy to the caller would fill (writable
 * mappings up to the first gap).  write_mem: len bytes of buf into remote,
 * through such a file; how many were written. */
int caller_mem(const struct call *c, const struct iovec *remote, int n, size_t *room);

/* A copy from the caller's remote[0..n) stopped after `got` bytes where
 * its mappings say there is more to read: memory no other process
 * reaches (memfd_secret, a device's mapping such as perf's ring buffer),
 * which the caller's own call takes.  Such a call is the kernel's. */
int caller_unreachable(const struct call *c, const struct iovec *remote, int n, size_t got);
ssize_t write_mem(int mem, const char *buf, size_t len, const struct iovec *remote, int n);

/* fds.c: the calling thread's descriptors.  their_file: what fd is, as
 * statx sees it through /proc/TID/fd/N, without opening it (nothing
 * reaches its file system); their_flags: its open flags (fdinfo); both
 * -EBADF where none is open.  their_path: the file at fd (AT_FDCWD: the
 * working directory) held with O_PATH here.  All by thread number: check
 * still_pending before trusting what they said.  -errno otherwise. */
struct statx;
int their_file(const struct call *c, int fd, struct statx *stx);
int their_flags(const struct call *c, int fd);
int their_path(const struct call *c, int fd);

/* Its open flags the cheapest way that changes nothing: F_GETFL of a
 * duplicate where its close is quiet, else fdinfo. */
int their_open_flags(const struct call *c, int fd);

/* A duplicate of the caller's descriptor (pidfd_getfd), to act on, with
 * what it is in *stx (NULL: not wanted); -errno; NOT_QUIET when closing a
 * duplicate would reach its file system (its flush: FUSE tells its server,
 * NFS writes the file back), which is then the kernel's to act on. */
#define NOT_QUIET (-EXDEV)
int their_fd(const struct call *c, int fd, struct statx *stx);

/* Would closing a descriptor of the file stx, the caller tid's fd, do
 * nothing on its file system (tid's mount table names its mount)?  1, 0,
 * or -errno when that cannot be read (-EMFILE). */
int closes_quietly(pid_t tid, int fd, const struct statx *stx);

/* sync_file_range(fd, off, n, flags)'s answer for the caller's fd, the
 * kernel's checks made here without a duplicate of it (nothing is written
 * back): -EBADF, -EINVAL for the arguments, -ESPIPE for a kind of file it
 * takes none of, 0; or another -errno when fd cannot be looked at.  *stx:
 * what fd is. */
int their_range_check(const struct call *c, int fd, long long off, long long n, unsigned flags,
		      struct statx *stx);

/* A pidfd of the calling thread tid whose descriptor table is the
 * thread's (see fds.c); *exact = 0: its process's, good for one request. */
int caller_pidfd(pid_t tid, int *exact);

/* Is this process short of descriptors: err (-errno) is EMFILE, ENFILE? */
static inline int fds_short(int err)
{
	return err == -EMFILE || err == -ENFILE;
}

/* A worker leaves: the descriptors it kept for the next request closed. */
void fds_leave(void);

/* After an open (of any kind) here failed: counted if for want of a
 * descriptor (errno EMFILE, ENFILE), per worker; errno kept.  A request
 * that goes on to the kernel after one was counted is said (unserved). */
void fds_note(void);
unsigned fds_shortages(void);

/* reach.c: how many bytes of remote[0..n), in order, the caller's
 * mappings with permission perm ('r', 'w') reach before the first that is
 * in none (the maps: /proc/TID/maps, open at its start). */
size_t mapped_prefix(int maps, const struct iovec *remote, int n, char perm);

/* proc.c: reading the caller. */

/* Copy the caller's memory (a string: up to its NUL, a page at a time, so
 * that its end may sit just before unmapped memory); 0 or -1. */
int read_theirs(pid_t pid, unsigned long addr, void *out, size_t size, int string);

/* The caller's array of cnt iovecs at addr (at most THEIR_IOV_MAX, the
 * kernel's IOV_MAX), widened from a compat caller's {u32 base, u32 len}
 * (a length past INT32_MAX, which the kernel refuses with EINVAL, stays
 * as large); 0 or -1. */
#define THEIR_IOV_MAX 1024
int their_iovecs(const struct call *c, unsigned long addr, struct iovec *iov, int cnt);

/* Does the caller eat: no EATMYDATA_DISABLE in its environment, and named
 * by --only's globs (NULL: every program)? */
int caller_eats(pid_t pid, const char *only);

/* Has the calling thread a free descriptor below its RLIMIT_NOFILE?  (Its
 * descriptors below the limit are fewer than the limit.) */
int caller_fd_room(pid_t tid);

/* Which image of its process the caller runs: the 16 bytes at AT_RANDOM
 * (its auxiliary vector), random for each exec (a forked child has its
 * parent's).  image_stamp takes the caller's (0, or -1 if it cannot:
 * then same_image is always 0); same_image says whether it still runs
 * the image stamped (one process_vm_readv). */
struct image_stamp {
	unsigned long at;
	unsigned char bytes[16];
};
int image_stamp(pid_t pid, struct image_stamp *st);
int same_image(pid_t pid, const struct image_stamp *st);

/* same_image (st NULL, or not taken: 0), with len bytes of the caller's
 * at `at` read into buf by the same process_vm_readv (the stack, for its
 * call site): *got of them. */
int same_image_and(pid_t pid, const struct image_stamp *st, unsigned long at, void *buf,
		   size_t len, size_t *got);

/* The process of thread tid (its thread group), or -1. */
pid_t caller_pid(pid_t tid);

/* The process of the calling thread tid (its Tgid), and its name into
 * name[size] (its comm, "" if unknown; NULL: not asked); tid if it cannot
 * be read. */
pid_t caller_process(pid_t tid, char *name, size_t size);

/* /proc/PID/NAME, open for reading, or -1. */
int open_proc(pid_t pid, const char *name);

/* Is [start, end) mapped without a gap in the caller?  -1: unknown. */
int caller_mapped(pid_t pid, unsigned long start, unsigned long end);

/* rights.c: may this process act for the caller?  1 only when it can do
 * nothing the caller could not (see rights.c); *umask_out is the caller's. */
void rights_init(void);
void rights_note_landlock(void);
int same_rights(pid_t tid, mode_t *umask_out);

/* --sync-on-exit: note the file system behind fd (-1: all of them), or
 * of the caller's file stx. */
void note(int fd);
void note_file(const struct statx *stx);

/* behalf.c: the directory a caller's path is relative to (AT_FDCWD: its
 * working directory), here, or -errno.  The file (base, path) opened as
 * the caller asked but for the flags `drop`, here, with its umask (see
 * behalf.c), or -1 when that cannot be the caller's own open; hand_over gives it the descriptor
 * (closed here) as the call's answer. */
int caller_dir(const struct call *c, int dirfd);
struct open_how;
int open_here(int base, const char *path, struct open_how how, mode_t their_umask, int compat,
	      unsigned long long drop);
int hand_over(struct call *c, int fd, int cloexec);

/* limit.c: a change of a file (fd here) made for the caller tid within
 * its file size limit, as the kernel applies it: to the change as it is
 * made, not as it was seen before (the file position may move).  The
 * result (bytes written, 0) or -errno; *limited when the caller has a
 * limit, and then -EFBIG is its refusal, which changed nothing: the
 * caller's to meet (the kernel signals it SIGXFSZ). */
enum change_kind { CHANGE_WRITE, CHANGE_TRUNCATE, CHANGE_ALLOCATE };
struct change {
	enum change_kind kind;
	int fd;
	const struct iovec *iov; /* a write's */
	int cnt, rwf;
	int mode;     /* fallocate's */
	off_t pos;    /* a write's offset (-1: the file position), the size, an offset */
	off_t len;    /* fallocate's */
};
long change_within(pid_t tid, const struct change *ch, int *limited);

/* nocache.c: may a write of len bytes at pos (-1: at fd's position) be
 * made here: within the caller's RLIMIT_FSIZE (which this process raised
 * for itself), at the end of an O_APPEND file? */
int within_limit(pid_t tid, int fd, int flags, off_t pos, size_t len);

/* nocache.c: does a caller wait killably once its call is taken here
 * (Linux 5.19)?  Else a signal makes it ask again for a change made here
 * already: one made here must not be. */
int waits_killably(void);

/* nocache_behind.c: what a read made here brings into the page cache goes
 * once the caller has read past it.  Before each read or write of the file
 * fd (st: its statx, with its birth time), the file's residency is recorded
 * at the run's first of them: 0 if all of the file was cached then (nothing
 * to drop).  After, the n bytes read from `at` are to be dropped, and the
 * rest of the file too if the read reached its end. */
struct statx;
int behind_before(int fd, const struct statx *st);
void behind_after(int fd, const struct statx *st, off_t at, ssize_t n, int at_end);

/* At the end of the program's use of fd's file (its close, its exit): is
 * the file one whose reads or writes were made here?  behind_end: if so,
 * all of it is written back, and what was not cached at the run's first
 * call made here dropped. */
int behind_known(const struct statx *st);
void behind_end(int fd, const struct statx *st);

/* A call of the filter of `listener` was made here on fd's file: its
 * path is noted (the first time), and the listener.  behind_gone: every
 * process under that filter is gone; each file noted with it last is
 * opened again by its path and dropped. */
void behind_served(int fd, const struct statx *st, int listener);
void behind_gone(int listener);

/* nocache_end.c: a close or an exit_group notified by nocache's filter,
 * answered (CONTINUE or ANSWERED) once the files it ends are dropped; -1
 * for any other call. */
int nocache_end(struct call *c);
void nocache_gone(int listener);

/* open, openat, openat2 with O_SYNC or O_DSYNC (behalf.c). */
int open_on_behalf(struct call *c);

/* pwritev2 with RWF_SYNC or RWF_DSYNC (behalf.c). */
int write_on_behalf(struct call *c);

/* io_uring_enter submitting SQEs, io_uring_setup of a polled ring
 * (uring.c); io_submit (aio.c). */
int uring_submit(struct call *c);
int uring_setup(struct call *c);
int aio_submit(struct call *c);

/* fn on each pending SQE of the ring io_uring_enter submits to (its
 * address in the caller), while the caller waits; the OR of the results.
 * fn on the address of each control block io_submit submits (0: not
 * readable). */
int uring_each_sqe(struct call *c, int (*fn)(struct call *c, unsigned long sqe, void *arg),
		   void *arg);
void aio_each_iocb(const struct call *c, void (*fn)(const struct call *c, unsigned long at));

/* record.c: the run's record file (syncstat, --stats), at fd as the
 * starter left it or by name; recording() once it is; a record_write of a
 * slot claims its place (or loses it, counted, as the library does). */
void record_attach(int fd);
int recording(void);
unsigned long long record_now(void);
void record_write(const struct emd_rec_slot *s);

/* The program `file` runs unobserved, for `why` (errno err, or 0): 1 when
 * recorded in the run's record file (attached now if need be). */
int record_unobserved(const char *file, const char *why, int err);

/* crash_journal.c: in a process of a crashtest run (its environment),
 * the program `file` runs past the run's journal, for `why`: the run is
 * unknown from here, and its journal says so. */
void crash_unfollowed(const char *file, const char *why);

/* What the supervisor does with each request, for one tool: a handler
 * per way of eating in the request table, all of those the filter
 * notifies (supervisor_table_agrees), and whether a caller gets the
 * policy at all (eatmydata's: EATMYDATA_DISABLE, --only). */
struct policy {
	const char *name;
	int (*handlers[EMD_NEAT])(struct call *c);
	int (*applies)(struct call *c, const char *only);
	/* Its filter notifies every write on a descriptor, whose open file
	 * may sync it (requests.h's emd_file_write): syncstat's. */
	int file_writes;
	/* A policy whose filter notifies other calls than the request
	 * table's (nocache's reads and writes) answers them all here. */
	int (*answer)(struct call *c);
	/* A call it serves, left to the kernel for `why`, a reason of the
	 * supervisor's own: said where the tool says things (NULL: its
	 * records say it already). */
	void (*unserved)(struct call *c, const char *why);
	/* A listener hung up and all its calls are answered: every process
	 * under that filter is gone. */
	void (*gone)(int listener);
};
extern const struct policy eat_policy; /* supervisor.c */
extern const struct policy time_policy; /* timed.c: syncstat's */
extern const struct policy nocache_policy; /* nocache.c */
extern const struct policy crash_policy; /* crash.c: crashtest's */

/* site.c: the module that holds a call's system call instruction, and
 * the program's own if that is another (from the caller's maps: extent,
 * load bias, name, file); the call site, the function of the program that
 * asked, into s->site (s->pid set). */
struct site_module {
	unsigned long inode, lo, hi, base;
	unsigned long long dev;
	char name[48], file[40];
	char path[256];   /* the maps' path of its file, "" if too long */
	long long key[5]; /* its file as site.c knows a module's (statx), */
	int keyed;        /* taken when the module was found */
	int exec;         /* ET_EXEC: its addresses are not moved (no bias) */
};
void site_module(pid_t pid, unsigned long ip, struct site_module *m, struct site_module *prog);

/* The caller's stack as it waits in its system call: its pointer (from
 * /proc/TID/syscall: site_sp, 0 if unknown) and `have` bytes of it read
 * from lo (from sp on, with the image's stamp: same_image_and); site_name
 * reads more where its walk needs to. */
#define SITE_STACK 2048
struct site_stack {
	unsigned long sp, lo;
	size_t have;
	unsigned char bytes[SITE_STACK];
};
unsigned long site_sp(pid_t tid);
void site_name(const struct call *c, const struct site_module *m,
	       const struct site_module *prog, struct site_stack *stack, struct emd_rec_slot *s);

/* timed.c: eatmydata --stats: a request the supervisor ate, counted in
 * the record file (its file named: `file`, an open made here, or -1), when
 * there is one; one it left to the kernel, with the options that would eat
 * it (record.h's EMD_REC_NEEDS_*, or EMD_REC_NOT_EATING). */
void record_eaten(const struct call *c, int file);
void record_left(const struct call *c, int needs);

/* left.c: eatmydata's handler lets the request go on to the kernel as it
 * is, and it syncs (`needs`: the options that would eat it, 0: none
 * would): recorded (--stats), or said when its process ends.  CONTINUE.
 * left_watch: the pidfds of the processes to be told, into pfd (at most
 * `room`; LEFT_HELD at most); left_tend: each round of the main thread,
 * or at its end (`all`). */
#define LEFT_HELD 64
int left_to_kernel(struct call *c, int needs);
struct pollfd;
int left_watch(struct pollfd *pfd, int room);
void left_tend(int all);

/* The policy named by --seccomp-supervise, or NULL. */
const struct policy *policy_named(const char *name);

#endif
