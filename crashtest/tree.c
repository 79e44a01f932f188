/* SPDX-License-Identifier: MIT */
/* tree.c -- (directory, name) -> node, an open-addressing table that keeps
 * a log of its changes so that a state's names can be taken back to the
 * base's in the time it took to make them.  A removed name stays in its
 * slot with node 0: slots are never freed, so a lookup never misses.
 */
#define _GNU_SOURCE 1
#include "crashtest/tree.h"
#include "common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(uint32_t dir, const char *name)
{
	uint64_t h = 1469598103934665603ULL ^ dir;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h ^ (h >> 31);
}

void tree_init(struct tree *t)
{
	*t = (struct tree){0};
	tree_add_node(t, &(struct node){0}); /* node 0: none */
}

void tree_free(struct tree *t)
{
	for (uint32_t i = 0; i < t->nnodes; i++)
		free(t->node[i].data);
	free(t->node);
	free(t->slot);
	free(t->log);
	*t = (struct tree){0};
}

uint32_t tree_add_node(struct tree *t, const struct node *n)
{
	if (t->nnodes == t->capnodes &&
	    !(t->node = realloc(t->node, (t->capnodes = t->capnodes ? 2 * t->capnodes : 1024) *
						 sizeof(*t->node))))
		die("out of memory");
	t->node[t->nnodes] = *n;
	return t->nnodes++;
}

static size_t find(const struct tree *t, uint32_t dir, const char *name)
{
	size_t k = (size_t)hash(dir, name) & (t->nslots - 1);

	while (t->slot[k].name && (t->slot[k].dir != dir || strcmp(t->slot[k].name, name)))
		k = (k + 1) & (t->nslots - 1);
	return k;
}

uint32_t tree_get(const struct tree *t, uint32_t dir, const char *name)
{
	return t->nslots ? t->slot[find(t, dir, name)].node : 0;
}

/* Room for one more slot: the table at most half full. */
static void grow(struct tree *t)
{
	struct slot *old = t->slot;
	size_t n = t->nslots;

	if (2 * (t->used + 1) <= t->nslots)
		return;
	t->nslots = n ? 4 * n : 1024;
	if (!(t->slot = calloc(t->nslots, sizeof(*t->slot))))
		die("out of memory");
	for (size_t i = 0; i < n; i++)
		if (old[i].name)
			t->slot[find(t, old[i].dir, old[i].name)] = old[i];
	free(old);
}

void tree_set(struct tree *t, uint32_t dir, const char *name, uint32_t node)
{
	size_t k;

	grow(t);
	k = find(t, dir, name);
	if (t->nlog == t->caplog &&
	    !(t->log = realloc(t->log, (t->caplog = t->caplog ? 2 * t->caplog : 1024) *
					       sizeof(*t->log))))
		die("out of memory");
	/* Logged by name: a slot moves when the table grows. */
	t->log[t->nlog++] = (struct change){dir, t->slot[k].name ? t->slot[k].node : 0, name};
	if (!t->slot[k].name) {
		t->slot[k] = (struct slot){dir, 0, name};
		t->used++;
	}
	t->slot[k].node = node;
}

size_t tree_mark(const struct tree *t)
{
	return t->nlog;
}

void tree_undo(struct tree *t, size_t mark)
{
	while (t->nlog > mark) {
		const struct change *c = &t->log[--t->nlog];

		t->slot[find(t, c->dir, c->name)].node = c->old;
	}
}

static int by_dir_name(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->dir != y->dir ? (x->dir > y->dir) - (x->dir < y->dir) : strcmp(x->name, y->name);
}

void tree_list(const struct tree *t, struct listing *l)
{
	size_t n = 0;

	l->first = calloc((size_t)t->nnodes + 1, sizeof(*l->first));
	l->entries = malloc((t->used ? t->used : 1) * sizeof(*l->entries));
	if (!l->first || !l->entries)
		die("out of memory");
	for (size_t i = 0; i < t->nslots; i++)
		if (t->slot[i].name && t->slot[i].node)
			l->entries[n++] = t->slot[i];
	qsort(l->entries, n, sizeof(*l->entries), by_dir_name);
	for (size_t i = 0, d = 0; d <= t->nnodes; d++) {
		while (i < n && l->entries[i].dir < d)
			i++;
		l->first[d] = (uint32_t)i;
	}
	if (!(l->name_of = calloc(t->nnodes + 1, sizeof(*l->name_of))))
		die("out of memory");
	for (size_t i = n; i-- > 0;)
		l->name_of[l->entries[i].node] = (uint32_t)i + 1;
}

void listing_free(struct listing *l)
{
	free(l->first);
	free(l->entries);
	free(l->name_of);
}

static const struct slot *named(const struct listing *l, uint32_t n)
{
	return l->name_of[n] ? &l->entries[l->name_of[n] - 1] : NULL;
}

char *tree_path(const struct listing *l, uint32_t n)
{
	char *path = strdup(""), *longer;
	const struct slot *e;

	for (int depth = 0; path && n != 1; depth++) {
		if (depth > 4096 || !(e = named(l, n)))
			return free(path), NULL;
		if (asprintf(&longer, "%s%s%s", e->name, *path ? "/" : "", path) < 0)
			die("out of memory");
		free(path);
		path = longer;
		n = e->dir;
	}
	if (!path)
		die("out of memory");
	return path;
}
