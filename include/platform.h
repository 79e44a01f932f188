/* SPDX-License-Identifier: MIT */
/* platform.h -- every platform difference the toolkit knows of, in one
 * place: the library's wrappers, the request table and the seccomp filter
 * test the EMD_* macros below and never an architecture directly.
 *
 * Tested on x86_64 (with its i386 programs); aarch64 (with its 32-bit arm
 * programs) is written from the kernel's tables and builds, untested here.
 */
#ifndef EMD_PLATFORM_H
#define EMD_PLATFORM_H

#include <features.h> /* __GLIBC__; every file including this one has _GNU_SOURCE */
#include <sys/syscall.h>

#if defined(__linux__)
#define EMD_HAVE_SYNCFS 1
#define EMD_HAVE_SYNC_FILE_RANGE 1
#endif

/* The C library: glibc, or musl (make CC=musl-gcc; Alpine).  What glibc has
 * and musl has not: the fortified opens (__open_2...), the *64 names of a
 * 64-bit off_t as symbols of their own (open64, pwrite64, pwritev64v2...;
 * musl's off_t is 64-bit everywhere, and older musl #defines open64 as
 * open), FILE's _IO_ fields and a static recursive mutex.  The libraries
 * wrap, and the tools call, a function only where the C library declares
 * it; musl names no version, so what its headers define says what it has
 * (statx, preadv2 and pwritev2 from 1.2.5; renameat2 after it), and what the
 * tools themselves call of those is the system call, below. */
#if defined(__GLIBC__)
#define EMD_LIBC_GLIBC 1
/* Has stdio written through the stream (made its write buffer)?  glibc's
 * FILE says; musl's is opaque, and such a stream is taken to have. */
#define EMD_STREAM_WROTE(f) ((f)->_IO_write_base != NULL)
#define EMD_HAVE_FORTIFY_OPEN 1
#define EMD_LFS64 1
#define EMD_HAVE_PWRITEV2 1
#define EMD_HAVE_RENAMEAT2 1
#define EMD_HAVE_CLOSEFROM 1 /* and close_range: glibc 2.34 */
#define EMD_HAVE_EXECVEAT 1
typedef int emd_mmsg_flags; /* sendmmsg's flags: musl's are unsigned */
/* The class of the musl build's libraries beside this one: the 64-bit
 * ABI's (musl-gcc has no -m32). */
#define EMD_MUSL_WIDE 1
#else
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* Functions of the kernel's that musl has not (preadv2 and pwritev2 before
 * 1.2.5, the others so far), declared as glibc does: the libraries wrap
 * them as they are, their next definition being the system call where the
 * C library has none (preload/fallback.c), and the tools call them
 * (common/libc.c). */
#ifdef RWF_SYNC
#define EMD_HAVE_PWRITEV2 1
#else
#define RWF_HIPRI 0x00000001
#define RWF_DSYNC 0x00000002
#define RWF_SYNC 0x00000004
#define RWF_NOWAIT 0x00000008
#define RWF_APPEND 0x00000010
ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags);
ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags);
#endif
#ifdef RENAME_NOREPLACE
#define EMD_HAVE_RENAMEAT2 1
#else
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#define RENAME_WHITEOUT (1 << 2)
int renameat2(int olddir, const char *old, int newdir, const char *new, unsigned flags);
#endif
int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags);
void closefrom(int lo);
int close_range(unsigned lo, unsigned hi, int flags);
const char *sigabbrev_np(int sig);
#define EMD_STREAM_WROTE(f) 1
typedef unsigned int emd_mmsg_flags; /* sendmmsg's flags: glibc's are an int */
/* This build's class; and what glibc's ld.so reads for $LIB in each class
 * where this build was made, if it has one (the Makefile asks it). */
#define EMD_MUSL_WIDE (__SIZEOF_LONG__ == 8)
#ifndef EMD_GLIBC_LIB64
#define EMD_GLIBC_LIB64 ""
#endif
#ifndef EMD_GLIBC_LIB32
#define EMD_GLIBC_LIB32 ""
#endif

/* musl's struct statx (1.2.5) lacks the fields of Linux 5.8 on
 * (stx_mnt_id, the direct I/O alignments): the kernel's, under a name of
 * our own, and the system call. */
#define statx emd_statx
#define statx_timestamp emd_statx_timestamp
#include <linux/stat.h>
static inline int emd_statx(int dirfd, const char *path, int flags, unsigned mask,
			    struct emd_statx *st)
{
	return (int)syscall(SYS_statx, dirfd, path, flags, mask, st);
}

#ifndef FALLOC_FL_COLLAPSE_RANGE
#define FALLOC_FL_COLLAPSE_RANGE 0x08
#endif
#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_ZERO_RANGE 0x10
#endif
#ifndef FALLOC_FL_INSERT_RANGE
#define FALLOC_FL_INSERT_RANGE 0x20
#endif

/* glibc's names the tools use: O_TMPFILE's own bit (without O_DIRECTORY),
 * whether open takes a mode, and a recursive mutex made statically (musl
 * keeps a mutex's type in its first int, as pthread_mutex_init sets it). */
#define __O_TMPFILE (O_TMPFILE & ~O_DIRECTORY)
#define __OPEN_NEEDS_MODE(flags) (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE)
#define PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP {{{PTHREAD_MUTEX_RECURSIVE}}}
/* As musl's own *64 names are (make CC=musl-gcc defines _LARGEFILE64_SOURCE). */
#define preadv64v2 preadv2
#define pwritev64v2 pwritev2
#endif

