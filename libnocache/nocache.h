/* SPDX-License-Identifier: MIT */
/* nocache.h -- what the files of libnocache share.
 *
 * The residency of a file is recorded on the command's first use of it
 * (residency.h), and the pages that were not cached then are dropped
 * behind it with posix_fadvise(DONTNEED) every few MiB, at close and at
 * exit: reads go to the kernel as they are, so what readahead brought in
 * stays until the command has read past it (a read with RWF_DONTCACHE
 * drops each folio it touches, the part it did not read too, which the
 * next small read then reads from the disk again).  Large writes to a
 * file none of which was cached go with RWF_DONTCACHE (uncached buffered
 * I/O, Linux 6.14): the kernel drops each page once written back.  What
 * the command wrote is written back before it is dropped (sync_file_range:
 * the data, no journal commit, no cache flush of the device), since
 * DONTNEED cannot drop a dirty page.
 */
#ifndef NOCACHE_H
#define NOCACHE_H

#define _GNU_SOURCE 1
#undef _FORTIFY_SOURCE
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "exec_filter.h"
#include "preload.h"
#include "residency.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

/* seccomp.c: before the exec of dirfd/path (exec_filter.h), or in
 * posix_spawn of `file` (the file `found`, NULL: none), a program the
 * library cannot reach is put under nocache's filter, or named on stderr;
 * nc_find_program is emd_find_program for nocache's runs alone. */
void nc_before_exec(int dirfd, const char *path, int nofollow, char *const argv[],
		    char *const envp[]);
const char *nc_find_program(const char *file, char *buf, size_t size);
int nc_spawn(emd_spawn_fn *real, pid_t *pid, const char *file, const char *found,
	     const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
	     char *const argv[], char *const envp[]);

/* Upstream nocache's environment (NOCACHE_*), read once. */
struct nc_config {
	int nr_fadvise;   /* posix_fadvise calls per drop */
	int flushall;     /* drop pages that were cached before too */
	int max_fds;      /* descriptors from this one on are left alone */
	int no_dontcache; /* never RWF_DONTCACHE */
	int debugfd;      /* where to log, or -1 */
};
#define NC_MAX_NR_FADVISE 100
const struct nc_config *nc_config(void);

/* A line on NOCACHE_DEBUGFD, if set. */
__attribute__((format(printf, 2, 3))) void
nc_debug_to(const struct nc_config *c, const char *fmt, ...);
#define nc_debug(...) nc_debug_to(nc_config(), __VA_ARGS__)

/* fd is being closed or replaced: if it was the debug log, stop writing. */
void nc_debug_closed(int fd);

/* Writes smaller than this are not worth a writeback each. */
#define NC_BIG_WRITE (64 * 1024)
/* The largest folio the page cache makes of a file (a PMD's worth): DONTNEED
 * drops only whole folios. */
#define NC_FOLIO_MAX (2 * 1024 * 1024)
/* Drop behind every this many bytes brought in without DONTCACHE. */
#define NC_DROP_EVERY (4 * 1024 * 1024)

#define NC_REAL_SYMBOLS(X)                                                     \
	X(preadv64v2)                                                          \
	X(pwritev64v2)                                                         \
	X(copy_file_range)                                                     \
	X(sendfile)                                                            \
	X(sendfile64)                                                          \
	X(close)                                                               \
	X(fclose)                                                              \
	X(dup2)                                                                \
	X(dup3)                                                                \
	X(_exit)                                                               \
	X(_Exit)                                                               \
	X(closefrom)                                                           \
	X(close_range)                                                         \
	X(execve)                                                              \
	X(execv)                                                               \
	X(execvp)                                                              \
	X(execvpe)                                                             \
	X(fexecve)                                                             \
	X(execveat)                                                            \
	X(fopen)                                                               \
	X(fopen64)                                                             \
	X(fdopen)                                                              \
	X(freopen)                                                             \
	X(freopen64)                                                           \
	X(fork)                                                                \
	X(vfork)                                                               \
	X(posix_spawn)                                                         \
	X(posix_spawnp)                                                        \
	X(system)                                                              \
	X(popen)                                                               \
	X(umount)                                                              \
	X(umount2)                                                             \
	X(unlink)                                                              \
	X(unlinkat)                                                            \
	X(remove)                                                              \
	X(rename)                                                              \
	X(renameat)                                                            \
	X(renameat2)                                                           \
	X(syscall)                                                             \
	X(ftruncate)                                                           \
	X(ftruncate64)                                                         \
	X(mmap)                                                                \
	X(mmap64)                                                              \
	X(munmap)                                                              \
	X(mremap)                                                              \
	X(mprotect)

enum { NC_REAL_SYMBOLS(PL_ID) NC_NREAL };
extern void *nc_real_fn[NC_NREAL];
extern const char *const nc_real_name[NC_NREAL];
#define NC_REAL(name) PL_REAL(nc_real_fn, nc_real_name, name)

