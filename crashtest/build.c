/* SPDX-License-Identifier: MIT */
/* build.c -- building a state's directory, down from the top of the tree.
 *
 * Everything is made fresh, relative to directories crashtest has just made
 * itself, with names that are single components (journal.c checked them):
 * nothing the journal says can reach outside the state or through a link.
 * A file's contents are its base file's (if it has one), then the state's
 * changes to it in order, their bytes copied from the journal.  A directory
 * that a subset of renames put inside itself is unreachable and is skipped;
 * so is a second name of a directory.  A file the command made gets no
 * set-user-ID or set-group-ID bit.
 */
#define _GNU_SOURCE 1
#include "crashtest/build.h"
#include "common/common.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct building {
	const struct built *b;
	int top;         /* the state's top directory */
	char **path;     /* per node: where it was built first, or NULL */
	uint8_t *inside; /* per node: a directory being built, above */
};

/* Copy n bytes of the journal's payload of r (from byte skip) to fd at off. */
static int put_bytes(const struct built *b, const struct rec *r, uint64_t skip, int fd,
		     uint64_t off, uint64_t n)
{
	char buf[65536];
	loff_t from = (loff_t)(r->payload + skip), to = (loff_t)off;

	while (n > 0) {
		ssize_t c = copy_file_range(b->m->j->fd, &from, fd, &to, n, 0);

		if (c <= 0)
			break;
		n -= (uint64_t)c;
	}
	for (skip = (uint64_t)from - r->payload; n > 0;) {
		size_t want = n > sizeof(buf) ? sizeof(buf) : (size_t)n;

		if (journal_bytes(b->m->j, r, skip, buf, want) != 0 ||
		    pwrite(fd, buf, want, (off_t)to) != (ssize_t)want)
			return -1;
		skip += want, to += (loff_t)want, n -= want;
	}
	return 0;
}

static int zero(int fd, int64_t off, int64_t n)
{
	static const char zeros[65536];
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -1;
	if (off + n > st.st_size)
		n = st.st_size > off ? st.st_size - off : 0;
	for (; n > 0; off += (int64_t)sizeof(zeros), n -= (int64_t)sizeof(zeros))
		if (pwrite(fd, zeros, n < (int64_t)sizeof(zeros) ? (size_t)n : sizeof(zeros), off) < 0)
			return -1;
	return 0;
}

/* One change of the file's contents, or its kept part. */
static int apply_data(const struct built *b, const struct rec *r, int fd, uint64_t keep)
{
	uint64_t n = r->h.len < keep ? r->h.len : keep;

	switch (r->h.kind) {
	case CT_WRITE:
		return r->h.off < 0 ? -1 : put_bytes(b, r, 0, fd, (uint64_t)r->h.off, n);
	case CT_ZERO:
		return zero(fd, r->h.off, r->h.size);
	case CT_TRUNC:
		return r->h.size < 0 ? -1 : ftruncate(fd, r->h.size);
	case CT_IMAGE:
		if (r->h.off < 0 || put_bytes(b, r, 0, fd, (uint64_t)r->h.off, r->h.len) != 0)
			return -1;
		return r->h.size >= 0 ? ftruncate(fd, r->h.size) : 0;
	}
	return 0;
}

/* The contents of file node n, into fd. */
static void contents(const struct building *g, uint32_t n, int fd, const char *path)
{
	const struct built *b = g->b;
	const struct node *x = &b->m->t->node[n];
	uint64_t keep;
	int in;

	if (x->base) {
		in = base_open(b->base, b->base->e[x->base - 1].path);
		if (in < 0 || copy_contents(in, fd) != 0)
			problem(b->why, "the copy of %s that states are built from is gone", path);
		if (in >= 0)
			close(in);
	}
	for (uint32_t k = 0; b->ps && k < x->ndata; k++)
		if (state_has(b->m, b->ps, b->s, x->data[k], &keep) &&
		    apply_data(b, &b->m->j->r[x->data[k]], fd, keep) != 0)
			problem(b->why, "a change to %s cannot be read back from the journal", path);
}

/* Owner and mode: the base's as they were, a new file's as it was made
 * (owner only by root), never a set-ID bit the command's file had. */
static void attributes(const struct building *g, uint32_t n, int dirfd, const char *name)
{
	const struct node *x = &g->b->m->t->node[n];
	mode_t mode = x->mode & (x->base ? 07777 : 01777);

	if (geteuid() == 0)
		fchownat(dirfd, name, x->uid, x->gid, AT_SYMLINK_NOFOLLOW);
	if (x->type != NODE_LINK)
		fchmodat(dirfd, name, mode, 0);
}

static void build_dir(struct building *g, uint32_t d, int fd, const char *path);

