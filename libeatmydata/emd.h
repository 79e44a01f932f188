/* SPDX-License-Identifier: MIT */
/* emd.h -- what the wrapper files of libeatmydata share: the table of real
 * symbols, the run-time mode and the helpers that decide a call's result.
 *
 * Any wrapper may be the first code of this library to run, before its
 * constructor and in several threads at once, so every accessor here
 * initialises lazily and without locks.
 */
#ifndef EMD_H
#define EMD_H

#define _GNU_SOURCE 1
/* Fortified headers turn open() into an inline function we could not define. */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "env.h"
#include "globs.h"
#include "platform.h"
#include "preload.h"
#include "record.h"
#include "requests.h"

#ifdef EMD_HAVE_FORTIFY_OPEN
/* glibc declares these only to fortified programs. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
#endif

#define EMD_EXPORT PL_EXPORT
#define EMD_LIKELY PL_LIKELY
#define EMD_UNLIKELY PL_UNLIKELY

/* The open flags that need more than a call through: a sync flag, or a
 * flag with which open takes a mode (O_CREAT, and O_TMPFILE's own bit). */
#define EMD_OPEN_SLOW_FLAGS                                                    \
	(EMD_OPEN_SYNC_FLAGS | O_CREAT | (__O_TMPFILE & ~O_DIRECTORY))

/* Every libc function the library calls through to: one row each. */
#define EMD_REAL_SYMBOLS(X)                                                    \
	X(fsync)                                                               \
	X(fdatasync)                                                           \
	X(sync)                                                                \
	X(syncfs)                                                              \
	X(sync_file_range)                                                     \
	X(msync)                                                               \
	X(open)                                                                \
	X(open64)                                                              \
	X(openat)                                                              \
	X(openat64)                                                            \
	X(__open_2)                                                            \
	X(__open64_2)                                                          \
	X(__openat_2)                                                          \
	X(__openat64_2)                                                        \
	X(mkostemps)                                                           \
	X(open_by_handle_at)                                                   \
	X(fopen)                                                               \
	X(fopen64)                                                             \
	X(freopen)                                                             \
	X(freopen64)                                                           \
	X(pwritev64v2)                                                         \
	X(write)                                                               \
	X(rename)                                                              \
	X(renameat)                                                            \
	X(renameat2)                                                           \
	X(link)                                                                \
	X(linkat)                                                              \
	X(writev)                                                              \
	X(pwrite64)                                                            \
	X(pwritev64)                                                           \
	X(syscall)                                                             \
	X(execve)                                                              \
	X(execveat)                                                            \
	X(fexecve)                                                             \
	X(execvpe)                                                             \
	X(posix_spawn)                                                         \
	X(posix_spawnp)                                                        \
	X(close)                                                               \
	X(close_range)                                                         \
	X(closefrom)                                                           \
	X(dup2)                                                                \
	X(dup3)                                                                \
	X(fclose)                                                              \
	X(pclose)                                                              \
	X(closedir)                                                            \
	X(fdopen)                                                              \
	EMD_REAL_MUSL(X)

/* musl has no *64 names of its own: open64 is open, pwritev64v2 pwritev2
 * (platform.h), and those are called through. */
#ifdef EMD_LFS64
#define EMD_REAL_MUSL(X)
#else
#define EMD_REAL_MUSL(X) X(pwrite) X(pwritev) X(pwritev2)
#endif

enum emd_real_id { EMD_REAL_SYMBOLS(PL_ID) EMD_NREAL };

/* emd_real_fn[id] is the next definition of the symbol after ours, found
 * the first time it is needed. */
extern void *emd_real_fn[EMD_NREAL];
extern const char *const emd_real_name[EMD_NREAL];

/* The real function `name`, with the type the system header gives it. */
#define EMD_REAL(name) PL_REAL(emd_real_fn, emd_real_name, name)

/* What this process does with durability requests, decided once from the
 * environment: 0 until then, else EMD_PASS or EMD_EAT, plus EMD_RECORD when
 * each request is to be recorded (syncstat, eatmydata --stats). */
enum emd_mode { EMD_UNSET = 0, EMD_PASS = 1, EMD_EAT = 2, EMD_RECORD = 4 };
extern int emd_mode;
int emd_init(void);

static inline int emd_mode_now(void)
{
	int mode = __atomic_load_n(&emd_mode, __ATOMIC_RELAXED);

	return EMD_UNLIKELY(mode == EMD_UNSET) ? emd_init() : mode;
}

static inline int emd_eating(void)
{
	return emd_mode_now() & EMD_EAT;
}

/* record.c: one call's entry in the record file, in two steps that keep
 * errno: emd_rec_start before the call, emd_rec_finish after it.  Each is
 * inline and costs one test while nothing is recorded; the slot is claimed
 * and completed out of line. */
