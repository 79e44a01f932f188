/* SPDX-License-Identifier: MIT */
/* dwfl.h -- the part of elfutils' libdwfl interface symbols.c uses, declared
 * here: libdw is loaded when a report first names a site (dlopen), so the
 * build needs no elfutils headers, and a fresh machine builds with a C
 * compiler alone.  Where the real header is installed (libdw-dev: the test
 * suite's machines), it is included first and the compiler holds every
 * declaration below to it: a typedef or a prototype that differs is an
 * error, and the callbacks' layout is asserted member by member.
 */
#ifndef EMD_DWFL_H
#define EMD_DWFL_H

#include <elf.h>
#include <stddef.h>

#if __has_include(<elfutils/libdwfl.h>)
#include <elfutils/libdwfl.h>
#define EMD_DWFL_HEADER 1
#endif

typedef Elf64_Addr GElf_Addr;
typedef Elf64_Word GElf_Word;
typedef Elf64_Xword GElf_Xword;
typedef Elf64_Shdr GElf_Shdr;
typedef GElf_Addr Dwarf_Addr;
typedef GElf_Xword Dwarf_Word;
typedef struct Elf Elf;
typedef struct Dwfl Dwfl;
typedef struct Dwfl_Module Dwfl_Module;
typedef struct Dwfl_Line Dwfl_Line;

void dwfl_end(Dwfl *);
Dwfl_Module *dwfl_report_offline(Dwfl *dwfl, const char *name, const char *file_name, int fd);
int dwfl_report_end(Dwfl *dwfl,
		    int (*removed)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *arg),
		    void *arg);
int dwfl_module_build_id(Dwfl_Module *mod, const unsigned char **bits, GElf_Addr *vaddr);
Elf *dwfl_module_getelf(Dwfl_Module *, GElf_Addr *bias);
const char *dwfl_module_addrname(Dwfl_Module *mod, GElf_Addr address);
Dwfl_Line *dwfl_module_getsrc(Dwfl_Module *mod, Dwarf_Addr addr);
const char *dwfl_lineinfo(Dwfl_Line *line, Dwarf_Addr *addr, int *linep, int *colp,
			  Dwarf_Word *mtime, Dwarf_Word *length);
int dwfl_build_id_find_elf(Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **);
int dwfl_offline_section_address(Dwfl_Module *, void **, const char *, Dwarf_Addr,
				 const char *, GElf_Word, const GElf_Shdr *, Dwarf_Addr *addr);

/* Dwfl_Callbacks, under a name of its own (the real one is an unnamed
 * struct, which no second declaration could match). */
struct emd_dwfl_callbacks {
	__typeof__(dwfl_build_id_find_elf) *find_elf;
	int (*find_debuginfo)(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name);
	__typeof__(dwfl_offline_section_address) *section_address;
	char **debuginfo_path;
};
/* dwfl_begin takes them as the real header's type where there is one. */
typedef Dwfl *emd_dwfl_begin_fn(const void *callbacks);

#ifdef EMD_DWFL_HEADER
#define EMD_SAME_MEMBER(m)                                                                 \
	_Static_assert(offsetof(Dwfl_Callbacks, m) == offsetof(struct emd_dwfl_callbacks, m) && \
			       sizeof(((Dwfl_Callbacks *)0)->m) ==                                 \
				       sizeof(((struct emd_dwfl_callbacks *)0)->m),               \
		       "Dwfl_Callbacks." #m);
EMD_SAME_MEMBER(find_elf)
EMD_SAME_MEMBER(find_debuginfo)
EMD_SAME_MEMBER(section_address)
EMD_SAME_MEMBER(debuginfo_path)
_Static_assert(sizeof(Dwfl_Callbacks) == sizeof(struct emd_dwfl_callbacks), "Dwfl_Callbacks");
#undef EMD_SAME_MEMBER
#endif

#endif
