/* SPDX-License-Identifier: MIT */
/* proc.c -- what the supervisor reads of a calling process: its memory
 * (process_vm_readv), its environment, name and mappings (/proc); its
 * descriptors are fds.c's.
 */
#include "common/common.h"
#include "supervisor.h"
#include "maps.h"
#include "env.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int emd_glob_list_match(const char *globs, const char *name);

int read_theirs(pid_t pid, unsigned long addr, void *out, size_t size, int string)
{
	size_t got = 0;

	while (got < size) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		struct iovec local, remote;

		if (chunk > size - got)
			chunk = size - got;
		local = (struct iovec){(char *)out + got, chunk};
		remote = (struct iovec){(void *)(addr + got), chunk};
		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)chunk)
			return -1;
		if (string && memchr((char *)out + got, '\0', chunk))
			return 0;
		got += chunk;
	}
	return string ? -1 : 0;
}

int their_iovecs(const struct call *c, unsigned long addr, struct iovec *iov, int cnt)
{
	unsigned int narrow[2 * THEIR_IOV_MAX];

	if (cnt < 0 || cnt > THEIR_IOV_MAX)
		return -1;
	if (!c->compat)
		return read_theirs(c->req->pid, addr, iov, cnt * sizeof(*iov), 0);
	if (read_theirs(c->req->pid, addr, narrow, cnt * 2 * sizeof(*narrow), 0) != 0)
		return -1;
	for (int i = 0; i < cnt; i++)
		iov[i] = (struct iovec){(void *)(unsigned long)narrow[2 * i], narrow[2 * i + 1]};
	return 0;
}

#define HEAD 32 /* as much of a string as its judgement needs */

/* Is one environment string, of which `head` holds the first bytes and
 * `len` is the length, EATMYDATA_DISABLE set as the library reads it?
 * -1: not that variable. */
static int disable_value(char *head, size_t len)
{
	static const char key[] = EMD_ENV_DISABLE "=";
	size_t k = sizeof(key) - 1;

	head[len < HEAD - 1 ? len : HEAD - 1] = '\0';
	if (len < k || memcmp(head, key, k) != 0)
		return -1;
	return emd_env_true(head + k);
}

/* The environment is read whole, however long: getenv takes the first
 * occurrence, and so does this. */
static int env_disables(int fd)
{
	char chunk[4096], head[HEAD];
	size_t len = 0;
	ssize_t n;
	int v;

	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (chunk[i] != '\0') {
				if (len < HEAD - 1)
					head[len] = chunk[i];
				len++;
			} else if ((v = disable_value(head, len)) >= 0) {
				return v;
			} else {
				len = 0;
			}
		}
	return len && disable_value(head, len) == 1;
}

/* The first NUL-terminated string of a /proc file, or "". */
static void first_string(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, size - 1) : 0;

	out[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

int caller_eats(pid_t pid, const char *only)
{
	char path[64], exe[PATH_MAX], argv0[PATH_MAX];
	ssize_t n;
	int fd, off = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		off = env_disables(fd);
		close(fd);
	}
	if (off || !only)
		return !off;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	first_string(path, argv0, sizeof(argv0));
	return emd_glob_list_match(only, exe) || emd_glob_list_match(only, argv0);
}

int caller_fd_room(pid_t tid)
{
	char path[64];
	struct rlimit lim;
	struct dirent *d;
	unsigned long below = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", tid);
	if (prlimit(tid, RLIMIT_NOFILE, NULL, &lim) != 0)
		return 0;
	if (!(dir = opendir(path))) {
		fds_note();
		return 0;
	}
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && strtoul(d->d_name, NULL, 10) < lim.rlim_cur)
			below++;
	closedir(dir);
	return below < lim.rlim_cur;
}

/* How far from `start` the mappings reach without a gap; the maps are in
 * address order.  [vsyscall] is listed, but no mapping of the process's. */
struct span {
	unsigned long start, end;
};