struct emd_rec {
	void *slot;
	unsigned long long start;
	int fd;
};
int emd_record_init(void);
void emd_rec_claim(struct emd_rec *rec, int kind, int fd, const void *addr,
		  const void *site);
void emd_rec_complete(struct emd_rec *rec, long result);
/* A program that will run unobserved (exec.c): recorded when recording,
 * else said on stderr under eatmydata (its one message: the user must
 * know the requests of that program reach the disk). */
void emd_unobserved(const char *path, const char *why, int err);
/* A request counted, not timed: one that goes on to the kernel in a
 * submission whose completion is not seen here (an AIO sync). */
void emd_rec_counted(int kind, int fd, const void *site);
/* Is this process under a filter of its run's policy (filter.h's probe)? */
int emd_under_own_filter(void);
/* ...of syncstat's, whose supervisor records this process's requests
 * (decided by emd_record_init)? */
int emd_rec_supervised(void);

/* site.c: a call site's text, module build id and address into slot s;
 * record.c: the MODULE record of the module whose file is `path` (as
 * emd_map_path names the file mapped at an address), the first time. */
struct emd_rec_slot;
void emd_site(const void *pc, struct emd_rec_slot *s);
void emd_rec_module(const char *path, const struct emd_rec_slot *call);
void emd_map_path(const void *addr, char *out, size_t size);

/* `fd` names the file, or for msync (fd -1) the mapping at `addr` does. */
static inline void emd_rec_start(struct emd_rec *rec, int kind, int fd,
				 const void *addr, const void *site)
{
	rec->slot = 0;
	if (EMD_UNLIKELY(emd_mode_now() & EMD_RECORD))
		emd_rec_claim(rec, kind, fd, addr, site);
}

/* fdid.c: which file a recorded descriptor is, kept from its first
 * request until the library sees the number closed or handed out again
 * (every wrapper that opens, closes or duplicates calls emd_fd_forget). */
struct fd_id;
extern struct fd_id *emd_fd_ids;
int emd_fd_identity(int fd, struct emd_rec_file *f);
void emd_fd_forget_range(unsigned lo, unsigned hi);
/* The table mapped now (osync.c forgets with it): 0, or -1. */
int emd_fd_map(void);
long emd_fd_syscall(long nr, const long *a, long res);

static inline long emd_fd_forget(long fd)
{
	if (EMD_UNLIKELY(__atomic_load_n(&emd_fd_ids, __ATOMIC_RELAXED) != 0) && fd >= 0)
		emd_fd_forget_range((unsigned)fd, (unsigned)fd);
	return fd;
}

/* The entries of the calls every program makes all the time and that only
 * a recording process needs to see (open, openat, close, dup2, dup3): a
 * wrapper jumps through NAME_entry, which starts at NAME_forget (the real
 * call, then the forget above) and which the constructor, once the mode is
 * known, sets to the real function where nothing reads what the forget
 * keeps: there the wrapper costs one indirect jump.  emd_open_entries and
 * emd_close_entries set them (forget: keep the forgetting bodies). */
#define EMD_ENTRY(name) __atomic_load_n(&name##_entry, __ATOMIC_RELAXED)
#define EMD_ENTRY_SET(name, forget)                                            \
	((void)EMD_REAL(name), /* found, for the forgetting body too */       \
	 __atomic_store_n(&name##_entry, (forget) ? name##_forget : EMD_REAL(name), \
			  __ATOMIC_RELAXED))
void emd_open_entries(int forget);
void emd_close_entries(int forget);

/* syncstat --audit (events.c): the events, and a file's state. */
extern int emd_auditing;
struct emd_rec_event {
	struct emd_rec_file file, dir;
	const char *path;
	int flags;
};
void emd_rec_event(int kind, const struct emd_rec_event *ev, const void *site);
int emd_rec_stat(int dirfd, const char *path, int flags,
		 struct emd_rec_file *f);
void emd_audit_created(int fd, int dirfd, const char *path,
		       unsigned long long before_ns, const void *site);
unsigned long long emd_realtime_ns(void);
/* A rename or link while auditing, made with libc's renameat2 or linkat. */
int emd_audit_rename(int olddir, const char *old, int newdir, const char *new,
		     unsigned int flags, const void *site);
int emd_audit_link(int olddir, const char *old, int newdir, const char *new,
		   int flags, const void *site);

static inline int emd_audit_now(void)
{
	return (emd_mode_now() & EMD_RECORD) && emd_auditing;
}

/* Before an open that may create: the time it started, or 0 when the
 * audit does not care. */
static inline unsigned long long emd_audit_before_open(int flags)
{
	return (flags & O_CREAT) && emd_audit_now() ? emd_realtime_ns() : 0;
}

