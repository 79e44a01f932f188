/* SPDX-License-Identifier: MIT */
/* nocache.h -- what the files of libnocache share.
 *
 * Reads and large writes go to the kernel with RWF_DONTCACHE (uncached
 * buffered I/O, Linux 6.14): pages the call brings in are dropped once used,
 * pages that were cached already stay.  Where the file system refuses it, or
 * for small writes (which DONTCACHE would push out one at a time), the file's
 * residency is recorded before the command first touches it and the pages
 * that were not cached then are dropped behind it with posix_fadvise every
 * few MiB and at close.
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

#include "preload.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

/* cachestat(2), Linux 6.5: one number for every architecture, and no libc
 * wrapper yet. */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif
struct nc_cachestat_range {
	unsigned long long off, len;
};
struct nc_cachestat {
	unsigned long long nr_cache, nr_dirty, nr_writeback, nr_evicted,
		nr_recently_evicted;
};

/* Writes smaller than this are not worth a writeback each. */
#define NC_BIG_WRITE (64 * 1024)
/* Drop behind every this many bytes brought in without DONTCACHE. */
#define NC_DROP_EVERY (4 * 1024 * 1024)

#if __SIZEOF_LONG__ == 8
#define NC_LFS_ALIASES 1 /* pread64 is pread, and so on */
#endif

#define NC_REAL_SYMBOLS(X)                                                     \
	X(preadv64v2)                                                          \
	X(pwritev64v2)                                                         \
	X(copy_file_range)                                                     \
	X(sendfile)                                                            \
	X(sendfile64)                                                          \
	X(close)                                                               \
	X(fclose)                                                              \
	X(dup2)                                                                \
	X(dup3)

enum { NC_REAL_SYMBOLS(PL_ID) NC_NREAL };
extern void *nc_real_fn[NC_NREAL];
extern const char *const nc_real_name[NC_NREAL];
#define NC_REAL(name)                                                          \
	((__typeof__(name) *)pl_real(&nc_real_fn[PL_REAL_##name],             \
				     nc_real_name[PL_REAL_##name]))

/* Every read and write ends in one of these two. */
ssize_t nc_read(int fd, const struct iovec *iov, int cnt, off64_t off,
		int flags);
ssize_t nc_write(int fd, const struct iovec *iov, int cnt, off64_t off,
		 int flags, int big);

/* What is known of a descriptor; NULL for one out of the table's range. */
struct nc_file;
struct nc_file *nc_file(int fd);

/* How I/O on fd leaves the cache as it was, decided on first use:
 *  NC_PLAIN      not a file with a page cache: nothing to do;
 *  NC_DONTCACHE  none of it was cached: RWF_DONTCACHE, and drop behind
 *                what that cannot cover;
 *  NC_DROP       some of it was cached (recorded then), or the file system
 *                refuses RWF_DONTCACHE: drop behind what was not. */
enum { NC_PLAIN, NC_DONTCACHE, NC_DROP };
int nc_mode(int fd, struct nc_file *f);

/* The kernel refused RWF_DONTCACHE for fd: drop behind instead. */
void nc_dontcache_refused(struct nc_file *f);

/* After I/O of `n` bytes ending at `end` (-1: at the file position) that
 * left pages cached: drop behind every few MiB. */
void nc_touched(int fd, struct nc_file *f, ssize_t n, off64_t end);

/* Drop what the command brought in, then forget the descriptor. */
void nc_forget(int fd);

#endif
