/* SPDX-License-Identifier: MIT */
/* ctcalls.c -- each system call libcrashtest routes (include/requests.h and
 * include/crashtest_routes.h), made by number through libc's syscall():
 *   ctcalls NAME    in the current directory, which holds data and src
 *   ctcalls --list  the names, one a line
 * A row without a caller here is a build error: a new row needs one.
 * Built static too: the same calls through the seccomp supervisor
 * (tests/py/test_crashtest_supervised.py).
 */
#define _GNU_SOURCE 1
#include "crashtest_routes.h"
#include "platform.h"
#include "requests.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static int data(void)
{
	int fd = open("data", O_RDWR);

	if (fd < 0)
		perror("data"), exit(1);
	return fd;
}

static struct iovec iov[1] = {{"new", 3}};

static long call_fsync(void) { return syscall(SYS_fsync, data()); }
static long call_fdatasync(void) { return syscall(SYS_fdatasync, data()); }
static long call_syncfs(void) { return syscall(SYS_syncfs, data()); }
static long call_sync(void) { return syscall(SYS_sync); }
static long call_sync_file_range(void) { return syscall(SYS_sync_file_range, data(), 0, 0, 7); }
static long call_msync(void)
{
	char *p = mmap(NULL, 4, PROT_READ | PROT_WRITE, MAP_SHARED, data(), 0);

	if (p == MAP_FAILED)
		return -1;
	memcpy(p, "new", 3);
	return syscall(SYS_msync, p, 4, MS_SYNC);
}
static long call_open(void)
{
	return EMD_SYS_OPEN < 0 ? -2 : syscall(EMD_SYS_OPEN, "new", O_CREAT | O_WRONLY, 0644);
}
static long call_openat(void) { return syscall(SYS_openat, AT_FDCWD, "new", O_CREAT | O_WRONLY, 0644); }
static long call_openat2(void)
{
	struct open_how how = {.flags = O_CREAT | O_WRONLY, .mode = 0644};

	return syscall(SYS_openat2, AT_FDCWD, "new", &how, sizeof(how));
}
static long call_open_by_handle_at(void) { return -2; }
static long call_pwritev2(void) { return syscall(SYS_pwritev2, data(), iov, 1, 0, 0, RWF_DSYNC); }
static long call_io_uring_enter(void) { return -2; }
static long call_io_uring_setup(void) { return -2; }
static long call_io_submit(void) { return -2; }
static long call_write(void) { return syscall(SYS_write, data(), "new", 3); }
static long call_writev(void) { return syscall(SYS_writev, data(), iov, 1); }
static long call_pwrite64(void) { return syscall(SYS_pwrite64, data(), "new", 3, 0); }
static long call_pwritev(void) { return syscall(SYS_pwritev, data(), iov, 1, 0, 0); }
static long call_copy_file_range(void)
{
	return syscall(SYS_copy_file_range, open("src", O_RDONLY), NULL, data(), NULL, 3, 0);
}
static long call_sendfile(void) { return syscall(SYS_sendfile, data(), open("src", O_RDONLY), NULL, 3); }
static long call_ftruncate(void) { return syscall(SYS_ftruncate, data(), 1); }
static long call_truncate(void) { return syscall(SYS_truncate, "data", 1); }
static long call_fallocate(void) { return syscall(SYS_fallocate, data(), 0, 0, 9000); }
static long call_creat(void) { return syscall(EMD_SYS_PATHS(creat), "new", 0644); }
static long call_rename(void) { return syscall(EMD_SYS_PATHS(rename), "data", "moved"); }
static long call_renameat(void) { return syscall(SYS_renameat, AT_FDCWD, "data", AT_FDCWD, "moved"); }
static long call_renameat2(void)
{
	return syscall(SYS_renameat2, AT_FDCWD, "data", AT_FDCWD, "src", RENAME_EXCHANGE);
}
static long call_unlink(void) { return syscall(EMD_SYS_PATHS(unlink), "data"); }
static long call_unlinkat(void) { return syscall(SYS_unlinkat, AT_FDCWD, "data", 0); }
static long call_rmdir(void) { return mkdir("d", 0755) ?: syscall(EMD_SYS_PATHS(rmdir), "d"); }
static long call_mkdir(void) { return syscall(EMD_SYS_PATHS(mkdir), "d", 0755); }
static long call_mkdirat(void) { return syscall(SYS_mkdirat, AT_FDCWD, "d", 0755); }
static long call_link(void) { return syscall(EMD_SYS_PATHS(link), "data", "other"); }
static long call_linkat(void) { return syscall(SYS_linkat, AT_FDCWD, "data", AT_FDCWD, "other", 0); }
static long call_symlink(void) { return syscall(EMD_SYS_PATHS(symlink), "data", "sym"); }
static long call_symlinkat(void) { return syscall(SYS_symlinkat, "data", AT_FDCWD, "sym"); }
/* A device number past 32 bits: the kernel takes its lower half. */
#define DEV_PAST_32 (1L << 32)
static long call_mknod(void)
{
	return syscall(EMD_SYS_PATHS(mknod), "node", S_IFREG | 0644, DEV_PAST_32);
}
static long call_mknodat(void)
{
	return syscall(SYS_mknodat, AT_FDCWD, "node", S_IFREG | 0644, DEV_PAST_32);
}
static long call_bind(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = "sock"};
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	return s < 0 ? -1 : syscall(SYS_bind, s, &a, sizeof(a));
}
static long call_sendto(void)
{
	int sv[2];

	return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ?: syscall(SYS_sendto, sv[0], "x", 1, 0, NULL, 0);
}
static long call_sendmsg(void)
{
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = 1};
	int sv[2];

	return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ?: syscall(SYS_sendmsg, sv[0], &m, 0);
}
static long call_sendmmsg(void)
{
	struct mmsghdr m[2] = {{.msg_hdr = {.msg_iov = iov, .msg_iovlen = 1}},
			       {.msg_hdr = {.msg_iov = iov, .msg_iovlen = 1}}};
	int sv[2];

	return socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) ?: syscall(SYS_sendmmsg, sv[0], m, 2, 0);
}
static long call_vmsplice(void)
{
	int p[2];

	return pipe(p) ?: syscall(SYS_vmsplice, p[1], iov, 1, 0);
}
static long call_splice(void)
{
	int p[2];

	return pipe(p) ?: syscall(SYS_splice, data(), NULL, p[1], NULL, 3, 0);
}
static long call_tee(void)
{
	int a[2], b[2];
	long r;

	/* the first pipe filled by a splice, itself a claim */
	if (pipe(a) || pipe(b) || (r = syscall(SYS_splice, data(), NULL, a[1], NULL, 3, 0)) < 0)
		return -1;
	return syscall(SYS_tee, a[0], b[1], 3, 0);
}

struct row {
	const char *name;
	long nr;
	long (*call)(void);
};

#define REQUEST_ROW(name, nr, ...) {#name, (nr), call_##name},
#define CHANGE_ROW(name, nr) {#name, (nr), call_##name},
static const struct row rows[] = {EMD_REQUESTS(REQUEST_ROW) CT_CHANGES(CHANGE_ROW)};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc == 2 && i < sizeof(rows) / sizeof(*rows); i++) {
		long r;

		if (!strcmp(argv[1], "--list")) {
			printf("%s %ld\n", rows[i].name, rows[i].nr);
			continue;
		}
		if (strcmp(argv[1], rows[i].name))
			continue;
		r = rows[i].nr < 0 ? -2 : rows[i].call();
		if (r == -1)
			perror(rows[i].name);
		return r == -1;
	}
	return argc == 2 && !strcmp(argv[1], "--list") ? 0 : 2;
}