static inline long emd_rec_finish(struct emd_rec *rec, long result)
{
	if (EMD_UNLIKELY(rec->slot != 0))
		emd_rec_complete(rec, result);
	return result;
}

/* osync.c: are the writes on descriptors whose open file syncs followed
 * (recording without eating: syncstat), decided with the mode; ASK: each
 * write asks, nothing is kept (no fdid.c table to forget with). */
enum { EMD_FOLLOW_UNSET, EMD_FOLLOW_OFF, EMD_FOLLOW_ON, EMD_FOLLOW_ASK };
extern int emd_follow_writes;
/* An open with O_SYNC or O_DSYNC made fd; fd's number was let go (called
 * by fdid.c's forget). */
void emd_mark_sync_fd(int fd);
void emd_sync_forget_range(unsigned lo, unsigned hi);

/* The address a wrapper returns to: the call site in the program. */
#define EMD_CALLER __builtin_return_address(0)

/* The raw system call, returning -errno and leaving errno alone. */
long emd_syscall(long nr, long a, long b, long c, long d, long e, long f);

/* 0 when `fd` is a descriptor fsync would act on, else the -errno fsync
 * gives; `espipe` is the answer for pipes and sockets. */
int emd_check_fd(int fd, int espipe);

/* fsync, fdatasync and syncfs when eating: checked, noted, not made;
 * the libc result. */
int emd_eat_fd_sync(int fd, int espipe);

/* The pwritev2 flags to pass on for a write to fd. */
int emd_rwf_flags(int fd, int flags);

/* Turn a -errno result into the libc convention. */
static inline int emd_ret(int r)
{
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/* The msync flags that validate like `flags` but write nothing. */
static inline int emd_msync_flags(int flags)
{
	if ((flags & MS_SYNC) && !(flags & MS_ASYNC))
		return (flags & ~MS_SYNC) | MS_ASYNC;
	return flags;
}

/* --sync-on-exit bookkeeping (note.c): remember the file system behind an
 * eaten request, or that every file system needs a sync; where that cannot
 * be remembered, sync it now.  emd_note_init is -1 when --sync-on-exit was
 * asked but this process cannot note: it must not eat at all. */
void emd_note_fd(int fd);
void emd_note_all(void);
int emd_note_init(void);

/* Pass a call's result through, noting fd's file system when it succeeded. */
static inline long emd_note_result(int fd, long r)
{
	if (r >= 0)
		emd_note_fd(fd);
	return r;
}

/* The open flags to pass on: without O_SYNC and O_DSYNC when eating. */
static inline int emd_open_flags(int flags)
{
	return emd_eating() ? flags & ~EMD_OPEN_SYNC_FLAGS : flags;
}

/* open.c: one open request, whatever its entry point (open, openat, their
 * *64 and fortified names, syscall()).  `call` makes it with the flags given,
 * which are `flags` without the sync bits when eating; `arg` is its own. */
struct emd_open {
	int dirfd;
	const char *path;
	int flags;
	mode_t mode;
	long (*call)(const struct emd_open *op, int flags);
	void *arg;
};

/* Make the request, with everything an open does besides: the audit's
 * create event, the record and the O_SYNC mark, the --sync-on-exit note. */
long emd_open(const struct emd_open *op, const void *site);

/* write.c: a pwritev2, whatever its entry point; `call` makes it with the
 * flags given.  Recorded if it syncs (its flags or its descriptor's). */
long emd_pwritev2(int fd, int flags, long (*call)(void *arg, int flags),
		  void *arg, const void *site);

/* osync.c: how a write to fd syncs (its open file has O_SYNC or O_DSYNC,
 * followed only by syncstat): EMD_K_WRITE_SYNC, EMD_K_WRITE_DSYNC, or -1;
 * one load on every write while not following. */
int emd_sync_kind(int fd);

static inline int emd_write_kind(int fd)
{
	if (EMD_LIKELY(__atomic_load_n(&emd_follow_writes, __ATOMIC_RELAXED) == EMD_FOLLOW_OFF))
		return -1;
	return emd_sync_kind(fd);
}

/* O_SYNC is O_DSYNC plus a bit of its own. */
static inline int emd_open_kind(int flags)
{
	return (flags & O_SYNC) == O_SYNC ? EMD_K_OPEN_SYNC : EMD_K_OPEN_DSYNC;
}

/* aio.c: syscall(SYS_io_submit)'s control blocks that would sync, and
 * syscall(SYS_io_uring_setup)'s polled ring, made not to, when eating. */
struct iocb;
struct io_uring_params;
void emd_aio_unsync(long nr, struct iocb **list);
/* ...and recorded first (syncstat, --stats): counted, not timed. */
void emd_aio_record(long nr, struct iocb **list, const void *site);
void emd_ring_unpolled(struct io_uring_params *p);


#endif
