/* SPDX-License-Identifier: MIT */
/* tree.h -- the names of a state, in memory: which node each (directory,
 * name) holds.  Nodes are the files, directories and links the run knew
 * (those of the base, and those the command made); a state applies its
 * name changes to the base's names and can be taken back to them.
 */
#ifndef CT_TREE_H
#define CT_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum node_type { NODE_FILE = 1, NODE_DIR, NODE_LINK, NODE_SPECIAL };

struct node {
	uint8_t type;
	mode_t mode; /* type and permissions */
	uid_t uid;
	gid_t gid;
	uint32_t base;      /* 1 + its index in the base's list, 0: made by the run */
	const char *target; /* a symlink's */
	uint32_t *data;     /* the records that change its contents, in order */
	uint32_t ndata, capdata;
};

struct slot {
	uint32_t dir, node; /* node 0: a removed name */
	const char *name;
};

struct tree {
	struct node *node; /* node 0 is none, node 1 the top */
	uint32_t nnodes, capnodes;
	struct slot *slot; /* open addressing by (dir, name) */
	size_t nslots, used;
	struct change {
		uint32_t dir, old;
		const char *name;
	} *log; /* what tree_set changed, to be taken back */
	size_t nlog, caplog;
};

void tree_init(struct tree *t);
void tree_free(struct tree *t);

/* A new node; its index. */
uint32_t tree_add_node(struct tree *t, const struct node *n);

/* The node `name` holds in directory `dir`, 0 if none. */
uint32_t tree_get(const struct tree *t, uint32_t dir, const char *name);

/* `name` in `dir` now holds `node` (0: removed).  `name` must live as long
 * as the tree. */
void tree_set(struct tree *t, uint32_t dir, const char *name, uint32_t node);

/* Take back every tree_set since the log held `mark` changes. */
size_t tree_mark(const struct tree *t);
void tree_undo(struct tree *t, size_t mark);

/* The live entries, grouped by directory: `first[d]` .. `first[d + 1]` of
 * `entries` are directory d's, sorted by name.  Arrays to be freed. */
struct listing {
	uint32_t *first;
	struct slot *entries;
	uint32_t *name_of; /* per node: 1 + the entry that names it, 0: none */
};
void tree_list(const struct tree *t, struct listing *l);
void listing_free(struct listing *l);

/* A path of node n in the tree as it is ("a/b"), or NULL if no name
 * reaches it from the top; to be freed. */
char *tree_path(const struct listing *l, uint32_t n);

#endif
