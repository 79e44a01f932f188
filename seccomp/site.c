/* SPDX-License-Identifier: MIT */
/* site.c -- the call site of a request the supervisor served: the
 * function in the program that asked, found from outside.
 *
 * The notification gives the address of the system call instruction, in
 * a wrapper (glibc's fsync, Go's syscall.Syscall6) that says little.
 * While the caller waits, /proc/TID/syscall gives its stack pointer; from
 * the two, the stack is unwound a frame at a time with the module's own
 * tables: a C module's .eh_frame (cfi.c), a Go module's .gopclntab
 * (pclntab.c), never by taking words of the stack that look like return
 * addresses (a stale one, left by a call returned since, named the C
 * library's _IO_file_xsputn for an open that main made).  The module's
 * symbol table (.symtab, or Go's) names each frame's function; the first
 * that is not the C library's or the Go runtime's own plumbing is the
 * site, with its return address.  Where a frame cannot be unwound from
 * what is known (a frame found from a register the walk does not know, no
 * table, a caller in a module not read) or named, the site is the system
 * call's own address and says why.
 *
 * The rules of a frame are kept per module and address (ROWS), so that a
 * call made again from the same place costs a walk of a few frames in
 * memory; the stack is read on every call (two system calls: a pread of
 * the thread's /proc file, kept open, and one process_vm_readv, which
 * reads the image's stamp too (timed.c); one more where a frame is beyond
 * what that read).
 *
 * One module's tables are kept per worker thread (read once per module
 * and worker, freed when the worker leaves).  A module is known again by
 * its file: device, inode, size, modification and birth time (statx), so
 * that a module on another file system with the same inode number, or a
 * file rewritten or replaced since, is read again.  The file is the
 * mapping's own: its /proc/PID/map_files link, which only a process with
 * CAP_SYS_ADMIN may follow, else the path the maps give, looked up in the
 * caller's root and taken only if it is the device and inode mapped; so an
 * ordinary user's run is named as root's is.
 *
 * The module is the tree's, untrusted: its headers may claim anything.
 * What is kept of one is bounded (MAX_FUNCS functions and unwind entries,
 * MAX_NAMES bytes of names, of .gopclntab or of .eh_frame), and a symbol
 * table is read a piece at a time, never past MAX_ENTRIES entries: at most
 * about 120 MiB per module, two modules per worker.  A module past a bound
 * is not named: its site says "too many symbols".
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"
#include "maps.h"
#include "unwind.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FRAMES 32 /* walked before the site is said not found */
#define MAX_FUNCS (1u << 19) /* 12 MiB of struct sym, or of unwind entries */
#define MAX_NAMES (32u << 20) /* a string table, a .gopclntab, an .eh_frame */
#define MAX_ENTRIES (1u << 22) /* symbols looked at (96 MiB of .symtab read) */
#define SYMTAB_PIECE 2048 /* symbols read at a time: 48 KiB */
#define ROWS 64 /* frames' rules kept per module */

struct sym {
	unsigned long lo, hi;
	unsigned name;
	unsigned char plumbing; /* it or a name at its address is (plumbing()) */
};

/* What says a module's file is the one read: statx's view of it. */
struct module_key {
	unsigned long long dev, ino, size;
	long long mtime, btime; /* nanoseconds; btime 0 where unknown */
};

/* The rules of a frame at an address of the module, once worked out. */
struct row {
	unsigned long pc; /* + 1; 0: none kept */
	const char *why;
	struct unwind_row rules;
};

/* A module's functions, sorted, with their names, and its unwind tables:
 * the two modules seen last, per worker (the one of the system call, and
 * the program's), `mod` the one in use.  `mods` is allocated at the
 * worker's first request (keep_until_leaving), not in the static TLS,
 * which every start of the launcher (each `eatmydata true`, not only the
 * supervisor) would zero. */
