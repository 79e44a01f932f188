/* SPDX-License-Identifier: MIT */
/* drop.c -- dropping behind the command: writing back what it wrote, then
 * posix_fadvise(DONTNEED) over what it touched, skipping the pages that were
 * cached before.
 *
 * DONTNEED cannot drop a dirty page, nor one under writeback, so what was
 * written is written back first with sync_file_range, which moves the data
 * and waits for it but commits no journal and flushes no device cache: no
 * fsync, fdatasync or syncfs is ever made.  During a long write, writeback
 * of each few MiB starts as the next few are written and is waited for one
 * step later, so the command and the disk work at once.
 */
#include "nocache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

static void grow(struct nc_range *r, off64_t lo, off64_t hi)
{
	if (r->hi <= r->lo) {
		*r = (struct nc_range){lo, hi};
		return;
	}
	if (lo < r->lo)
		r->lo = lo;
	if (hi > r->hi)
		r->hi = hi;
}

static void add(struct nc_range *r, const struct nc_range *more)
{
	if (more->hi > more->lo)
		grow(r, more->lo, more->hi);
}

/* sync_file_range over r: `how` is SYNC_FILE_RANGE_WRITE to start the
 * writeback, or all three flags to start it and wait for all of it. */
static void writeback(int fd, struct nc_range *r, unsigned int how)
{
	if (r->hi <= r->lo)
		return;
	nc_debug("fd %d: %s [%lld, %lld)", fd,
		 how == SYNC_FILE_RANGE_WRITE ? "writeback" : "write back and wait",
		 (long long)r->lo, (long long)r->hi);
	if (sync_file_range(fd, r->lo, r->hi - r->lo, how) != 0)
		nc_debug("fd %d: sync_file_range: %m", fd);
	*r = (struct nc_range){0, 0};
}

/* Waits for readahead still in flight at a final drop: the window being
 * read is one or two requests to the disk, done in a round or two; pages
 * that stay after that are another's (mapped, dirty). */
#define NC_SETTLE_ROUNDS 3

#define SETTLE (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | \
		SYNC_FILE_RANGE_WAIT_AFTER)

/* DONTNEED over the pages [first, end), nr_fadvise times; `len` 0 means to
 * the end of the file. */
static void fadvise_pages(int fd, size_t first, size_t end, long page, int eof)
{
	off_t len = eof ? 0 : (off_t)(end - first) * page;
	int times = nc_config()->nr_fadvise;

	nc_debug("fd %d: DONTNEED [%lld, %lld)%s x%d", fd,
		 (long long)first * page, (long long)end * page,
		 eof ? " to the end" : "", times);
	for (int t = 0; t < times; t++)
		posix_fadvise(fd, (off_t)first * page, len, POSIX_FADV_DONTNEED);
}

/* DONTNEED over r, skipping the pages that were cached before.  The kernel
 * drops only whole folios (up to NC_FOLIO_MAX), so r starts at a folio
 * boundary; it ends before the page the command is still reading (a small
 * folio the next read would find gone), or at close (`final`) runs to the
 * end of the file. */
static void dontneed(int fd, const struct nc_file *f, struct nc_range r,
		     int final)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i = (r.lo & ~(off64_t)(NC_FOLIO_MAX - 1)) / page;
	size_t end = final ? (r.hi + page - 1) / page : r.hi / page, run;

	if (r.hi <= r.lo)
		return;
	while (nc_uncached_run(&f->was, &i, &run, end)) {
		fadvise_pages(fd, i, run, page,
			      final && run == end && nc_none_cached_from(&f->was, end));
		i = run;
	}
}

/* -f: pages the command read may be dirty from another writer; they are to
 * go too. */
static void flushall_dirty(struct nc_file *f)
{
	if (nc_config()->flushall)
		add(&f->dirty, &f->seen);
}

/* Every few MiB: wait for the writeback started last time and start it for
 * what was written since; drop all but what is in writeback now, which is
 * dropped next time. */
static void drop_behind(int fd, struct nc_file *f)
{
	struct nc_range now = f->seen, started;

	flushall_dirty(f);
	started = f->dirty;
	add(&now, &f->going);
	writeback(fd, &f->going, SETTLE);
	writeback(fd, &f->dirty, SYNC_FILE_RANGE_WRITE);
	f->going = started;
	dontneed(fd, f, now, 0);
	f->seen = started;
	f->pending = 0;
}

/* What is still cached after a final drop from page `first` on, and was
 * not before, is waited for while readahead reads it in, and dropped
 * again, as long as that makes it fewer. */
