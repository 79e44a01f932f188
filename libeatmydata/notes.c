/* SPDX-License-Identifier: MIT */
/* notes.c -- the --sync-on-exit notes directory (include/notes.h), for the
 * library and the supervisor alike.  Keeps errno; calls nothing the
 * library intercepts and allocates nothing.
 */
#include "notes.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int emd_notes_parse(struct emd_notes *n, const char *fd_text, const char *id)
{
	char *end;
	long fd = fd_text ? strtol(fd_text, &end, 10) : -1;

	if (fd_text && (fd < 0 || fd > 0x7fffffff || end == fd_text || *end))
		return -1;
	n->dev = strtoull(id, &end, 10);
	if (end == id || *end != ':')
		return -1;
	n->ino = strtoull(end + 1, &end, 10);
	if (*end)
		return -1;
	n->fd = (int)fd;
	return 0;
}

int emd_notes_ok(const struct emd_notes *n)
{
	int saved = errno, ok;
	struct stat st;

	ok = n->fd >= 0 && fstat(n->fd, &st) == 0 && S_ISDIR(st.st_mode) &&
	     st.st_dev == n->dev && st.st_ino == n->ino;
	errno = saved;
	return ok;
}

/* Decimal digits of v at p; returns the end. */
static char *put_uint(char *p, unsigned v)
{
	char tmp[12];
	int len = 0;

	do
		tmp[len++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (len)
		*p++ = tmp[--len];
	return p;
}

int emd_notes_add(const struct emd_notes *n, dev_t dev, int all)
{
	char name[32] = "all", *p;
	int saved = errno, ok;

	if (!all) {
		p = put_uint(name, major(dev));
		*p++ = ':';
		*put_uint(p, minor(dev)) = '\0';
	}
	ok = emd_notes_ok(n) && (mkdirat(n->fd, name, 0700) == 0 || errno == EEXIST);
	errno = saved;
	return ok ? 0 : -1;
}
