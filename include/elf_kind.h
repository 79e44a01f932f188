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
 * built by Go (a Go build ID note), dynamic with a loader that finds no
 * library of ours where LD_PRELOAD's entry of ours says (glibc's ld.so
 * reads its $LIB as its class's directory, musl's as written: the musl
 * build's), or dynamic and naming liburing, libaio or aio_fsync?  0 for
 * scripts, other dynamic programs, anything unreadable, and what the
 * kernel would not load here (another machine, an interpreter missing or
 * not allowed to run): an exec that is to fail must fail in a process left
 * as it was.  Uses pread(2) alone, emd_exec_allowed for the interpreter,
 * and faccessat(2) for our library where LD_PRELOAD names it. */
int emd_elf_unreachable(int fd);

/* What emd_elf_unreachable answers, nonzero, and in words (NULL for 0).
 * EMD_ELF_NO_GLIBC_LIB is a program whose ld.so would print that it cannot
 * preload our entry: it is run with the entry left out. */
enum {
	EMD_ELF_STATIC = 1,
	EMD_ELF_GO,
	EMD_ELF_FOREIGN,     /* a loader neither glibc's nor musl's */
	EMD_ELF_ASYNC,
	EMD_ELF_NO_MUSL_LIB, /* musl's loader, no musl build of its class */
	EMD_ELF_NO_GLIBC_LIB, /* glibc's, with our entry: it would say it cannot load it */
	EMD_ELF_UNSERVED,    /* glibc's, and no entry of ours for it (musl's tools) */
};
const char *emd_elf_reason(int kind);

/* In a launcher: the LD_PRELOAD entry of ours the command will have
 * (common.c's preload_entry), which the answers above are then about,
 * whatever LD_PRELOAD holds yet. */
void emd_preload_entry(const char *entry);

/* Could a program's loader refuse our LD_PRELOAD entry aloud here: the
 * musl build's libraries with no glibc build's beside them, for either
 * class?  0 always for the glibc build (whose ld.so loaded this very code),
 * and then no program need be looked at for it. */
int emd_preload_refusable(void);

/* LD_PRELOAD's list without our entries (those with "/$LIB/" in them),
 * separated by spaces, into out: its length, -1 if it does not fit. */
int emd_preload_without_ours(const char *list, char *out, size_t size);

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
