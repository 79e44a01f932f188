/* SPDX-License-Identifier: MIT */
/* build.h -- a state made real: a directory built from the base and the
 * journal, as the model says a crash left it.
 */
#ifndef CT_BUILD_H
#define CT_BUILD_H

#include "crashtest/files.h"
#include "crashtest/model.h"

#include <stdint.h>

struct built {
	const struct run_model *m;
	const struct point_states *ps; /* NULL: the base alone */
	const struct state *s;
	const struct tree *t; /* the state's names, applied */
	const struct listing *l;
	const struct base *base;
	struct problems *why; /* what could not be built: the state is unknown */
	uint64_t *ino;        /* if not NULL: per node, the inode it was built as */
};

/* Build the state as the new directory `name` of dirfd. */
void state_build(const struct built *b, int dirfd, const char *name);

/* A hash of what the state holds (names, types, and the changes that make
 * each file's contents): two states with the same hash are the same. */
void state_hash(const struct built *b, uint64_t out[2]);

#endif
