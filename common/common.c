/* SPDX-License-Identifier: MIT */
/* common.c -- messages, the preload library's location, running commands. */
#include "common.h"
#include "elf_kind.h"
#include "env.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
/* make check SANITIZE=1: a launcher leaves freeing to its exit, and tests
 * that set a whole environment of their own drop ASAN_OPTIONS. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0:verify_asan_link_order=0";
}
#endif

#ifndef EMD_VERSION
#define EMD_VERSION "0"
#endif

#ifndef EMD_PREFIX
#define EMD_PREFIX "/usr/local"
#endif

/* What ld.so substitutes for $LIB in the launcher's own ELF class. */
#ifndef EMD_LIB
#define EMD_LIB "lib"
#endif

const char *tool_name = "eatmydata";

static void vmessage(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	exit(EXIT_TOOL);
}

void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

/* Does root hold this class's library? */
static int holds(const char *root, const char *lib)
{
	char probe[PATH_MAX];

	return snprintf(probe, sizeof(probe), "%s/%s/%s", root, EMD_LIB, lib) < PATH_MAX &&
	       access(probe, R_OK) == 0;
}

/* The directory whose $LIB holds the libraries: EATMYDATA_LIBDIR, made
 * absolute (every process of the tree reads LD_PRELOAD from its own working
 * directory); else the one above this launcher (bin/..), which makes a build
 * tree or a moved install work; else the configured prefix. */
const char *launcher_path(void)
{
	static char self[PATH_MAX];
	static ssize_t n;

	if (!n)
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(self) - 1)
		return NULL;
	self[n] = '\0';
	return self;
}

static const char *library_root(const char *lib, int *held)
{
	static char root[PATH_MAX];
	const char *env = getenv(EMD_ENV_LIBDIR), *self;
	ssize_t n;

	if (env && *env) {
		if (!realpath(env, root))
			die("cannot find %s/%s/%s: %s", env, EMD_LIB, lib, strerror(errno));
		return root;
	}
	/* The kernel's path of this executable has no symbolic link, "." or
	 * "..": bin/.. is that path less its last two parts ("/" at the
	 * least), with no realpath's readlink of each part. */
	self = launcher_path();
	n = self ? (ssize_t)strlen(self) : 0;
	if (n > 0 && n < (ssize_t)sizeof(root) && self[0] == '/') {
		memcpy(root, self, (size_t)n + 1);
		for (int up = 0; up < 2 && strrchr(root, '/'); up++)
			*strrchr(root, '/') = '\0';
		if (!root[0])
			strcpy(root, "/");
		if ((*held = holds(root, lib)))
			return root;
	}
	return EMD_PREFIX;
}

const char *preload_entry(const char *lib)
{
	static char entry[PATH_MAX];
	int held = 0;
	const char *root = library_root(lib, &held);

	if (snprintf(entry, sizeof(entry), "%s/$LIB/%s", root, lib) >= PATH_MAX)
		die("library path too long: %s", root);
	if (!held && !holds(root, lib))
		die("cannot find %s/%s/%s", root, EMD_LIB, lib);
	if (strpbrk(root, " :"))
		die("library directory '%s' has a space or colon, which "
		    "LD_PRELOAD cannot hold", root);
	emd_preload_entry(entry);
	return entry;
}

void preload_prepend(const char *entry)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(entry), size = len + 2 + (old ? strlen(old) : 0);
	char *list = malloc(size), *p = list;

	if (!list)
		die("out of memory");
	p = stpcpy(p, entry);
	while (old && *old) {
		size_t n = strcspn(old, " :");

		if (n && !(n == len && strncmp(old, entry, n) == 0)) {
			*p++ = ' ';
			p = stpncpy(p, old, n);
		}
		old += n + (old[n] != '\0');
	}
	*p = '\0';
	if (setenv("LD_PRELOAD", list, 1) != 0)
		die("cannot set LD_PRELOAD: %s", strerror(errno));
	free(list);
}

void preload_drop_refused(const char *file)
{
	const char *list = getenv("LD_PRELOAD");
	char path[PATH_MAX], *rest;

	if (!list || !emd_preload_refusable() ||
	    emd_command_unreachable(file, path, sizeof(path)) != EMD_ELF_NO_GLIBC_LIB)
		return;
	if (!(rest = malloc(strlen(list) + 1)) ||
	    emd_preload_without_ours(list, rest, strlen(list) + 1) < 0 ||
	    (*rest ? setenv("LD_PRELOAD", rest, 1) : unsetenv("LD_PRELOAD")) != 0)
		die("cannot set LD_PRELOAD: %s", strerror(errno));
	free(rest);
}

/* The signal mask before hold_signals, which the command gets back. */
static sigset_t original_mask;
static int holding;
/* run_and_wait's child tells its parent why its exec failed on exec_pipe
 * (closed by a successful exec): a status of 127 is also what a command
 * that ran may exit with. */
static int exec_pipe = -1, exec_error;

