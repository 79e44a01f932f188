/* SPDX-License-Identifier: MIT */
/* crashhostile.c -- a program that tries to make crashtest's supervisor act
 * where the caller would not, or journal what did not happen: built static,
 * so that the supervisor follows it (test_crashtest_supervised_attack.py).
 * Each mode prints what the program saw, to compare with a native run (on
 * standard error if CRASHHOSTILE_STDERR is set).
 * Usage: crashhostile proclink|linkfollow|rights|fsize|signals|tmpfile|missing|edge|
 *                    symlink|procfd|outlink|emfile|openat2|direct|pkey|noappend|uffd|
 *                    nodump|seekrace|rootmove|emptypath|chroot|alias|together|late|undo [ARG] */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define HIGH_FD 200

static void said(const char *what, int r)
{
	printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

/* Names through /proc/self/fd/N: the caller's N, never the supervisor's. */
static void proclink(void)
{
	mkdir("sub", 0755);
	dup2(open("sub", O_RDONLY | O_DIRECTORY), HIGH_FD);
	said("mkdir", mkdir("/proc/self/fd/200/made", 0755));
	said("create", open("/proc/self/fd/200/file", O_CREAT | O_WRONLY, 0644));
	said("rename", rename("/proc/self/fd/200/file", "/proc/self/fd/200/moved"));
	said("exists", access("sub/moved", F_OK));
}

/* linkat(AT_SYMLINK_FOLLOW) through a symlink to the caller's descriptor. */
static void linkfollow(void)
{
	struct stat a, b;
	int fd = open("data", O_CREAT | O_WRONLY, 0644);

	dup2(fd, HIGH_FD);
	said("symlink", symlink("/proc/self/fd/200", "l"));
	said("link", linkat(AT_FDCWD, "l", AT_FDCWD, "hard", AT_SYMLINK_FOLLOW));
	printf("same: %d\n", stat("data", &a) == 0 && stat("hard", &b) == 0 && a.st_ino == b.st_ino);
}

/* Another group: the supervisor has not the caller's rights.  Each kind of
 * change after it (a write, a name, a create) goes to the kernel: what it
 * makes is the group's. */
static void rights(void)
{
	gid_t g = 65534;
	int fd = open("file", O_CREAT | O_WRONLY, 0644);
	struct stat st;

	said("setgroups", setgroups(1, &g));
	said("setgid", setresgid(g, g, g));
	said("write", (int)write(fd, "abc", 3));
	said("mkdir", mkdir("dir", 0755));
	said("create", open("new", O_CREAT | O_WRONLY, 0644));
	printf("groups: %d %d\n", stat("dir", &st) == 0 ? (int)st.st_gid : -1,
	       stat("new", &st) == 0 ? (int)st.st_gid : -1);
}

/* A rename out of the copy and one into it. */
static void edge(const char *outside)
{
	char there[4096];

	snprintf(there, sizeof(there), "%s/moved", outside);
	close(open("file", O_CREAT | O_WRONLY, 0644));
	said("out", rename("file", there));
	said("in", rename(there, "back"));
}

/* A file size limit: the kernel's short write, then EFBIG (the limit is
 * past what the program prints: its output is a file under crashtest). */
static void fsize(void)
{
	struct rlimit r = {4096, 4096};
	int fd = open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	char buf[5000] = {0};

	signal(SIGXFSZ, SIG_IGN);
	said("limit", setrlimit(RLIMIT_FSIZE, &r));
	printf("write: %zd\n", write(fd, buf, sizeof(buf)));
	said("again", (int)write(fd, buf, sizeof(buf)));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Writes under a storm of signals: each made once, as the journal says
 * (SA_RESTART: without it, a signal before the supervisor takes the call
 * makes it fail with EINTR, a known limit, SECURITY.md). */
static void signals(void)
{
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	struct itimerval t = {{0, 50}, {0, 50}};
	int fd = open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	char buf[100];
	long total = 0;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &t, NULL);
	for (int i = 0; i < 2000; i++) {
		ssize_t n;

		memset(buf, 'a' + i % 26, sizeof(buf));
		n = i % 2 ? write(fd, buf, sizeof(buf)) : pwrite(fd, buf, sizeof(buf), total);
		if (n > 0 && i % 2 == 0)
			lseek(fd, n, SEEK_CUR);
		total += n > 0 ? n : 0;
	}
	t = (struct itimerval){0};
	setitimer(ITIMER_REAL, &t, NULL);
	printf("total: %ld\n", total);
}

/* An O_TMPFILE file written: no name the journal could have made. */
static void nameless(void)
{
	int fd = open(".", O_TMPFILE | O_WRONLY, 0644);

	said("open", fd);
	said("write", (int)write(fd, "abc", 3));
}

/* O_TRUNC of a name that is not there: the kernel's ENOENT, nothing made. */
static void missing(void)
{
	said("open", open("missing", O_WRONLY | O_TRUNC));
}

/* O_TRUNC through a symlink the program planted, to a file outside. */
static void through_symlink(const char *outside)
{
	said("symlink", symlink(outside, "lnk"));
	said("open", open("lnk", O_WRONLY | O_TRUNC));
}

/* "file" holds "v1", durably (its name too): the start of the modes that
 * empty it past the supervisor's sight. */
static int durable_v1(void)
{
	int fd = open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644), dir = open(".", O_RDONLY);

	said("write", (int)write(fd, "v1", 2));
	said("fsync", fsync(fd));
	said("fsync .", fsync(dir));
	close(dir);
	return fd;
}

