/* SPDX-License-Identifier: MIT */
/* nocache_behind.c -- what the reads nocache's supervisor makes for a
 * static or Go program (nocache.c) bring into the page cache goes once the
 * program has read past it; what was cached before stays.
 *
 * A read with RWF_DONTCACHE drops every folio it touches, the part it did
 * not read too, which the program's next small read then reads from the
 * disk again (64 KiB reads of a cold 8 MiB file read 11.6 MiB).  So the
 * reads are made as asked, and each is followed by posix_fadvise(DONTNEED)
 * of what the program has read past: from the folio boundary before the
 * read (DONTNEED drops only whole folios, up to 2 MiB: the one the last
 * read ended in goes now) to the page the read ended in, which the next
 * read may still need, or to the end of the file once a read reaches it.
 * What the kernel read ahead stays until then; no close is seen here, so
 * what it read ahead of a program that stops short of the end stays, as it
 * did with RWF_DONTCACHE.  The pages that were cached before stay: a table
 * of the files read (device, inode and birth time: an inode number is used
 * again) holds what of each was cached at the run's first call made here
 * on it (residency.h), a write's too: what the program wrote itself is
 * not "cached before" (recorded at the first read after the program's
 * writes, its written pages stayed, 1 run in 20 of rwedge's far).
 *
 * The workers share the table under one lock, held for a lookup, the
 * record of a file at its first read, and a drop: no wait on the caller.
 * A file pushed out of the table (the least recently read of FILES) is
 * recorded again at its next read, when what was read ahead for it since
 * counts as cached before.
 */
#define _GNU_SOURCE 1
#include "supervisor.h"
#include "residency.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define FILES 64
#define FOLIO_MAX (2 << 20) /* DONTNEED drops only whole folios, up to a PMD's worth */
/* A file of more pages than this, some of them cached, gets no map of a
 * byte a page (the tree could make the supervisor hold gigabytes): it is
 * left as it is. */
#define MAP_PAGES_MAX (1UL << 22)

struct behind {
	unsigned long used; /* when last read (the table's clock); 0: a free entry */
	dev_t dev;
	ino_t ino;
	struct statx_timestamp born;
	struct nc_residency was;
	int listener; /* the filter of the last call made on it, -1: none */
	char *path;   /* where it was then (malloc'd), NULL: unknown */
};

static struct behind table[FILES];
static unsigned long clock_now;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int same(const struct behind *b, const struct statx *st)
{
	return b->used && b->ino == st->stx_ino &&
	       b->dev == makedev(st->stx_dev_major, st->stx_dev_minor) &&
	       b->born.tv_sec == st->stx_btime.tv_sec && b->born.tv_nsec == st->stx_btime.tv_nsec;
}

static struct behind *find(const struct statx *st)
{
	for (int i = 0; i < FILES; i++)
		if (same(&table[i], st)) {
			table[i].used = ++clock_now;
			return &table[i];
		}
	return NULL;
}

/* What of fd's file is cached now, to stay: all of it when that cannot be
 * known but for a blind file (residency.h), of which what is read goes. */
static void record(int fd, const struct statx *st, struct nc_residency *was)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = (st->stx_size + page - 1) / page;
	unsigned long long nr_cache;
	int kind = nc_residency_kind(fd, &nr_cache);

	*was = (struct nc_residency){0};
	if (kind == NC_RES_SOME && (pages <= MAP_PAGES_MAX || nr_cache >= pages) &&
	    nc_residency_take(fd, nr_cache, was))
		return;
	if (kind != NC_RES_NONE && kind != NC_RES_BLIND)
		was->cached_below = (size_t)-1;
}

