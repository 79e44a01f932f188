/* SPDX-License-Identifier: MIT */
/* cfi.c -- a C module's call frame information (.eh_frame), read by the
 * supervisor to walk a caller's stack: for an address of the module, the
 * rules of its frame (unwind.h).  The section is indexed once per module
 * (its FDEs by address); the rules at an address are worked out each time
 * from its CIE's and FDE's instructions (DWARF 4, 6.4.2; the pointer
 * encodings of the LSB's .eh_frame), which site.c keeps per address.
 *
 * The section is the tree's, untrusted: every read is bounded by it, every
 * loop by its bytes, the remembered states by CFI_STATES; a rule this
 * reader does not follow (an expression) makes the register unknown, never
 * a guess.
 */
#include "unwind.h"

#include <stdlib.h>
#include <string.h>

#define CFI_STATES 16 /* DW_CFA_remember_state's depth */

/* A cursor over the section's bytes: `bad` once a read went past its end. */
struct cur {
	const struct cfi *c;
	size_t at, end;
	int bad;
};

static uint64_t bytes(struct cur *k, size_t n)
{
	uint64_t v = 0;

	if (k->bad || n > k->end - k->at) {
		k->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < n; i++) /* little-endian: x86-64's */
		v |= (uint64_t)k->c->data[k->at + i] << (8 * i);
	k->at += n;
	return v;
}

static uint64_t uleb(struct cur *k)
{
	uint64_t v = 0, b;
	unsigned shift = 0;

	do {
		b = bytes(k, 1);
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !k->bad);
	return v;
}

static int64_t sleb(struct cur *k)
{
	uint64_t v = 0, b;
	unsigned shift = 0;

	do {
		b = bytes(k, 1);
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !k->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A pointer in encoding `enc` (DW_EH_PE_*); `applied` 0 for a PC range,
 * which is only a size.  Indirect and aligned pointers are not read. */
static uint64_t pointer(struct cur *k, unsigned enc, int applied)
{
	uint64_t here = k->c->addr + k->at, v;

	switch (enc & 0x0f) {
	case 0x00: v = bytes(k, 8); break;
	case 0x01: v = uleb(k); break;
	case 0x02: v = bytes(k, 2); break;
	case 0x03: v = bytes(k, 4); break;
	case 0x04: v = bytes(k, 8); break;
	case 0x09: v = (uint64_t)sleb(k); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)bytes(k, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)bytes(k, 4); break;
	case 0x0c: v = bytes(k, 8); break;
	default: k->bad = 1; return 0;
	}
	if (!applied || enc == 0xff)
		return v;
	if ((enc & 0x70) == 0x10) /* pcrel: from the pointer's own address */
		return v + here;
	if ((enc & 0x70) || (enc & 0x80))
		k->bad = 1; /* textrel, datarel, funcrel, aligned, indirect */
	return v;
}

/* The entry at offset `at`: its body after the length ([k->at, k->end))
 * and its CIE pointer field (0 for a CIE); 0 at the terminator or the end. */
static int entry(const struct cfi *c, size_t at, struct cur *k, uint64_t *id, size_t *id_at)
{
	uint64_t len;

	*k = (struct cur){c, at, c->len, 0};
	len = bytes(k, 4);
	if (len == 0xffffffff)
		len = bytes(k, 8);
	if (k->bad || len == 0 || len > c->len - k->at || len < 4)
		return 0;
	k->end = k->at + len;
	*id_at = k->at;
	*id = bytes(k, 4);
	return !k->bad;
}

/* What a CIE says for its FDEs. */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra;
	unsigned fde_enc;
	int aug_z, signal;
	size_t insns, end; /* its initial instructions */
};

/* The augmentation string's letters read after the alignment fields. */
static void augmentation(struct cur *k, const char *aug, struct cie *e)
{
	size_t end;

	if (aug[0] != 'z')
		return;
	e->aug_z = 1;
	end = uleb(k);
	end = end <= k->end - k->at ? k->at + end : k->end;
	for (const char *a = aug + 1; *a && !k->bad; a++)
		if (*a == 'R')
			e->fde_enc = (unsigned)bytes(k, 1);
		else if (*a == 'L')
			bytes(k, 1);
		else if (*a == 'P')
			pointer(k, (unsigned)bytes(k, 1), 0);
		else if (*a == 'S')
			e->signal = 1;
		else
			break; /* unknown: the length skips the rest */
	k->at = end;
}