void exec_command(const char *file, char *const argv[])
{
	const char *found = find_command(file);
	int err;

	if (holding) /* a signal held meanwhile is the command's once it runs */
		sigprocmask(SIG_SETMASK, &original_mask, NULL);
	preload_drop_refused(found ? found : file);
	/* The file the launcher found (and looked at) is exec'ed, one execve
	 * where execvp tries each directory of PATH before it; if that fails,
	 * execvp makes its own search, with its answers (its error, 126 or
	 * 127; a file without #! run by /bin/sh). */
	if (found)
		execv(found, argv);
	if (!strchr(file, '/'))
		execvp(file, argv);
	err = errno; /* before printing, which may change it */
	if (exec_pipe >= 0) /* a pipe's few bytes: written whole, or the status alone tells */
		(void)!write(exec_pipe, &err, sizeof(err));
	warn("cannot run %s: %s", file, strerror(err));
	exit(err == ENOENT || err == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
}

/* Is st one of the `n` files in skip? */
static int skipped(const struct stat *st, const struct stat *skip, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (st->st_dev == skip[i].st_dev && st->st_ino == skip[i].st_ino)
			return 1;
	return 0;
}

/* The first executable regular file `name` in PATH, other than the `n`
 * files in skip.  An empty element is the working directory, as for
 * execvp, and passes the same checks as any other. */
static char *search_path(const char *name, const struct stat *skip, size_t n)
{
	static char cand[PATH_MAX];
	const char *p = getenv("PATH");
	struct stat st;

	for (p = p ? p : "/usr/local/bin:/usr/bin:/bin";; p++) {
		size_t len = strcspn(p, ":");
		int size = len ? snprintf(cand, sizeof(cand), "%.*s/%s",
					  (int)len, p, name)
			       : snprintf(cand, sizeof(cand), "./%s", name);

		if (size < (int)sizeof(cand) && stat(cand, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(cand, X_OK) == 0 &&
		    !skipped(&st, skip, n))
			return cand;
		p += len;
		if (!*p)
			return NULL;
	}
}

/* Link mode with two copies of the launcher in PATH (each linked as `name`)
 * would have each run the other forever: every launcher passed through
 * adds itself to EATMYDATA_LINKS ("DEV:INO,..."), and all are skipped.  A
 * script that runs the launcher under the link's path as argv[0] (the
 * Debian package's /usr/bin/eatmydata) is skipped as the launcher is. */
#define MAX_LINKS 16
char *find_in_path_skipping_self(const char *name, const char *argv0)
{
	struct stat skip[MAX_LINKS];
	const char *seen = getenv(EMD_ENV_LINKS);
	unsigned long long dev, ino;
	char list[MAX_LINKS * 42] = "";
	size_t n = 0;
	int used;

	if (stat("/proc/self/exe", &skip[n++]) != 0)
		return NULL;
	if (strchr(argv0, '/') && stat(argv0, &skip[n]) == 0)
		n++;
	while (seen && n < MAX_LINKS &&
	       sscanf(seen, "%llu:%llu%n", &dev, &ino, &used) == 2) {
		skip[n].st_dev = (dev_t)dev;
		skip[n++].st_ino = (ino_t)ino;
		seen = seen[used] == ',' ? seen + used + 1 : NULL;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%llu:%llu", i ? "," : "",
			 (unsigned long long)skip[i].st_dev,
			 (unsigned long long)skip[i].st_ino);
	if (setenv(EMD_ENV_LINKS, list, 1) != 0)
		die("cannot set EATMYDATA_LINKS: %s", strerror(errno));
	return search_path(name, skip, n);
}

/* The last name looked up and what was found: a launcher finds its
 * command to look at it, then execs it, with no second search. */
static char *last_name, *last_found;

const char *find_command(const char *name)
{
	const char *found;

	if (strchr(name, '/'))
		return name;
	if (last_name && strcmp(last_name, name) == 0)
		return last_found;
	found = search_path(name, NULL, 0);
	free(last_name);
	free(last_found);
	/* Out of memory: nothing kept, and the exec searches (execvp). */
	last_found = found ? strdup(found) : NULL;
	last_name = !found || last_found ? strdup(name) : NULL;
	return last_found;
}

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* A terminal's SIGINT and SIGQUIT reach the whole process group, the child
 * included; the rest are sent to this pid and passed on. */
static const int passed_on[] = {SIGHUP, SIGTERM, SIGUSR1, SIGUSR2};

/* Blocked from before the fork until the handlers are in place, so that
 * none is lost in between (as tini does); from hold_signals on, if called.
 * *old is the mask the command is to have. */
static void block_passed_on(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(passed_on) / sizeof(*passed_on); i++)
		sigaddset(&set, passed_on[i]);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGQUIT);
	sigprocmask(SIG_BLOCK, &set, old);
	if (holding)
		*old = original_mask;
}

void hold_signals(void)
{
	block_passed_on(&original_mask);
	holding = 1;
}

static void (*tick_fn)(void);
static unsigned tick_seconds;
static volatile sig_atomic_t ticked;