/* Emptied, durably, then "v2": a crash between leaves an empty file (the
 * library's journal of the same program has that state). */
static void emptied_then_v2(int fd)
{
	said("fsync", fd < 0 ? -1 : fsync(fd));
	said("write", fd < 0 ? -1 : (int)write(fd, "v2", 2));
	said("fsync", fd < 0 ? -1 : fsync(fd));
}

/* O_TRUNC through the program's own /proc/self/fd/N: the supervisor's
 * /proc/self is another directory, which is no file of the copy. */
static void procfd(void)
{
	char path[64];
	int fd = durable_v1(), again;

	/* a number the supervisor has not open: nothing there to stop at */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dup2(fd, HIGH_FD));
	said("open O_TRUNC", again = open(path, O_WRONLY | O_TRUNC));
	emptied_then_v2(again);
}

/* O_TRUNC through a symlink outside the copy to a file of it. */
static void outlink(const char *outside)
{
	char target[4096], link[4200];
	int fd = durable_v1(), again;

	close(fd);
	snprintf(link, sizeof(link), "%s/lnk", outside);
	if (!getcwd(target, sizeof(target) - 8))
		return;
	strcat(target, "/file");
	said("symlink", symlink(target, link));
	said("open O_TRUNC", again = open(link, O_WRONLY | O_TRUNC));
	emptied_then_v2(again);
	unlink(link);
}

/* At its descriptor limit, an open fails with EMFILE before it creates or
 * empties anything. */
static void emfile(void)
{
	struct rlimit r;
	struct stat st;
	int fd = open("keep", O_CREAT | O_WRONLY | O_TRUNC, 0644), top = fd;

	said("write", (int)write(fd, "data", 4));
	for (int i = 0; i < 32; i++)
		top = open("/dev/null", O_RDONLY);
	r = (struct rlimit){(rlim_t)top + 1, (rlim_t)top + 1};
	said("limit", setrlimit(RLIMIT_NOFILE, &r));
	said("create", open("new", O_CREAT | O_WRONLY, 0644));
	said("new", access("new", F_OK));
	said("truncate", open("keep", O_WRONLY | O_TRUNC));
	printf("keep: %lld\n", stat("keep", &st) == 0 ? (long long)st.st_size : -1LL);
}

static void openat2_said(const char *what, const void *how, size_t size)
{
	said(what, (int)syscall(SYS_openat2, AT_FDCWD, "file", how, size));
}

