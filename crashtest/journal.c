/* SPDX-License-Identifier: MIT */
/* journal.c -- reading the journal.  The command's tree can write it (it is
 * in the run directory the command is told of), so it is opened without
 * following a link and without blocking, must be a regular file, and is
 * read record by record with every length checked before it is used: a
 * record that is not one ends the journal, and the run is unknown.
 * Payloads of data stay in the file and are read when a state needs them.
 */
#define _GNU_SOURCE 1
#include "crashtest/journal.h"
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int kind_is_name(unsigned kind)
{
	return kind >= CT_CREATE && kind <= CT_RENAME;
}

int kind_is_data(unsigned kind)
{
	return kind >= CT_WRITE && kind <= CT_IMAGE;
}

/* The most payload a record of this kind may carry. */
static size_t payload_max(unsigned kind)
{
	if (kind == CT_WRITE || kind == CT_IMAGE)
		return CT_CHUNK;
	if (kind == CT_SYMLINK)
		return CT_NAME_MAX + 1 + PATH_MAX;
	if (kind_is_name(kind))
		return 2 * (CT_NAME_MAX + 1);
	return kind == CT_UNKNOWN || kind == CT_IGNORED ? 4096 : 0;
}

/* One component of a name: 1 if s is one. */
static int is_component(const char *s, size_t n)
{
	return n > 0 && n <= CT_NAME_MAX && !memchr(s, '/', n) && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

/* The strings of a name record's payload p (n bytes), checked. */
static int parse_names(struct rec *r, const char *p, size_t n)
{
	const char *end = p + n, *second;
	size_t a, b;

	if (r->h.kind == CT_CREATE && (r->h.flags & CT_F_ANON))
		return n == 0;
	if (n == 0 || end[-1] != '\0')
		return 0;
	a = strlen(p);
	second = p + a + 1;
	b = second < end ? strlen(second) : 0;
	if (!is_component(p, a))
		return 0;
	r->name = strdup(p);
	if (r->h.kind == CT_RENAME && (second >= end || !is_component(second, b)))
		return 0;
	if (r->h.kind == CT_RENAME)
		r->name2 = strdup(second);
	if (r->h.kind == CT_SYMLINK && (second >= end || b >= PATH_MAX || !b))
		return 0;
	if (r->h.kind == CT_SYMLINK)
		r->target = strdup(second);
	if (!r->name || (r->h.kind == CT_RENAME && !r->name2) ||
	    (r->h.kind == CT_SYMLINK && !r->target))
		die("out of memory");
	if (r->h.kind == CT_RENAME || r->h.kind == CT_SYMLINK)
		return second + b + 1 == end;
	return second == end;
}

/* Read exactly n bytes at off, or fail. */
static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* The record at `off`: 0, or why not. */
static const char *read_one(struct journal *j, uint64_t off, struct rec *r)
{
	char buf[2 * (CT_NAME_MAX + 1) + PATH_MAX + 4096];

	memset(r, 0, sizeof(*r));
	if (read_at(j->fd, &r->h, sizeof(r->h), off) != 0)
		return "a record is cut short";
	if (r->h.magic != CT_MAGIC || !r->h.kind || r->h.kind >= CT_KINDS)
		return "a record that is none";
	if (r->h.len > payload_max(r->h.kind) || r->h.len > j->size - off - sizeof(r->h))
		return "a record's length";
	r->at = off;
	r->payload = off + sizeof(r->h);
	if (!kind_is_name(r->h.kind) && r->h.kind != CT_UNKNOWN && r->h.kind != CT_IGNORED)
		return NULL;
	if (read_at(j->fd, buf, r->h.len, r->payload) != 0)
		return "a record is cut short";
	if (r->h.kind == CT_UNKNOWN || r->h.kind == CT_IGNORED) {
		if (!(r->name = strndup(buf, r->h.len)))
			die("out of memory");
		return NULL;
	}
	if (parse_names(r, buf, r->h.len))
		return NULL;
	free(r->name);
	free(r->name2);
	free(r->target);
	return "a name that is not one";
}

static void add(struct journal *j, const struct rec *r, size_t *cap)
{
	if (j->n == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		if (!(j->r = realloc(j->r, *cap * sizeof(*j->r))))
			die("out of memory");
	}
	j->r[j->n++] = *r;
}

void journal_read(int dirfd, struct journal *j, struct problems *why)
{
	struct stat st;
	size_t cap = 0;
	uint64_t off = 0;
	struct rec r;
	const char *bad = NULL;

	*j = (struct journal){0};
	j->fd = openat(dirfd, CT_JOURNAL, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (j->fd < 0 || fstat(j->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		problem(why, "the journal is gone or is no file (%s)",
			j->fd < 0 ? strerror(errno) : "not a regular file");
		return;
	}
	j->size = (uint64_t)st.st_size;
	while (off < j->size && !bad) {
		if (j->n == JOURNAL_MAX_RECORDS)
			bad = "more records than crashtest reads";
		else if (!(bad = read_one(j, off, &r))) {
			add(j, &r, &cap);
			off = r.payload + r.h.len;
		}
	}
	if (bad)
		problem(why, "the journal is corrupt at byte %llu: %s", (unsigned long long)off, bad);
}

void journal_free(struct journal *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->r[i].name);
		free(j->r[i].name2);
		free(j->r[i].target);
	}
	free(j->r);
	if (j->fd >= 0)
		close(j->fd);
	*j = (struct journal){.fd = -1};
}

int journal_bytes(const struct journal *j, const struct rec *r, uint64_t skip, void *buf,
		  size_t n)
{
	if (skip > r->h.len || n > r->h.len - skip)
		return -1;
	return read_at(j->fd, buf, n, r->payload + skip);
}
