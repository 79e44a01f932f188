/* SPDX-License-Identifier: MIT */
/* naming.c -- each change named as it was when it was made: "write
 * data.tmp", not the name the file has at the crash point.  One sweep of the
 * journal keeps each node's last name (its directory and its name there);
 * a node's path is the chain of those up to the top.
 */
#define _GNU_SOURCE 1
#include "crashtest/model.h"
#include "common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct naming {
	uint32_t *parent;
	const char **name;
};

/* The path of node n now ("" for the top), or "(a file with no name)". */
static char *path_of(const struct naming *x, uint32_t n)
{
	char *path = strdup(""), *longer;

	for (int depth = 0; path && n > 1; depth++) {
		if (depth > 4096 || !x->name[n])
			return free(path), strdup("(a file with no name)");
		if (asprintf(&longer, "%s%s%s", x->name[n], *path ? "/" : "", path) < 0)
			die("out of memory");
		free(path);
		path = longer;
		n = x->parent[n];
	}
	if (!path)
		die("out of memory");
	return path;
}

static char *entry(const struct naming *x, uint32_t dir, const char *name)
{
	char *d = path_of(x, dir), *p;

	if (asprintf(&p, "%s%s%s", d, *d ? "/" : "", name ? name : "") < 0)
		die("out of memory");
	free(d);
	return p;
}

static const char *const verb[CT_KINDS] = {
	[CT_WRITE] = "write", [CT_ZERO] = "zero", [CT_TRUNC] = "truncate",
	[CT_IMAGE] = "contents of", [CT_CREATE] = "create", [CT_MKDIR] = "mkdir",
	[CT_SYMLINK] = "symlink", [CT_MKNOD] = "mknod", [CT_LINK] = "link",
	[CT_UNLINK] = "unlink", [CT_RMDIR] = "rmdir", [CT_RENAME] = "rename",
};

static char *text_of(const struct run_model *m, uint32_t i, const char *file, const char *to)
{
	const struct ct_record *h = &m->j->r[i].h;
	char *t;
	int n;

	if (h->kind == CT_TRUNC)
		n = asprintf(&t, "truncate %s to %lld bytes", file, (long long)h->size);
	else if (kind_is_data(h->kind))
		n = asprintf(&t, "%s %s [%lld, +%llu)", verb[h->kind], file, (long long)h->off,
			     (unsigned long long)(h->kind == CT_ZERO ? (uint64_t)h->size : h->len));
	else if (to)
		n = asprintf(&t, "rename %s -> %s", file, to);
	else
		n = asprintf(&t, "%s %s", verb[h->kind], file);
	if (n < 0)
		die("out of memory");
	return t;
}

/* A name change: named before it is made (a rename's new name after). */
static void name_change(struct run_model *m, struct naming *x, uint32_t i)
{
	const struct rec *r = &m->j->r[i];
	uint32_t n = m->node[i];
	char *to = NULL;

	m->file[i] = entry(x, m->dir[i], r->name ? r->name : "(no name)");
	if (r->h.kind == CT_RENAME)
		to = entry(x, m->dir2[i], r->name2);
	m->text[i] = text_of(m, i, m->file[i], to);
	if (to) {
		free(m->file[i]);
		m->file[i] = to;
	}
	if (r->h.kind == CT_RENAME && !(r->h.flags & CT_F_EXCHANGE))
		x->parent[n] = m->dir2[i], x->name[n] = r->name2;
	else if (r->name && r->h.kind != CT_UNLINK && r->h.kind != CT_RMDIR)
		x->parent[n] = m->dir[i], x->name[n] = r->name;
}

void model_name_changes(struct run_model *m)
{
	uint32_t nodes = m->t->nnodes;
	struct naming x = {calloc(nodes + 1, sizeof(uint32_t)), calloc(nodes + 1, sizeof(char *))};

	m->text = calloc(m->j->n + 1, sizeof(char *));
	m->file = calloc(m->j->n + 1, sizeof(char *));
	if (!x.parent || !x.name || !m->text || !m->file)
		die("out of memory");
	for (size_t i = 0; i < m->t->nslots; i++)
		if (m->t->slot[i].name && m->t->slot[i].node)
			x.parent[m->t->slot[i].node] = m->t->slot[i].dir,
			x.name[m->t->slot[i].node] = m->t->slot[i].name;
	for (uint32_t i = 0; i < m->j->n; i++) {
		if (!m->node[i])
			continue;
		if (kind_is_name(m->j->r[i].h.kind) && (m->flags[i] & R_CHANGE))
			name_change(m, &x, i);
		else
			m->file[i] = path_of(&x, m->node[i]);
		if (!m->text[i] && kind_is_data(m->j->r[i].h.kind))
			m->text[i] = text_of(m, i, m->file[i], NULL);
	}
	free(x.parent);
	free(x.name);
}
