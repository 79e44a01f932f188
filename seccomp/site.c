/* SPDX-License-Identifier: MIT */
/* site.c -- the call site of a request the supervisor served: the
 * function in the program that asked, found from outside.
 *
 * The notification gives the address of the system call instruction, in
 * a wrapper (glibc's fsync, Go's syscall.Syscall6) that says little.
 * While the caller waits, /proc/TID/syscall gives its stack pointer; the
 * words above it that are return addresses into the same module (each
 * just after a call instruction) are its callers, innermost first.  The
 * module's symbol table (.symtab) names them; the first that is not the
 * C library's or the Go runtime's own plumbing is the site.  A stripped
 * module, or a stack that shows no caller, leaves the system call's own
 * address, and the site says why.
 *
 * One module's symbols are kept per worker thread (read once per module
 * and worker); the stack is read on every call (two system calls: a
 * pread of the thread's /proc file, kept open, and process_vm_readv).
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"
#include "maps.h"

#include <elf.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define STACK_WORDS 256 /* 2 KiB above the stack pointer */
#define MAX_SYMTAB (64u << 20)

struct sym {
	unsigned long lo, hi;
	unsigned name;
};

/* A module's functions, sorted, with their names: the two modules seen
 * last, per worker (the one of the system call, and the program's), `mod`
 * the one in use. */
static __thread struct symbols {
	unsigned long long dev, ino;
	struct sym *syms;
	size_t n;
	char *names, *blob; /* blob: what `names` points into, if not itself */
	size_t names_len;
	int loaded, exec; /* exec: ET_EXEC (no load bias) */
} mods[2], *mod;

static int by_lo(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* size bytes at offset of the file, allocated; NULL if it cannot be. */
static void *slurp(int fd, unsigned long long off, unsigned long long size)
{
	char *p = size && size <= MAX_SYMTAB ? malloc(size) : NULL;

	if (p && pread(fd, p, size, (off_t)off) != (ssize_t)size) {
		free(p);
		p = NULL;
	}
	return p;
}

/* Go's own table of functions (.gopclntab, Go 1.18 and later: kept when
 * the symbol table is stripped): its header, then the function table of
 * {entry, offset of the function's record} pairs of 32-bit offsets from
 * the text's start (in the header, or since Go 1.21 .text's address), each
 * record starting with its entry and the offset of its name. */
struct pcln_header {
	uint32_t magic;
	uint8_t pad[2], min_lc, ptr_size;
	uint64_t nfunc, nfiles, text_start, funcname_off, cu_off, filetab_off, pctab_off, pcln_off;
};

static void parse_gopclntab(char *t, size_t len, uint64_t text)
{
	struct pcln_header h;
	uint32_t pair[2], rec[2];

	if (len < sizeof(h))
		return;
	memcpy(&h, t, sizeof(h));
	if (h.text_start) /* else set when the program runs: .text's address */
		text = h.text_start;
	/* nfunc pairs and the entry after the last: (nfunc + 1) pairs. */
	if ((h.magic != 0xfffffff0 && h.magic != 0xfffffff1) || h.ptr_size != 8 ||
	    h.funcname_off >= len || h.pcln_off >= len ||
	    h.nfunc >= (len - h.pcln_off) / sizeof(pair) ||
	    !(mod->syms = malloc(h.nfunc * sizeof(*mod->syms))))
		return;
	mod->blob = t;
	mod->names = t + h.funcname_off;
	mod->names_len = len - h.funcname_off;
	for (uint64_t i = 0; i < h.nfunc; i++) {
		memcpy(pair, t + h.pcln_off + i * sizeof(pair), sizeof(pair));
		memcpy(rec, t + h.pcln_off + (i + 1) * sizeof(pair), sizeof(rec[0]));
		if (h.pcln_off + (uint64_t)pair[1] + sizeof(rec) > len)
			continue;
		memcpy(&rec[1], t + h.pcln_off + pair[1] + 4, sizeof(rec[1]));
		if (rec[1] < mod->names_len)
			mod->syms[mod->n++] = (struct sym){text + pair[0], text + rec[0], rec[1]};
	}
}

/* The section named `want`, from the section header string table. */
static const Elf64_Shdr *section(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
				 const char *want)
{
	char *names;
	const Elf64_Shdr *found = NULL;

	if (eh->e_shstrndx >= eh->e_shnum ||
	    !(names = slurp(fd, sh[eh->e_shstrndx].sh_offset, sh[eh->e_shstrndx].sh_size)))
		return NULL;
	for (unsigned i = 0; i < eh->e_shnum && !found; i++)
		if (sh[i].sh_name + strlen(want) < sh[eh->e_shstrndx].sh_size &&
		    !strcmp(names + sh[i].sh_name, want))
			found = &sh[i];
	free(names);
	return found;
}

static void read_gopclntab(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh)
{
	const Elf64_Shdr *t = section(fd, eh, sh, ".gopclntab"), *text = section(fd, eh, sh, ".text");
	char *blob = t ? slurp(fd, t->sh_offset, t->sh_size) : NULL;

	free(mod->syms);
	free(mod->names);
	mod->syms = NULL;
	mod->names = NULL;
	mod->n = 0;
	if (blob)
		parse_gopclntab(blob, t->sh_size, text ? text->sh_addr : 0);
	if (!mod->blob)
		free(blob);
}

/* The FUNC symbols of the 64-bit ELF file at fd, from .symtab, or Go's
 * .gopclntab without one. */
static void read_symbols(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	Elf64_Sym *st = NULL;
	size_t count;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !(sh = slurp(fd, eh.e_shoff, (unsigned long long)eh.e_shnum * sizeof(*sh))))
		return;
	mod->exec = eh.e_type == ET_EXEC;
	for (unsigned i = 0; i < eh.e_shnum && !st; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum)
			continue;
		st = slurp(fd, sh[i].sh_offset, sh[i].sh_size);
		mod->names = slurp(fd, sh[sh[i].sh_link].sh_offset, sh[sh[i].sh_link].sh_size);
		mod->names_len = mod->names ? sh[sh[i].sh_link].sh_size : 0;
		count = st && mod->names ? sh[i].sh_size / sizeof(*st) : 0;
		mod->syms = count ? malloc(count * sizeof(*mod->syms)) : NULL;
		for (size_t k = 0; mod->syms && k < count; k++)
			if (ELF64_ST_TYPE(st[k].st_info) == STT_FUNC && st[k].st_value &&
			    st[k].st_name < mod->names_len)
				mod->syms[mod->n++] = (struct sym){st[k].st_value,
								 st[k].st_value + st[k].st_size,
								 st[k].st_name};
	}
	if (!mod->n)
		read_gopclntab(fd, &eh, sh);
	if (mod->syms)
		qsort(mod->syms, mod->n, sizeof(*mod->syms), by_lo);
	free(st);
	free(sh);
}

