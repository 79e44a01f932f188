/* SPDX-License-Identifier: MIT */
/* elf_kind.h -- which programs the preload library cannot reach
 * (shared/elf_kind.c): read by the launcher before it runs the
 * command, and by the library before each exec. */
#ifndef EMD_ELF_KIND_H
#define EMD_ELF_KIND_H

#include <stddef.h>
#include <sys/stat.h>

/* Does the program open at fd make durability requests where no preloaded
 * library sees them: statically linked (no ELF interpreter, 64- or 32-bit),
 * built by Go (a Go build ID note), dynamic with a loader that is not
 * glibc's (musl's: it does not load our library), or dynamic and naming
 * liburing, libaio or aio_fsync?  0 for scripts, other dynamic programs, anything unreadable,
 * and what the kernel would not load here (another machine, an
 * interpreter missing or not allowed to run): an exec that is to fail
 * must fail in a process left as it was.  Uses pread(2) alone, and
 * emd_exec_allowed for the interpreter. */
int emd_elf_unreachable(int fd);

/* What emd_elf_unreachable answers, nonzero, and in words (NULL for 0). */
enum { EMD_ELF_STATIC = 1, EMD_ELF_GO, EMD_ELF_FOREIGN, EMD_ELF_ASYNC };
const char *emd_elf_reason(int kind);

/* The program held by `look` (an O_PATH descriptor, or -1): opened for
 * reading, through /proc/self/fd with `sys` (the caller's raw syscall(),
 * past its own wrappers), only if it is a regular file this process may
 * execute; what emd_elf_unreachable says of it, 0 if nothing. */
int emd_held_unreachable(int look, long (*sys)(long nr, ...));

/* For a launcher, about its COMMAND: found as execvp would (its path into
 * path), then emd_held_unreachable. */
int emd_command_unreachable(const char *cmd, char *path, size_t size);

/* Would the kernel let this process exec dirfd itself (path "") or the
 * file at path: execute permission for its effective ids, no noexec
 * mount? */
int emd_exec_allowed(int dirfd, const char *path);

/* Could the file at fd (O_PATH will do: nothing of it is read) be a
 * program to put under the filter: a regular file, not set-user-ID or
 * set-group-ID (no_new_privs would take its privilege)?  *st is its stat.
 * Only then is it opened for emd_elf_unreachable: a FIFO or a device is
 * never opened (a writer blocked on the FIFO let go, a tape rewound). */
int emd_program_file(int fd, struct stat *st);

/* The file execvp would run for `name`: itself if it has a slash, else
 * the first executable one along PATH (glibc's default when unset), in
 * buf; NULL if none. */
const char *emd_program_in_path(const char *name, char *buf, size_t size);

/* Will the kernel take these arguments and environment for an exec of
 * path (E2BIG otherwise), with a few pages to spare for eatmydata's
 * stand-in?  Checked before a process puts itself under the filter: an
 * exec that then fails leaves it filtered, with no_new_privs. */
int emd_args_fit(const char *path, char *const argv[], char *const envp[]);

#endif
