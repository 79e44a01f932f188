/* SPDX-License-Identifier: MIT */
/* unwind.h -- what a module's own tables say of a frame at an address
 * (x86-64): where the caller's frame starts (the canonical frame address,
 * CFA: a register's value plus an offset), where the return address is,
 * and where the caller's frame pointer was saved.  Two readers give it: a
 * C module's .eh_frame (cfi.c) and a Go module's .gopclntab (pclntab.c),
 * which the Go runtime unwinds by.  site.c walks the caller's stack with
 * them.  Addresses are the module's as linked (its load bias taken off).
 */
#ifndef EMD_UNWIND_H
#define EMD_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* DWARF's numbers of the x86-64 registers a frame is found by. */
enum { UNWIND_BP = 6, UNWIND_SP = 7 };

/* How a register of the caller is had: kept (the same value), saved at
 * CFA + off, or not known from the tables (undefined, or a rule this
 * reader does not follow: an expression, another register). */
enum unwind_how { UNWIND_SAME, UNWIND_AT, UNWIND_UNKNOWN };

struct unwind_rule {
	int how;
	int64_t off;
};

/* The rules at one address: CFA = cfa_reg + cfa_off (cfa_reg -1: an
 * expression or another register, not followed). */
struct unwind_row {
	int cfa_reg;
	int64_t cfa_off;
	struct unwind_rule ra, bp;
};

/* A module's .eh_frame: its bytes, its address as linked, and an index of
 * its FDEs sorted by address. */
struct cfi_fde {
	uint64_t lo, hi;
	size_t at; /* the FDE's offset in the section */
};
struct cfi {
	const uint8_t *data;
	size_t len;
	uint64_t addr;
	struct cfi_fde *fdes;
	size_t n;
};

/* The reasons a frame has no rules that leave only a guess (site.c). */
#define NO_TABLE "no unwind table"
#define NO_ENTRY "no unwind entry"

/* Index the section's FDEs (at most max of them); 0, or -1 when the index
 * cannot be had (memory, past max). */
int cfi_index(struct cfi *c, size_t max);
/* The rules at pc: NULL, or why there are none (said in the site). */
const char *cfi_row(const struct cfi *c, uint64_t pc, struct unwind_row *row);

/* A Go module's .gopclntab (Go 1.18 and later), with the address its
 * offsets count from. */
struct pcln {
	const uint8_t *t;
	size_t len;
	uint64_t text, nfunc, pcln_off, pctab_off, funcname_off;
	uint32_t magic;
	unsigned quantum;
};

/* Check the table's header; 0, or -1 if it is not one read here. */
int pcln_open(struct pcln *p, const uint8_t *t, size_t len, uint64_t text);
/* The function holding pc: its entry and name's offset in the name table,
 * into *entry and *name; 0, or -1 if none holds it. */
int pcln_function(const struct pcln *p, uint64_t pc, uint64_t *entry, uint32_t *name);
/* The rules at pc from the frame's size there (the table of stack deltas);
 * NULL, or why there are none. */
const char *pcln_row(const struct pcln *p, uint64_t pc, struct unwind_row *row);

#endif