/* openat2 refuses what open ignores: unknown flags, a mode past 07777, a
 * larger struct with bytes it does not know.  Nothing is emptied. */
static void openat2_strict(void)
{
	struct open_how bad_flag = {.flags = O_WRONLY | O_TRUNC | (1ULL << 40)};
	struct open_how bad_mode = {.flags = O_WRONLY | O_CREAT | O_TRUNC, .mode = S_IFREG | 0644};
	struct {
		struct open_how how;
		unsigned long long more;
	} bigger = {{.flags = O_WRONLY | O_TRUNC}, 1};
	struct stat st;

	close(open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644));
	for (int i = 0; i < 3; i++) {
		int fd = open("file", O_WRONLY | O_TRUNC);

		said("write", (int)write(fd, "data", 4));
		close(fd);
		if (i == 0)
			openat2_said("unknown flag", &bad_flag, sizeof(bad_flag));
		else if (i == 1)
			openat2_said("mode", &bad_mode, sizeof(bad_mode));
		else
			openat2_said("bigger", &bigger, sizeof(bigger));
		printf("size: %lld\n", stat("file", &st) == 0 ? (long long)st.st_size : -1LL);
	}
}

/* O_DIRECT: a buffer the device cannot take is EINVAL, whoever copies it. */
static void direct(void)
{
	int fd = open("file", O_CREAT | O_RDWR | O_TRUNC | O_DIRECT, 0644);
	char *p = aligned_alloc(4096, 8192);

	memset(p, 'd', 8192);
	said("open", fd);
	said("aligned", (int)pwrite(fd, p, 4096, 0));
	said("misaligned", (int)pwrite(fd, p + 1, 4096, 0));
}

/* A read-only shared mapping made writable by pkey_mprotect (no key):
 * mprotect's twin.  The change is undone before the end, so that only a
 * state between could tell. */
static void pkey(void)
{
	int fd = open("file", O_CREAT | O_RDWR | O_TRUNC, 0644);
	char *p;

	said("write", (int)write(fd, "AAAA", 4));
	said("fsync", fsync(fd));
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	said("pkey_mprotect",
	     (int)syscall(SYS_pkey_mprotect, p, 4096, PROT_READ | PROT_WRITE, -1));
	memcpy(p, "BBBB", 4);
	said("msync", msync(p, 4096, MS_SYNC));
	memcpy(p, "AAAA", 4);
	said("msync", msync(p, 4096, MS_SYNC));
}

/* pwritev2(RWF_NOAPPEND) on an O_APPEND file writes where it is told. */
static void noappend(void)
{
	int fd = open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	struct iovec v = {"BB", 2};
	char buf[16] = {0};

	said("write", (int)write(fd, "AAAAAAAA", 8));
	close(fd);
	fd = open("file", O_WRONLY | O_APPEND);
	said("pwritev2", (int)pwritev2(fd, &v, 1, 0, 0x20 /* RWF_NOAPPEND */));
	said("fsync", fsync(fd));
	close(fd);
	fd = open("file", O_RDONLY);
	printf("file: %s\n", read(fd, buf, sizeof(buf) - 1) >= 0 ? buf : "?");
}

/* A write from memory that a thread of the program fills lazily
 * (userfaultfd), the thread logging to a file before it does: natively the
 * write waits for the fault to be served, and no longer. */
static int uffd, log_fd;
static char *lazy;

static void *serve_fault(void *arg)
{
	static char page[4096] __attribute__((aligned(4096)));
	struct uffdio_copy copy = {.dst = (unsigned long)lazy, .src = (unsigned long)page,
				   .len = 4096};
	struct pollfd p = {uffd, POLLIN, 0};
	struct uffd_msg msg;

	if (poll(&p, 1, -1) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg))
		return arg;
	said("log", (int)write(log_fd, "fault\n", 6));
	memset(page, 'u', sizeof(page));
	ioctl(uffd, UFFDIO_COPY, &copy);
	return arg;
}