/* The symbols of the module open at fd (dev, ino): kept from the last
 * call if it is the same module. */
static void load(int fd, unsigned long long dev, unsigned long long ino)
{
	for (int i = 0; i < 2; i++)
		if (mods[i].loaded && mods[i].dev == dev && mods[i].ino == ino) {
			mod = &mods[i];
			return;
		}
	mod = mod == &mods[0] ? &mods[1] : &mods[0]; /* the other one (or the first) */
	free(mod->syms);
	free(mod->blob ? mod->blob : mod->names);
	*mod = (struct symbols){.dev = dev, .ino = ino, .loaded = 1};
	read_symbols(fd);
}

/* The function holding vaddr, or NULL. */
static const char *function_at(unsigned long vaddr)
{
	size_t lo = 0, hi = mod->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (mod->syms[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= mod->syms[lo - 1].hi || !memchr(mod->names + mod->syms[lo - 1].name, 0,
							    mod->names_len - mod->syms[lo - 1].name))
		return NULL;
	return mod->names + mod->syms[lo - 1].name;
}

/* Plumbing, not the program: the C library's wrappers and internals, the
 * Go runtime and standard library's system call layers. */
static int plumbing(const char *f)
{
	static const char *const prefixes[] = {"__", "runtime.", "syscall.", "internal/", "os.",
					       "io.", "bufio.", "golang.org/x/sys/"};
	static const char *const wrappers[] = {"fsync", "fdatasync", "syncfs", "sync", "msync",
					       "sync_file_range", "syscall", "pwritev2"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(f, prefixes[i], strlen(prefixes[i])))
			return 1;
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(*wrappers); i++)
		if (!strcmp(f, wrappers[i]))
			return 1;
	return 0;
}

struct module_query {
	unsigned long ip;
	struct site_module *m;
};

static int module_at(const struct emd_map *e, void *arg)
{
	struct module_query *q = arg;
	const char *base = strrchr(e->path, '/');

	if (q->ip < e->lo || q->ip >= e->hi || !e->inode)
		return 0;
	q->m->inode = e->inode;
	snprintf(q->m->name, sizeof(q->m->name), "%s", base ? base + 1 : e->path);
	snprintf(q->m->file, sizeof(q->m->file), "%lx-%lx", e->lo, e->hi);
	return 1;
}

static int module_extent(const struct emd_map *e, void *arg)
{
	struct site_module *m = arg;

	if (e->inode != m->inode)
		return 0;
	if (e->offset == 0 && (!m->base || e->lo < m->base))
		m->base = e->lo;
	if (!m->lo || e->lo < m->lo)
		m->lo = e->lo;
	if (e->hi > m->hi)
		m->hi = e->hi;
	return 0;
}

/* The program's own module, by the inode of /proc/PID/exe. */
static int program_at(const struct emd_map *e, void *arg)
{
	struct site_module *m = arg;
	const char *base = strrchr(e->path, '/');

	if (e->inode != m->inode)
		return 0;
	snprintf(m->name, sizeof(m->name), "%s", base ? base + 1 : e->path);
	snprintf(m->file, sizeof(m->file), "%lx-%lx", e->lo, e->hi);
	return 1;
}

