/* SPDX-License-Identifier: MIT */
/* elf_kind.c -- telling a program that makes durability requests where
 * the library does not see them, from its ELF headers: statically linked,
 * built by Go, dynamic with a loader that finds no library of ours, or
 * dynamic but using io_uring through liburing (which makes its own system
 * calls) or glibc's aio (whose helper thread calls fsync inside libc).
 * Linked into the library and the launcher; it calls nothing the library
 * intercepts and allocates nothing.
 */
#define _GNU_SOURCE 1
#include "elf_kind.h"
#include "platform.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LOADS 16

/* A program header, in either ELF class. */
struct phdr {
	unsigned type;
	unsigned long offset, vaddr, filesz;
};

/* What the headers say: the loaded segments, the dynamic section.  The
 * file's first 4 KiB are read at once: the headers are there in any
 * program a linker made, and one read per exec is all it costs then. */
struct image {
	int fd, wide;
	unsigned char head[4096];
	size_t have;
	struct phdr load[MAX_LOADS], dynamic, interp;
	int loads, go, loader;
};

/* Which C library's loader a dynamic program names. */
enum { LOADER_OTHER, LOADER_GLIBC, LOADER_MUSL };

/* size bytes at offset, from the head read already or from the file. */
static int read_at(const struct image *im, void *out, size_t size, unsigned long offset)
{
	if (offset <= im->have && size <= im->have - offset) {
		memcpy(out, im->head + offset, size);
		return 1;
	}
	return pread(im->fd, out, size, (off_t)offset) == (ssize_t)size;
}

static int read_phdr(const struct image *im, unsigned long at, struct phdr *ph)
{
	Elf64_Phdr p64;
	Elf32_Phdr p32;

	if (im->wide && read_at(im, &p64, sizeof(p64), at))
		*ph = (struct phdr){p64.p_type, p64.p_offset, p64.p_vaddr, p64.p_filesz};
	else if (!im->wide && read_at(im, &p32, sizeof(p32), at))
		*ph = (struct phdr){p32.p_type, p32.p_offset, p32.p_vaddr, p32.p_filesz};
	else
		return 0;
	return 1;
}

/* A note named "Go" (its build ID) among those of the segment: after
 * gcc's own when cgo linked it. */
static int go_note(const struct image *im, const struct phdr *ph)
{
	unsigned char notes[1024];
	size_t len = ph->filesz < sizeof(notes) ? ph->filesz : sizeof(notes), at = 0;
	unsigned namesz, descsz;

	if (!read_at(im, notes, len, ph->offset))
		return 0;
	while (at + 12 <= len) {
		memcpy(&namesz, notes + at, 4);
		memcpy(&descsz, notes + at + 4, 4);
		if ((namesz == 3 || namesz == 4) && at + 15 <= len && !memcmp(notes + at + 12, "Go\0", 3))
			return 1;
		if (namesz > len || descsz > len)
			return 0;
		at += 12 + ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
	}
	return 0;
}

static void take(struct image *im, const struct phdr *ph)
{
	if (ph->type == PT_NOTE && go_note(im, ph))
		im->go = 1;
	if (ph->type == PT_INTERP)
		im->interp = *ph;
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

/* The string table's file offset and size, from the dynamic section
 * (read at once, its first 8 KiB: DT_STRTAB and DT_STRSZ come early). */
static void string_table(const struct image *im, unsigned long *offset, unsigned long *size)
{
	union {
		Elf64_Dyn d64[512];
		Elf32_Dyn d32[1024];
	} dyn;
	size_t len = im->dynamic.filesz < sizeof(dyn) ? im->dynamic.filesz : sizeof(dyn);
	size_t n = len / (im->wide ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn));
	long tag;
	unsigned long val;

	*offset = *size = 0;
	if (!len || !read_at(im, &dyn, len, im->dynamic.offset))
		return;
	for (size_t i = 0; i < n; i++) {
		tag = im->wide ? (long)dyn.d64[i].d_tag : dyn.d32[i].d_tag;
		val = im->wide ? dyn.d64[i].d_un.d_val : dyn.d32[i].d_un.d_val;
		if (tag == DT_NULL)
			break;
		if (tag == DT_STRTAB)
			*offset = file_offset(im, val);
		if (tag == DT_STRSZ)
			*size = val;
	}
}