static void lazy_write(void)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg = {.mode = UFFDIO_REGISTER_MODE_MISSING};
	int fd = open("data", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	pid_t parent = getpid(), watchdog = fork();
	pthread_t t;

	if (watchdog == 0) { /* a hung write waits killably: only SIGKILL ends it */
		sleep(10);
		kill(parent, SIGKILL);
		_exit(0);
	}
	log_fd = open("log", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	lazy = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range = (struct uffdio_range){(unsigned long)lazy, 4096};
	said("userfaultfd", uffd < 0 || ioctl(uffd, UFFDIO_API, &api) ||
				    ioctl(uffd, UFFDIO_REGISTER, &reg) ? -1 : 0);
	pthread_create(&t, NULL, serve_fault, NULL);
	said("write", (int)write(fd, lazy, 4096));
	pthread_join(t, NULL);
	kill(watchdog, SIGKILL);
	waitpid(watchdog, NULL, 0);
}

/* Not dumpable (as gpg-agent and ssh-agent make themselves): a supervisor
 * without CAP_SYS_PTRACE may read neither its memory nor its descriptors. */
static void nodump(void)
{
	int fd;

	said("prctl", prctl(PR_SET_DUMPABLE, 0));
	said("create", fd = open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644));
	said("write", (int)write(fd, "abc", 3));
	said("fsync", fsync(fd));
	said("unlink", unlink("file"));
}

/* Writes at the file's position while another thread moves it: each lands
 * where the kernel puts it, which the journal must say (or that it cannot). */
static int race_fd;

static void *seeker(void *arg)
{
	for (int i = 0; i < 100000; i++)
		lseek(race_fd, 4096, SEEK_SET);
	return arg;
}

static void seekrace(void)
{
	pthread_t t;

	race_fd = open("file", O_CREAT | O_RDWR | O_TRUNC, 0644);
	pthread_create(&t, NULL, seeker, NULL);
	for (int i = 0; i < 2000; i++) {
		lseek(race_fd, 0, SEEK_SET);
		if (write(race_fd, "x", 1) != 1)
			break;
	}
	pthread_join(t, NULL);
	said("fsync", fsync(race_fd)); /* the size is the race's: not printed */
}

/* The copy's own directory moved away and back: what is made in it
 * meanwhile, by its other name, is made in the copy (and removed, so that
 * the end tells nothing). */
static void rootmove(void)
{
	char here[4096], away[4200], hidden[4300];
	int fd;

	if (!getcwd(here, sizeof(here)))
		return;
	snprintf(away, sizeof(away), "%s.away", here);
	snprintf(hidden, sizeof(hidden), "%s/hidden", away);
	said("away", rename(here, away));
	said("create", fd = open(hidden, O_CREAT | O_WRONLY | O_TRUNC, 0644));
	said("write", (int)write(fd, "abc", 3));
	said("fsync", fsync(fd));
	said("unlink", unlink(hidden));
	said("back", rename(away, here));
}

/* linkat(fd, "", AT_EMPTY_PATH): a second name for a file of the copy,
 * removed again, so that the end tells nothing (root, or the file's
 * opener on Linux 6.10). */
static void emptypath(void)
{
	int fd = open("file", O_CREAT | O_WRONLY | O_TRUNC, 0644);

	said("fsync", fsync(fd));
	said("link", linkat(fd, "", AT_FDCWD, "second", AT_EMPTY_PATH));
	said("unlink", unlink("second"));
}

/* Root in a root of its own, the copy: its absolute names are the copy's
 * (made and removed, so that the end tells nothing). */
static void in_chroot(void)
{
	int fd;

	said("chroot", chroot("."));
	said("create", fd = open("/hidden", O_CREAT | O_WRONLY | O_TRUNC, 0644));
	said("mkdir", mkdir("/dir", 0755));
	fd = open("/", O_RDONLY);
	said("fsync /", fsync(fd));
	said("rmdir", rmdir("/dir"));
	said("unlink", unlink("/hidden"));
}

/* The copy bound at another name, in a mount namespace of its own: what
 * is made there is the copy's (made and removed). */
