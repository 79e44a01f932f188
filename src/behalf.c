/* SPDX-License-Identifier: MIT */
/* behalf.c -- what the supervisor does for a filtered process: an O_SYNC
 * open made without O_SYNC and handed over with SECCOMP_IOCTL_NOTIF_ADDFD,
 * and a pwritev2 with RWF_SYNC or RWF_DSYNC made without them.
 *
 * Opening for another process must never open what it could not: this is
 * done only when the caller is this process in every respect that decides
 * it (ids, groups, capabilities, mount and user namespaces, root), relative
 * to its own working directory or descriptor, with its umask, and never
 * for a FIFO or device, whose open has side effects.  Otherwise the call
 * goes on unchanged, O_SYNC and all.
 */
#include "common.h"
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define SYNC_FLAGS (O_SYNC | O_DSYNC)
#define HOW_MAX 256

/* The lines of /proc/PID/status that decide what a process may open. */
static int status_of(const char *pid, char *out, size_t size, mode_t *umask_out)
{
	static const char *const keys[] = {"Uid:", "Gid:", "Groups:", "CapInh:",
					   "CapPrm:", "CapEff:", "CapBnd:"};
	char path[64], line[512];
	size_t used = 0;
	unsigned um;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (umask_out && sscanf(line, "Umask: %o", &um) == 1)
			*umask_out = um;
		for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
			if (!strncmp(line, keys[i], strlen(keys[i])) && used + strlen(line) < size)
				used += strlen(strcpy(out + used, line));
	}
	fclose(f);
	return 0;
}

static int same_link(const char *pid, const char *what)
{
	char a[128], b[128], pa[64], pb[64];
	ssize_t na, nb;

	snprintf(pa, sizeof(pa), "/proc/%s/%s", pid, what);
	snprintf(pb, sizeof(pb), "/proc/self/%s", what);
	na = readlink(pa, a, sizeof(a));
	nb = readlink(pb, b, sizeof(b));
	return na > 0 && na == nb && !memcmp(a, b, na);
}

/* Is the caller this process in every respect an open depends on? */
static int same_process_identity(pid_t pid, mode_t *umask_out)
{
	char p[16], theirs[2048], mine[2048], root[64];
	struct stat a, b;

	snprintf(p, sizeof(p), "%d", pid);
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	return status_of(p, theirs, sizeof(theirs), umask_out) == 0 &&
	       status_of("self", mine, sizeof(mine), NULL) == 0 && !strcmp(theirs, mine) &&
	       same_link(p, "ns/mnt") && same_link(p, "ns/user") &&
	       stat(root, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* The open the caller asked for, as openat2 arguments; 0 if there are no
 * sync flags after all or the request cannot be read (the kernel will
 * answer it: EFAULT, EINVAL...). */
static int request(const struct call *c, int *dirfd, char *path, struct open_how *how,
		   size_t *how_size)
{
	const __u64 *a = c->req->data.args;
	pid_t pid = c->req->pid;
	int nr = c->req->data.nr, at = nr != SYS_open;

	*dirfd = at ? (int)a[0] : AT_FDCWD;
	if (read_theirs(pid, a[at], path, PATH_MAX, 1) != 0)
		return 0;
	memset(how, 0, HOW_MAX);
	if (nr == SYS_openat2) {
		*how_size = a[3];
		if (*how_size < sizeof(*how) || *how_size > HOW_MAX ||
		    read_theirs(pid, a[2], how, *how_size, 0) != 0)
			return 0;
	} else {
		how->flags = (unsigned)a[at + 1];
		how->mode = how->flags & (O_CREAT | __O_TMPFILE) ? (unsigned)a[at + 2] & 07777 : 0;
	}
	return (how->flags & SYNC_FLAGS) != 0;
}

/* The directory the path is relative to, here. */
static int base_dir(const struct call *c, int dirfd)
{
	char cwd[64];

	if (dirfd != AT_FDCWD)
		return their_fd(c, dirfd);
	snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", c->req->pid);
	return open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Never open a FIFO or a device for someone else: it may block or have
 * side effects.  A missing file (O_CREAT) is fine. */
static int plain_file(int base, const char *path, unsigned long long flags)
{
	struct stat st;

	if (fstatat(base, path, &st, flags & O_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0) != 0)
		return errno == ENOENT;
	return S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
}

static int hand_over(struct call *c, int fd, unsigned long long flags)
{
	struct seccomp_notif_addfd add = {.id = c->req->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
					  .srcfd = fd,
					  .newfd_flags = flags & O_CLOEXEC};

	note(fd);
	ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	close(fd);
	return ANSWERED;
}

int open_on_behalf(struct call *c)
{
	char path[PATH_MAX];
	unsigned char how_buf[HOW_MAX];
	struct open_how *how = (struct open_how *)how_buf;
	size_t how_size = sizeof(*how);
	mode_t their_umask = 022, mine;
	int dirfd, base, fd, err;

	if (!request(c, &dirfd, path, how, &how_size) ||
	    !same_process_identity(c->req->pid, &their_umask) ||
	    ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &c->req->id) != 0)
		return CONTINUE;
	if ((base = base_dir(c, dirfd)) < 0)
		return base == -EBADF ? fail(c, EBADF) : CONTINUE;
	if (!plain_file(base, path, how->flags)) {
		close(base);
		return CONTINUE;
	}
	how->flags &= ~(unsigned long long)SYNC_FLAGS;
	mine = umask(their_umask);
	if (c->req->data.nr == SYS_openat2)
		fd = (int)syscall(SYS_openat2, base, path, how, how_size);
	else
		fd = openat(base, path, (int)how->flags | O_CLOEXEC, (mode_t)how->mode);
	err = errno;
	umask(mine);
	close(base);
	return fd < 0 ? fail(c, err) : hand_over(c, fd, how->flags);
}

/* pwritev2 with RWF_SYNC or RWF_DSYNC on a file: the same write, made here
 * on the caller's own open file (same position, same O_APPEND), without
 * the flags.  Pipes and sockets go on: the flags sync nothing there, and
 * what the kernel answers depends on them. */
int write_on_behalf(struct call *c)
{
	const __u64 *a = c->req->data.args;
	struct iovec remote[64], local;
	int fd, cnt = (int)a[2];
	size_t total = 0;
	ssize_t r;
	char *buf;

	if (cnt < 1 || cnt > 64 ||
	    read_theirs(c->req->pid, a[1], remote, cnt * sizeof(*remote), 0) != 0)
		return CONTINUE;
	for (int i = 0; i < cnt; i++)
		total += remote[i].iov_len;
	fd = their_fd(c, (int)a[0]);
	if (fd < 0)
		return fd == -EBADF ? fail(c, EBADF) : CONTINUE;
	if (total > (64 << 20) || syscall(SYS_sync_file_range, fd, 0L, 0L, 0U) != 0 ||
	    !(buf = malloc(total ? total : 1))) {
		close(fd);
		return CONTINUE;
	}
	local = (struct iovec){buf, total};
	r = process_vm_readv(c->req->pid, &local, 1, remote, cnt, 0);
	if (r != (ssize_t)total ||
	    ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &c->req->id) != 0)
		r = -1;
	else
		r = pwritev2(fd, &local, 1, (off_t)a[3], (int)a[5] & ~(RWF_SYNC | RWF_DSYNC));
	free(buf);
	if (r >= 0) {
		note(fd);
		c->resp->val = r;
	}
	close(fd);
	return r >= 0 ? 0 : (errno == EFAULT ? CONTINUE : fail(c, errno));
}
