/* SPDX-License-Identifier: MIT */
/* keymap.h -- a hash map from fixed-size keys to fixed-size values, so the
 * report and the audit read a million records in one pass each. */
#ifndef EMD_KEYMAP_H
#define EMD_KEYMAP_H

#include <stddef.h>

struct keymap {
	unsigned char *cells;
	size_t n, cap, key_size, value_size;
};

#define KEYMAP_INIT(key_type, value_type)                                      \
	{ .key_size = sizeof(key_type), .value_size = sizeof(value_type) }

/* The value stored under `key` (compared byte for byte: zero a key's
 * padding), or NULL; with `create`, a new zeroed value if there was none. */
void *keymap_get(struct keymap *m, const void *key, int create);
void keymap_free(struct keymap *m);

#endif
