/* SPDX-License-Identifier: MIT */
/* symbols.c -- call sites named: the function and source line of each,
 * from the debug information of its module, found when the report is made
 * by the build id the library recorded at run time (record.h), so that a
 * run of a stripped program is named wherever its debug symbols are
 * installed (/usr/lib/debug/.build-id/, Debian's -dbgsym packages).  The
 * reading is elfutils' libdw (libdwfl), loaded when a report first names a
 * site: linked, it and the four libraries it needs cost every run of the
 * launchers 0.3 ms of loading, as much as the whole of Debian's eatmydata
 * (doc/benchmarks.md); a report made without it names no function.
 *
 * The records are untrusted: a module's path in them is opened only as a
 * regular file of root's or the user's that no one else can write, never
 * through a link, without blocking, and only if its build id is the one
 * recorded; debug files are looked for by build id under /usr/lib/debug
 * alone (not beside the module, where the tree may have put anything).
 */
#include "common/common.h"
#include "common/json.h"
#include "report_data.h"
#include "dwfl.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBUG_DIR "/usr/lib/debug/.build-id/"
#define MAX_MODULE_SIZE ((off_t)1 << 31)

struct module_key {
	uint8_t id[20];
	uint32_t len;
};

/* A module's debug information, once looked for. */
struct module {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	char name[80];
};

/* The libdwfl calls this file makes, reached through `dw` once loaded. */
#define DW_CALLS(X)                                                                        \
	X(dwfl_end) X(dwfl_report_offline) X(dwfl_report_end)                \
	X(dwfl_module_build_id) X(dwfl_module_getelf) X(dwfl_module_addrname)              \
	X(dwfl_module_getsrc) X(dwfl_lineinfo) X(dwfl_build_id_find_elf)                   \
	X(dwfl_offline_section_address)

static struct {
	emd_dwfl_begin_fn *dwfl_begin;
#define DW_POINTER(name) __typeof__(name) *name;
	DW_CALLS(DW_POINTER)
#undef DW_POINTER
} dw;

static struct emd_dwfl_callbacks callbacks;

static struct keymap modules = KEYMAP_INIT(struct module_key, struct module);

static void hex(const struct module_key *k, char *out)
{
	for (uint32_t i = 0; i < k->len; i++)
		sprintf(out + 2 * i, "%02x", k->id[i]);
}

/* /usr/lib/debug/.build-id/ab/cdef....debug, for a build id. */
static void debug_path(const struct module_key *k, char *out, size_t size)
{
	char id[41];

	hex(k, id);
	snprintf(out, size, DEBUG_DIR "%.2s/%s.debug", id, id + 2);
}

