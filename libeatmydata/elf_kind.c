/* SPDX-License-Identifier: MIT */
/* elf_kind.c -- telling a program that makes durability requests where
 * the library does not see them, from its ELF headers: statically linked,
 * built by Go, or dynamic but using io_uring through liburing (which makes
 * its own system calls) or glibc's aio (whose helper thread calls fsync
 * inside libc).  Linked into the library and the launcher; it calls nothing
 * the library intercepts and allocates nothing.
 */
#define _GNU_SOURCE 1
#include "elf_kind.h"

#include <elf.h>
#include <string.h>
#include <unistd.h>

#define MAX_LOADS 16

/* A program header, in either ELF class. */
struct phdr {
	unsigned type;
	unsigned long offset, vaddr, filesz;
};

/* What the headers say: the loaded segments, the dynamic section. */
struct image {
	int fd, wide;
	struct phdr load[MAX_LOADS], dynamic;
	int loads, interp, go;
};

static int read_phdr(const struct image *im, unsigned long at, struct phdr *ph)
{
	Elf64_Phdr p64;
	Elf32_Phdr p32;

	if (im->wide && pread(im->fd, &p64, sizeof(p64), (off_t)at) == sizeof(p64))
		*ph = (struct phdr){p64.p_type, p64.p_offset, p64.p_vaddr, p64.p_filesz};
	else if (!im->wide && pread(im->fd, &p32, sizeof(p32), (off_t)at) == sizeof(p32))
		*ph = (struct phdr){p32.p_type, p32.p_offset, p32.p_vaddr, p32.p_filesz};
	else
		return 0;
	return 1;
}

/* A note named "Go" (its build ID) at offset. */
static int go_note(int fd, unsigned long offset)
{
	char note[16];

	return pread(fd, note, sizeof(note), (off_t)offset) == sizeof(note) &&
	       memcmp(note + 12, "Go\0", 3) == 0;
}

static void take(struct image *im, const struct phdr *ph)
{
	if (ph->type == PT_NOTE && go_note(im->fd, ph->offset))
		im->go = 1;
	im->interp |= ph->type == PT_INTERP;
	if (ph->type == PT_DYNAMIC)
		im->dynamic = *ph;
	if (ph->type == PT_LOAD && im->loads < MAX_LOADS)
		im->load[im->loads++] = *ph;
}

/* The file offset of virtual address `vaddr`, or 0. */
static unsigned long file_offset(const struct image *im, unsigned long vaddr)
{
	for (int i = 0; i < im->loads; i++)
		if (vaddr >= im->load[i].vaddr && vaddr - im->load[i].vaddr < im->load[i].filesz)
			return im->load[i].offset + (vaddr - im->load[i].vaddr);
	return 0;
}

/* Dynamic entry i: its tag and value; 0 past the end. */
static int read_dyn(const struct image *im, unsigned long i, long *tag, unsigned long *val)
{
	Elf64_Dyn d64;
	Elf32_Dyn d32;
	unsigned long size = im->wide ? sizeof(d64) : sizeof(d32), at = im->dynamic.offset + i * size;

	if ((i + 1) * size > im->dynamic.filesz)
		return 0;
	if (im->wide && pread(im->fd, &d64, sizeof(d64), (off_t)at) == sizeof(d64))
		*tag = (long)d64.d_tag, *val = d64.d_un.d_val;
	else if (!im->wide && pread(im->fd, &d32, sizeof(d32), (off_t)at) == sizeof(d32))
		*tag = d32.d_tag, *val = d32.d_un.d_val;
	else
		return 0;
	return *tag != DT_NULL;
}

/* The names in a dynamic program's string table that say it makes
 * requests the library does not see. */
static const char *const unseen[] = {"liburing.so", "aio_fsync"};

static int has_unseen_name(const char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(unseen) / sizeof(*unseen); i++)
		if (memmem(buf, len, unseen[i], strlen(unseen[i])))
			return 1;
	return 0;
}

/* Does the dynamic string table name one of those? */
static int names_unseen(const struct image *im)
{
	char buf[4096 + 32];
	unsigned long strtab = 0, size = 0, val, at, n;
	size_t keep = 0, len;
	long tag;

	for (unsigned long i = 0; read_dyn(im, i, &tag, &val); i++) {
		strtab = tag == DT_STRTAB ? file_offset(im, val) : strtab;
		size = tag == DT_STRSZ ? val : size;
	}
	for (at = 0; strtab && at < size && at < (16ul << 20); at += n) {
		n = size - at < 4096 ? size - at : 4096;
		if (pread(im->fd, buf + keep, n, (off_t)(strtab + at)) != (ssize_t)n)
			return 0;
		len = keep + n;
		if (has_unseen_name(buf, len))
			return 1;
		keep = len < 32 ? len : 32; /* a name across two reads */
		memmove(buf, buf + len - keep, keep);
	}
	return 0;
}

int emd_elf_unreachable(int fd)
{
	union {
		unsigned char ident[EI_NIDENT];
		Elf64_Ehdr h64;
		Elf32_Ehdr h32;
	} eh;
	struct image im = {.fd = fd};
	struct phdr ph;
	unsigned long phoff, entsize;
	int phnum;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.ident, ELFMAG, SELFMAG) != 0 ||
	    (eh.ident[EI_CLASS] != ELFCLASS64 && eh.ident[EI_CLASS] != ELFCLASS32))
		return 0; /* a script, or not ours to judge */
	im.wide = eh.ident[EI_CLASS] == ELFCLASS64;
	phnum = im.wide ? eh.h64.e_phnum : eh.h32.e_phnum;
	phoff = im.wide ? eh.h64.e_phoff : eh.h32.e_phoff;
	entsize = im.wide ? eh.h64.e_phentsize : eh.h32.e_phentsize;
	for (int i = 0; i < phnum && read_phdr(&im, phoff + (unsigned long)i * entsize, &ph); i++)
		take(&im, &ph);
	return im.go || !im.interp || names_unseen(&im);
}
