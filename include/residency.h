/* SPDX-License-Identifier: MIT */
/* residency.h -- what of a file the page cache held when nocache first
 * touched it, and so which pages it may drop behind the command
 * (shared/residency.c): libnocache's and the supervisor's (for a static or
 * Go program, seccomp/nocache_behind.c) alike. */
#ifndef NC_RESIDENCY_H
#define NC_RESIDENCY_H

#include <stddef.h>

/* cachestat(2), Linux 6.5: one number for every architecture, and no libc
 * wrapper yet. */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

/* What a file's page cache held. */
struct nc_residency {
	unsigned char *map;  /* a byte a page, bit 0 set if cached (mincore); NULL: none */
	size_t map_pages;
	size_t cached_below; /* the pages before this one were all cached */
};

/* How a descriptor stands, from one cachestat:
 *  NC_RES_OTHER  no page cache (a pipe, a socket), nothing to do;
 *  NC_RES_NONE   a file none of which is cached;
 *  NC_RES_SOME   a file some of which is (*nr_cache pages), or may be (no
 *                cachestat: before Linux 6.5, *nr_cache 0): which pages,
 *                nc_residency_take records;
 *  NC_RES_BLIND  a regular file its user may only read: the kernel tells
 *                that user nothing of its page cache (cachestat refuses,
 *                EPERM; mincore says every page is cached). */
enum { NC_RES_OTHER, NC_RES_NONE, NC_RES_SOME, NC_RES_BLIND };
int nc_residency_kind(int fd, unsigned long long *nr_cache);

/* Record in *r which pages of fd's file are cached now (kind NC_RES_SOME);
 * 0 if that cannot be known.  r is freed with nc_residency_free. */
int nc_residency_take(int fd, unsigned long long nr_cache, struct nc_residency *r);
void nc_residency_free(struct nc_residency *r);

/* The next run of pages, from *first on and below `end`, none of which was
 * cached: [*first, *last); 0 when there is none. */
int nc_uncached_run(const struct nc_residency *r, size_t *first, size_t *last, size_t end);

/* The record of pages [first, first + pages) of r's file into *out (freed
 * with nc_residency_free), numbered from 0; 0 if it could not be made. */
int nc_residency_slice(const struct nc_residency *r, size_t first, size_t pages,
		       struct nc_residency *out);

/* The file was cut to `pages` pages: none past them is cached now. */
void nc_residency_cut(struct nc_residency *r, size_t pages);

/* Was no page from `page` on cached (so a drop may run to the end of the
 * file, however it grew)? */
int nc_none_cached_from(const struct nc_residency *r, size_t page);

/* After a drop from page `first` to the end of fd's file: how many pages
 * of it are still cached that were not before (`was`)?  Readahead still
 * reading them in when DONTNEED came, which skips a page under I/O (a
 * command that stops reading and closes at once: `head`); or pages dirty,
 * mapped, or in use by another.  If any, the last of them is waited for
 * until read in (no sleep: a fault on it waits for its lock): a drop made
 * again then drops what was being read ahead. */
unsigned long long nc_residency_settle(int fd, const struct nc_residency *was, size_t first);

#endif
