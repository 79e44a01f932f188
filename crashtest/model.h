/* SPDX-License-Identifier: MIT */
/* model.h -- what a crash can leave, in one place (doc/crashtest.md says
 * each rule and where it comes from).
 *
 * The journal is resolved once (resolve.c): each record's file or entry as
 * a node of the tree, each name change's dependency on the change that made
 * the entry it removes or moves.  Then, per model (durable.c), when each
 * change became durable.  A crash point's states (states.c) are the durable
 * changes before it plus a subset of the others that the model allows.
 */
#ifndef CT_MODEL_H
#define CT_MODEL_H

#include "crashtest/journal.h"
#include "crashtest/problems.h"
#include "crashtest/tree.h"

#include <stddef.h>
#include <stdint.h>

/* ext4-noauto_da_alloc is ext4-ordered without auto_da_alloc's rule: a
 * mount option, and the control that says which verdicts hold only by it. */
enum model { MODEL_POSIX, MODEL_EXT4_ORDERED, MODEL_XFS, MODEL_EXT4_NOADA, NMODELS };
extern const char *const model_names[NMODELS];

static inline int model_is_ext4(enum model m)
{
	return m == MODEL_EXT4_ORDERED || m == MODEL_EXT4_NOADA;
}

/* The unit of persistence, every model's: a disk writes a sector (512
 * bytes, the smallest logical block) as it was at one moment of its write
 * history, or not at all; a write tears only at a sector's edge. */
#define SECTOR 512

#define NEVER UINT32_MAX

/* Per record, what the model knows of it. */
enum {
	R_CHANGE = 1,  /* changes the tree: a write, a name... */
	R_META = 2,    /* journaled metadata: names, truncations (ext4, xfs) */
	R_APPEND = 4,  /* a write past the file's end */
	R_ADA = 8,     /* a rename over an existing name: ext4's auto_da_alloc
	                * starts writing the renamed file's data back */
	R_TORN = 16,   /* a write over more than one sector: it may tear */
};

struct run_model {
	const struct journal *j;
	struct tree *t;
	enum model model;
	/* Per record: its node (the file, the entry's inode, the file synced),
	 * its directory (the old one for a rename), the new directory of a
	 * rename, the node a rename replaced or exchanged, and the change
	 * that made the entry it removes or moves (0: the base's, or none). */
	uint32_t *node, *dir, *dir2, *other, *maker;
	uint8_t *flags;
	char **text, **file;  /* a change, and the file it is about (or a
	                       * durability call's file), named as they were */
	uint32_t *durable_at; /* durable at the points from this record on */
	uint32_t *point_rec;  /* per crash point (1-based): its record */
	uint32_t *release;    /* the CT_RELEASE records, in order */
	size_t nrelease;
	uint32_t npoints;
	uint32_t unknown_from;     /* points after this record are unknown */
	struct problems unknown;   /* for the whole run */
	struct problems unknown_at; /* from unknown_from on */
	struct problems unexplored; /* what no state represents */
	int view; /* another model's view of the same resolution: it owns its
	           * durable_at and unknowns only */
};

/* Resolve the journal against the tree of the base: `work_ino[i]` is the
 * inode number the run's copy (on device `dev`) gave to base entry i, whose
 * node is `base_node[i]`. */
void model_resolve(struct run_model *m, const struct journal *j, struct tree *t, uint64_t dev,
		   const uint64_t *work_ino, const uint32_t *base_node, size_t nbase);
void model_durability(struct run_model *m, enum model model);

/* Another model's view of resolution m (after model_name_changes, before
 * model_durability), freed by model_free; model_view_unknowns copies m's
 * run-wide unknowns found since. */
void model_view(struct run_model *v, const struct run_model *m);
void model_view_unknowns(struct run_model *v, const struct run_model *m);

/* Files changed past the library made durable with no picture of them:
 * the points after are unknown. */
void model_pictures(struct run_model *m);

/* The points after record i are unknown, for this reason. */
void model_unknown_at(struct run_model *m, uint32_t i, const char *why);
void model_free(struct run_model *m);

/* The states of one crash point. */
struct state {
	uint8_t *in;   /* per unsynced change (point_states.u): kept */
	uint32_t torn; /* a write kept in part (a record), NEVER for none */
	uint64_t keep; /* its bytes kept */
	char *what;    /* how it came about, for the report */
};

struct point_states {
	uint32_t rec;       /* the point's record (NEVER: the end) */
	uint32_t *u;        /* the changes before it not durable, in order */
	size_t nu;
	struct state *s;
	size_t ns;
	size_t candidates;  /* states the model allows, before the bound */
	int cut;            /* the bound cut some */
};

/* Which kinds of states to build (all by default; the tests name them one
 * by one to show what each catches). */
enum {
	CLASS_LOST = 1,     /* all unsynced changes lost */
	CLASS_KEPT = 2,     /* all kept: what the page cache held */
	CLASS_PREFIX = 4,   /* the first k, in program order */
	CLASS_OMIT = 8,     /* all but one */
	CLASS_ALONE = 16,   /* one alone */
	CLASS_TORN = 32,    /* a write of several pages kept in part */
	CLASS_JOURNAL = 64, /* each prefix of the journal's metadata */
	CLASS_PAIR = 128,   /* posix: two writes kept, the rest lost */
	CLASS_ALL = 255
};

/* The states of the crash point right after record `rec` (NEVER: before
 * any). */
void model_states(const struct run_model *m, uint32_t rec, size_t bound, uint64_t seed,
		  int classes, struct point_states *ps);
void point_states_free(struct point_states *ps);

/* Is record `rec` (before the point) in state s?  Its bytes kept in *keep
 * (all of them, unless torn). */
int state_has(const struct run_model *m, const struct point_states *ps, const struct state *s,
	      uint32_t rec, uint64_t *keep);

/* Apply the names of the changes in state s to the tree (from its base
 * names: the caller undoes them after). */
void state_names(const struct run_model *m, const struct point_states *ps,
		 const struct state *s, struct tree *t);

/* The tree with every name change up to record `rec` made: what the page
 * cache held there, for names in the report. */
void model_names_at(const struct run_model *m, uint32_t rec, struct tree *t);

/* Name each change ("write data.tmp [0, +3)", "rename a -> b") and its file
 * as they were named when it was made (text, file). */
void model_name_changes(struct run_model *m);

#endif