static __thread struct symbols {
	struct module_key key;
	struct sym *syms;
	size_t n, cap;
	char *names; /* a string table, or in pclntab */
	size_t names_len;
	uint8_t *pclntab, *eh_frame;
	struct pcln pcln;
	struct cfi cfi;
	int go, has_cfi;
	unsigned long go_text; /* runtime.text's address, if the symbols say */
	struct row rows[ROWS];
	int loaded, exec; /* exec: ET_EXEC (no load bias) */
	int too_many; /* past a bound: not named */
} *mods, *mod;

static int by_lo(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi; /* of aliases, the largest last */
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
	mod->syms[mod->n++] = (struct sym){lo, hi, name, 0};
	return 1;
}

/* What was kept of the module, freed: none of it is named or unwound. */
static void forget(struct symbols *m)
{
	free(m->syms);
	if (!m->pclntab || m->names < (char *)m->pclntab ||
	    m->names >= (char *)m->pclntab + m->pcln.len)
		free(m->names);
	free(m->pclntab);
	free(m->eh_frame);
	free(m->cfi.fdes);
	m->syms = NULL;
	m->names = NULL;
	m->pclntab = m->eh_frame = NULL;
	m->cfi = (struct cfi){0};
	m->n = m->cap = m->names_len = 0;
	m->go = m->has_cfi = 0;
	m->go_text = 0;
	memset(m->rows, 0, sizeof(m->rows));
}

/* The functions of Go's own table (kept when the symbol table is
 * stripped), named in its table of names. */