static int extend(const struct emd_map *m, void *arg)
{
	struct span *s = arg;

	if (m->lo <= s->start && s->start < m->hi && strcmp(m->path, "[vsyscall]") != 0)
		s->start = m->hi;
	return s->start >= s->end;
}

int caller_mapped(pid_t pid, unsigned long start, unsigned long end)
{
	struct span s = {start, end};
	int fd = open_proc(pid, "maps");

	if (fd < 0)
		return -1;
	emd_maps_each(fd, extend, &s);
	close(fd);
	return s.start >= s.end;
}

/* AT_RANDOM's address in the auxiliary vector read from fd, as 64-bit
 * pairs, or as a 32-bit process's (tried second: a 64-bit vector never
 * reads as one that names AT_RANDOM, whose address is not 0); 0: none. */
static unsigned long at_random(int fd)
{
	unsigned long long v[2 * 64] = {0};
	ssize_t n = read(fd, v, sizeof(v));
	const unsigned *w = (const unsigned *)v;

	for (ssize_t i = 0; n > 0 && i + 1 < n / 8 && v[i]; i += 2)
		if (v[i] == AT_RANDOM)
			return v[i + 1];
	for (ssize_t i = 0; n > 0 && i + 1 < n / 4 && w[i]; i += 2)
		if (w[i] == AT_RANDOM)
			return w[i + 1];
	return 0;
}

int image_stamp(pid_t pid, struct image_stamp *st)
{
	int fd = open_proc(pid, "auxv");

	memset(st, 0, sizeof(*st));
	if (fd >= 0) {
		st->at = at_random(fd);
		close(fd);
	}
	if (st->at && read_theirs(pid, st->at, st->bytes, sizeof(st->bytes), 0) == 0)
		return 0;
	st->at = 0;
	return -1;
}

int same_image(pid_t pid, const struct image_stamp *st)
{
	unsigned char now[sizeof(st->bytes)];

	return st->at && read_theirs(pid, st->at, now, sizeof(now), 0) == 0 &&
	       !memcmp(now, st->bytes, sizeof(now));
}

int same_image_and(pid_t pid, const struct image_stamp *st, unsigned long at, void *buf,
		   size_t len, size_t *got)
{
	unsigned char now[sizeof(st->bytes)];
	struct iovec local[2] = {{now, sizeof(now)}, {buf, len}},
		     remote[2] = {{NULL, sizeof(now)}, {(void *)at, len}};
	int stamped = st && st->at;
	ssize_t n = 0;

	/* The stamp first: a read of the stack cut short (its mapping ends
	 * there) would stop before it. */
	if (stamped) {
		remote[0].iov_base = (void *)st->at;
		n = process_vm_readv(pid, local, 2, remote, 2, 0) - (ssize_t)sizeof(now);
	} else if (len) {
		n = process_vm_readv(pid, local + 1, 1, remote + 1, 1, 0);
	}
	*got = n > 0 ? (size_t)n : 0;
	return stamped && n >= 0 && !memcmp(now, st->bytes, sizeof(now));
}

int open_proc(pid_t pid, const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		fds_note();
	return fd;
}

/* The Tgid of thread tid's status (`none` if it cannot be read), and its
 * Name in name[size] if asked. */
static pid_t status_of(pid_t tid, char *name, size_t size, pid_t none)
{
	char buf[512], *at;
	int fd = open_proc(tid, "status");
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (name && size)
		name[0] = '\0';
	if (name && size && !strncmp(buf, "Name:\t", 6))
		snprintf(name, size, "%.*s", (int)strcspn(buf + 6, "\n"), buf + 6);
	return (at = strstr(buf, "\nTgid:")) ? (pid_t)strtol(at + 6, NULL, 10) : none;
}

pid_t caller_process(pid_t tid, char *name, size_t size)
{
	return status_of(tid, name, size, tid);
}

pid_t caller_pid(pid_t tid)
{
	return status_of(tid, NULL, 0, -1);
}
