/* SPDX-License-Identifier: MIT */
/* supervisor.c -- answers the durability requests the seccomp filter sends
 * (seccomp.c), from outside the process that made them, as the library
 * answers them inside: the kernel's verdict on the arguments, no I/O.
 *
 * A descriptor is fetched with pidfd_getfd and asked with
 * sync_file_range(fd, 0, 0, 0).  An O_SYNC open is made here without the
 * flag and handed back with SECCOMP_IOCTL_NOTIF_ADDFD, but only for a
 * process that is this one in every respect that decides what it may open
 * (user and group ids, groups, capabilities, namespaces, root) and with its
 * umask; otherwise, and for any request this cannot answer faithfully, the
 * call goes on to the kernel unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
 */
#include "common.h"
#include "seccomp.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

int emd_glob_list_match(const char *globs, const char *name);

int fail(struct call *c, int err)
{
	c->resp->error = -err;
	return 0;
}

/* The process a thread belongs to: pidfd_open takes only those. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	int tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if ((f = fopen(path, "re"))) {
		while (fgets(line, sizeof(line), f) && sscanf(line, "Tgid: %d", &tgid) != 1)
			;
		fclose(f);
	}
	return tgid;
}

int their_fd(const struct call *c, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, c->req->pid, 0), r, e;

	if (pidfd < 0 && (errno == EINVAL || errno == ENOENT)) /* a thread: aio_fsync */
		pidfd = (int)syscall(SYS_pidfd_open, tgid_of(c->req->pid), 0);
	if (pidfd < 0)
		return -errno;
	r = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	e = errno;
	close(pidfd);
	return r < 0 ? -e : r;
}

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

void note(int fd)
{
	const char *dir = getenv("EATMYDATA_SYNC_DIR");
	char path[PATH_MAX];
	struct stat st;

	if (!dir || !*dir)
		return;
	if (fd >= 0 && fstat(fd, &st) == 0)
		snprintf(path, sizeof(path), "%s/%u:%u", dir, major(st.st_dev), minor(st.st_dev));
	else
		snprintf(path, sizeof(path), "%s/all", dir);
	mkdir(path, 0700);
}

/* fsync, fdatasync, syncfs; `espipe` is the answer for pipes and sockets. */
static int fd_sync(struct call *c, int espipe)
{
	int fd = their_fd(c, (int)c->req->data.args[0]), r;

	if (fd == -EBADF)
		return fail(c, EBADF);
	if (fd < 0)
		return CONTINUE;
	r = (int)syscall(SYS_sync_file_range, fd, 0L, 0L, 0U) ? -errno : 0;
	if (r == -ESPIPE)
		r = espipe;
	if (r == 0)
		note(fd);
	close(fd);
	return r ? fail(c, -r) : 0;
}

static int sync_range(struct call *c)
{
	const __u64 *a = c->req->data.args;
	int fd = their_fd(c, (int)a[0]), r;

	if (fd == -EBADF)
		return fail(c, EBADF);
	if (fd < 0)
		return CONTINUE;
	r = (int)syscall(SYS_sync_file_range, fd, (long)a[1], (long)a[2],
			 (unsigned)a[3] & ~7u) ? -errno : 0;
	if (r == 0)
		note(fd);
	close(fd);
	return r ? fail(c, -r) : 0;
}

/* Is [start, end) mapped without a gap in the caller? */
static int mapped(pid_t pid, unsigned long start, unsigned long end)
{
	char path[64], line[512];
	unsigned long lo, hi;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (start < end && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= start && start < hi)
			start = hi;
	fclose(f);
	return start >= end;
}

/* msync's checks, in the kernel's order; MS_INVALIDATE of locked pages
 * (EBUSY) is not seen from here. */
static int mapping_sync(struct call *c)
{
	unsigned long addr = c->req->data.args[0], len = c->req->data.args[1];
	unsigned long page = sysconf(_SC_PAGESIZE);
	int flags = (int)c->req->data.args[2], m;

	if ((flags & ~(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) || (addr & (page - 1)) ||
	    ((flags & MS_ASYNC) && (flags & MS_SYNC)))
		return fail(c, EINVAL);
	len = (len + page - 1) & ~(page - 1);
	if (addr + len < addr)
		return fail(c, ENOMEM);
	if (len == 0)
		return 0;
	if ((m = mapped(c->req->pid, addr, addr + len)) < 0)
		return CONTINUE;
	note(-1);
	return m ? 0 : fail(c, ENOMEM);
}

/* Does this process eat?  Its environment at exec may say
 * EATMYDATA_DISABLE, and --only may not name it. */
static int eats(pid_t pid, const char *only)
{
	char path[64], buf[8192], exe[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (char *p = buf; n > 0 && p < buf + n; p += strlen(p) + 1)
			if (!strncmp(p, "EATMYDATA_DISABLE=", 18) && p[18] && strcmp(p + 18, "0"))
				return 0;
	}
	if (!only)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	return emd_glob_list_match(only, exe) || emd_glob_list_match(only, buf);
}

static int answer(struct call *c, const char *only)
{
	if (!eats(c->req->pid, only))
		return CONTINUE;
	switch (c->req->data.nr) {
	case SYS_fsync:
	case SYS_fdatasync:
		return fd_sync(c, -EINVAL);
	case SYS_syncfs:
		return fd_sync(c, 0);
	case SYS_sync:
		note(-1);
		return 0;
	case SYS_sync_file_range:
		return sync_range(c);
	case SYS_msync:
		return mapping_sync(c);
	case SYS_open:
	case SYS_openat:
	case SYS_openat2:
		return open_on_behalf(c);
	case SYS_io_uring_enter:
		return uring_submit(c);
	case SYS_pwritev2:
		return write_on_behalf(c);
	default:
		return CONTINUE;
	}
}

void supervise(int listener, const char *only)
{
	struct seccomp_notif_sizes sizes;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	struct pollfd p = {.fd = listener, .events = POLLIN};

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0 ||
	    !(req = malloc(sizes.seccomp_notif > sizeof(*req) ? sizes.seccomp_notif : sizeof(*req))) ||
	    !(resp = malloc(sizes.seccomp_notif_resp > sizeof(*resp) ? sizes.seccomp_notif_resp
								      : sizeof(*resp))))
		_exit(1);
	/* POLLHUP: no process is left under the filter. */
	while (poll(&p, 1, -1) >= 0 || errno == EINTR) {
		struct call c = {listener, req, resp};
		int how;

		if (p.revents & POLLHUP && !(p.revents & POLLIN))
			_exit(0);
		if (!(p.revents & POLLIN))
			continue;
		memset(req, 0, sizes.seccomp_notif);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) != 0)
			continue; /* the caller died meanwhile */
		memset(resp, 0, sizes.seccomp_notif_resp);
		resp->id = req->id;
		how = answer(&c, only);
		if (how == ANSWERED)
			continue;
		if (how == CONTINUE)
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	}
	_exit(0);
}