static int read_cie(const struct cfi *c, size_t at, struct cie *e)
{
	struct cur k;
	uint64_t id;
	size_t id_at, aug;
	unsigned version;

	if (!entry(c, at, &k, &id, &id_at) || id != 0)
		return -1;
	*e = (struct cie){.fde_enc = 0};
	version = (unsigned)bytes(&k, 1);
	aug = k.at;
	while (!k.bad && bytes(&k, 1))
		;
	if (k.bad || (version != 1 && version != 3 && version != 4) ||
	    strstr((const char *)c->data + aug, "eh"))
		return -1;
	if (version == 4 && (bytes(&k, 1) != 8 || bytes(&k, 1) != 0))
		return -1; /* address size, segment size */
	e->code_align = uleb(&k);
	e->data_align = sleb(&k);
	e->ra = version == 1 ? bytes(&k, 1) : uleb(&k);
	augmentation(&k, (const char *)c->data + aug, e);
	e->insns = k.at;
	e->end = k.end;
	return k.bad ? -1 : 0;
}

/* One FDE's address range, read with its CIE's encoding, and its
 * instructions [*insns, *end). */
static int read_fde(struct cur *k, const struct cie *e, struct cfi_fde *f, size_t *insns)
{
	uint64_t aug;

	f->lo = pointer(k, e->fde_enc, 1);
	f->hi = f->lo + pointer(k, e->fde_enc & 0x0f, 0);
	if (e->aug_z) {
		aug = uleb(k);
		k->at = aug <= k->end - k->at ? k->at + aug : k->end;
	}
	*insns = k->at;
	return k->bad || f->hi < f->lo ? -1 : 0;
}

/* The FDE at `at`, if it is one: its range and its CIE's offset. */
static int fde_at(const struct cfi *c, size_t at, struct cfi_fde *f, struct cie *e, size_t *next,
		  size_t *cie_seen)
{
	struct cur k;
	uint64_t id;
	size_t id_at, insns;

	if (!entry(c, at, &k, &id, &id_at))
		return -1;
	*next = k.end;
	if (id == 0 || id > id_at)
		return 0; /* a CIE, or a pointer before the section */
	if (*cie_seen != id_at - id && read_cie(c, id_at - id, e) != 0) {
		*cie_seen = (size_t)-1; /* e is not that CIE's any more */
		return 0;
	}
	*cie_seen = id_at - id;
	f->at = at;
	return read_fde(&k, e, f, &insns) == 0 && f->hi > f->lo;
}