static void settle_reads(int fd, const struct nc_file *f, struct nc_range all, size_t first)
{
	unsigned long long left, before = ~0ULL;

	nc_own_maps++;
	for (int round = 0; round < NC_SETTLE_ROUNDS &&
	     (left = nc_residency_settle(fd, &f->was, first)) && left < before; round++) {
		dontneed(fd, f, all, 1);
		before = left;
	}
	nc_own_maps--;
}

/* At close and exit: write back all that was written, and drop it all,
 * what the kernel was still reading ahead too (residency.c). */
void nc_drop_file(int fd, struct nc_file *f)
{
	struct nc_range all = f->seen, out = f->going;
	long page = sysconf(_SC_PAGESIZE);

	flushall_dirty(f);
	add(&out, &f->dirty);
	add(&all, &out);
	writeback(fd, &out, SETTLE);
	dontneed(fd, f, all, 1);
	if (all.hi > all.lo)
		settle_reads(fd, f, all, (all.lo & ~(off64_t)(NC_FOLIO_MAX - 1)) / page);
	f->seen = f->dirty = f->going = (struct nc_range){0, 0};
	f->pending = 0;
}

/* A stream's I/O is libc's own, unseen: all of its file is taken as
 * touched, and as written if the descriptor could write. */
static void take_whole(int fd, struct nc_file *f)
{
	struct stat st;
	int flags;

	if (!f->stdio || f->mode == NC_PLAIN || fstat(fd, &st) != 0 || st.st_size <= 0)
		return;
	grow(&f->seen, 0, st.st_size);
	if ((flags = fcntl(fd, F_GETFL)) >= 0 && (flags & O_ACCMODE) != O_RDONLY)
		grow(&f->dirty, 0, st.st_size);
}

/* What n bytes of I/O ending at `end` leave to do. */
static void note(struct nc_file *f, ssize_t n, off64_t end, int how)
{
	if (how & NC_WROTE)
		grow(&f->dirty, end - n, end);
	if (how & NC_COUNTED) {
		grow(&f->seen, end - n, end);
		f->pending += n;
	}
}

void nc_touched(int fd, struct nc_file *f, ssize_t n, off64_t end, int how)
{
	int saved = errno;

	if (n <= 0 || f->mode == NC_PLAIN)
		return;
	if (end < 0)
		end = lseek64(fd, 0, SEEK_CUR);
	if (end >= n)
		note(f, n, end, how);
	if (f->pending >= NC_DROP_EVERY)
		drop_behind(fd, f);
	errno = saved;
}

void nc_truncated(int fd, struct nc_file *f, off64_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	off64_t tail = len - len % page;

	(void)fd;
	nc_residency_cut(&f->was, (size_t)((len + page - 1) / page));
	/* The page the file now ends in was read to have its tail zeroed. */
	if (tail < len) {
		grow(&f->seen, tail, len);
		grow(&f->dirty, tail, len);
	}
}

void nc_start_writeback(int fd, struct nc_file *f)
{
	struct nc_range started = f->dirty;

	writeback(fd, &f->dirty, SYNC_FILE_RANGE_WRITE);
	add(&f->going, &started);
}

/* Written through, and little enough to be parked. */
static int small_write(const struct nc_file *f)
{
	struct nc_range out = f->going;

	add(&out, &f->dirty);
	return out.hi > out.lo && out.hi - out.lo <= NC_PARK_MAX;
}

void nc_forget(int fd)
{
	struct nc_file *f = nc_file(fd);
	int saved = errno;

	nc_debug_closed(fd);
	if (fd >= 0)
		nc_unpark_range(fd, fd, 0);
	if (!f)
		return;
	take_whole(fd, f);
	if (f->mode != NC_PLAIN && !(small_write(f) && nc_park(fd, f))) {
		nc_drop_file(fd, f);
		nc_residency_free(&f->was);
	}
	*f = (struct nc_file){0};
	errno = saved;
}

void nc_disown(int fd)
{
	struct nc_file *f = nc_file(fd);

	if (f) {
		nc_residency_free(&f->was);
		*f = (struct nc_file){0};
	}
}

static void drop_known(int fd, struct nc_file *f)
{
	take_whole(fd, f);
	nc_drop_file(fd, f);
}

void nc_drop_all(void)
{
	int saved = errno;

	nc_unmap_all();
	nc_each_file(drop_known);
	nc_unpark_range(0, -1u, 1);
	errno = saved;
}
