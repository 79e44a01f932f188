/* SPDX-License-Identifier: MIT */
/* behalf.c -- a program the supervisor makes calls for (nocache's reads
 * and writes, crashtest's changes), attacking what it does on the
 * program's behalf (built static: tests/py/test_supervisor_behalf_attack.py).
 * Each case prints what the calls returned, for the test to compare with
 * the native run.
 * Usage: behalf CASE FILE...
 *   readbuf FILE     FILE's first 64 KiB read into a static buffer: "read N
 *                    SUM", the sum of the bytes read
 * Or: behalf victim COMMAND...: run COMMAND, then say whether this
 * process's static buffer (readbuf's, at the same address in this static
 * program) was written meanwhile: "victim untouched" (as pid 1 of a pid
 * namespace, where a namespace below without a /proc of its own has its
 * own pid 1).  Under a seccomp filter of its own, once COMMAND is started,
 * that allows everything (no_new_privs): its status then reads as that of
 * a program of COMMAND's under nocache's filter.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf64k[1 << 16];

static int readbuf(const char *file)
{
	unsigned long sum = 0;
	ssize_t n;
	int fd = open(file, O_RDONLY);

	if (fd < 0 || (n = read(fd, buf64k, sizeof(buf64k))) < 0)
		return 2;
	for (ssize_t i = 0; i < n; i++)
		sum += (unsigned char)buf64k[i];
	printf("read %zd %lu\n", n, sum);
	return 0;
}

static int victim(char **argv)
{
	struct sock_filter all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog prog = {1, all};
	pid_t child;
	int status;
	size_t i = 0;

	if ((child = fork()) == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	/* the command's supervisor has none of this one */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return 2;
	while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	while (i < sizeof(buf64k) && !buf64k[i])
		i++;
	printf("victim %s\n", i == sizeof(buf64k) ? "untouched" : "written");
	return child > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "victim"))
		return victim(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "readbuf"))
		return readbuf(argv[2]);
	return 2;
}
