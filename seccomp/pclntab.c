/* SPDX-License-Identifier: MIT */
/* pclntab.c -- a Go module's own table of functions (.gopclntab, Go 1.18
 * and later), read by the supervisor as the Go runtime reads it to unwind
 * a goroutine's stack: the function holding an address, and the size of
 * its frame there (its table of stack deltas, "pcsp"), which says where
 * the return address is.  Go keeps this table in every binary, stripped or
 * not, and gives no .eh_frame.
 *
 * The layout (the Go runtime's symtab.go and runtime2.go): a header, then
 * the function table of {entry, offset of the function's record} pairs of
 * 32-bit offsets from the text's start, one more entry than functions
 * (the end of the last); each record starts {entry, name, args,
 * deferreturn, pcsp, ...} and holds its flags at an offset that Go 1.20
 * moved (magic 0xfffffff0: Go 1.18 and 1.19; 0xfffffff1: since 1.20).  A
 * table of values by address is a sequence of {value delta, zigzag varint;
 * address delta, varint, in units of the quantum} from the entry, the
 * value starting at -1.
 *
 * The table is the tree's, untrusted: every offset is checked against its
 * length, every varint and every walk of a table bounded by it.
 */
#include "unwind.h"

#include <string.h>

#define FUNC_TOPFRAME 1 /* the stack's first frame: nothing called it */
#define FUNC_SPWRITE 2  /* writes SP: its frame's size is not the table's */

static uint32_t u32(const struct pcln *p, uint64_t at)
{
	uint32_t v;

	memcpy(&v, p->t + at, sizeof(v));
	return v;
}

static uint64_t u64(const uint8_t *t)
{
	uint64_t v;

	memcpy(&v, t, sizeof(v));
	return v;
}

int pcln_open(struct pcln *p, const uint8_t *t, size_t len, uint64_t text)
{
	*p = (struct pcln){.t = t, .len = len};
	if (len < 72)
		return -1;
	p->magic = u32(p, 0);
	p->quantum = t[6];
	p->nfunc = u64(t + 8);
	p->text = u64(t + 24) ? u64(t + 24) : text; /* else .text's, set at run time */
	p->funcname_off = u64(t + 32);
	p->pctab_off = u64(t + 56);
	p->pcln_off = u64(t + 64);
	if ((p->magic != 0xfffffff0 && p->magic != 0xfffffff1) || t[7] != 8 || !p->quantum ||
	    p->funcname_off >= len || p->pctab_off >= len || p->pcln_off >= len ||
	    p->nfunc >= (len - p->pcln_off) / 8)
		return -1;
	return 0;
}

/* The offset of the record of the function holding pc, if the table holds
 * `need` bytes of it; else 0. */
static uint64_t record_of(const struct pcln *p, uint64_t pc, uint64_t *entry, uint64_t need)
{
	uint64_t lo = 0, hi = p->nfunc, off = pc - p->text, rec;

	if (pc < p->text || off >> 32 || !p->nfunc)
		return 0;
	while (lo < hi) { /* the last entry at or below off */
		uint64_t mid = (lo + hi) / 2;

		if (u32(p, p->pcln_off + mid * 8) <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || off >= u32(p, p->pcln_off + lo * 8))
		return 0; /* before the first, or past its end (the next entry) */
	rec = p->pcln_off + u32(p, p->pcln_off + (lo - 1) * 8 + 4);
	if (rec + need > p->len)
		return 0;
	*entry = p->text + u32(p, p->pcln_off + (lo - 1) * 8);
	return rec;
}

int pcln_function(const struct pcln *p, uint64_t pc, uint64_t *entry, uint32_t *name)
{
	uint64_t rec = record_of(p, pc, entry, 8);

	if (!rec)
		return -1;
	*name = u32(p, rec + 4);
	return 0;
}

/* A varint at *at, below end; 0 and *at = end past it. */
static uint32_t varint(const struct pcln *p, uint64_t *at, uint64_t end)
{
	uint32_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*at >= end || shift > 28) {
			*at = end;
			return 0;
		}
		b = p->t[(*at)++];
		v |= (uint32_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

/* The value of the table at `at` (pctab's offset) at pc, of the function
 * whose entry is `entry`; -1 where it has none. */
static int64_t value_at(const struct pcln *p, uint64_t at, uint64_t entry, uint64_t pc)
{
	uint64_t where = entry, end = p->len;
	int64_t value = -1;
	uint32_t dv;

	if (at >= end)
		return -1;
	while (at < end) {
		dv = varint(p, &at, end);
		if (dv == 0 && where != entry)
			return -1; /* the table's end, pc not reached */
		value += (int32_t)(-(dv & 1) ^ (dv >> 1));
		where += (uint64_t)varint(p, &at, end) * p->quantum;
		if (pc < where)
			return value;
	}
	return -1;
}

const char *pcln_row(const struct pcln *p, uint64_t pc, struct unwind_row *row)
{
	uint64_t entry, rec = record_of(p, pc, &entry, 44);
	uint8_t flag;
	uint32_t pcsp;
	int64_t delta;

	if (!rec)
		return "no Go function";
	flag = p->t[rec + (p->magic == 0xfffffff0 ? 37 : 41)];
	if (flag & FUNC_TOPFRAME)
		return "the stack's first frame";
	if (flag & FUNC_SPWRITE)
		return "moves its stack pointer";
	pcsp = u32(p, rec + 16);
	delta = pcsp ? value_at(p, p->pctab_off + pcsp, entry, pc) : -1;
	if (delta < 0)
		return "no frame size";
	/* The return address is pushed just above the frame. */
	*row = (struct unwind_row){UNWIND_SP, delta + 8, {UNWIND_AT, -8}, {UNWIND_UNKNOWN, 0}};
	return NULL;
}