static void go_functions(void)
{
	const struct pcln *p = &mod->pcln;
	uint64_t entry, next;
	uint32_t name;

	mod->names = (char *)mod->pclntab + p->funcname_off;
	mod->names_len = p->len - p->funcname_off;
	for (uint64_t i = 0; i < p->nfunc; i++) {
		uint32_t at[3];

		memcpy(at, p->t + p->pcln_off + i * 8, sizeof(at)); /* entry, record, next entry */
		entry = p->text + at[0];
		next = p->text + at[2];
		if (pcln_function(p, entry, &entry, &name) == 0 && name < mod->names_len &&
		    !add_function(entry, next, name))
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

/* Go's runtime.text in a module without symbols, from the runtime's
 * table of the module (runtime.firstmoduledata, in section s): its
 * .gopclntab's address, then its table of names' (the header's offset on),
 * and 18 words further its lowest address and its text's (the same). */
static unsigned long moduledata_text(int fd, const Elf64_Shdr *s, unsigned long pcln,
				     unsigned long names)
{
	unsigned long *w = s && s->sh_type == SHT_PROGBITS ? slurp(fd, s->sh_offset, s->sh_size) : NULL,
		      text = 0;

	for (size_t i = 0; w && i + 23 < s->sh_size / sizeof(*w) && !text; i++)
		if (w[i] == pcln && w[i + 1] == names && w[i + 20] == w[i + 22])
			text = w[i + 22];
	free(w);
	return text;
}

/* Where Go's table counts from: runtime.text, from the symbols or the
 * runtime's table of the module, else .text's start. */
static unsigned long go_text(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
			     const Elf64_Shdr *t)
{
	const Elf64_Shdr *text = section(fd, eh, sh, ".text");
	unsigned long names = t->sh_addr + mod->pcln.funcname_off, at;

	if (mod->go_text)
		return mod->go_text;
	if ((at = moduledata_text(fd, section(fd, eh, sh, ".go.module"), t->sh_addr, names)) ||
	    (at = moduledata_text(fd, section(fd, eh, sh, ".noptrdata"), t->sh_addr, names)))
		return at;
	return text ? text->sh_addr : 0;
}

/* Go's table and the .eh_frame, kept to unwind by. */
static void read_unwind_tables(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh)
{
	const Elf64_Shdr *t = section(fd, eh, sh, ".gopclntab");
	const Elf64_Shdr *e = section(fd, eh, sh, ".eh_frame");

	if (t && (mod->pclntab = slurp(fd, t->sh_offset, t->sh_size)) &&
	    pcln_open(&mod->pcln, mod->pclntab, t->sh_size, 0) == 0)
		mod->go = pcln_open(&mod->pcln, mod->pclntab, t->sh_size, go_text(fd, eh, sh, t)) == 0;
	if (e && e->sh_type == SHT_PROGBITS && (mod->eh_frame = slurp(fd, e->sh_offset, e->sh_size))) {
		mod->cfi = (struct cfi){mod->eh_frame, e->sh_size, e->sh_addr, NULL, 0};
		mod->has_cfi = cfi_index(&mod->cfi, MAX_FUNCS) == 0;
	}
}

/* Go's runtime.text: where the offsets of its table count from, which is
 * not .text's start where an external linker put C code before Go's. */
static int is_go_text(const Elf64_Sym *y)
{
	return ELF64_ST_TYPE(y->st_info) == STT_FUNC && y->st_size == 0 && y->st_name < mod->names_len &&
	       mod->names_len - y->st_name > sizeof("runtime.text") &&
	       !memcmp(mod->names + y->st_name, "runtime.text", sizeof("runtime.text"));
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
			if (is_go_text(&piece[k]))
				mod->go_text = piece[k].st_value;
			else if (ELF64_ST_TYPE(piece[k].st_info) == STT_FUNC && piece[k].st_value &&
			    piece[k].st_name < mod->names_len &&
			    !add_function(piece[k].st_value, piece[k].st_value + piece[k].st_size,
					  piece[k].st_name))
				at = count; /* past a bound */
	}
	free(piece);
}

static int plumbing(const char *f);

/* The name of symbol i, or NULL if the table does not end it. */
static const char *name_of(size_t i)
{
	unsigned at = mod->syms[i].name;

	return at < mod->names_len && memchr(mod->names + at, 0, mod->names_len - at)
		       ? mod->names + at : NULL;
}

/* A function is plumbing if any of its names at its address is (glibc's
 * open64 is also __libc_open64). */
static void mark_plumbing(void)
{
	size_t i, j, k;
	int any;

	for (i = 0; i < mod->n; i = j) {
		any = 0;
		for (j = i; j < mod->n && mod->syms[j].lo == mod->syms[i].lo; j++)
			any |= name_of(j) && plumbing(name_of(j));
		for (k = i; k < j; k++)
			mod->syms[k].plumbing = (unsigned char)any;
	}
}

/* The FUNC symbols of the 64-bit ELF file at fd, from its .symtab (the
 * first: there is one), or Go's .gopclntab without one; and its tables to
 * unwind by. */
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
	if (!mod->too_many)
		read_unwind_tables(fd, &eh, sh);
	if (!mod->n && mod->go && !mod->too_many) {
		free(mod->names); /* a symbol table's that held no function */
		go_functions();
	}
	if (!mod->n || mod->too_many) {
		forget(mod);
	} else {
		qsort(mod->syms, mod->n, sizeof(*mod->syms), by_lo);
		mark_plumbing();
	}
	free(sh);
}

/* What a worker kept is freed when it leaves (serve.c's surplus workers):
 * its modules and its callers' /proc files. */
static pthread_key_t leaving;
static void close_syscall_files(void);

static void worker_leaves(void *kept)
{
	struct symbols *two = kept;

	forget(&two[0]);
	forget(&two[1]);
	free(two);
	mods = mod = NULL;
	close_syscall_files();
}

static int leaving_made; /* 0: no key (PTHREAD_KEYS_MAX), kept until exit */

static void make_key(void)
{
	leaving_made = pthread_key_create(&leaving, worker_leaves) == 0;
}

/* This worker's modules, made once: 0, or -1 when there is no memory for
 * them (then nothing is opened, and no site named). */
