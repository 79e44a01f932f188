/* SPDX-License-Identifier: MIT */
/* elf_kind.h -- which programs the preload library cannot reach
 * (libeatmydata/elf_kind.c): read by the launcher before it runs the
 * command, and by the library before each exec. */
#ifndef EMD_ELF_KIND_H
#define EMD_ELF_KIND_H

/* Does the program open at fd make its system calls where no preloaded
 * library sees them: statically linked (no ELF interpreter, 64- or 32-bit)
 * or built by Go (a Go build ID note)?  0 for scripts, dynamic programs and
 * anything unreadable.  Uses pread(2) alone. */
int emd_elf_unreachable(int fd);

#endif
