/* SPDX-License-Identifier: MIT */
/* elf_kind.c -- telling a program the library cannot reach from its ELF
 * program headers.  Linked into the library and the launcher; it calls
 * nothing the library intercepts.
 */
#include "elf_kind.h"

#include <elf.h>
#include <string.h>
#include <unistd.h>

/* Program header i's type and offset, in either ELF class; 0 when it
 * cannot be read. */
static int program_header(int fd, const unsigned char *ident, const void *eh, int i,
			  unsigned *type, unsigned long *offset)
{
	if (ident[EI_CLASS] == ELFCLASS64) {
		const Elf64_Ehdr *h = eh;
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(h->e_phoff + (Elf64_Off)i * h->e_phentsize)) != sizeof(ph))
			return 0;
		*type = ph.p_type;
		*offset = ph.p_offset;
	} else {
		const Elf32_Ehdr *h = eh;
		Elf32_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)h->e_phoff + (off_t)i * h->e_phentsize) != sizeof(ph))
			return 0;
		*type = ph.p_type;
		*offset = ph.p_offset;
	}
	return 1;
}

/* A note named "Go" (its build ID) at offset. */
static int go_note(int fd, unsigned long offset)
{
	char note[16];

	return pread(fd, note, sizeof(note), (off_t)offset) == sizeof(note) &&
	       memcmp(note + 12, "Go\0", 3) == 0;
}

int emd_elf_unreachable(int fd)
{
	union {
		unsigned char ident[EI_NIDENT];
		Elf64_Ehdr h64;
		Elf32_Ehdr h32;
	} eh;
	unsigned type;
	unsigned long offset;
	int phnum, interp = 0;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.ident, ELFMAG, SELFMAG) != 0 ||
	    (eh.ident[EI_CLASS] != ELFCLASS64 && eh.ident[EI_CLASS] != ELFCLASS32))
		return 0; /* a script, or not ours to judge */
	phnum = eh.ident[EI_CLASS] == ELFCLASS64 ? eh.h64.e_phnum : eh.h32.e_phnum;
	for (int i = 0; i < phnum && program_header(fd, eh.ident, &eh, i, &type, &offset); i++) {
		if (type == PT_NOTE && go_note(fd, offset))
			return 1;
		interp |= type == PT_INTERP;
	}
	return !interp;
}
