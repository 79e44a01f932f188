/* SPDX-License-Identifier: MIT */
/* findings.h -- syncstat --audit: three durability mistakes, found in the
 * records of a run (see findings.c). */
#ifndef EMD_AUDIT_H
#define EMD_AUDIT_H

#include <stddef.h>

#include "record.h"
#include "keymap.h"

enum audit_pattern { AUDIT_RENAME_UNSYNCED, AUDIT_DIR_NOT_SYNCED,
		     AUDIT_TAIL_NOT_SYNCED };

/* One pattern, once per program and call site; `example` is its first file. */
struct finding {
	enum audit_pattern pattern;
	char program[32], site[112], example[256];
	unsigned long long count;
};

struct findings {
	struct finding *f;
	size_t n, cap;
	struct keymap index; /* pattern, program, site -> 1 + place in f */
};

extern const char *const audit_names[];
extern const char *const audit_explanations[];

/* Renames of unsynced data over a name, entries never made durable. */
void audit_records(const struct emd_rec_slot *slots, size_t n,
		   struct findings *out);

/* At the end of a run: files changed since their last sync, appended to
 * DIR/tails for audit_load_tails, which adds them to `out`. */
void audit_tails(const char *dir, const struct emd_rec_slot *slots, size_t n);
void audit_load_tails(const char *dir, struct findings *out);

#endif