/* Entry `name` of directory fd (at `path`), holding node n. */
static void build_entry(struct building *g, uint32_t n, int fd, const char *name, const char *path)
{
	const struct node *x = &g->b->m->t->node[n];
	int ok = 0, sub;

	if (g->path[n] && x->type == NODE_FILE)
		ok = linkat(g->top, g->path[n], fd, name, 0) == 0;
	else if (g->path[n] || g->inside[n])
		return; /* a second name of a directory, or one inside itself */
	else if (x->type == NODE_FILE && (sub = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL |
							       O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0) {
		contents(g, n, sub, path);
		close(sub);
		ok = 1;
	} else if (x->type == NODE_DIR && mkdirat(fd, name, 0700) == 0 &&
		   (sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		build_dir(g, n, sub, path);
		close(sub);
		ok = 1;
	} else if (x->type == NODE_LINK) {
		ok = x->target && symlinkat(x->target, fd, name) == 0;
	} else if (x->type == NODE_SPECIAL) {
		ok = mknodat(fd, name, (S_ISSOCK(x->mode) ? S_IFSOCK : S_IFIFO) | 0600, 0) == 0;
	}
	if (!ok)
		die("cannot build %s: %s", path, strerror(errno));
	if (!g->path[n] && !(g->path[n] = strdup(path)))
		die("out of memory");
	attributes(g, n, fd, name);
	if (g->b->ino) {
		struct stat st;

		if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			g->b->ino[n] = st.st_ino;
	}
}

static void build_dir(struct building *g, uint32_t d, int fd, const char *path)
{
	const struct listing *l = g->b->l;
	char sub[PATH_MAX];

	g->inside[d] = 1;
	for (uint32_t e = l->first[d]; e < l->first[d + 1]; e++) {
		const struct slot *s = &l->entries[e];

		if (snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "/" : "", s->name) >=
		    (int)sizeof(sub))
			die("cannot build %s/%s: the path is too long", path, s->name);
		build_entry(g, s->node, fd, s->name, sub);
	}
	g->inside[d] = 0;
}

void state_build(const struct built *b, int dirfd, const char *name)
{
	uint32_t n = b->m ? b->m->t->nnodes : 0;
	struct building g = {.b = b, .path = calloc(n + 1, sizeof(char *)),
			     .inside = calloc(n + 1, 1)};

	if (!g.path || !g.inside)
		die("out of memory");
	if (mkdirat(dirfd, name, 0700) != 0 ||
	    (g.top = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die("cannot build a state: %s", strerror(errno));
	build_dir(&g, 1, g.top, "");
	attributes(&g, 1, dirfd, name);
	if (b->ino) {
		struct stat st;

		b->ino[1] = fstat(g.top, &st) == 0 ? st.st_ino : 0;
	}
	close(g.top);
	for (uint32_t i = 0; i <= n; i++)
		free(g.path[i]);
	free(g.path);
	free(g.inside);
}

/* ---- the hash of a state ------------------------------------------------ */

struct hashing {
	const struct built *b;
	uint64_t h[2];
	uint8_t *seen; /* per node: hashed already (a second name, a loop) */
};

static void mix(struct hashing *x, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		x->h[0] = (x->h[0] ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
		x->h[1] = (x->h[1] ^ ((const unsigned char *)p)[i]) * 0x100000001b3ULL + 0x9e37;
	}
}

static void mix_u64(struct hashing *x, uint64_t v)
{
	mix(x, &v, sizeof(v));
}

static void hash_node(struct hashing *x, uint32_t n);

static void hash_dir(struct hashing *x, uint32_t d)
{
	const struct listing *l = x->b->l;

	for (uint32_t e = l->first[d]; e < l->first[d + 1]; e++) {
		mix(x, l->entries[e].name, strlen(l->entries[e].name) + 1);
		hash_node(x, l->entries[e].node);
	}
	mix_u64(x, 0);
}

static void hash_node(struct hashing *x, uint32_t n)
{
	const struct built *b = x->b;
	const struct node *node = &b->m->t->node[n];
	uint64_t keep;

	mix_u64(x, ((uint64_t)node->type << 32) | n);
	if (x->seen[n]++)
		return;
	if (node->type == NODE_DIR)
		hash_dir(x, n);
	for (uint32_t k = 0; b->ps && k < node->ndata; k++)
		if (state_has(b->m, b->ps, b->s, node->data[k], &keep)) {
			mix_u64(x, node->data[k]);
			mix_u64(x, keep);
		}
}

void state_hash(const struct built *b, uint64_t out[2])
{
	struct hashing x = {.b = b, .h = {1469598103934665603ULL, 0x84222325cbf29ce4ULL},
			    .seen = calloc(b->m->t->nnodes + 1, 1)};

	if (!x.seen)
		die("out of memory");
	hash_node(&x, 1);
	out[0] = x.h[0];
	out[1] = x.h[1];
	free(x.seen);
}