/* The names in a dynamic program's string table that say it makes
 * requests the library does not see. */
static const char *const unseen[] = {"liburing.so", "libaio.so", "aio_fsync"};

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
	char buf[16384 + 32];
	unsigned long strtab, size, at, n;
	size_t keep = 0, len;

	string_table(im, &strtab, &size);
	for (at = 0; strtab && at < size && at < (16ul << 20); at += n) {
		n = size - at < 16384 ? size - at : 16384;
		if (!read_at(im, buf + keep, n, strtab + at))
			return 0;
		len = keep + n;
		if (has_unseen_name(buf, len))
			return 1;
		keep = len < 32 ? len : 32; /* a name across two reads */
		memmove(buf, buf + len - keep, keep);
	}
	return 0;
}

int emd_exec_allowed(int dirfd, const char *path)
{
	/* Judged for the effective ids, as exec is; a file on a noexec mount
	 * is not executable to access(2) either. */
	return faccessat(dirfd, path, X_OK, AT_EACCESS | (*path ? 0 : AT_EMPTY_PATH)) == 0;
}

/* Will the kernel load this ELF file here: a program or PIE of this
 * machine, in the ELF class the machine's ABI has, whose program headers
 * are as that class has them (fs/binfmt_elf.c, which answers ENOEXEC
 * otherwise)? */
static int loads_here(const struct image *im, unsigned type, unsigned machine,
		      unsigned long entsize)
{
	if (type != ET_EXEC && type != ET_DYN)
		return 0;
	if (im->wide)
		return machine == EMD_ELF_MACHINE_64 && entsize == sizeof(Elf64_Phdr);
	return machine == EMD_ELF_MACHINE_32 && entsize == sizeof(Elf32_Phdr);
}

/* A dynamic program's interpreter, which the kernel opens as it opens the
 * program: there, and allowed to run; whose it is, by its name: glibc's
 * ("ld-linux-x86-64.so.2", "ld-linux.so.2", "ld64.so.1"...), musl's
 * ("ld-musl-x86_64.so.1"), or another's. */
static int interpreter_allowed(struct image *im)
{
	char path[256];
	const char *base;

	if (!im->interp.filesz || im->interp.filesz > sizeof(path) ||
	    !read_at(im, path, im->interp.filesz, im->interp.offset) ||
	    path[im->interp.filesz - 1] != '\0')
		return 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	im->loader = !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld64.so", 7) ? LOADER_GLIBC
		     : !strncmp(base, "ld-musl-", 8)				   ? LOADER_MUSL
										   : LOADER_OTHER;
	return emd_exec_allowed(AT_FDCWD, path);
}

/* The launcher's entry, before LD_PRELOAD has it (emd_preload_entry). */
static const char *launcher_entry;

void emd_preload_entry(const char *entry)
{
	launcher_entry = entry;
}

/* LD_PRELOAD's entry of ours with $LIB read as `lib`: the launcher's
 * PREFIX/$LIB/lib<tool>.so (common.c), the first entry with "/$LIB/" in
 * it.  glibc's ld.so reads $LIB as its class's directory, musl's as a
 * directory named "$LIB", where the musl build's libraries are.  0 if
 * there is none, or `lib` is "". */
static int preload_as(const char *lib, char *out, size_t size)
{
	const char *list = launcher_entry ? launcher_entry : getenv("LD_PRELOAD"), *mark, *start, *end;
	int n;

	if (!list || !*lib || !(mark = strstr(list, "/$LIB/")))
		return 0;
	for (start = mark; start > list && start[-1] != ' ' && start[-1] != ':'; start--)
		;
	end = mark + strcspn(mark, " :");
	n = snprintf(out, size, "%.*s/%s/%.*s", (int)(mark - start), start, lib,
		     (int)(end - mark - 6), mark + 6);
	return n > 0 && (size_t)n < size;
}

