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

#include <sys/syscall.h>

#if defined(__linux__)
#define EMD_HAVE_SYNCFS 1
#define EMD_HAVE_SYNC_FILE_RANGE 1
#define EMD_HAVE_PWRITEV2 1
#define EMD_HAVE_FORTIFY_OPEN 1 /* glibc's __open_2 family */
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
#if __SIZEOF_LONG__ == 8
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

/* macOS's F_FULLFSYNC and DYLD_INSERT_LIBRARIES are not written yet; the
 * toolkit builds for Linux only. */
#if !defined(__linux__)
#error "eatmydata: only Linux is supported so far"
#endif

#endif
