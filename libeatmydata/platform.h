/* SPDX-License-Identifier: MIT */
/* platform.h -- every platform difference the library knows of, in one place.
 *
 * The wrappers test the EMD_* macros below and never an architecture or an
 * operating system directly.
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

/* Where syscall(SYS_sync_file_range, ...) keeps its flags: a 32-bit ABI passes
 * each 64-bit offset as two words, so the flags move right. */
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

/* Reserving a record file's pages without a store that could be SIGBUS:
 * Linux 5.14; an older kernel answers EINVAL, and the pages are then
 * allocated by the stores themselves. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* macOS's F_FULLFSYNC and DYLD_INSERT_LIBRARIES are not written yet; the
 * library builds for Linux only. */
#if !defined(__linux__)
#error "eatmydata: only Linux is supported so far"
#endif

#endif