static int fde_by_lo(const void *a, const void *b)
{
	const struct cfi_fde *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_fde(struct cfi *c, size_t *cap, const struct cfi_fde *f, size_t max)
{
	struct cfi_fde *more;

	if (c->n == *cap) {
		if (*cap >= max)
			return -1;
		*cap = *cap ? *cap * 2 : 256;
		if (!(more = realloc(c->fdes, *cap * sizeof(*more))))
			return -1;
		c->fdes = more;
	}
	c->fdes[c->n++] = *f;
	return 0;
}

int cfi_index(struct cfi *c, size_t max)
{
	struct cfi_fde f;
	struct cie e;
	size_t at = 0, next, cap = 0, cie_seen = (size_t)-1;
	int r;

	c->fdes = NULL;
	c->n = 0;
	while (at < c->len && (r = fde_at(c, at, &f, &e, &next, &cie_seen)) >= 0) {
		if (r && add_fde(c, &cap, &f, max) != 0) {
			free(c->fdes);
			c->fdes = NULL;
			c->n = 0;
			return -1;
		}
		at = next;
	}
	qsort(c->fdes, c->n, sizeof(*c->fdes), fde_by_lo);
	return 0;
}

/* The rules while the instructions run: the row, the CIE's (restore's),
 * the remembered ones. */
struct state {
	const struct cie *e;
	struct unwind_row row, initial, saved[CFI_STATES];
	unsigned depth;
	uint64_t loc, pc;
};

/* The rule of register reg set, if it is one followed here. */
static void set_rule(struct state *s, uint64_t reg, int how, int64_t off)
{
	if (reg == s->e->ra)
		s->row.ra = (struct unwind_rule){how, off};
	else if (reg == UNWIND_BP)
		s->row.bp = (struct unwind_rule){how, off};
}

static void restore_rule(struct state *s, uint64_t reg)
{
	if (reg == s->e->ra)
		s->row.ra = s->initial.ra;
	else if (reg == UNWIND_BP)
		s->row.bp = s->initial.bp;
}

static void def_cfa(struct state *s, uint64_t reg, int64_t off)
{
	s->row.cfa_reg = reg == UNWIND_SP || reg == UNWIND_BP ? (int)reg : -1;
	s->row.cfa_off = off;
}

/* Past pc: the row in force at pc is the one before this advance. */
static int advance(struct state *s, uint64_t delta)
{
	s->loc += delta * s->e->code_align;
	return s->loc > s->pc;
}

static int state_op(struct state *s, unsigned op)
{
	if (op == 0x0a) { /* remember_state */
		if (s->depth == CFI_STATES)
			return -1;
		s->saved[s->depth++] = s->row;
	} else { /* restore_state: the CFA's rule too, as GCC and LLVM read it */
		if (s->depth == 0)
			return -1;
		s->row = s->saved[--s->depth];
	}
	return 0;
}

/* The extended instructions (the low 6 bits of the opcode's byte: 0x00 to
 * 0x2f); 1 past pc, -1 on one not read here. */
static int extended(struct state *s, struct cur *k, unsigned op)
{
	uint64_t reg;
	int64_t ada = s->e->data_align;

	switch (op) {
	case 0x00: return 0; /* nop */
	case 0x01: s->loc = pointer(k, s->e->fde_enc, 1); return s->loc > s->pc;
	case 0x02: return advance(s, bytes(k, 1));
	case 0x03: return advance(s, bytes(k, 2));
	case 0x04: return advance(s, bytes(k, 4));
	case 0x05: reg = uleb(k); set_rule(s, reg, UNWIND_AT, (int64_t)uleb(k) * ada); return 0;
	case 0x06: restore_rule(s, uleb(k)); return 0;
	case 0x07: set_rule(s, uleb(k), UNWIND_UNKNOWN, 0); return 0; /* undefined */
	case 0x08: set_rule(s, uleb(k), UNWIND_SAME, 0); return 0;
	case 0x09: set_rule(s, uleb(k), UNWIND_UNKNOWN, 0); uleb(k); return 0; /* register */
	case 0x0a: case 0x0b: return state_op(s, op);
	case 0x0c: reg = uleb(k); def_cfa(s, reg, (int64_t)uleb(k)); return 0;
	case 0x0d: def_cfa(s, uleb(k), s->row.cfa_off); return 0;
	case 0x0e: s->row.cfa_off = (int64_t)uleb(k); return 0;
	case 0x0f: s->row.cfa_reg = -1; break; /* def_cfa_expression */
	case 0x10: case 0x16: set_rule(s, uleb(k), UNWIND_UNKNOWN, 0); break; /* expressions */
	case 0x11: reg = uleb(k); set_rule(s, reg, UNWIND_AT, sleb(k) * ada); return 0;
	case 0x12: reg = uleb(k); def_cfa(s, reg, sleb(k) * ada); return 0;
	case 0x13: s->row.cfa_off = sleb(k) * ada; return 0;
	case 0x14: set_rule(s, uleb(k), UNWIND_UNKNOWN, 0); uleb(k); return 0; /* val_offset */
	case 0x15: set_rule(s, uleb(k), UNWIND_UNKNOWN, 0); sleb(k); return 0;
	case 0x2e: uleb(k); return 0; /* GNU_args_size */
	case 0x2f: reg = uleb(k); set_rule(s, reg, UNWIND_AT, -(int64_t)uleb(k) * ada); return 0;
	default: return -1;
	}
	/* An expression's block, skipped. */
	reg = uleb(k);
	if (reg > k->end - k->at)
		return -1;
	k->at += reg;
	return 0;
}

/* Run the instructions in [k->at, k->end) until pc is passed: 0, or -1 on
 * one not read here or past the section. */
static int run(struct state *s, struct cur *k)
{
	int r = 0;

	while (k->at < k->end && !k->bad && r == 0) {
		unsigned op = (unsigned)bytes(k, 1);

		if ((op >> 6) == 1) /* advance_loc */
			r = advance(s, op & 0x3f);
		else if ((op >> 6) == 2) /* offset */
			set_rule(s, op & 0x3f, UNWIND_AT, (int64_t)uleb(k) * s->e->data_align);
		else if ((op >> 6) == 3) /* restore */
			restore_rule(s, op & 0x3f);
		else
			r = extended(s, k, op);
	}
	return r < 0 || k->bad ? -1 : 0;
}

/* The FDE holding pc, or NULL. */
static const struct cfi_fde *fde_of(const struct cfi *c, uint64_t pc)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->fdes[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < c->fdes[lo - 1].hi ? &c->fdes[lo - 1] : NULL;
}

const char *cfi_row(const struct cfi *c, uint64_t pc, struct unwind_row *row)
{
	const struct cfi_fde *f = fde_of(c, pc);
	struct cie e;
	struct cfi_fde again;
	struct state s = {.pc = pc};
	struct cur k;
	uint64_t id;
	size_t id_at, insns;

	if (!f)
		return NO_ENTRY;
	if (!entry(c, f->at, &k, &id, &id_at) || read_cie(c, id_at - id, &e) != 0)
		return "unwind entry not read";
	if (e.signal)
		return "a signal frame";
	s.e = &e;
	s.row = (struct unwind_row){-1, 0, {UNWIND_UNKNOWN, 0}, {UNWIND_SAME, 0}};
	if (read_fde(&k, &e, &again, &insns) != 0)
		return "unwind entry not read";
	s.loc = again.lo;
	if (run(&s, &(struct cur){c, e.insns, e.end, 0}) != 0)
		return "unwind rules not read";
	s.initial = s.row;
	s.depth = 0;
	k.at = insns;
	if (run(&s, &k) != 0)
		return "unwind rules not read";
	*row = s.row;
	return NULL;
}
