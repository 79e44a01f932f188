/* SPDX-License-Identifier: MIT */
/* ct.h -- what the files of libcrashtest share: the run it belongs to, the
 * journal, crash points, and telling whether a file lies in the copy.
 *
 * The library's own I/O goes through syscall() past its wrapper, or through
 * functions it does not wrap, so that it never records itself.
 */
#ifndef CT_H
#define CT_H

#define _GNU_SOURCE 1
#include "crashtest.h"
#include "preload.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define REAL_SYMBOLS(X)                                                        \
	X(open) X(open64) X(openat) X(openat64) X(creat) X(creat64)             \
	X(__open_2) X(__open64_2) X(__openat_2) X(__openat64_2)                 \
	X(write) X(pwrite) X(pwrite64) X(writev) X(pwritev) X(pwritev64)        \
	X(ftruncate) X(ftruncate64) X(truncate) X(truncate64)                   \
	X(fsync) X(fdatasync) X(sync) X(syncfs) X(msync) X(mmap) X(mmap64)      \
	X(rename) X(renameat) X(renameat2) X(link) X(linkat) X(unlink)          \
	X(unlinkat) X(mkdir) X(mkdirat) X(rmdir) X(symlink) X(symlinkat)        \
	X(mkfifo) X(mkfifoat) X(mknod) X(mknodat) X(bind)                       \
	X(munmap) X(fopen) X(fopen64) X(freopen) X(freopen64) X(fdopen)         \
	X(fclose) X(mkstemp) X(mkstemp64) X(mkostemp) X(mkostemp64) X(mkstemps) \
	X(mkstemps64) X(mkostemps) X(mkostemps64) X(mkdtemp)                    \
	X(sync_file_range) X(pwritev2) X(pwritev64v2) X(copy_file_range)        \
	X(sendfile) X(sendfile64) X(fallocate) X(fallocate64) X(posix_fallocate) \
	X(posix_fallocate64) X(send) X(sendto) X(sendmsg) X(sendmmsg) X(vmsplice)       \
	X(splice) X(tee) X(dup2) X(dup3) X(close) X(system) X(popen) X(execve)          \
	X(execvpe) X(fexecve) X(execveat) X(posix_spawn) X(posix_spawnp) X(syscall)
enum { REAL_SYMBOLS(PL_ID) CT_NREAL };
extern void *ct_real_fn[CT_NREAL];
extern const char *const ct_real_name[CT_NREAL];
#define REAL(name) PL_REAL(ct_real_fn, ct_real_name, name)

/* The library's own system calls: libc's syscall(), past the wrapper of it
 * (syscall.c), so that the library never records itself. */
#define ct_sys(...) REAL(syscall)(__VA_ARGS__)

/* glibc's _FORTIFY_SOURCE opens, which its headers declare only inline. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* journal.c: is this process part of a crashtest run?  Reads the
 * environment once; errno is kept. */
int ct_active(void);

/* Serialises the library's records in this process: a change and its
 * record, a durability call and the images it takes. */
void ct_lock(void);
int ct_trylock(void); /* 1 if taken */
void ct_unlock(void);

/* Append one record (magic, pid, len filled in) with a payload of n iovecs;
 * errno is kept.  A record that is a crash point gets its number, and the
 * tree stops there if it is the one asked for (after the record). */
void ct_record(struct ct_record *head, const struct iovec *payload, int n);
void ct_note(enum ct_kind kind, const struct stat *st, const char *why);

/* Before a change or a durability call: the output the program wrote since
 * the last one is a claim, a crash point of its own.  Then the journal's
 * size, for a durability call's `begin`. */
void ct_claims(void);
uint64_t ct_journal_size(void);

/* Is it a crash point?  A durability call always; a change with --writes. */
int ct_writes_are_points(void);

/* Is the absolute `path` in the copy?  In the run's own directory? */
int ct_in_root(const char *path);
int ct_in_run(const char *path);
int ct_on_copy_fs(int fd);

/* Is it the file crashtest's standard error went to (its log, not state)? */
int ct_is_stderr(const struct stat *st);

/* The absolute path of descriptor fd, or -1. */
int ct_fd_path(int fd, char *out, size_t size);