int emd_preload_refusable(void)
{
#ifdef EMD_LIBC_GLIBC
	return 0;
#else
	char path[PATH_MAX];

	return preload_as("$LIB", path, sizeof(path)) &&
	       !(preload_as(EMD_GLIBC_LIB64, path, sizeof(path)) &&
		 faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0 &&
		 preload_as(EMD_GLIBC_LIB32, path, sizeof(path)) &&
		 faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0);
#endif
}

int emd_preload_without_ours(const char *list, char *out, size_t size)
{
	size_t len = 0, n;

	while (*list) {
		n = strcspn(list, " :");
		if (n && !memmem(list, n, "/$LIB/", 6)) {
			if (len + !!len + n >= size)
				return -1;
			if (len)
				out[len++] = ' ';
			memcpy(out + len, list, n);
			len += n;
		}
		list += n + (list[n] != '\0');
	}
	if (size)
		out[len] = '\0';
	return size ? (int)len : -1;
}

/* Is there a library of ours where the program's loader will look? */
static int loader_served(const struct image *im)
{
	char path[PATH_MAX];

	if (im->loader == LOADER_MUSL) /* the musl build is of one class (platform.h) */
		return im->wide == EMD_MUSL_WIDE && preload_as("$LIB", path, sizeof(path)) &&
		       faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0;
	if (im->loader != LOADER_GLIBC)
		return 0;
#ifdef EMD_LIBC_GLIBC
	return 1; /* this process's own ld.so found ours, for either class */
#else
	return preload_as(im->wide ? EMD_GLIBC_LIB64 : EMD_GLIBC_LIB32, path, sizeof(path)) &&
	       faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0;
#endif
}

/* Why no library of ours reaches a dynamic program, or 0. */
static int unserved(const struct image *im)
{
	char path[PATH_MAX];

	if (loader_served(im))
		return 0;
	if (im->loader == LOADER_MUSL)
		return EMD_ELF_NO_MUSL_LIB;
	if (im->loader == LOADER_GLIBC)
		return preload_as("$LIB", path, sizeof(path)) ? EMD_ELF_NO_GLIBC_LIB : EMD_ELF_UNSERVED;
	return EMD_ELF_FOREIGN;
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
	ssize_t got = pread(fd, im.head, sizeof(im.head), 0);
	int phnum, kind;

	im.have = got > 0 ? (size_t)got : 0;
	if (im.have < sizeof(eh))
		return 0; /* a script, or not ours to judge */
	memcpy(&eh, im.head, sizeof(eh));
	if (memcmp(eh.ident, ELFMAG, SELFMAG) != 0 ||
	    (eh.ident[EI_CLASS] != ELFCLASS64 && eh.ident[EI_CLASS] != ELFCLASS32))
		return 0;
	im.wide = eh.ident[EI_CLASS] == ELFCLASS64;
	phnum = im.wide ? eh.h64.e_phnum : eh.h32.e_phnum;
	phoff = im.wide ? eh.h64.e_phoff : eh.h32.e_phoff;
	entsize = im.wide ? eh.h64.e_phentsize : eh.h32.e_phentsize;
	if (!loads_here(&im, im.wide ? eh.h64.e_type : eh.h32.e_type,
			im.wide ? eh.h64.e_machine : eh.h32.e_machine, entsize))
		return 0;
	for (int i = 0; i < phnum && read_phdr(&im, phoff + (unsigned long)i * entsize, &ph); i++)
		take(&im, &ph);
	if (!im.interp.type)
		return im.go ? EMD_ELF_GO : EMD_ELF_STATIC;
	if (!interpreter_allowed(&im))
		return 0;
	if ((kind = unserved(&im)))
		return kind;
	return im.go ? EMD_ELF_GO : names_unseen(&im) ? EMD_ELF_ASYNC : 0;
}

