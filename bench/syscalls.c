/* SPDX-License-Identifier: MIT */
/* syscalls.c -- N system calls, for what a seccomp filter adds to every
 * call of a tree: the cheapest there is (getppid), a 4 KiB read from the
 * page cache, or a 4 KiB write (which syncstat's filter sends to its
 * supervisor, to ask whether the file syncs it).  With ALLOW=1 in the environment it first installs the
 * least filter there is (one "allow" instruction): the cost of seccomp
 * itself, to tell from that of eatmydata's filter.  fdatasync: N of them
 * on FILE (syncstat's supervisor makes each, timed).  close: N opens of
 * FILE, each closed (what nocache's filter adds to a close of a file its
 * supervisor made no call on).
 * Usage: syscalls getppid|pread|write|fdatasync|close N [FILE] */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096];
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	int writes = argc > 1 && !strcmp(argv[1], "write");
	int syncs = argc > 1 && !strcmp(argv[1], "fdatasync");
	int fd = argc > 3 ? open(argv[3], writes ? O_WRONLY : O_RDONLY) : -1;

	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {1, &allow};

	if (argc < 3 || (strcmp(argv[1], "getppid") != 0 && fd < 0))
		return 2;
	if (getenv("ALLOW") && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
				syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)))
		return 3;
	for (long i = 0; i < n; i++)
		if (fd < 0)
			syscall(SYS_getppid);
		else if (syncs && fdatasync(fd) != 0)
			return 1;
		else if (syncs)
			continue;
		else if (!strcmp(argv[1], "close") ? close(open(argv[3], O_RDONLY)) != 0
			 : writes ? write(fd, buf, sizeof(buf)) != sizeof(buf)
				  : pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
			return 1;
	return 0;
}