/* A file the records name, opened only if it is fit to read (above). */
static int open_trusted(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_MODULE_SIZE ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* libdwfl's search for a module's separate debug information: by build id,
 * under /usr/lib/debug, and nowhere else. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	struct module_key k = {0};
	const unsigned char *bits;
	GElf_Addr vaddr;
	char path[128];
	int n = dw.dwfl_module_build_id(mod, &bits, &vaddr), fd;

	(void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink, (void)crc;
	if (n <= 0 || n > 20)
		return -1;
	memcpy(k.id, bits, n);
	k.len = (uint32_t)n;
	debug_path(&k, path, sizeof(path));
	if ((fd = open_trusted(path)) >= 0 && !(*debuginfo_file_name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* libdw.so.1 and its calls, looked for once; 0 if it is not installed. */
static int dw_loaded(void)
{
	static int state; /* 0 not tried, 1 loaded, -1 absent */
	void *h;

	if (state)
		return state > 0;
	state = -1;
	if (!(h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL)))
		return 0;
#define DW_LOOKUP(name)                                                                    \
	if (!(*(void **)&dw.name = dlsym(h, #name)))                                       \
		return 0;
	DW_LOOKUP(dwfl_begin)
	DW_CALLS(DW_LOOKUP)
#undef DW_LOOKUP
	callbacks.find_elf = dw.dwfl_build_id_find_elf;
	callbacks.find_debuginfo = find_debuginfo;
	callbacks.section_address = dw.dwfl_offline_section_address;
	state = 1;
	return 1;
}

/* Report `path` as the module if it is the one with build id k. */
static int try_file(struct module *m, const struct module_key *k, const char *path)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int fd = open_trusted(path);

	if (fd < 0)
		return 0;
	if (!(m->dwfl = dw.dwfl_begin(&callbacks))) {
		close(fd);
		return 0;
	}
	m->mod = dw.dwfl_report_offline(m->dwfl, m->name, path, fd);
	dw.dwfl_report_end(m->dwfl, NULL, NULL);
	if (m->mod && dw.dwfl_module_build_id(m->mod, &bits, &vaddr) == (int)k->len &&
	    memcmp(bits, k->id, k->len) == 0)
		return 1;
	dw.dwfl_end(m->dwfl);
	*m = (struct module){.name = {0}};
	return 0;
}

/* The module with build id k: its file where a MODULE record named it (and
 * it is still that file), else its debug file alone. */
static struct module *module_of(const struct run *run, const struct module_key *k)
{
	struct module *m = keymap_get(&modules, k, 1);
	char path[128];

	if (m->dwfl || m->name[0])
		return m->mod ? m : NULL;
	snprintf(m->name, sizeof(m->name), "-");
	for (size_t i = 0; i < run->nslots && !m->mod; i++) {
		const struct emd_rec_slot *s = &run->slots[i];

		if (s->kind == EMD_K_MODULE && s->build_id_len == k->len &&
		    memcmp(s->build_id, k->id, k->len) == 0 && s->path[0] == '/')
			try_file(m, k, s->path);
	}
	debug_path(k, path, sizeof(path));
	if (!m->mod)
		try_file(m, k, path);
	return m->mod ? m : NULL;
}

/* "function at file:line", "function", or NULL: the call instruction is
 * the one before the return address recorded. */
static const char *where(const struct run *run, const struct emd_rec_slot *s,
			 const char **function, const char **source)
{
	static char b[600], src[400];
	struct module_key k = {.len = s->build_id_len};
	struct module *m;
	GElf_Addr bias = 0, pc;
	Dwfl_Line *line;
	const char *file;
	int lineno = 0;

	*function = *source = NULL;
	if (s->build_id_len == 0 || s->build_id_len > 20 || s->site_addr == 0 || !dw_loaded())
		return NULL;
	memcpy(k.id, s->build_id, k.len);
	if (!(m = module_of(run, &k)) || !dw.dwfl_module_getelf(m->mod, &bias))
		return NULL;
	pc = s->site_addr - 1 + bias;
	*function = dw.dwfl_module_addrname(m->mod, pc);
	line = dw.dwfl_module_getsrc(m->mod, pc);
	if (line && (file = dw.dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL))) {
		snprintf(src, sizeof(src), "%s:%d", file, lineno);
		*source = src;
	}
	if (!*function && !*source)
		return NULL;
	snprintf(b, sizeof(b), "%s%s%s", *function ? *function : "?", *source ? " at " : "",
		 *source ? *source : "");
	return b;
}

const char *report_site_where(const struct run *run, const struct group *site)
{
	const char *function, *source;

	return site->slot ? where(run, site->slot, &function, &source) : NULL;
}

void report_json_sites(struct jw *w, const struct run *run)
{
	const char *function, *source;

	jw_array(w, "sites");
	for (size_t i = 0; i < run->by_site.n; i++) {
		const struct group *g = &run->by_site.g[i];

		if (!g->slot || !where(run, g->slot, &function, &source))
			function = source = NULL;
		jw_object(w, NULL);
		jw_string(w, "site", g->key);
		report_json_counts(w, g);
		report_json_name(w, "function", function);
		report_json_name(w, "source", source);
		jw_end(w);
	}
	jw_end(w);
}