int behind_before(int fd, const struct statx *st)
{
	long page = sysconf(_SC_PAGESIZE);
	struct behind *b, *old = &table[0];
	int some;

	pthread_mutex_lock(&lock);
	if (!(b = find(st))) {
		for (b = table; b < table + FILES; b++)
			if (b->used < old->used)
				old = b;
		nc_residency_free(&old->was);
		free(old->path);
		*old = (struct behind){.used = ++clock_now, .ino = st->stx_ino,
				       .dev = makedev(st->stx_dev_major, st->stx_dev_minor),
				       .born = st->stx_btime, .listener = -1};
		record(fd, st, &old->was);
		b = old;
	}
	some = b->was.cached_below < (st->stx_size + page - 1) / page;
	pthread_mutex_unlock(&lock);
	return some;
}

/* DONTNEED over [lo, hi) but what was cached, from the folio boundary
 * before lo; to the end of the file when `to_end`, else to the page that
 * holds hi. */
static void drop(int fd, const struct nc_residency *was, off_t lo, off_t hi, int to_end)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i = (size_t)(lo & ~(off_t)(FOLIO_MAX - 1)) / page, run;
	size_t end = to_end ? (size_t)(hi + page - 1) / page : (size_t)hi / page;

	while (nc_uncached_run(was, &i, &run, end)) {
		off_t len = to_end && run == end && nc_none_cached_from(was, end)
				    ? 0 : (off_t)(run - i) * page;

		posix_fadvise(fd, (off_t)i * page, len, POSIX_FADV_DONTNEED);
		i = run;
	}
}

int behind_known(const struct statx *st)
{
	int known;

	pthread_mutex_lock(&lock);
	known = find(st) != NULL;
	pthread_mutex_unlock(&lock);
	return known;
}

/* SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER: the data, no journal
 * commit, no flush of the device's cache. */
#define SETTLE 7

void behind_end(int fd, const struct statx *st)
{
	struct behind *b;

	if (!behind_known(st))
		return;
	sync_file_range(fd, 0, 0, SETTLE);
	pthread_mutex_lock(&lock);
	if ((b = find(st)))
		drop(fd, &b->was, 0, (off_t)st->stx_size, 1);
	pthread_mutex_unlock(&lock);
}

void behind_after(int fd, const struct statx *st, off_t at, ssize_t n, int at_end)
{
	struct behind *b;

	pthread_mutex_lock(&lock);
	if (n >= 0 && (b = find(st)))
		drop(fd, &b->was, at, at + n, at_end);
	pthread_mutex_unlock(&lock);
}

/* fd's path here (the caller's too: same_rights holds its mount namespace
 * and root), malloc'd; NULL for a file removed since. */
static char *path_of(int fd)
{
	char self[32], path[PATH_MAX];
	ssize_t n;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return NULL;
	path[n] = '\0';
	return strstr(path, " (deleted)") ? NULL : strdup(path);
}

void behind_served(int fd, const struct statx *st, int listener)
{
	struct behind *b;

	pthread_mutex_lock(&lock);
	if ((b = find(st))) {
		b->listener = listener;
		if (!b->path)
			b->path = path_of(fd);
	}
	pthread_mutex_unlock(&lock);
}

/* The file at path, opened to be read: a regular file (an O_PATH
 * descriptor first: nothing else is opened), not through a final symbolic
 * link.  Another file than the one noted there may be found: behind_end
 * drops only a file whose I/O was made here, by its own record. */
static int reopen(const char *path)
{
	int look = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC), fd = -1;
	struct statx st;
	char self[32];

	if (look < 0)
		return -1;
	if (statx(look, "", AT_EMPTY_PATH, STATX_TYPE, &st) == 0 && S_ISREG(st.stx_mode)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", look);
		fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	close(look);
	return fd;
}

void behind_gone(int listener)
{
	char *todo[FILES];
	struct statx st;
	int n = 0, fd;

	pthread_mutex_lock(&lock);
	for (struct behind *b = table; b < table + FILES; b++)
		if (b->used && b->listener == listener) {
			b->listener = -1;
			if (b->path && (todo[n] = strdup(b->path)))
				n++;
		}
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++) {
		fd = reopen(todo[i]);
		if (fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &st) == 0)
			behind_end(fd, &st);
		if (fd >= 0)
			close(fd);
		free(todo[i]);
	}
}