/* Where sync_file_range(fd, offset, nbytes, flags) keeps its flags: a
 * 32-bit ABI passes each 64-bit offset as two words, so the flags move
 * right (i386); arm's sync_file_range2 puts them first. */
#if defined(__i386__)
#define EMD_SFR_FLAGS_ARG 5
#elif __SIZEOF_LONG__ == 8
#define EMD_SFR_FLAGS_ARG 3
#endif

/* pwritev2(fd, iov, cnt, pos_l, pos_h, flags) has the same layout everywhere. */
#define EMD_PWRITEV2_FLAGS_ARG 5

/* A 64-bit ABI has one open and one pwritev2; glibc exports the *64 names as
 * aliases of the same code, and so do we.  A 32-bit ABI has two of each. */
#if __SIZEOF_LONG__ == 8 && defined(EMD_LFS64)
#define EMD_LFS_ALIASES 1
#endif

/* The ABIs a seccomp filter sees on this machine: the native one, and the
 * 32-bit one the same kernel runs (AUDIT_ARCH_* values, from
 * <linux/audit.h>).  EMD_COMPAT(i386, arm) picks the 32-bit ABI's system
 * call number or argument position.  x32 (x86_64's numbers with bit 30) is
 * not filtered: its programs keep their durability. */
#if defined(__x86_64__)
#define EMD_ARCH_NATIVE 0xc000003eU /* AUDIT_ARCH_X86_64 */
#define EMD_ARCH_COMPAT 0x40000003U /* AUDIT_ARCH_I386 */
#define EMD_COMPAT(i386, arm) (i386)
#define EMD_X32_BIT 0x40000000
/* i386's open flags are x86_64's; O_LARGEFILE is set by the kernel for a
 * 64-bit caller and asked for by a 32-bit one. */
#define EMD_COMPAT_OPEN_FLAGS_NATIVE 1
#define EMD_COMPAT_O_LARGEFILE 0100000
#elif defined(__aarch64__)
#define EMD_ARCH_NATIVE 0xc00000b7U /* AUDIT_ARCH_AARCH64 */
#define EMD_ARCH_COMPAT 0x40000028U /* AUDIT_ARCH_ARM */
#define EMD_COMPAT(i386, arm) (arm)
#define EMD_X32_BIT 0
/* arm's O_DIRECTORY, O_NOFOLLOW, O_DIRECT and O_LARGEFILE are not
 * aarch64's: the supervisor leaves a compat open to the kernel. */
#define EMD_COMPAT_OPEN_FLAGS_NATIVE 0
#define EMD_COMPAT_O_LARGEFILE 0400000
#else
/* A 32-bit library builds no filter: the table's numbers are its own ABI's
 * there, and a filter must know the kernel's native ones. */
#define EMD_ARCH_NATIVE 0
#define EMD_ARCH_COMPAT 0
#define EMD_COMPAT(i386, arm) (-1)
#define EMD_X32_BIT 0
#define EMD_COMPAT_OPEN_FLAGS_NATIVE 0
#define EMD_COMPAT_O_LARGEFILE 0
#endif

/* The assembly the toolkit writes (preload.h's vfork wrapper): x86_64 and
 * i386 only; elsewhere what needs it is left out. */
#if defined(__x86_64__)
#define EMD_ASM_X86_64 1
#elif defined(__i386__)
#define EMD_ASM_I386 1
#endif

/* The ELF machines of the native and the 32-bit ABI the kernel runs (the
 * 32-bit library's too: it judges 64-bit programs for the stand-in):
 * EM_X86_64 and EM_386, EM_AARCH64 and EM_ARM.  A program of another
 * machine is left alone (the kernel refuses it, or binfmt_misc runs it in
 * an emulator). */
#if defined(__x86_64__) || defined(__i386__)
#define EMD_ELF_MACHINE_64 62
#define EMD_ELF_MACHINE_32 3
#elif defined(__aarch64__) || defined(__arm__)
#define EMD_ELF_MACHINE_64 183
#define EMD_ELF_MACHINE_32 40
#else
#define EMD_ELF_MACHINE_64 (-1)
#define EMD_ELF_MACHINE_32 (-1)
#endif

/* A system call this ABI lacks (aarch64 has no open, rename...): -1 in a
 * table. */
#ifdef SYS_open
#define EMD_SYS_OPEN SYS_open
#define EMD_SYS_PATHS(name) SYS_##name
#else
#define EMD_SYS_OPEN (-1)
#define EMD_SYS_PATHS(name) (-1)
#endif

/* A call with a 64-bit offset, which takes two registers on a 32-bit ABI:
 * its number where one register holds it, else -1. */
#if __SIZEOF_LONG__ == 8
#define EMD_OFFSET64_ONE_REG 1
#define EMD_SYS_OFFSET64(nr) (nr)
#else
#define EMD_OFFSET64_ONE_REG 0
#define EMD_SYS_OFFSET64(nr) (-1)
#endif

/* Calls newer than the C library's headers, same number on every ABI. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* Reserving a record file's pages without a store that could be SIGBUS:
 * Linux 5.14; an older kernel answers EINVAL, and the pages are then
 * allocated by the stores themselves. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
/* nocache's: Linux 5.4's and 5.14's, newer than musl 1.2.3's headers */
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* macOS's F_FULLFSYNC and DYLD_INSERT_LIBRARIES are not written yet; the
 * toolkit builds for Linux only. */
#if !defined(__linux__)
#error "eatmydata: only Linux is supported so far"
#endif

#endif
