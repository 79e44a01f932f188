/* SPDX-License-Identifier: MIT */
/* site.c -- a call site as the report can name it later: "module+0xoffset
 * symbol" (the module named by its file, the symbol by dladdr), the
 * module's GNU build id and the address in its ELF as linked, from the
 * program headers ld.so keeps (dl_iterate_phdr); and, once per module and
 * process image, a MODULE record of the module's path, so that syncstat
 * report finds its debug information after the run, the program stripped
 * or gone (record.h).
 *
 * Called while a record is claimed: no allocation, no lock of ours; a
 * per-thread cache keeps dl_iterate_phdr (which takes ld.so's lock) off
 * the path of a call made again from the same place.
 */
#include "emd.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

struct module {
	uintptr_t pc, bias;
	const ElfW(Phdr) *phdr;
	int phnum;
};

/* dl_iterate_phdr's callback: the module with a loaded segment at pc. */
static int holding(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module *m = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;

		if (p->p_type == PT_LOAD && m->pc >= lo && m->pc - lo < p->p_memsz) {
			m->bias = info->dlpi_addr;
			m->phdr = info->dlpi_phdr;
			m->phnum = info->dlpi_phnum;
			return 1;
		}
	}
	return 0;
}

/* The GNU build id in one PT_NOTE segment (mapped: notes lie in a loaded
 * segment), into s; 0 if it holds none. */
static int note_build_id(const char *n, size_t len, size_t align, struct emd_rec_slot *s)
{
	const char *end = n + len;

	while ((size_t)(end - n) >= sizeof(ElfW(Nhdr))) {
		const ElfW(Nhdr) *h = (const void *)n;
		size_t name = (h->n_namesz + align - 1) & ~(align - 1);
		size_t desc = (h->n_descsz + align - 1) & ~(align - 1);
		const char *d = n + sizeof(*h) + name;

		if (name > len || desc > len || d + desc > end || d < n)
			return 0;
		if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 &&
		    memcmp(n + sizeof(*h), "GNU", 4) == 0) {
			s->build_id_len = h->n_descsz;
			memcpy(s->build_id, d, h->n_descsz < 20 ? h->n_descsz : 20);
			return 1;
		}
		n = d + desc;
	}
	return 0;
}

static void build_id(const struct module *m, struct emd_rec_slot *s)
{
	for (int i = 0; i < m->phnum; i++) {
		const ElfW(Phdr) *p = &m->phdr[i];

		if (p->p_type == PT_NOTE &&
		    note_build_id((const char *)(m->bias + p->p_vaddr), p->p_memsz,
				  p->p_align == 8 ? 8 : 4, s))
			return;
	}
}

/* Modules seen in this process image, by load bias, each with its file's
 * name as /proc/self/maps shows it.  Not dladdr's: for the program itself
 * it gives argv[0], the memory that PostgreSQL, sshd and nginx overwrite
 * with their process titles ("postgres: checkpointer"); a module is named
 * by its file.  The thread that claims an entry writes the module's
 * record; one that finds it claimed but not yet named reads the maps
 * itself; a full table costs a read of the maps per new call site, and a
 * second record, never a lost one. */
#define MODULES 64
#define MODULE_NAME 48
static struct seen {
	uintptr_t bias; /* + 1; 0: free */
	int named;
	char name[MODULE_NAME];
} seen[MODULES];

/* The name of the file mapped at pc, and its path. */
static void file_name(const void *pc, char name[MODULE_NAME], char *path, size_t path_size)
{
	const char *base;

	emd_map_path(pc, path, path_size);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	memcpy(name, base, strnlen(base, MODULE_NAME - 1));
	name[strnlen(base, MODULE_NAME - 1)] = '\0';
}

/* The name of the module at pc (load bias `bias`) into name; 1 if this
 * thread is the first to see it in this process image (path then set). */
static int module_name(const void *pc, uintptr_t bias, char name[MODULE_NAME], char *path,
		       size_t path_size)
{
	for (int i = 0; i < MODULES; i++) {
		uintptr_t was = __atomic_load_n(&seen[i].bias, __ATOMIC_ACQUIRE);

		if (was == bias + 1 && __atomic_load_n(&seen[i].named, __ATOMIC_ACQUIRE)) {
			memcpy(name, seen[i].name, MODULE_NAME);
			return 0;
		}
		if (was == bias + 1) { /* being named by another thread */
			file_name(pc, name, path, path_size);
			return 0;
		}
		if (was == 0 && __atomic_compare_exchange_n(&seen[i].bias, &was, bias + 1, 0,
							    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			file_name(pc, name, path, path_size);
			memcpy(seen[i].name, name, sizeof(seen[i].name));
			__atomic_store_n(&seen[i].named, 1, __ATOMIC_RELEASE);
			return 1;
		}
	}
	file_name(pc, name, path, path_size);
	return 1;
}

/* "module+0xaddress symbol", as the report shows it without debug
 * information: the address as linked (the load bias taken off: what the
 * supervisor says of a static program, what objdump and addr2line take),
 * not dladdr's offset from the first mapping, which differs for a program
 * not built position-independent; the nearest exported symbol. */
static void site_text(const void *pc, uintptr_t bias, const char *module, char *out, size_t size)
{
	Dl_info info;
	int named = dladdr(pc, &info) && info.dli_sname;

	snprintf(out, size, "%s+%#lx%s%s", module, (unsigned long)((uintptr_t)pc - bias),
		 named ? " " : "", named ? info.dli_sname : "");
}

#define CACHED 8
static __thread struct {
	const void *pc;
	char text[80];
	uint8_t id[20];
	uint32_t id_len;
	uint64_t addr;
} cache[CACHED];
static __thread unsigned cache_next;

void emd_site(const void *pc, struct emd_rec_slot *s)
{
	struct module m = {.pc = (uintptr_t)pc};
	char name[MODULE_NAME], path[sizeof(s->path)];
	int first;

	for (int i = 0; i < CACHED; i++)
		if (cache[i].pc == pc) {
			memcpy(s->site, cache[i].text, sizeof(s->site));
			memcpy(s->build_id, cache[i].id, sizeof(s->build_id));
			s->build_id_len = cache[i].id_len;
			s->site_addr = cache[i].addr;
			return;
		}
	if (dl_iterate_phdr(holding, &m)) {
		first = module_name(pc, m.bias, name, path, sizeof(path));
		site_text(pc, m.bias, name, s->site, sizeof(s->site));
		build_id(&m, s);
		s->site_addr = m.pc - m.bias;
		if (first)
			emd_rec_module(path, s);
	} else {
		snprintf(s->site, sizeof(s->site), "%p", pc);
	}
	cache_next = (cache_next + 1) % CACHED;
	cache[cache_next].pc = pc;
	memcpy(cache[cache_next].text, s->site, sizeof(s->site));
	memcpy(cache[cache_next].id, s->build_id, sizeof(s->build_id));
	cache[cache_next].id_len = s->build_id_len;
	cache[cache_next].addr = s->site_addr;
}
