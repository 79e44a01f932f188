/* SPDX-License-Identifier: MIT */
/* sigchld -- run a command with SIGCHLD unblocked: conftest.run starts
 * `perf stat` with SIGCHLD blocked and this as its workload.  perf 6.1's
 * SIGCHLD handler forgets the workload's pid, so a command that exits
 * before perf reaches its wait4() is never waited for and perf exits 0,
 * whatever the command's status (one run in ten of `perf stat false`). */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sigset_t chld;

	if (argc < 2) {
		fputs("usage: sigchld COMMAND [ARG]...\n", stderr);
		return 125;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