static void alias(const char *outside)
{
	char here[4096], hidden[4200];
	int fd;

	if (!getcwd(here, sizeof(here)))
		return;
	snprintf(hidden, sizeof(hidden), "%s/hidden", outside);
	said("unshare", unshare(CLONE_NEWNS));
	said("private", mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL));
	said("bind", mount(here, outside, NULL, MS_BIND, NULL));
	said("create", fd = open(hidden, O_CREAT | O_WRONLY | O_TRUNC, 0644));
	fd = open(outside, O_RDONLY);
	said("fsync", fsync(fd));
	said("unlink", unlink(hidden));
}

/* Four processes that make, write and sync the same files t0..t7 (each
 * emptied anew): run twice at once from a shell, each exec starts a
 * supervisor of its own. */
static void together(void)
{
	for (int p = 0; p < 4; p++) {
		if (fork() == 0) {
			for (int i = 0; i < 8; i++) {
				char name[8];
				int fd;

				snprintf(name, sizeof(name), "t%d", i);
				fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
				if (fd >= 0 && write(fd, "abc", 3) == 3)
					fsync(fd);
				if (fd >= 0)
					close(fd);
			}
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
}

/* A change, a pause (for the test to kill the supervisor), and more. */
static void late(void)
{
	int fd = open("a", O_CREAT | O_WRONLY | O_TRUNC, 0644);

	said("fsync", fsync(fd));
	sleep(3);
	said("write", (int)write(fd, "x", 1));
	said("create", open("b", O_CREAT | O_WRONLY | O_TRUNC, 0644));
}

/* Changes that leave the directory as it was: only the journal shows
 * them. */
static void undo(void)
{
	int fd = open("x", O_CREAT | O_WRONLY | O_TRUNC, 0644), dir;

	said("write", (int)write(fd, "data", 4));
	said("fsync", fsync(fd));
	said("unlink", unlink("x"));
	dir = open(".", O_RDONLY);
	said("fsync .", fsync(dir));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	/* What it saw, on standard error: crashtest passes that on whatever
	 * its states' verdicts (an unknown run checks none). */
	if (getenv("CRASHHOSTILE_STDERR"))
		dup2(STDERR_FILENO, STDOUT_FILENO);
	if (!strcmp(mode, "proclink"))
		proclink();
	else if (!strcmp(mode, "linkfollow"))
		linkfollow();
	else if (!strcmp(mode, "rights"))
		rights();
	else if (!strcmp(mode, "fsize"))
		fsize();
	else if (!strcmp(mode, "signals"))
		signals();
	else if (!strcmp(mode, "tmpfile"))
		nameless();
	else if (!strcmp(mode, "missing"))
		missing();
	else if (!strcmp(mode, "edge") && argc > 2)
		edge(argv[2]);
	else if (!strcmp(mode, "symlink") && argc > 2)
		through_symlink(argv[2]);
	else if (!strcmp(mode, "procfd"))
		procfd();
	else if (!strcmp(mode, "outlink") && argc > 2)
		outlink(argv[2]);
	else if (!strcmp(mode, "emfile"))
		emfile();
	else if (!strcmp(mode, "openat2"))
		openat2_strict();
	else if (!strcmp(mode, "direct"))
		direct();
	else if (!strcmp(mode, "pkey"))
		pkey();
	else if (!strcmp(mode, "noappend"))
		noappend();
	else if (!strcmp(mode, "uffd"))
		lazy_write();
	else if (!strcmp(mode, "nodump"))
		nodump();
	else if (!strcmp(mode, "seekrace"))
		seekrace();
	else if (!strcmp(mode, "rootmove"))
		rootmove();
	else if (!strcmp(mode, "emptypath"))
		emptypath();
	else if (!strcmp(mode, "chroot"))
		in_chroot();
	else if (!strcmp(mode, "alias") && argc > 2)
		alias(argv[2]);
	else if (!strcmp(mode, "together"))
		together();
	else if (!strcmp(mode, "late"))
		late();
	else if (!strcmp(mode, "undo"))
		undo();
	else
		return 2;
	return 0;
}