/* data.c: where fd's file is, for a change made through it. */
enum ct_where { CT_NONE, CT_FILE, CT_CLAIMED, CT_OUTSIDE };
enum ct_where ct_where_fd(int fd, struct stat *st);

/* data.c: before a change of file st's contents through fd: claims, the
 * lock, and st taken again under it (the size the change starts from). */
void ct_lock_file(int fd, struct stat *st);

/* copy.c: a send on a socket, what is put into a pipe (fd), tells someone:
 * a claim once it went (r > 0: a failed one told no one).  Keeps errno;
 * returns r. */
ssize_t ct_claimed(int fd, ssize_t r);

/* data.c: a write of n bytes (the first n of iov) made at off through fd,
 * a file of the copy; flags CT_F_DSYNC / CT_F_SYNC. */
void ct_wrote(const struct stat *st, long long off, const struct iovec *iov, int cnt, size_t n,
	      int flags);

/* data.c: n bytes the kernel copied from in at in_off into file st at off
 * (copy_file_range, sendfile), recorded as a write. */
void ct_copied(int in, long long in_off, const struct stat *st, long long off, long long n);

/* data.c: one path for every write: call(fd, iov, cnt, off, rwf) made
 * between what the library does before and after it. */
ssize_t ct_write_iov(int fd, long long off, const struct iovec *iov, int cnt, int rwf,
		     ssize_t (*call)(int, const struct iovec *, int, long long, int));

/* data.c: the size of file st set to len; [off, off + n) zeroed. */
void ct_truncated(const struct stat *st, long long len);
void ct_zeroed(const struct stat *st, long long off, long long n);

/* open.c: an open of (dirfd, path) with `flags` that may create or empty a
 * file: whether it exists and is a regular file with data before (O_TRUNC),
 * judged under the journal's lock (`locked`), held over the open; then,
 * once it succeeded, recorded (a create, a truncation).  ct_after_open
 * returns fd, keeps errno. */
struct ct_before_open {
	int existed, truncates, locked;
};
void ct_before_open(int dirfd, const char *path, int flags, struct ct_before_open *b);
int ct_after_open(int fd, int dirfd, const char *path, int flags, const struct ct_before_open *b);

/* names.c: after a call that made the entry (dirfd, path): recorded as
 * `kind` (target for a symlink) if r is 0; returns r, keeps errno. */
int ct_made(int r, int dirfd, const char *path, enum ct_kind kind, const char *target);

/* image.c: regular file fd of the copy is now changed past the library, by
 * the stdio stream `stream`, or by the shared writable mapping
 * [addr, addr + len) of its bytes from off. */
void ct_image_hold(int fd, FILE *stream, void *addr, size_t len, long long off);
void ct_image_free_fd(int fd);
void ct_image_closing(FILE *stream); /* before fclose frees its buffer */
int ct_image_ours(int fd); /* a descriptor of the library's own */

/* image.c: the process is about to exec (failed 0), or the exec failed (1):
 * what it holds is pictured and let go, or held again. */
void ct_image_exec(int failed);

/* image.c: standard output or error (fd, or both when fd < 0) held if it is
 * a file of the copy open for writing. */
void ct_hold_std(int fd);
void ct_image_free_range(void *addr, size_t len);

/* image.c: what a durability call found of the files held: file st covered
 * (NULL: all, a sync), the rest as the cache held them; the mapped range
 * [addr, addr + len) (msync).  How many pictures of what it covered: it
 * writes them while it runs, in any order (a crash point, CT_DURING). */
int ct_image_synced(const struct stat *st);
int ct_image_range(void *addr, size_t len);

/* release.c: fd, of a file of the copy, was truncated to nothing through;
 * a child may hold every descriptor (forget_all).  ct_release_before: is
 * closing fd (or a dup2 onto it) the release of its open file (st)?
 * ct_release_after journals it once closed; ct_release_duplicated once
 * dup2 or dup3 made newfd = r a duplicate of fd (st: the release of the
 * file newfd was on, or NULL).  All keep errno. */
void ct_release_truncated(int fd);
void ct_release_forget_all(void);
int ct_release_before(int fd, struct stat *st);
void ct_release_after(const struct stat *st);
void ct_release_duplicated(int r, int fd, const struct stat *st);

#endif
