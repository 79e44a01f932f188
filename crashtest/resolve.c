/* SPDX-License-Identifier: MIT */
/* resolve.c -- the journal's inode numbers as nodes of the tree.
 *
 * The run's copy gave each file an inode number; the journal names files by
 * it.  A number can be freed and given to a new file (ext4 does so at once):
 * a record that makes an entry with a new inode starts a new node, and every
 * later record with that number means the new one.  A record about a file
 * the run never saw made (a static program made it, or the record is
 * forged) makes the points after it unknown.
 */
#define _GNU_SOURCE 1
#include "crashtest/model.h"
#include "common/common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const model_names[NMODELS] = {"posix", "ext4-ordered", "xfs", "ext4-noauto_da_alloc"};

/* inode -> node, open addressing. */
struct inodes {
	struct {
		uint64_t ino;
		uint32_t node;
	} *s;
	size_t n, used;
};

static size_t ino_slot(const struct inodes *m, uint64_t ino)
{
	size_t k = (size_t)((ino * 0x9e3779b97f4a7c15ULL) >> 17) & (m->n - 1);

	while (m->s[k].ino && m->s[k].ino != ino)
		k = (k + 1) & (m->n - 1);
	return k;
}

static void ino_set(struct inodes *m, uint64_t ino, uint32_t node)
{
	size_t k;

	if (!ino)
		return;
	if (2 * (m->used + 1) > m->n) {
		struct inodes bigger = {calloc(m->n ? 4 * m->n : 1024, sizeof(*m->s)),
					m->n ? 4 * m->n : 1024, 0};

		if (!bigger.s)
			die("out of memory");
		for (size_t i = 0; i < m->n; i++)
			if (m->s[i].ino)
				ino_set(&bigger, m->s[i].ino, m->s[i].node);
		free(m->s);
		*m = bigger;
	}
	k = ino_slot(m, ino);
	m->used += !m->s[k].ino;
	m->s[k].ino = ino;
	m->s[k].node = node;
}

static uint32_t ino_get(const struct inodes *m, uint64_t ino)
{
	return ino && m->n ? m->s[ino_slot(m, ino)].node : 0;
}

static void add_data(struct tree *t, uint32_t n, uint32_t rec)
{
	struct node *x = &t->node[n];

	if (x->ndata == x->capdata &&
	    !(x->data = realloc(x->data, (x->capdata = x->capdata ? 2 * x->capdata : 8) *
						 sizeof(*x->data))))
		die("out of memory");
	x->data[x->ndata++] = rec;
}

/* What a resolution carries: the maps, and the last change that set each
 * (directory, name), as 1 + its record in a tree used as a table. */
struct resolving {
	struct run_model *m;
	struct inodes inodes;
	struct tree entries;
	uint64_t dev;
};

void model_unknown_at(struct run_model *m, uint32_t i, const char *why)
{
	if (i < m->unknown_from)
		m->unknown_from = i;
	problem(&m->unknown_at, "%s", why);
}

static uint32_t file_of(struct resolving *r, uint64_t dev, uint64_t ino)
{
	return dev == r->dev ? ino_get(&r->inodes, ino) : 0;
}

/* A directory the run knows, or 0 (and the points after are unknown). */
static uint32_t dir_of(struct resolving *r, uint32_t i, uint64_t dev, uint64_t ino)
{
	uint32_t d = file_of(r, dev, ino);

	if (!d || r->m->t->node[d].type != NODE_DIR)
		return model_unknown_at(r->m, i, "a name was changed in a directory the run did not "
						 "see made"), 0;
	return d;
}

static void data_record(struct resolving *r, uint32_t i, const struct rec *x)
{
	struct run_model *m = r->m;
	uint32_t n = file_of(r, x->h.dev, x->h.ino);
	uint64_t end = (uint64_t)x->h.off + x->h.len;

	if (!n || m->t->node[n].type != NODE_FILE)
		return model_unknown_at(m, i, "a file the run did not see made was written");
	m->node[i] = n;
	m->flags[i] |= R_CHANGE;
	if (x->h.kind == CT_TRUNC)
		m->flags[i] |= R_META;
	if (x->h.kind == CT_WRITE && x->h.off >= 0 && (int64_t)end > x->h.size)
		m->flags[i] |= R_APPEND;
	if (x->h.kind == CT_WRITE && x->h.len > 0 && (end - 1) / SECTOR > (uint64_t)x->h.off / SECTOR)
		m->flags[i] |= R_TORN;
	add_data(m->t, n, i);
}

static void made(struct resolving *r, uint32_t i, const struct rec *x)
{
	static const uint8_t type[] = {[CT_CREATE] = NODE_FILE, [CT_MKDIR] = NODE_DIR,
				       [CT_SYMLINK] = NODE_LINK, [CT_MKNOD] = NODE_SPECIAL};
	struct run_model *m = r->m;
	struct node n = {.type = x->h.kind == CT_MKNOD && S_ISREG((mode_t)x->h.off) ? NODE_FILE :
				 type[x->h.kind], .mode = (mode_t)x->h.off,
			 .uid = (uid_t)((uint64_t)x->h.size >> 32), .gid = (gid_t)x->h.size,
			 .target = x->target};

	if (!(m->dir[i] = dir_of(r, i, x->h.dev, x->h.ino)))
		return;
	m->node[i] = tree_add_node(m->t, &n);
	ino_set(&r->inodes, x->h.ino2, m->node[i]);
	m->flags[i] |= R_CHANGE | R_META;
	if (x->name)
		tree_set(&r->entries, m->dir[i], x->name, i + 1);
}

