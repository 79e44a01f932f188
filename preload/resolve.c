/* SPDX-License-Identifier: MIT */
/* resolve.c -- finds the real function behind a wrapper.
 *
 * dlsym does not allocate when the symbol exists, so this is safe from the
 * first call of a process, even inside an allocator's own initialisation.
 */
#define _GNU_SOURCE 1
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>

/* Stands in for a symbol this libc lacks and the system has no call for
 * (fallback.c): no program linked against it can call the name, but a
 * wrong dlsym must not become a crash. */
static long missing(void)
{
	errno = ENOSYS;
	return -1;
}

void *pl_resolve(void **slot, const char *name)
{
	int saved = errno;
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn)
		fn = pl_fallback(name);
	if (!fn)
		fn = (void *)missing;
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	errno = saved;
	return fn;
}