/* Every read and write ends in one of these two. */
ssize_t nc_read(int fd, const struct iovec *iov, int cnt, off64_t off,
		int flags);
ssize_t nc_write(int fd, const struct iovec *iov, int cnt, off64_t off,
		 int flags, int big);

/* A range of bytes of a file; empty when hi <= lo. */
struct nc_range {
	off64_t lo, hi;
};

enum { NC_KIND_UNKNOWN, NC_KIND_OTHER, NC_KIND_FILE };

/* What is known of a descriptor. */
struct nc_file {
	unsigned char kind;
	unsigned char mode;
	struct nc_residency was; /* what was cached at first use */
	unsigned char stdio;   /* a stream's: its I/O is libc's own */
	size_t pending;        /* bytes brought in since the last drop */
	struct nc_range seen;  /* touched since the last drop: to drop */
	struct nc_range dirty; /* written, no writeback started by us yet */
	struct nc_range going; /* writeback started, not waited for yet */
};

/* The entry of fd; NULL for one out of the table's range or at or above
 * NOCACHE_MAX_FDS. */
struct nc_file *nc_file(int fd);

/* Each known entry of the table, with its descriptor. */
void nc_each_file(void (*fn)(int fd, struct nc_file *f));

/* How I/O on fd leaves the cache as it was, decided on first use:
 *  NC_PLAIN      not a file with a page cache: nothing to do;
 *  NC_DONTCACHE  none of it was cached: large writes with RWF_DONTCACHE,
 *                and drop behind all the rest;
 *  NC_DROP       some of it was cached (recorded then), the file system
 *                refuses RWF_DONTCACHE, or what was cached cannot be known
 *                (a file its user may only read): drop behind what was
 *                not, as far as known. */
enum { NC_PLAIN, NC_DONTCACHE, NC_DROP };
int nc_mode(int fd, struct nc_file *f);

/* The kernel refused RWF_DONTCACHE for fd: drop behind instead. */
void nc_dontcache_refused(struct nc_file *f);

/* After I/O of `n` bytes ending at `end` (-1: at the file position):
 * what it `wrote` is to be written back before it can be dropped; what the
 * kernel drops itself (RWF_DONTCACHE, `counted` 0) does not count towards
 * the next drop behind, made every few MiB. */
enum { NC_READ = 0, NC_WROTE = 1, NC_COUNTED = 2 };
void nc_touched(int fd, struct nc_file *f, ssize_t n, off64_t end, int how);

/* Write back and drop what the command brought in, then forget the
 * descriptor. */
void nc_forget(int fd);

/* Forget fd, dropping nothing: the library's own. */
void nc_disown(int fd);

/* The same for every descriptor still open, which stay known, and every
 * parked file: at exit and exec. */
void nc_drop_all(void);

/* fd (0 to 2) is one a stream of libc's uses: classified now, its I/O
 * taken to be unseen (stdio.c). */
void nc_std_stream(int fd);

/* Flush stdout and stderr where they write to a file, before the
 * destructor's drop (libc's own flush comes after it). */
void nc_flush_std(void);

/* fd's file was cut (or grown) to `len` (ftruncate): pages past it are
 * gone from the page cache, those written there later are the command's. */
void nc_truncated(int fd, struct nc_file *f, off64_t len);

/* Nonzero while the library maps a file of its own (a residency record, a
 * wait for readahead): mmap.c leaves those mappings alone. */
extern __thread int nc_own_maps;

/* mmap.c: what the command mapped of its files is paged out at munmap;
 * nc_unmap_all pages out all of it, at exit and exec. */
void nc_unmap_all(void);

/* Wait for the writeback of what was written through fd and drop all it
 * touched. */
void nc_drop_file(int fd, struct nc_file *f);

/* Start the writeback of what was written through fd, not waiting. */
void nc_start_writeback(int fd, struct nc_file *f);

/* Files written through fewer bytes than this are parked at close (park.c):
 * their writeback is waited for a few files later. */
#define NC_PARK_MAX (4 * 1024 * 1024)
#define NC_PARKED 16
/* Below this RLIMIT_NOFILE, no descriptor is taken from the command. */
#define NC_PARK_NOFILE 256

/* Park fd's file, which takes f's residency record; 0 if it cannot be. */
int nc_park(int fd, struct nc_file *f);

/* Settle the parked files whose descriptors are in [first, last], closing
 * them if `close_them` (else the caller is about to). */
void nc_unpark_range(unsigned int first, unsigned int last, int close_them);

/* Settle, and close, the parked files that dirfd/path names (not following
 * a final link): it is about to be removed. */
void nc_unpark_name(int dirfd, const char *path);

#endif
