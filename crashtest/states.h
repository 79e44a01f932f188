/* SPDX-License-Identifier: MIT */
/* states.h -- what states.c (the kinds of states of a point) and closure.c
 * (what a disk and a file system cannot do apart) share while a point's
 * states are built.
 */
#ifndef CT_STATES_H
#define CT_STATES_H

#include "crashtest/model.h"

#define NONE UINT32_MAX

/* One subset to build: its class and its parameters. */
struct candidate {
	int class;
	uint32_t a;   /* a change's place in U, or a prefix's length */
	uint64_t b;   /* torn: bytes kept; journal: with data; pair: the other */
};

struct building {
	const struct run_model *m;
	struct point_states *ps;
	struct candidate *c;
	size_t nc, capc;
	int classes;
	uint32_t *meta; /* places in U of the uncommitted metadata */
	size_t nmeta;
	/* Per place in U, two of them: the write before it that last wrote
	 * each sector it writes in part (NONE: none in U); closure.c. */
	uint32_t *dep;
	/* Per place in U of a rename that starts auto_da_alloc's writeback:
	 * the places of the renamed file's data before it (CSR: ada_first). */
	uint32_t *ada_first, *ada;
};

/* The place of record rec in U, or -1. */
long state_place(const struct point_states *ps, uint32_t rec);

/* Once per point: the sectors' and auto_da_alloc's dependencies. */
void closure_prepare(struct building *b);
void closure_free(struct building *b);

/* Close state s (candidate of class `class`) under what cannot happen
 * apart. */
void closure(const struct building *b, int class, struct state *s);

#endif
