/* SPDX-License-Identifier: MIT */
/* symbols.c -- the supervisor's reading of a module's symbols
 * and unwind tables (seccomp/site.c, cfi.c and pclntab.c, built into this
 * program with their allocations counted),
 * for tests/py/test_syncstat_site_symbols.py.
 * Usage: symbols FILE...: each FILE's symbols read by a thread of its own,
 * which then leaves, as a supervisor's worker does; for each, a line
 * "FILE: N functions, too many T, rows R, peak B" (R: the frames' rules
 * had at three addresses of each unwind entry, two of each Go function;
 * B: the most bytes allocated at
 * once while reading it), then "live L" (bytes still allocated once every
 * thread left: 0, or something leaked). */
#define _GNU_SOURCE 1
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

static size_t live, peak;
static pthread_mutex_t counting = PTHREAD_MUTEX_INITIALIZER;

/* Each block is preceded by its size. */
static void *counted_realloc(void *p, size_t size)
{
	size_t *h = p ? (size_t *)p - 2 : NULL, old = h ? h[0] : 0;

	if (!(h = realloc(h, size + 2 * sizeof(size_t))))
		return NULL;
	pthread_mutex_lock(&counting);
	live += size - old;
	if (live > peak)
		peak = live;
	pthread_mutex_unlock(&counting);
	h[0] = size;
	return h + 2;
}

static void *counted_malloc(size_t size)
{
	return counted_realloc(NULL, size);
}

static void counted_free(void *p)
{
	size_t *h = p ? (size_t *)p - 2 : NULL;

	if (!h)
		return;
	pthread_mutex_lock(&counting);
	live -= h[0];
	pthread_mutex_unlock(&counting);
	free(h);
}

static void *counted_calloc(size_t n, size_t size)
{
	void *p = n && size > (size_t)-1 / n ? NULL : counted_malloc(n * size);

	return p ? memset(p, 0, n * size) : NULL;
}

#define malloc counted_malloc
#define calloc counted_calloc
#define realloc counted_realloc
#define free counted_free
#include "../../seccomp/site.c"
#include "../../seccomp/cfi.c"
#include "../../seccomp/pclntab.c"
#undef malloc
#undef calloc
#undef realloc
#undef free

/* No caller's memory is read here. */
int read_theirs(pid_t pid, unsigned long addr, void *out, size_t size, int string)
{
	(void)pid, (void)addr, (void)out, (void)size, (void)string;
	return -1;
}

int open_proc(pid_t pid, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

struct job {
	const char *file;
	size_t n, rows;
	int too_many;
	size_t peak;
};

/* The rules at the first, a middle and the last address of each unwind
 * entry and each function of the module read: how many were had (the
 * readers of the tables walked over whatever the file holds). */
static size_t rows(void)
{
	struct unwind_row r;
	size_t had = 0;

	for (size_t i = 0; mod->has_cfi && i < mod->cfi.n; i++) {
		const struct cfi_fde *f = &mod->cfi.fdes[i];

		had += !cfi_row(&mod->cfi, f->lo, &r) + !cfi_row(&mod->cfi, f->lo + (f->hi - f->lo) / 2, &r) +
		       !cfi_row(&mod->cfi, f->hi - 1, &r);
	}
	for (size_t i = 0; mod->go && i < mod->n; i++)
		had += !pcln_row(&mod->pcln, mod->syms[i].lo, &r) +
		       !pcln_row(&mod->pcln, mod->syms[i].hi - 1, &r);
	return had;
}

static void *read_one(void *arg)
{
	struct job *j = arg;
	struct module_key k;
	int fd = open(j->file, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || key_of(fd, "", AT_EMPTY_PATH, &k) != 0)
		return perror(j->file), NULL;
	pthread_mutex_lock(&counting);
	peak = live;
	pthread_mutex_unlock(&counting);
	load(fd, &k);
	close(fd);
	j->n = mod->n;
	j->rows = rows();
	j->too_many = mod->too_many;
	j->peak = peak;
	return NULL;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct job j = {argv[i], 0, 0, 0, 0};
		pthread_t t;

		if (pthread_create(&t, NULL, read_one, &j) != 0 || pthread_join(t, NULL) != 0)
			return 2;
		printf("%s: %zu functions, too many %d, rows %zu, peak %zu\n", j.file, j.n, j.too_many,
		       j.rows, j.peak);
	}
	printf("live %zu\n", live);
	return 0;
}
