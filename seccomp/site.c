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
 * and worker, freed when the worker leaves); the stack is read on every
 * call (two system calls: a pread of the thread's /proc file, kept open,
 * and process_vm_readv).  A module is known again by its file: device,
 * inode, size, modification and birth time (statx of the mapping's
 * /proc/PID/map_files link, one system call), so that a module on another
 * file system with the same inode number, or a file rewritten or replaced
 * since, is read again.
 *
 * The module is the tree's, untrusted: its headers may claim anything.
 * What is kept of one is bounded (MAX_FUNCS functions, MAX_NAMES bytes of
 * names or of .gopclntab), and a symbol table is read a piece at a time,
 * never past MAX_ENTRIES entries: at most about 44 MiB per module, two
 * modules per worker.  A module past a bound is not named: its site says
 * "too many symbols".
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"
#include "maps.h"

#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define STACK_WORDS 256 /* 2 KiB above the stack pointer */
#define MAX_FUNCS (1u << 19) /* 12 MiB of struct sym */
#define MAX_NAMES (32u << 20) /* a string table, or a whole .gopclntab */
#define MAX_ENTRIES (1u << 22) /* symbols looked at (96 MiB of .symtab read) */
#define SYMTAB_PIECE 2048 /* symbols read at a time: 48 KiB */

struct sym {
	unsigned long lo, hi;
	unsigned name;
};

/* What says a module's file is the one read: statx's view of it. */
struct module_key {
	unsigned long long dev, ino, size;
	long long mtime, btime; /* nanoseconds; btime 0 where unknown */
};

/* A module's functions, sorted, with their names: the two modules seen
 * last, per worker (the one of the system call, and the program's), `mod`
 * the one in use. */
static __thread struct symbols {
	struct module_key key;
	struct sym *syms;
	size_t n, cap;
	char *names, *blob; /* blob: what `names` points into, if not itself */
	size_t names_len;
	int loaded, exec; /* exec: ET_EXEC (no load bias) */
	int too_many; /* past a bound: not named */
} mods[2], *mod;

static int by_lo(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* size bytes at offset of the file, allocated; NULL if it cannot be (more
 * than MAX_NAMES: too many). */
static void *slurp(int fd, unsigned long long off, unsigned long long size)
{
	char *p = size && size <= MAX_NAMES ? malloc(size) : NULL;

	if (size > MAX_NAMES)
		mod->too_many = 1;
	if (p && pread(fd, p, size, (off_t)off) != (ssize_t)size) {
		free(p);
		p = NULL;
	}
	return p;
}

/* A function kept, if under MAX_FUNCS; 0 past it (the module too large). */
static int add_function(unsigned long lo, unsigned long hi, unsigned name)
{
	struct sym *more;

	if (mod->n == mod->cap) {
		if (mod->cap >= MAX_FUNCS) {
			mod->too_many = 1;
			return 0;
		}
		mod->cap = mod->cap ? mod->cap * 2 : 1024;
		if (!(more = realloc(mod->syms, mod->cap * sizeof(*more)))) {
			mod->cap = mod->n;
			return 0;
		}
		mod->syms = more;
	}
	mod->syms[mod->n++] = (struct sym){lo, hi, name};
	return 1;
}

/* What was kept of the module, freed: none of it is named. */
static void forget(struct symbols *m)
{
	free(m->syms);
	free(m->blob ? m->blob : m->names);
	m->syms = NULL;
	m->names = m->blob = NULL;
	m->n = m->cap = m->names_len = 0;
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
	    h.nfunc >= (len - h.pcln_off) / sizeof(pair))
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
		if (rec[1] < mod->names_len && !add_function(text + pair[0], text + rec[0], rec[1]))
			return;
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

	if (blob)
		parse_gopclntab(blob, t->sh_size, text ? text->sh_addr : 0);
	if (!mod->blob)
		free(blob);
}

/* The FUNC symbols of symbol table s, its names in `names` (the section
 * s->sh_link), a piece of the table at a time: the table's size is the
 * file's word, the pieces read are what the file has. */
static void read_symtab(int fd, const Elf64_Shdr *s, const Elf64_Shdr *names)
{
	Elf64_Sym *piece;
	unsigned long long count = s->sh_size / sizeof(*piece), at = 0, want;
	ssize_t got = 0;

	if (count > MAX_ENTRIES) {
		mod->too_many = 1;
		return;
	}
	if (!count || !(mod->names = slurp(fd, names->sh_offset, names->sh_size)) ||
	    !(piece = malloc(SYMTAB_PIECE * sizeof(*piece))))
		return;
	mod->names_len = names->sh_size;
	for (; at < count; at += (unsigned long long)got / sizeof(*piece)) {
		want = count - at < SYMTAB_PIECE ? count - at : SYMTAB_PIECE;
		got = pread(fd, piece, want * sizeof(*piece), (off_t)(s->sh_offset + at * sizeof(*piece)));
		if (got < (ssize_t)sizeof(*piece))
			break; /* the file ends before the table does */
		for (ssize_t k = 0; k < got / (ssize_t)sizeof(*piece); k++)
			if (ELF64_ST_TYPE(piece[k].st_info) == STT_FUNC && piece[k].st_value &&
			    piece[k].st_name < mod->names_len &&
			    !add_function(piece[k].st_value, piece[k].st_value + piece[k].st_size,
					  piece[k].st_name))
				at = count; /* past a bound */
	}
	free(piece);
}

/* The FUNC symbols of the 64-bit ELF file at fd, from its .symtab (the
 * first: there is one), or Go's .gopclntab without one. */
