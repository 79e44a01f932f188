/* SPDX-License-Identifier: MIT */
/* ct.h -- what the files of libcrashtest share: the run it belongs to, the
 * journal, and telling whether a file lies in the copy under test.
 *
 * The library's own I/O goes through syscall() or functions it does not
 * wrap, so that it never records itself.
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
	X(munmap) X(fopen) X(fopen64) X(freopen) X(freopen64) X(fdopen)         \
	X(fclose) X(mkstemp) X(mkstemp64) X(mkostemp) X(mkostemp64) X(mkstemps) \
	X(mkstemps64) X(mkostemps) X(mkostemps64) X(mkdtemp)                    \
	X(sync_file_range) X(pwritev2) X(pwritev64v2) X(copy_file_range)        \
	X(sendfile) X(sendfile64) X(fallocate) X(fallocate64) X(posix_fallocate) \
	X(posix_fallocate64) X(utime) X(utimes) X(lutimes) X(futimes) X(futimesat)  \
	X(futimens) X(utimensat) X(syscall)
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

/* Is this process part of a crashtest run?  Reads the environment once. */
int ct_active(void);

/* Append one record; errno is kept. */
void ct_record(const struct ct_record *head, const void *payload, size_t len);

/* The journal's size now, -1 if unknown. */
long long ct_journal_size(void);

/* A record of `kind` about (dev, ino), with a payload of strings. */
void ct_note(enum ct_kind kind, const struct stat *st, const char *what);

/* A durability call returned: count a crash point, and stop the tree if it
 * is the one asked for. */
void ct_point(const char *call, int fd);

/* A write or directory operation in the copy returned: counted, and a
 * crash point with --writes.  Named by path, or else by fd. */
void ct_step(const char *call, int fd, const char *path);

/* The shared generation: bumped at every event a model may take as making
 * data durable (durability calls, replacing renames, writeouts,
 * truncations), so that old contents saved before it are saved again. */
void ct_bump(void);
uint64_t ct_generation(void);

/* Is the absolute `path` in the copy? In the run's own directory? */
int ct_in_root(const char *path);
int ct_in_run(const char *path);
int ct_on_copy_fs(int fd);

/* Is it the file crashtest's standard error went to (its log, not state)? */
int ct_is_stderr(const struct stat *st);

/* The absolute path of descriptor fd, or -1. */
int ct_fd_path(int fd, char *out, size_t size);

/* A new name in keep/ for a link to what is about to go. */
void ct_keep_name(char *out, size_t size);

/* Serialises "save the old contents, then change them" in this process. */
void ct_lock(void);
void ct_unlock(void);

/* data.c: before a truncation of fd to len, the bytes it drops and the old
 * size, as data; 1 if fd is a file of the copy, whose stat goes to *st.
 * ct_truncated, once the truncation succeeded, records it as one: a failed
 * one truncated nothing, and ext4-ordered must not keep it. */
int ct_save_truncate(int fd, long long len, struct stat *st);
void ct_truncated(const struct stat *st, long long len);

/* sync_file_range wrote fd back and waited for it. */
void ct_writeout(int fd);

/* A write of n bytes at off (append 1: at the end; CT_FD_APPEND: there if
 * the descriptor has O_APPEND; off < 0: at the file offset), under the
 * library's lock: its old contents saved first; not 0 if fd is a file of
 * the copy (with CT_WRITE_DSYNC when it has O_DSYNC).  ct_end_write counts
 * it (a durability call when `sync` or O_DSYNC), drops the lock, keeps
 * errno and returns r. */
enum { CT_FD_APPEND = 2, CT_WRITE_DSYNC = 2 };
int ct_begin_write(int fd, long long off, size_t n, int append);
ssize_t ct_end_write(int t, int fd, ssize_t r, const char *call, int sync);
size_t ct_iov_bytes(const struct iovec *iov, int n);

/* data.c: the whole file fd as undo, before it changes where the library
 * cannot see (image.c). */
void ct_save_whole(int fd);

/* names.c: an open of (dirfd, path) with `flags`: what O_TRUNC drops is saved
 * before it; after it, a file O_CREAT made is recorded.  ct_after_open
 * returns fd and keeps errno. */
struct ct_before_open {
	int existed, truncated;
	struct stat st; /* the file O_TRUNC truncated */
};
void ct_before_open(int dirfd, const char *path, int flags, struct ct_before_open *b);
int ct_after_open(int fd, int dirfd, const char *path, const struct ct_before_open *b);

/* names.c: the entry (dirfd, path) was made, as `kind`, if r is 0; returns r,
 * keeps errno. */
int ct_made(int r, int dirfd, const char *path, enum ct_kind kind);

/* image.c: regular file fd of the copy is now changed past the library, by
 * stdio (addr NULL) or by the shared writable mapping [addr, addr + len) of
 * its bytes from off.  Its contents are saved as undo the first time. */
void ct_image_hold(int fd, void *addr, size_t len, long long off);

/* image.c: the FILE on fd is closed; the range [addr, addr + len) unmapped. */
void ct_image_free_fd(int fd);
void ct_image_free_range(void *addr, size_t len);

/* image.c: images of what a durability call made durable: file st, every
 * file held, the mapped range [addr, addr + len). */
void ct_image_synced(const struct stat *st);
void ct_image_all(void);
void ct_image_range(void *addr, size_t len);

#endif
