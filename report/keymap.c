/* SPDX-License-Identifier: MIT */
/* keymap.c -- open addressing with linear probing, kept at most half full.
 * Keys come from record files anyone may hand the report, so the hash is
 * seeded per process: crafted records cannot all land in one chain. */
#include "common/common.h"
#include "keymap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static uint64_t seed;

static uint64_t hash(const unsigned char *p, size_t n)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL), w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; n; p++, n--)
		h = (h ^ *p) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ h >> 29;
}

/* A cell: a used flag, the key, the value, each on an 8-byte boundary so
 * that values are aligned for whatever they hold. */
#define ROUND8(n) (((n) + 7) & ~(size_t)7)
#define KEY(c) ((c) + 8)
#define VALUE(m, c) ((c) + 8 + ROUND8((m)->key_size))

static size_t cell_size(const struct keymap *m)
{
	return 8 + ROUND8(m->key_size) + ROUND8(m->value_size);
}

/* The cell holding key, or the empty one where it would go. */
static unsigned char *find(const struct keymap *m, const void *key)
{
	size_t i = hash(key, m->key_size) & (m->cap - 1);
	unsigned char *c;

	for (;; i = (i + 1) & (m->cap - 1)) {
		c = m->cells + i * cell_size(m);
		if (!c[0] || memcmp(KEY(c), key, m->key_size) == 0)
			return c;
	}
}

static void grow(struct keymap *m)
{
	struct keymap old = *m;

	if (!seed && getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)(uintptr_t)&seed ^ 0x5851f42d4c957f2dULL;
	m->cap = m->cap ? 2 * m->cap : 64;
	if (!(m->cells = calloc(m->cap, cell_size(m))))
		die("out of memory");
	for (size_t i = 0; i < old.cap; i++) {
		unsigned char *c = old.cells + i * cell_size(&old);

		if (c[0])
			memcpy(find(m, KEY(c)), c, cell_size(m));
	}
	free(old.cells);
}

void *keymap_get(struct keymap *m, const void *key, int create)
{
	unsigned char *c;

	if (!m->cap) {
		if (!create)
			return NULL;
		grow(m);
	}
	c = find(m, key);
	if (!c[0]) {
		if (!create)
			return NULL;
		if (2 * (m->n + 1) > m->cap) {
			grow(m);
			c = find(m, key);
		}
		c[0] = 1;
		memcpy(KEY(c), key, m->key_size);
		m->n++;
	}
	return VALUE(m, c);
}

void keymap_free(struct keymap *m)
{
	free(m->cells);
	*m = (struct keymap){.key_size = m->key_size, .value_size = m->value_size};
}
