/* SPDX-License-Identifier: MIT */
/* maps.c -- the lines of /proc/PID/maps, one mapping at a time.  Linked
 * into the library and into the supervisor (seccomp/), so it calls
 * nothing the library intercepts and nothing that allocates.
 */
#include "maps.h"

#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* A line's fields; 0 if it is not one of the kernel's. */
static int parse(char *line, struct emd_map *m)
{
	char *p = line, *end;
	int field;

	memset(m->perms, 0, sizeof(m->perms));
	m->lo = strtoul(p, &end, 16);
	if (end == p || *end != '-')
		return 0;
	m->hi = strtoul(end + 1, &p, 16);
	/* perms, offset, device, inode: blank-separated */
	for (field = 0; field < 4; field++) {
		while (*p == ' ')
			p++;
		if (field == 0)
			memcpy(m->perms, p, strnlen(p, 4));
		if (field == 1)
			m->offset = strtoul(p, NULL, 16);
		if (field == 2) /* "major:minor", in hex */
			m->dev = makedev(strtoul(p, &end, 16), *end == ':' ? strtoul(end + 1, NULL, 16) : 0);
		if (field == 3)
			m->inode = strtoul(p, NULL, 10);
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	m->path = p;
	return 1;
}

/* match() of one line, 0 if it is not a mapping's. */
static int one(char *line, int (*match)(const struct emd_map *m, void *arg), void *arg)
{
	struct emd_map m;

	return parse(line, &m) ? match(&m, arg) : 0;
}

int emd_maps_each(int fd, int (*match)(const struct emd_map *m, void *arg), void *arg)
{
	char buf[4096], *nl;
	size_t have = 0, start;
	ssize_t n;
	int skipping = 0, r;

	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		for (start = 0; (nl = memchr(buf + start, '\n', have - start)); start = nl + 1 - buf) {
			*nl = '\0';
			if (!skipping && (r = one(buf + start, match, arg)) != 0)
				return r;
			skipping = 0;
		}
		have -= start;
		memmove(buf, buf + start, have);
		if (have == sizeof(buf) - 1) {
			/* A line longer than the buffer (a long path): its
			 * beginning, then nothing more of it. */
			buf[have] = '\0';
			if (!skipping && (r = one(buf, match, arg)) != 0)
				return r;
			skipping = 1;
			have = 0;
		}
	}
	return 0;
}