int emd_held_unreachable(int look, long (*sys)(long nr, ...))
{
	char self[32];
	struct stat st;
	int fd, kind;

	if (look < 0 || fstat(look, &st) != 0 || !S_ISREG(st.st_mode) || !emd_exec_allowed(look, ""))
		return 0;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", look);
	fd = (int)sys(SYS_openat, AT_FDCWD, self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	kind = emd_elf_unreachable(fd);
	sys(SYS_close, fd);
	return kind;
}

int emd_command_unreachable(const char *cmd, char *path, size_t size)
{
	const char *found = emd_program_in_path(cmd, path, size);
	int look = found ? open(found, O_PATH | O_CLOEXEC) : -1, kind;

	if (found != path && found)
		snprintf(path, size, "%s", found);
	kind = emd_held_unreachable(look, syscall);
	if (look >= 0)
		close(look);
	return kind;
}

const char *emd_elf_reason(int kind)
{
	switch (kind) {
	case EMD_ELF_STATIC:
		return "a static program";
	case EMD_ELF_GO:
		return "a Go program";
	case EMD_ELF_FOREIGN:
		return "a program whose loader is neither glibc's nor musl's";
	case EMD_ELF_NO_MUSL_LIB:
		return "a musl program, and no musl build of the library for its class";
	case EMD_ELF_NO_GLIBC_LIB:
	case EMD_ELF_UNSERVED:
		return "a glibc program, and no glibc build of the library for its class";
	case EMD_ELF_ASYNC:
		return "a program that names io_uring or Linux AIO";
	default:
		return NULL;
	}
}

int emd_program_file(int fd, struct stat *st)
{
	/* Only a regular file is an ELF program; a set-user-ID or
	 * set-group-ID one keeps its privilege, which no_new_privs would take,
	 * and runs unfiltered, as natively. */
	return fstat(fd, st) == 0 && S_ISREG(st->st_mode) && !(st->st_mode & (S_ISUID | S_ISGID));
}

const char *emd_program_in_path(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *end;
	int n;

	if (strchr(name, '/'))
		return name;
	for (path = path ? path : "/bin:/usr/bin"; *name; path = end + 1) {
		end = strchrnul(path, ':');
		n = end == path ? snprintf(buf, size, "%s", name)
				: snprintf(buf, size, "%.*s/%s", (int)(end - path), path, name);
		if (n > 0 && (size_t)n < size && faccessat(AT_FDCWD, buf, X_OK, AT_EACCESS) == 0)
			return buf;
		if (!*end)
			break;
	}
	return NULL;
}

/* The kernel's limits on what an exec copies (fs/exec.c): 128 KiB for any
 * one string; all of them, the file's name first, with a pointer for each,
 * within three quarters of 8 MiB or a quarter of the stack limit if less,
 * but never less than 128 KiB.  A few pages are kept for the stand-in's
 * own arguments (libeatmydata/exec.c's exec_stand_in). */
#define ARG_STRLEN_MAX (32 * 4096UL)
#define ARG_MARGIN (3 * 4096UL)

static int strings_fit(char *const list[], size_t *used, size_t *count)
{
	for (size_t i = 0; list && list[i]; i++, (*count)++) {
		size_t len = strlen(list[i]) + 1;

		if (len > ARG_STRLEN_MAX)
			return 0;
		*used += len;
	}
	return 1;
}

int emd_args_fit(const char *path, char *const argv[], char *const envp[])
{
	struct rlimit stack;
	size_t limit = 6UL << 20, used = strlen(path) + 1 + ARG_MARGIN, count = 1;

	if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur / 4 < limit)
		limit = stack.rlim_cur / 4;
	if (limit < ARG_STRLEN_MAX)
		limit = ARG_STRLEN_MAX;
	if (!strings_fit(argv, &used, &count) || !strings_fit(envp, &used, &count))
		return 0;
	return used + count * sizeof(void *) < limit;
}
