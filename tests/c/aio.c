/* SPDX-License-Identifier: MIT */
/* aio.c -- POSIX aio_fsync, which glibc runs in a helper thread that makes
 * the fsync system call itself.  Prints what aio_error, aio_return and the
 * requested signal said.  Usage: aio FILE */
#define _GNU_SOURCE 1
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec wait = {10, 0};
	struct aiocb cb;
	siginfo_t info = {0}; /* si_value is not set by every sender */
	sigset_t set;
	int fd;

	if (argc != 2 || (fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
	    write(fd, "data\n", 5) != 5)
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = fd;
	cb.aio_sigevent.sigev_notify = SIGEV_SIGNAL;
	cb.aio_sigevent.sigev_signo = SIGUSR1;
	cb.aio_sigevent.sigev_value.sival_int = 42;
	if (aio_fsync(O_SYNC, &cb) != 0)
		return 3;
	const struct aiocb *list[] = {&cb};
	while (aio_suspend(list, 1, &wait) != 0 && errno == EINTR)
		;
	printf("error %d return %zd", aio_error(&cb), aio_return(&cb));
	printf(" signal %d value %d\n", sigtimedwait(&set, &info, &wait),
	       info.si_value.sival_int);
	return 0;
}
