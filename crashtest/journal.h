/* SPDX-License-Identifier: MIT */
/* journal.h -- the journal libcrashtest wrote (include/crashtest.h), read
 * as untrusted input: the command's tree could write it.
 */
#ifndef CT_JOURNAL_H
#define CT_JOURNAL_H

#include "crashtest.h"
#include "crashtest/problems.h"

#include <stddef.h>
#include <stdint.h>

/* The most records a journal may hold: past it the run is unknown. */
#define JOURNAL_MAX_RECORDS (4u << 20)

/* One record: its header, and where its payload lies in the journal.
 * A name is checked and copied: one component, no '/', not "." or "..". */
struct rec {
	struct ct_record h;
	uint64_t at;      /* the header's offset in the journal */
	uint64_t payload; /* the payload's offset */
	char *name, *name2, *target; /* of the name records, else NULL */
};

struct journal {
	int fd; /* for the payloads of writes and images, read when needed */
	struct rec *r;
	size_t n;
	uint64_t size;
};

/* Read the journal at `dirfd`/CT_JOURNAL: a record that is not one (a bad
 * magic, kind, length or name) ends it, and says why in `why`; so do a
 * journal that is gone or not a regular file. */
void journal_read(int dirfd, struct journal *j, struct problems *why);
void journal_free(struct journal *j);

/* The payload of r from byte `skip`, n bytes into buf; 0, or -1 if the
 * journal no longer holds them. */
int journal_bytes(const struct journal *j, const struct rec *r, uint64_t skip, void *buf,
		  size_t n);

/* Does this kind of record change the tree?  A name, a content? */
int kind_is_name(unsigned kind);
int kind_is_data(unsigned kind);

#endif