/* A link, unlink or rmdir: of a node the run knows. */
static void named(struct resolving *r, uint32_t i, const struct rec *x)
{
	struct run_model *m = r->m;

	if (!(m->dir[i] = dir_of(r, i, x->h.dev, x->h.ino)))
		return;
	if (!(m->node[i] = file_of(r, x->h.dev, x->h.ino2)))
		return model_unknown_at(m, i, "an entry the run did not see made was linked or removed");
	m->flags[i] |= R_CHANGE | R_META;
	if (x->h.kind == CT_LINK) {
		tree_set(&r->entries, m->dir[i], x->name, i + 1);
		return;
	}
	m->maker[i] = tree_get(&r->entries, m->dir[i], x->name);
	tree_set(&r->entries, m->dir[i], x->name, 0);
}

static void renamed(struct resolving *r, uint32_t i, const struct rec *x)
{
	struct run_model *m = r->m;

	if (!(m->dir[i] = dir_of(r, i, x->h.dev, x->h.ino)) ||
	    !(m->dir2[i] = dir_of(r, i, x->h.dev2, x->h.ino3)))
		return;
	if (!(m->node[i] = file_of(r, x->h.dev, x->h.ino2)))
		return model_unknown_at(m, i, "an entry the run did not see made was renamed");
	m->other[i] = x->h.off ? file_of(r, x->h.dev, (uint64_t)x->h.off) : 0;
	m->flags[i] |= R_CHANGE | R_META;
	/* ext4_rename: the target existed (new.inode), not an exchange. */
	if (x->h.off && !(x->h.flags & CT_F_EXCHANGE) && m->t->node[m->node[i]].type == NODE_FILE)
		m->flags[i] |= R_ADA;
	m->maker[i] = tree_get(&r->entries, m->dir[i], x->name);
	tree_set(&r->entries, m->dir[i], x->name, x->h.flags & CT_F_EXCHANGE ? i + 1 : 0);
	tree_set(&r->entries, m->dir2[i], x->name2, i + 1);
}

static void one(struct resolving *r, uint32_t i, const struct rec *x)
{
	struct run_model *m = r->m;

	if (kind_is_data(x->h.kind))
		data_record(r, i, x);
	else if (x->h.kind >= CT_CREATE && x->h.kind <= CT_MKNOD)
		made(r, i, x);
	else if (x->h.kind == CT_RENAME)
		renamed(r, i, x);
	else if (kind_is_name(x->h.kind))
		named(r, i, x);
	else if (x->h.kind == CT_UNKNOWN)
		model_unknown_at(m, i, x->name);
	else if (x->h.kind == CT_IGNORED)
		problem(&m->unexplored, "%s, outside the directory, was written: no state holds it "
			"(--outside-ok)", x->name);
	else
		m->node[i] = file_of(r, x->h.dev, x->h.ino);
}

/* Crash points are numbered 1, 2, ... in the journal's order; a number
 * out of its place is a journal that lies. */
static void point(struct run_model *m, uint32_t i, uint64_t number)
{
	if (number != (uint64_t)m->npoints + 1) {
		model_unknown_at(m, i, "the journal's crash points are out of order");
		return;
	}
	m->point_rec[m->npoints++] = i;
}

static void *table(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

void model_resolve(struct run_model *m, const struct journal *j, struct tree *t, uint64_t dev,
		   const uint64_t *work_ino, const uint32_t *base_node, size_t nbase)
{
	struct resolving r = {.m = m};
	size_t n = j->n;

	*m = (struct run_model){.j = j, .t = t, .unknown_from = NEVER};
	m->node = table(n, sizeof(uint32_t));
	m->dir = table(n, sizeof(uint32_t));
	m->dir2 = table(n, sizeof(uint32_t));
	m->other = table(n, sizeof(uint32_t));
	m->maker = table(n, sizeof(uint32_t));
	m->durable_at = table(n, sizeof(uint32_t));
	m->flags = table(n, 1);
	m->point_rec = table(n, sizeof(uint32_t));
	m->release = table(n, sizeof(uint32_t));
	tree_init(&r.entries);
	r.dev = dev;
	for (size_t b = 0; b < nbase; b++)
		ino_set(&r.inodes, work_ino[b], base_node[b]);
	for (uint32_t i = 0; i < n; i++) {
		one(&r, i, &j->r[i]);
		if (j->r[i].h.kind == CT_RELEASE && m->node[i])
			m->release[m->nrelease++] = i;
		if (j->r[i].h.point)
			point(m, i, j->r[i].h.point);
	}
	tree_free(&r.entries);
	free(r.inodes.s);
}

void model_view_unknowns(struct run_model *v, const struct run_model *m)
{
	for (size_t i = 0; i < m->unknown.n; i++)
		problem(&v->unknown, "%s", m->unknown.v[i]);
}

void model_view(struct run_model *v, const struct run_model *m)
{
	*v = *m;
	v->view = 1;
	v->durable_at = table(m->j->n, sizeof(uint32_t));
	v->unknown = v->unknown_at = (struct problems){0};
	model_view_unknowns(v, m);
	for (size_t i = 0; i < m->unknown_at.n; i++)
		problem(&v->unknown_at, "%s", m->unknown_at.v[i]);
}

void model_free(struct run_model *m)
{
	if (m->view) {
		free(m->durable_at);
		problems_free(&m->unknown);
		problems_free(&m->unknown_at);
		return;
	}
	free(m->node);
	free(m->dir);
	free(m->dir2);
	free(m->other);
	free(m->maker);
	free(m->durable_at);
	free(m->flags);
	free(m->point_rec);
	free(m->release);
	for (size_t i = 0; m->text && i < m->j->n; i++) {
		free(m->text[i]);
		free(m->file[i]);
	}
	free(m->text);
	free(m->file);
	problems_free(&m->unknown);
	problems_free(&m->unknown_at);
	problems_free(&m->unexplored);
}