void site_module(pid_t pid, unsigned long ip, struct site_module *m, struct site_module *prog)
{
	struct module_query q = {ip, m};
	char exe[64];
	struct stat st;
	int fd;

	memset(m, 0, sizeof(*m));
	memset(prog, 0, sizeof(*prog));
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	if ((fd = open_proc(pid, "maps")) < 0)
		return;
	if (emd_maps_each(fd, module_at, &q) && lseek(fd, 0, SEEK_SET) == 0)
		emd_maps_each(fd, module_extent, m);
	/* A call from a library (libc's wrapper): its caller may be the
	 * program's. */
	if (m->inode && stat(exe, &st) == 0 && st.st_ino != m->inode) {
		prog->inode = st.st_ino;
		if (lseek(fd, 0, SEEK_SET) == 0 && emd_maps_each(fd, program_at, prog) &&
		    lseek(fd, 0, SEEK_SET) == 0)
			emd_maps_each(fd, module_extent, prog);
		else
			prog->inode = 0;
	}
	close(fd);
}

/* The caller's stack pointer, while it waits in the system call, from
 * /proc/TID/syscall, kept open per thread served last (read again with
 * pread, it says the state of now; a dead thread's says nothing). */
#define SYSCALL_FILES 8
static __thread struct {
	pid_t tid;
	int fd;
} syscall_files[SYSCALL_FILES];
static __thread unsigned syscall_next;

static int syscall_file(pid_t tid)
{
	unsigned i;

	for (i = 0; i < SYSCALL_FILES; i++)
		if (syscall_files[i].tid == tid && syscall_files[i].fd > 0)
			return syscall_files[i].fd;
	i = syscall_next++ % SYSCALL_FILES;
	if (syscall_files[i].fd > 0)
		close(syscall_files[i].fd);
	syscall_files[i].tid = tid;
	syscall_files[i].fd = open_proc(tid, "syscall");
	return syscall_files[i].fd;
}

static unsigned long stack_pointer(pid_t tid)
{
	char buf[256];
	unsigned long sp = 0;
	int fd = syscall_file(tid);
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "%*d %*x %*x %*x %*x %*x %*x %lx", &sp) != 1)
		return 0;
	return sp;
}

/* The first return address above sp into the module that lands in a
 * function of the program (not at a function's start: a stored function
 * pointer), as "function (module+0xADDR)". */
static int first_caller(pid_t tid, const struct site_module *m, struct emd_rec_slot *s)
{
	unsigned long stack[STACK_WORDS], sp = stack_pointer(tid), bias = mod->exec ? 0 : m->base;
	struct iovec local = {stack, sizeof(stack)}, remote = {(void *)sp, sizeof(stack)};
	ssize_t got = sp ? process_vm_readv(tid, &local, 1, &remote, 1, 0) : -1;
	const char *f;

	for (ssize_t i = 0; i < got / (ssize_t)sizeof(*stack); i++) {
		unsigned long w = stack[i];

		if (w <= m->lo || w >= m->hi || w - bias == 0)
			continue;
		f = function_at(w - bias - 1);
		if (!f || function_at(w - bias) != f || plumbing(f))
			continue;
		s->site_addr = w - bias;
		snprintf(s->site, sizeof(s->site), "%.40s (%.16s+%#lx)", f, m->name, w - bias);
		return 1;
	}
	return 0;
}

/* The symbols of module m, loaded (or kept); 0 if it has none. */
static int symbols_of(pid_t pid, const struct site_module *m)
{
	char path[96];
	struct stat st;
	int fd;

	for (int i = 0; i < 2; i++) /* by inode alone: the maps name no device */
		if (mods[i].loaded && mods[i].ino == m->inode) {
			mod = &mods[i];
			return mod->n != 0;
		}
	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", pid, m->file);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) == 0 && st.st_ino == m->inode)
		load(fd, st.st_dev, st.st_ino);
	close(fd);
	return mod && mod->ino == m->inode && mod->n; /* none loaded: the maps changed */
}

void site_name(const struct call *c, const struct site_module *m,
	       const struct site_module *prog, struct emd_rec_slot *s)
{
	unsigned long ip = (unsigned long)c->req->data.instruction_pointer, addr;
	int named;

	if (!m->inode) {
		snprintf(s->site, sizeof(s->site), "? (system call outside any file: the vDSO)");
		return;
	}
	if ((named = symbols_of(s->pid, m)) && first_caller(c->req->pid, m, s))
		return;
	if (prog->inode && symbols_of(s->pid, prog) && first_caller(c->req->pid, prog, s))
		return;
	named = symbols_of(s->pid, m);
	addr = ip - (named && mod->exec ? 0 : m->base);
	s->site_addr = addr;
	snprintf(s->site, sizeof(s->site), "%.24s+%#lx (system call: %s)", m->name, addr,
		 named ? "no caller found" : "no symbols");
}
