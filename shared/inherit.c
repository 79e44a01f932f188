/* SPDX-License-Identifier: MIT */
/* inherit.c -- finding again what the launcher left open for the tree
 * (include/inherit.h), for the library, the supervisor and the launchers
 * alike.  Keeps errno; calls nothing the library intercepts and allocates
 * nothing.
 */
#include "inherit.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* A decimal number of text up to `stop`; the end, or NULL. */
static const char *number(const char *text, char stop, unsigned long long *out)
{
	char *end;

	*out = strtoull(text, &end, 10);
	return end == text || *end != stop || *text == '-' ? NULL : end;
}

/* "DEV:INO" into in. */
static int parse_id(struct emd_inherited *in, const char *id)
{
	return (id = number(id, ':', &in->dev)) && number(id + 1, '\0', &in->ino) ? 0 : -1;
}

int emd_inherited_parse(struct emd_inherited *in, const char *text)
{
	unsigned long long fd;

	if (!text || !(text = number(text, ':', &fd)) || fd > 0x7fffffff)
		return -1;
	in->fd = (int)fd;
	return parse_id(in, text + 1);
}

int emd_notes_parse(struct emd_inherited *in, const char *fd_text, const char *id)
{
	unsigned long long fd = (unsigned long long)-1;

	if (fd_text && (!number(fd_text, '\0', &fd) || fd > 0x7fffffff))
		return -1;
	in->fd = fd_text ? (int)fd : -1;
	return parse_id(in, id);
}

int emd_inherited_ok(const struct emd_inherited *in, mode_t type)
{
	int saved = errno, ok;
	struct stat st;

	ok = in->fd >= 0 && fstat(in->fd, &st) == 0 && (st.st_mode & S_IFMT) == type &&
	     st.st_dev == in->dev && st.st_ino == in->ino;
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

int emd_notes_add(const struct emd_inherited *n, dev_t dev, int all)
{
	char name[32] = "all", *p;
	int saved = errno, ok;

	if (!all) {
		p = put_uint(name, major(dev));
		*p++ = ':';
		*put_uint(p, minor(dev)) = '\0';
	}
	ok = emd_inherited_ok(n, S_IFDIR) && (mkdirat(n->fd, name, 0700) == 0 || errno == EEXIST);
	errno = saved;
	return ok ? 0 : -1;
}