static void read_symbols(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	unsigned i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !(sh = slurp(fd, eh.e_shoff, (unsigned long long)eh.e_shnum * sizeof(*sh))))
		return;
	mod->exec = eh.e_type == ET_EXEC;
	for (i = 0; i < eh.e_shnum && sh[i].sh_type != SHT_SYMTAB; i++)
		;
	if (i < eh.e_shnum && sh[i].sh_link < eh.e_shnum)
		read_symtab(fd, &sh[i], &sh[sh[i].sh_link]);
	if (!mod->n && !mod->too_many) {
		forget(mod);
		read_gopclntab(fd, &eh, sh);
	}
	if (!mod->n || mod->too_many)
		forget(mod);
	else
		qsort(mod->syms, mod->n, sizeof(*mod->syms), by_lo);
	free(sh);
}

/* What a worker kept is freed when it leaves (serve.c's surplus workers):
 * its modules and its callers' /proc files. */
static pthread_key_t leaving;
static void close_syscall_files(void);

static void worker_leaves(void *unused)
{
	(void)unused;
	for (int i = 0; i < 2; i++) {
		forget(&mods[i]);
		mods[i].loaded = 0;
	}
	mod = NULL;
	close_syscall_files();
}

static int leaving_made; /* 0: no key (PTHREAD_KEYS_MAX), kept until exit */

static void make_key(void)
{
	leaving_made = pthread_key_create(&leaving, worker_leaves) == 0;
}

static void keep_until_leaving(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, make_key);
	if (leaving_made && !pthread_getspecific(leaving))
		pthread_setspecific(leaving, &mods);
}

static int same_key(const struct module_key *a, const struct module_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime == b->mtime && a->btime == b->btime;
}

/* statx's view of the file at (dir, path); 0, or -1. */
static int key_of(int dir, const char *path, int flags, struct module_key *k)
{
	struct statx x;

	if (statx(dir, path, flags, STATX_INO | STATX_SIZE | STATX_MTIME | STATX_BTIME, &x) != 0)
		return -1;
	*k = (struct module_key){makedev(x.stx_dev_major, x.stx_dev_minor), x.stx_ino, x.stx_size,
				 x.stx_mtime.tv_sec * 1000000000LL + x.stx_mtime.tv_nsec,
				 (x.stx_mask & STATX_BTIME) ? x.stx_btime.tv_sec * 1000000000LL +
				 x.stx_btime.tv_nsec : 0};
	return 0;
}

/* The symbols of the module open at fd, whose file is k: kept from the
 * last call if it is the same module. */
static void load(int fd, const struct module_key *k)
{
	for (int i = 0; i < 2; i++)
		if (mods[i].loaded && same_key(&mods[i].key, k)) {
			mod = &mods[i];
			return;
		}
	keep_until_leaving();
	mod = mod == &mods[0] ? &mods[1] : &mods[0]; /* the other one (or the first) */
	forget(mod);
	*mod = (struct symbols){.key = *k, .loaded = 1};
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

/* m's file, from its mapping: taken once, when the module is found (the
 * caller keeps m while the process runs the same image). */
static void key_module(pid_t pid, struct site_module *m)
{
	char path[96];
	struct module_key k;

	_Static_assert(sizeof(m->key) == sizeof(k), "site_module's key is a module_key");
	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", pid, m->file);
	m->keyed = m->inode && key_of(AT_FDCWD, path, 0, &k) == 0 && k.ino == m->inode;
	if (m->keyed)
		memcpy(m->key, &k, sizeof(k));
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
	key_module(pid, m);
	key_module(pid, prog);
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

static void close_syscall_files(void)
{
	for (unsigned i = 0; i < SYSCALL_FILES; i++) {
		if (syscall_files[i].fd > 0)
			close(syscall_files[i].fd);
		syscall_files[i].fd = 0;
	}
}

static int syscall_file(pid_t tid)
{
	unsigned i;

	keep_until_leaving();

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

/* The symbols of module m, loaded (or kept): 1, 0 if it has none, -1 if it
 * has too many (mod is then m's). */
static int symbols_of(pid_t pid, const struct site_module *m)
{
	char path[96];
	struct module_key k, opened;
	int fd;

	if (!m->keyed)
		return 0; /* the maps changed */
	memcpy(&k, m->key, sizeof(k));
	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", pid, m->file);
	for (int i = 0; i < 2; i++)
		if (mods[i].loaded && same_key(&mods[i].key, &k)) {
			mod = &mods[i];
			return mod->n ? 1 : -mod->too_many;
		}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (key_of(fd, "", AT_EMPTY_PATH, &opened) == 0 && same_key(&opened, &k))
		load(fd, &k);
	close(fd);
	if (!mod || !same_key(&mod->key, &k)) /* replaced between the two */
		return 0;
	return mod->n ? 1 : -mod->too_many;
}

void site_name(const struct call *c, const struct site_module *m,
	       const struct site_module *prog, struct emd_rec_slot *s)
{
	static const char *const why[] = {"too many symbols", "no symbols", "no caller found"};
	unsigned long ip = (unsigned long)c->req->data.instruction_pointer, addr;
	int named;

	if (!m->inode) {
		snprintf(s->site, sizeof(s->site), "? (system call outside any file: the vDSO)");
		return;
	}
	if (symbols_of(s->pid, m) > 0 && first_caller(c->req->pid, m, s))
		return;
	if (prog->inode && symbols_of(s->pid, prog) > 0 && first_caller(c->req->pid, prog, s))
		return;
	named = symbols_of(s->pid, m);
	addr = ip - (named > 0 && mod->exec ? 0 : m->base);
	s->site_addr = addr;
	snprintf(s->site, sizeof(s->site), "%.24s+%#lx (system call: %s)", m->name, addr,
		 why[named + 1]);
}