static int keep_until_leaving(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (mods)
		return 0;
	pthread_once(&once, make_key);
	if (!(mods = calloc(2, sizeof(*mods))))
		return -1;
	if (leaving_made)
		pthread_setspecific(leaving, mods);
	return 0;
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
	for (int i = 0; mods && i < 2; i++)
		if (mods[i].loaded && same_key(&mods[i].key, k)) {
			mod = &mods[i];
			return;
		}
	if (keep_until_leaving() != 0) {
		mod = NULL;
		return;
	}
	mod = mod == &mods[0] ? &mods[1] : &mods[0]; /* the other one (or the first) */
	forget(mod);
	*mod = (struct symbols){.key = *k, .loaded = 1};
	read_symbols(fd);
}

/* The function holding vaddr, or NULL. */
static const struct sym *function_at(unsigned long vaddr)
{
	size_t lo = 0, hi = mod->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (mod->syms[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= mod->syms[lo - 1].hi || !name_of(lo - 1))
		return NULL;
	return &mod->syms[lo - 1];
}

/* Plumbing, not the program: the C library's wrappers and internals
 * (names C reserves to the implementation: __x, _X), the Go runtime and
 * standard library's system call layers. */
static int plumbing(const char *f)
{
	static const char *const prefixes[] = {"__", "runtime.", "runtime/", "syscall.", "internal/", "os.",
					       "io.", "bufio.", "golang.org/x/sys/"};
	static const char *const wrappers[] = {"fsync", "fdatasync", "syncfs", "sync", "msync",
					       "sync_file_range", "syscall", "pwritev2",
					       "new_do_write" /* glibc's stdio, static */};

	if (f[0] == '_' && f[1] >= 'A' && f[1] <= 'Z')
		return 1;
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

/* m named by the mapping e of its file. */
static void found(struct site_module *m, const struct emd_map *e)
{
	const char *base = strrchr(e->path, '/');

	m->inode = e->inode;
	m->dev = e->dev;
	snprintf(m->name, sizeof(m->name), "%s", base ? base + 1 : e->path);
	snprintf(m->file, sizeof(m->file), "%lx-%lx", e->lo, e->hi);
	if (strlen(e->path) < sizeof(m->path) && e->path[0] == '/')
		memcpy(m->path, e->path, strlen(e->path) + 1);
}

static int module_at(const struct emd_map *e, void *arg)
{
	struct module_query *q = arg;

	if (q->ip < e->lo || q->ip >= e->hi || !e->inode)
		return 0;
	found(q->m, e);
	return 1;
}

static int module_extent(const struct emd_map *e, void *arg)
{
	struct site_module *m = arg;

	if (e->inode != m->inode || e->dev != m->dev)
		return 0;
	if (e->offset == 0 && (!m->base || e->lo < m->base))
		m->base = e->lo;
	if (!m->lo || e->lo < m->lo)
		m->lo = e->lo;
	if (e->hi > m->hi)
		m->hi = e->hi;
	return 0;
}

/* The program's own module, by the device and inode of /proc/PID/exe. */
static int program_at(const struct emd_map *e, void *arg)
{
	struct site_module *m = arg;

	if (e->inode != m->inode || e->dev != m->dev)
		return 0;
	found(m, e);
	return 1;
}

/* The maps' path of m in the caller's root, opened O_PATH, if it is still
 * the file mapped (its device and inode); -1 if not. */
static int mapped_path(pid_t pid, const struct site_module *m)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	char root_path[64];
	struct stat st;
	int root, fd;

	if (!m->path[0])
		return -1;
	snprintf(root_path, sizeof(root_path), "/proc/%d/root", pid);
	if ((root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	fd = (int)syscall(SYS_openat2, root, m->path, &how, sizeof(how));
	close(root);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != m->inode ||
			st.st_dev != m->dev)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The module's file, opened with flags (O_RDONLY, O_PATH): its mapping's
 * link in map_files, which only CAP_SYS_ADMIN may follow, else its path in
 * the maps (mapped_path); -1 if neither. */
static int open_module(pid_t pid, const struct site_module *m, int flags)
{
	char path[96];
	int fd, file;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", pid, m->file);
	if ((fd = open(path, flags | O_CLOEXEC)) >= 0 || (fd = mapped_path(pid, m)) < 0 ||
	    flags == O_PATH)
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	file = open(path, flags | O_CLOEXEC);
	close(fd);
	return file;
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

	if (keep_until_leaving() != 0) /* nothing would close it */
		return -1;
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

/* The stack pointer in its line: the eighth of nine fields (the call's
 * number, its six arguments, the stack pointer, the address); found by
 * hand, in 43 ns where sscanf took 184 (each request reads it). */
unsigned long site_sp(pid_t tid)
{
	char buf[256], *at = buf;
	int fd = syscall_file(tid);
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

	buf[n > 0 ? n : 0] = '\0';
	for (int i = 0; i < 7 && at; i++)
		if ((at = strchr(at, ' ')))
			at++;
	return at && strchr(at, ' ') ? strtoul(at, NULL, 16) : 0;
}

/* m's file, from its mapping: taken once, when the module is found (the
 * caller keeps m while the process runs the same image). */
static void key_module(pid_t pid, struct site_module *m)
{
	char path[96];
	struct module_key k;
	int fd;

	_Static_assert(sizeof(m->key) == sizeof(k), "site_module's key is a module_key");
	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", pid, m->file);
	m->keyed = m->inode && key_of(AT_FDCWD, path, 0, &k) == 0 && k.ino == m->inode;
	if (!m->keyed && m->inode && (fd = mapped_path(pid, m)) >= 0) {
		m->keyed = key_of(fd, "", AT_EMPTY_PATH, &k) == 0;
		close(fd);
	}
	if (m->keyed)
		memcpy(m->key, &k, sizeof(k));
}

/* Whether m is ET_EXEC, from its ELF header in the caller's memory (its
 * first mapping): its addresses as linked are then its own, whether its
 * file can be read or not. */
static void elf_type(pid_t pid, struct site_module *m)
{
	Elf64_Ehdr eh;

	m->exec = m->base && read_theirs(pid, m->base, &eh, sizeof(eh), 0) == 0 &&
		  !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_type == ET_EXEC;
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
	if (m->inode && stat(exe, &st) == 0 && (st.st_ino != m->inode || st.st_dev != m->dev)) {
		prog->inode = st.st_ino;
		prog->dev = st.st_dev;
		if (lseek(fd, 0, SEEK_SET) == 0 && emd_maps_each(fd, program_at, prog) &&
		    lseek(fd, 0, SEEK_SET) == 0)
			emd_maps_each(fd, module_extent, prog);
		else
			prog->inode = 0;
	}
	close(fd);
	key_module(pid, m);
	key_module(pid, prog);
	elf_type(pid, m);
	elf_type(pid, prog);
}

/* The tables of module m, loaded (or kept), mod then m's: 1, or 0 if it
 * has no symbols (its unwind tables may be there), -1 if too many; -2 if
 * its file could not be read (mod is then not m's). */
static int symbols_of(pid_t pid, const struct site_module *m)
{
	struct module_key k, opened;
	int fd;

	if (!m->keyed || keep_until_leaving() != 0)
		return -2; /* its file was not found, or no room to read it */
	memcpy(&k, m->key, sizeof(k));
	for (int i = 0; i < 2; i++)
		if (mods[i].loaded && same_key(&mods[i].key, &k)) {
			mod = &mods[i];
			return mod->n ? 1 : -mod->too_many;
		}
	if ((fd = open_module(pid, m, O_RDONLY)) < 0)
		return -2;
	if (key_of(fd, "", AT_EMPTY_PATH, &opened) == 0 && same_key(&opened, &k))
		load(fd, &k);
	close(fd);
	if (!mod || !same_key(&mod->key, &k)) /* replaced between the two */
		return -2;
	return mod->n ? 1 : -mod->too_many;
}

/* A walk up the caller's stack: the registers it knows (the stack and
 * frame pointers, the address), the modules a frame may be in (the system
 * call's, the program's), and the stack as read. */
struct walk {
	pid_t pid, tid;
	const struct site_module *in[2];
	unsigned long sp, bp, pc;
	int bp_known, caller; /* caller: pc is a return address */
	struct site_stack *stack; /* as read */
};

/* The word at addr of the caller's stack: 0, or -1 if it cannot be read. */
static int stack_word(struct walk *w, unsigned long addr, unsigned long *out)
{
	struct site_stack *st = w->stack;
	struct iovec local = {st->bytes, sizeof(st->bytes)}, remote = {(void *)addr, sizeof(st->bytes)};
	ssize_t got;

	if (addr < st->lo || addr - st->lo > st->have || st->have - (addr - st->lo) < sizeof(*out)) {
		got = process_vm_readv(w->tid, &local, 1, &remote, 1, 0);
		st->lo = addr;
		st->have = got > 0 ? (size_t)got : 0;
		if (st->have < sizeof(*out))
			return -1;
	}
	memcpy(out, st->bytes + (addr - st->lo), sizeof(*out));
	return 0;
}

/* The rules of mod's frame at vaddr, kept per address: from Go's table
 * for a Go function, else from the .eh_frame. */
static const char *rules_at(unsigned long vaddr, struct unwind_row *r)
{
	struct row *k = &mod->rows[(vaddr ^ vaddr >> 6) % ROWS];
	uint64_t entry;
	uint32_t name;

	if (k->pc != vaddr + 1) {
		k->pc = vaddr + 1;
		if (mod->go && pcln_function(&mod->pcln, vaddr, &entry, &name) == 0)
			k->why = pcln_row(&mod->pcln, vaddr, &k->rules);
		else if (mod->has_cfi)
			k->why = cfi_row(&mod->cfi, vaddr, &k->rules);
		else
			k->why = NO_TABLE;
	}
	*r = k->rules;
	return k->why;
}

/* One frame up, by the rules at the walk's address in mod (bias: its load
 * bias): NULL, or why not. */
static const char *step(struct walk *w, unsigned long bias)
{
	struct unwind_row r;
	unsigned long cfa, ra;
	const char *why = rules_at(w->pc - bias - (unsigned long)w->caller, &r);

	if (why)
		return why;
	if (r.cfa_reg == UNWIND_SP)
		cfa = w->sp + (unsigned long)r.cfa_off;
	else if (r.cfa_reg == UNWIND_BP && w->bp_known)
		cfa = w->bp + (unsigned long)r.cfa_off;
	else
		return r.cfa_reg == UNWIND_BP ? "frame pointer unknown" : "frame by an expression";
	if (cfa <= w->sp)
		return "frame below its callee's"; /* a loop, else */
	if (r.ra.how != UNWIND_AT || stack_word(w, cfa + (unsigned long)r.ra.off, &ra) != 0)
		return "no return address";
	if (r.bp.how == UNWIND_AT)
		w->bp_known = stack_word(w, cfa + (unsigned long)r.bp.off, &w->bp) == 0;
	else if (r.bp.how == UNWIND_UNKNOWN)
		w->bp_known = 0;
	w->sp = cfa;
	w->pc = ra;
	w->caller = 1;
	return NULL;
}

/* The module of the walk holding pc, its tables loaded (mod), and what
 * symbols_of said of it; NULL if none of the walk's holds pc. */
static const struct site_module *enter(struct walk *w, int *named)
{
	for (int i = 0; i < 2; i++)
		if (w->in[i] && w->pc >= w->in[i]->lo && w->pc < w->in[i]->hi) {
			*named = symbols_of(w->pid, w->in[i]);
			return w->in[i];
		}
	return NULL;
}

/* The first frame of the program's own, named into s: NULL, or why it was
 * not found (*unwinding set if the walk stopped on the way up).  A library
 * without symbols is walked through (the program's frames are further
 * up); the program without them names nothing. */
static const char *walk(struct walk *w, struct emd_rec_slot *s, int *unwinding)
{
	const struct site_module *m;
	const struct sym *f = NULL;
	const char *why;
	unsigned long bias;
	int named;

	for (int i = 0; i < MAX_FRAMES; i++) {
		*unwinding = 1;
		if (!(m = enter(w, &named)))
			return "in a module not read";
		*unwinding = 0;
		if (named == -2 || named == -1)
			return named == -1 ? "too many symbols" : "module's file not found";
		if (!named && (m != w->in[0] || !w->in[1]))
			return "no symbols";
		*unwinding = 1;
		bias = mod->exec ? 0 : m->base;
		if (named && !(f = function_at(w->pc - bias - (unsigned long)w->caller)))
			return "in no function";
		if (named && !f->plumbing) {
			s->site_addr = w->pc - bias;
			snprintf(s->site, sizeof(s->site), "%.40s (%.16s+%#lx)", mod->names + f->name,
				 m->name, w->pc - bias);
			return NULL;
		}
		if ((why = step(w, bias)))
			return why;
	}
	return "too many frames";
}

/* Where a module has no table to unwind by (musl's C library is built
 * without one), a guess, said to be one: the first word on the stack from
 * where the walk stopped that is an address just past the start of a
 * function of the program's own (a return address, or a stale one: hence
 * the guess); 1 if one was found, named into s. */
static int guess(struct walk *w, const char *why, struct emd_rec_slot *s)
{
	const struct site_module *m;
	const struct sym *f;
	unsigned long word, bias, from = w->sp;
	char text[128];
	size_t n;
	int named;

	for (unsigned long at = from; at - from < SITE_STACK; at += sizeof(word)) {
		if (stack_word(w, at, &word) != 0)
			return 0;
		w->pc = word;
		if (!(m = enter(w, &named)) || named <= 0)
			continue;
		bias = mod->exec ? 0 : m->base;
		if (word - bias == 0 || !(f = function_at(word - bias - 1)) || f->plumbing ||
		    function_at(word - bias) != f)
			continue;
		s->site_addr = word - bias;
		snprintf(text, sizeof(text), "%.30s? (%.16s+%#lx, a guess: %s)", mod->names + f->name,
			 m->name, word - bias, why);
		n = strnlen(text, sizeof(s->site) - 1); /* whole but for the longest */
		memcpy(s->site, text, n);
		s->site[n] = '\0';
		return 1;
	}
	return 0;
}

void site_name(const struct call *c, const struct site_module *m,
	       const struct site_module *prog, struct site_stack *stack, struct emd_rec_slot *s)
{
	struct walk w; /* on the stack: see mods */
	unsigned long ip = (unsigned long)c->req->data.instruction_pointer, addr;
	const char *why;
	char tail[56], at[20];
	int unwinding = 1;
	size_t n;

	if (!m->inode) {
		snprintf(s->site, sizeof(s->site), "? (system call outside any file: the vDSO)");
		return;
	}
	w = (struct walk){.pid = s->pid, .tid = c->req->pid, .in = {m, prog->inode ? prog : NULL},
			  .sp = stack->sp, .pc = ip, .stack = stack};
	why = w.sp ? walk(&w, s, &unwinding) : "no stack pointer";
	if (!why || (unwinding && (!strcmp(why, NO_TABLE) || !strcmp(why, NO_ENTRY)) &&
		     guess(&w, why, s)))
		return;
	addr = ip - (m->exec ? 0 : m->base);
	s->site_addr = addr;
	/* The reason whole (each is short), the module's name cut to fit */
	snprintf(tail, sizeof(tail), " (system call: %s%s)", unwinding ? "not unwound: " : "", why);
	snprintf(at, sizeof(at), "+%#lx", addr);
	n = strnlen(m->name, sizeof(m->name));
	if (n > sizeof(s->site) - 1 - strlen(tail) - strlen(at))
		n = sizeof(s->site) - 1 - strlen(tail) - strlen(at); /* >= 5: sizes below */
	memcpy(s->site, m->name, n);
	memcpy(s->site + n, at, strlen(at));
	memcpy(s->site + n + strlen(at), tail, strlen(tail) + 1);
}