void run_and_wait_tick(void (*tick)(void), unsigned seconds)
{
	tick_fn = tick;
	tick_seconds = seconds;
}

static void on_alarm(int sig)
{
	(void)sig;
	ticked = 1;
}

/* The timer is the parent's alone (a child inherits none), and its signal
 * interrupts waitpid, so the tick runs in the waiting loop, not in a
 * handler. */
static void start_ticking(void)
{
	struct sigaction sa = {.sa_handler = on_alarm};
	struct itimerval every = {{tick_seconds, 0}, {tick_seconds, 0}};

	if (!tick_fn || !tick_seconds)
		return;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
}

static void stop_ticking(void)
{
	struct itimerval off = {{0, 0}, {0, 0}};

	if (!tick_fn || !tick_seconds)
		return;
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
}

int run_and_wait(char *const argv[], void (*before_exec)(const void *),
		 const void *arg)
{
	struct sigaction sa = {.sa_handler = forward};
	sigset_t old;
	int status, told[2] = {-1, -1};

	block_passed_on(&old);
	if (pipe2(told, O_CLOEXEC | O_NONBLOCK) != 0)
		told[0] = told[1] = -1;
	child = fork();
	if (child < 0)
		die("cannot fork: %s", strerror(errno));
	if (child == 0) {
		exec_pipe = told[1];
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (before_exec)
			before_exec(arg);
		exec_command(argv[0], argv);
	}
	if (told[1] >= 0)
		close(told[1]);
	for (size_t i = 0; i < sizeof(passed_on) / sizeof(*passed_on); i++)
		sigaction(passed_on[i], &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	start_ticking();
	sigprocmask(SIG_SETMASK, &old, NULL);
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR)
			die("cannot wait for %s: %s", argv[0], strerror(errno));
		if (ticked && tick_fn) {
			ticked = 0;
			tick_fn();
		}
	}
	child = 0; /* reaped: its pid may be another's now */
	stop_ticking();
	exec_error = 0;
	if (told[0] >= 0 && read(told[0], &exec_error, sizeof(exec_error)) != sizeof(exec_error))
		exec_error = 0;
	if (told[0] >= 0)
		close(told[0]);
	return status;
}

int command_never_ran(void)
{
	return exec_error;
}

void exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		signal(sig, SIG_DFL);
		raise(sig);
		exit(128 + sig);
	}
	exit(WEXITSTATUS(status));
}

/* "-x ..." or "-yx": a cluster of short options that holds c. */
static int in_cluster(const char *arg, int c)
{
	return arg && arg[0] == '-' && arg[1] && arg[1] != '-' &&
	       strchr(arg + 1, c);
}

/* The option getopt refused: a short one is still in argv[optind] when
 * more of its cluster follows ("-xh"), already behind it otherwise. */
static const char *bad_option(char **argv)
{
	static char name[3] = "-";
	const char *prev = optind > 0 ? argv[optind - 1] : "";

	if (optopt > 0 && optopt < 128 &&
	    (in_cluster(prev, optopt) || in_cluster(argv[optind], optopt))) {
		name[1] = (char)optopt;
		return name;
	}
	return prev;
}

void common_option(int c, char **argv, const char *usage)
{
	if (c == 'h') {
		fputs(usage, stdout);
		exit(0);
	}
	if (c == 'V') {
		printf("%s %s\n", tool_name, EMD_VERSION);
		exit(0);
	}
	die("unknown or incomplete option '%s'; try '%s --help'",
	    bad_option(argv), tool_name);
}

void simple_launcher(int argc, char **argv, const char *usage,
		     const char *lib, void (*check)(const char *cmd))
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1)
		common_option(c, argv, usage);
	if (optind >= argc)
		die("no command given; try '%s --help'", tool_name);
	preload_prepend(preload_entry(lib));
	check(argv[optind]);
	exec_command(argv[optind], argv + optind);
}

long parse_number(const char *what, const char *arg, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (!*arg || *end || errno || n < lo || n > hi)
		die("%s: '%s' is not a number from %ld to %ld", what, arg, lo, hi);
	return n;
}

/* O_NONBLOCK: a FIFO must not hang the open; it is refused below. */
int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0)
		die("cannot stat %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("%s: not a regular file", path);
	return fd;
}

double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int try_private_tmpdir(const char *name, char *out, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	char abs[PATH_MAX];

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (!realpath(tmp, abs))
		return snprintf(out, size, "cannot use TMPDIR %s: %s", tmp, strerror(errno)), -1;
	if (snprintf(out, size, "%s/%s.XXXXXX", abs, name) >= (int)size)
		return snprintf(out, size, "TMPDIR too long: %s", abs), -1;
	if (!mkdtemp(out))
		return snprintf(out, size, "cannot create a directory in %s: %s", abs,
				strerror(errno)), -1;
	return 0;
}

void private_tmpdir(const char *name, char *out, size_t size)
{
	if (try_private_tmpdir(name, out, size) != 0)
		die("%s", out);
}
