/* SPDX-License-Identifier: MIT */
/* config.c -- upstream nocache's environment, read once, and its debug log.
 *
 * Read on the first call that needs it, which may come before the library's
 * constructor and in several threads at once: each thread that finds it
 * unread stores the same answer.  A value that is not a number in range
 * is ignored (the launcher refuses it with a message; the library never
 * prints unless NOCACHE_DEBUGFD asks, and then says it ignored it there).
 */
#include "nocache.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static struct nc_config config;
static int config_state; /* 1 once read */

/* NAME as a number in [lo, hi]; -1 when unset; -2 when not such a number. */
static long number(const char *name, long lo, long hi)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v)
		return -1;
	errno = 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < lo || n > hi)
		return -2;
	return n;
}

static int flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

/* The debug descriptor is only written while it is the file it was at
 * start: the command may close it and open something else there. */
static void open_debug(struct nc_config *c)
{
	long fd = number("NOCACHE_DEBUGFD", 0, INT_MAX);
	struct stat st;

	c->debugfd = -1;
	if (fd >= 0 && fstat((int)fd, &st) == 0 && !S_ISDIR(st.st_mode))
		c->debugfd = (int)fd;
}

static void read_config(struct nc_config *c)
{
	long n;

	open_debug(c);
	c->no_dontcache = flag("NOCACHE_NO_DONTCACHE");
	c->flushall = flag("NOCACHE_FLUSHALL");
	n = number("NOCACHE_NR_FADVISE", 1, NC_MAX_NR_FADVISE);
	c->nr_fadvise = n > 0 ? (int)n : 1;
	if (n == -2)
		nc_debug_to(c, "NOCACHE_NR_FADVISE is not 1 to %d: ignored",
			    NC_MAX_NR_FADVISE);
	n = number("NOCACHE_MAX_FDS", 0, INT_MAX);
	c->max_fds = n >= 0 ? (int)n : INT_MAX;
	if (n == -2)
		nc_debug_to(c, "NOCACHE_MAX_FDS is not 0 to %d: ignored", INT_MAX);
}

const struct nc_config *nc_config(void)
{
	int saved;

	if (PL_LIKELY(__atomic_load_n(&config_state, __ATOMIC_ACQUIRE)))
		return &config;
	/* Threads (or a signal handler) racing here all store the same
	 * values: no lock that a handler could find held. */
	saved = errno;
	read_config(&config);
	__atomic_store_n(&config_state, 1, __ATOMIC_RELEASE);
	errno = saved;
	return &config;
}

void nc_debug_closed(int fd)
{
	if (fd >= 0 && nc_config()->debugfd == fd)
		config.debugfd = -1;
}

/* One line "nocache[PID]: ..." with one write (O_APPEND keeps the lines of
 * several processes whole), through the system call: write() is ours. */
void nc_debug_to(const struct nc_config *c, const char *fmt, ...)
{
	char line[256];
	int saved = errno, n;
	va_list ap;

	if (c->debugfd < 0)
		return;
	n = snprintf(line, sizeof(line), "nocache[%ld]: ", (long)getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	syscall(SYS_write, c->debugfd, line, (size_t)n);
	errno = saved;
}
