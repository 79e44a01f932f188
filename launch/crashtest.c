/* SPDX-License-Identifier: MIT */
/* crashtest.c -- run a command on a copy of a directory, stop it as a power
 * failure would at a durability call, roll the copy back to what the disk
 * would hold (the `posix` model, crashtest_rollback.c), and run a checker on
 * what is left.
 *
 * Each crash point gets a fresh copy in a private directory of its own; the
 * original directory is only read (by cp -a).  The command runs in a process
 * group of its own, which libcrashtest kills at the crash point.
 */
#include "launch/common.h"
#include "launch/crashtest_rollback.h"
#include "crashtest.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"Usage: crashtest [OPTION]... DIR [--] COMMAND [ARG]...\n"
	"Run COMMAND in a copy of DIR, stop it as a power failure would at a\n"
	"crash point (a durability call: fsync, fdatasync, sync, syncfs, O_SYNC\n"
	"writes; with --writes also each write and directory operation), roll the\n"
	"copy back to what the disk would hold under the model, and run a checker\n"
	"on what is left.  DIR is not changed.\n"
	"\n"
	"      --at=N       crash right after the Nth crash point\n"
	"      --each       crash at each point in turn, then at the end\n"
	"      --max=M      with --each, at most the first M points\n"
	"      --random=K   crash at K points drawn at random, then at the end\n"
	"      --seed=S     the draw of --random (default: from the clock; the\n"
	"                   report gives it, to run the same points again)\n"
	"      --writes     writes, truncations and directory operations in the\n"
	"                   copy are crash points too\n"
	"      --model=M    posix (default): what no fsync or sync covers is lost;\n"
	"                   ext4-ordered: what ext4 with data=ordered keeps too\n"
	"      --check=CMD  run CMD with sh -c in the rolled-back copy: its exit\n"
	"                   status is the verdict (CRASHTEST_OUTPUT names the file\n"
	"                   holding what COMMAND printed)\n"
	"      --json       report in JSON\n"
	"  -h, --help       show this help and exit\n"
	"  -V, --version    show the version and exit\n"
	"\n"
	"Without --at or --each, the crash is right after COMMAND ends.\n"
	"Exit status: 0 if every crash point was checked ok, 1 if a check failed,\n"
	"2 if some state was unknown (and none failed), 125 for an error of\n"
	"crashtest itself, 127 if COMMAND is not found.\n";

struct options {
	long at, max, random;
	unsigned long long seed;
	int each, json, writes, seeded;
	enum ct_model model;
	const char *check, *dir, *preload;
	char **cmd;
};

static const char *const model_name[] = {[CT_POSIX] = "posix",
					 [CT_EXT4_ORDERED] = "ext4-ordered"};

static enum ct_model parse_model(const char *arg)
{
	for (size_t i = 0; i < sizeof(model_name) / sizeof(*model_name); i++)
		if (!strcmp(arg, model_name[i]))
			return (enum ct_model)i;
	die("--model: '%s' is not posix or ext4-ordered", arg);
}

/* One option of the crash points; 0 if c is not one. */
static int point_option(int c, struct options *o)
{
	if (c == 'a')
		o->at = parse_number("--at", optarg, 1, 1L << 40);
	else if (c == 'm')
		o->max = parse_number("--max", optarg, 1, 1L << 40);
	else if (c == 'r')
		o->random = parse_number("--random", optarg, 1, 1L << 20);
	else if (c == 's')
		o->seed = (unsigned long long)parse_number("--seed", optarg, 0, LONG_MAX),
		o->seeded = 1;
	else if (c == 'e')
		o->each = 1;
	else if (c == 'w')
		o->writes = 1;
	else
		return 0;
	return 1;
}

static void parse(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"at", required_argument, 0, 'a'},     {"each", no_argument, 0, 'e'},
		{"max", required_argument, 0, 'm'},    {"check", required_argument, 0, 'c'},
		{"random", required_argument, 0, 'r'}, {"seed", required_argument, 0, 's'},
		{"writes", no_argument, 0, 'w'},       {"model", required_argument, 0, 'M'},
		{"json", no_argument, 0, 'j'},         {"help", no_argument, 0, 'h'},
		{"version", no_argument, 0, 'V'},      {0, 0, 0, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "+hV", longs, NULL)) != -1) {
		if (point_option(c, o))
			continue;
		if (c == 'c')
			o->check = optarg;
		else if (c == 'M')
			o->model = parse_model(optarg);
		else if (c == 'j')
			o->json = 1;
		else
			common_option(c, argv, usage);
	}
	if (!!o->at + o->each + !!o->random > 1)
		die("--at, --each and --random exclude each other");
	if ((o->max && !o->each) || (o->seeded && !o->random))
		die("--max goes with --each, --seed with --random");
	if (optind >= argc)
		die("no directory given (try --help)");
	o->dir = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc)
		die("no command given (try --help)");
	o->cmd = argv + optind;
}

/* Kill the children crashtest has: as a subreaper it inherits every
 * process of the tree whose parent died. */
static void kill_children(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	char path[300], buf[512], *rp;
	long ppid;
	int fd;
	ssize_t n;

	while (proc && (e = readdir(proc))) {
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		rp = strrchr(buf, ')'); /* the name may hold anything */
		if (rp && sscanf(rp, ") %*c %ld", &ppid) == 1 && ppid == getpid())
			kill((pid_t)atol(e->d_name), SIGKILL);
	}
	if (proc)
		closedir(proc);
}

/* The power fails: every process of the tree dies, and is gone (its locks
 * released, its writes over) before the rollback and the checker run --
 * those that left the process group or were orphaned included. */
static void power_off(pid_t group)
{
	do {
		if (group > 0)
			kill(-group, SIGKILL);
		kill_children();
	} while (waitpid(-1, NULL, 0) > 0 || errno == EINTR);
}

/* What a signal to crashtest, or its own error, must not leave behind: the
 * child it waits for (the command's group, cp, the checker) and the run
 * directory.  The handler only kills the child, so that the wait returns;
 * the rest is done there, outside the handler. */
static volatile sig_atomic_t caught;
static volatile pid_t waited;
static char *current; /* the run directory, while it exists */
static pid_t crashtest_pid;

static void on_signal(int sig)
{
	caught = sig;
	if (waited > 0) {
		kill(-waited, SIGKILL);
		kill(waited, SIGKILL);
	}
}

static void catch_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa = {.sa_handler = on_signal}, old;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL); /* no SA_RESTART: waits return */
}

static void remove_current(void)
{
	if (current && getpid() == crashtest_pid)
		remove_tree(current);
	current = NULL;
}

/* After a wait: a signal caught kills what is left of the tree, removes the
 * run directory and ends crashtest by the same signal. */
static void stop_if_caught(void)
{
	int sig = caught;

	if (!sig)
		return;
	power_off(0);
	remove_current();
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

static int wait_for(pid_t pid)
{
	int status;

	waited = pid;
	if (caught)
		on_signal(caught); /* it came before pid was known */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("cannot wait: %s", strerror(errno));
	waited = 0;
	return status;
}

/* Run argv in a child and wait for it: its wait status. */
static int run_child(char *const argv[], const char *cwd, int out)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("cannot fork: %s", strerror(errno));
	if (pid == 0) {
		if ((cwd && chdir(cwd) != 0) || (out >= 0 && dup2(out, 1) < 0))
			die("cannot enter %s: %s", cwd, strerror(errno));
		exec_command(argv[0], argv);
	}
	status = wait_for(pid);
	stop_if_caught();
	return status;
}

/* A new file of the run directory, private and never someone else's. */
static int create_in(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX];
	int fd;

	path_join(path, sizeof(path), dir, name);
	fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		die("cannot create %s: %s", path, strerror(errno));
	return fd;
}

/* The run directory: the copy of DIR (work/), the journal, the shared count
 * of crash points, keep/ and what the command prints (out). */
static void prepare(struct ct_run *run, const char *dir)
{
	char keep[PATH_MAX + 8], *cp[] = {"cp", "-a", "--reflink=auto", "--", (char *)dir,
					  run->work, NULL};
	static const struct ct_counters zero;
	int fd, status;

	private_tmpdir("crashtest", run->dir, sizeof(run->dir));
	current = run->dir;
	path_join(run->work, sizeof(run->work), run->dir, "work");
	status = run_child(cp, NULL, -1);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("cannot copy %s", dir);
	close(create_in(run->dir, CT_JOURNAL, O_WRONLY));
	fd = create_in(run->dir, CT_POINTS, O_WRONLY);
	if (write(fd, &zero, sizeof(zero)) != sizeof(zero))
		die("cannot write %s/%s: %s", run->dir, CT_POINTS, strerror(errno));
	close(fd);
	path_join(keep, sizeof(keep), run->dir, CT_KEEP);
	if (mkdir(keep, 0700) != 0)
		die("cannot create %s: %s", keep, strerror(errno));
}

static void set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0)
		die("cannot set %s", name);
}

static void set_number(const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	set_env(name, buf);
}

/* crashtest's standard error, when a regular file, is a log, not state:
 * the command's messages to it do not make the run unknown. */
static void set_stderr(void)
{
	struct stat st;
	char buf[64];

	if (fstat(2, &st) == 0 && S_ISREG(st.st_mode)) {
		snprintf(buf, sizeof(buf), "%llu:%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
		set_env(CT_ENV_STDERR, buf);
	}
}

/* What the tree counted (zeros if the file is unreadable). */
static void read_counters(struct ct_run *run)
{
	char path[PATH_MAX];
	struct ct_counters n = {0};
	int fd;

	path_join(path, sizeof(path), run->dir, CT_POINTS);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && read(fd, &n, sizeof(n)) != sizeof(n))
		memset(&n, 0, sizeof(n));
	if (fd >= 0)
		close(fd);
	if (n.lost)
		strlist_add(&run->unknown, "%llu records the journal could not take (a file "
			    "size limit, a full disk, a process that could not open it)", (unsigned long long)n.lost);
	run->points = (long)n.points;
	run->syncs = (long)n.syncs;
	run->writes = (long)n.writes;
}

/* The points file on a descriptor the command inherits: a process that
 * cannot open the journal (one that dropped its privileges, one out of
 * descriptors) counts itself lost through it, and the state is unknown. */
static void inherit_points(const struct ct_run *run)
{
	char path[PATH_MAX];
	int fd;

	path_join(path, sizeof(path), run->dir, CT_POINTS);
	fd = open(path, O_RDWR | O_NOFOLLOW);
	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	set_number(CT_ENV_POINTS, fd);
}

/* The command, in a process group of its own, under the library. */
static void command(struct ct_run *run, const struct options *o, long at)
{
	char out[PATH_MAX + 8];
	int fd, status;
	pid_t pid;

	path_join(out, sizeof(out), run->dir, "out");
	fd = create_in(run->dir, "out", O_WRONLY);
	pid = fork();
	if (pid < 0)
		die("cannot fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		set_env(CT_ENV_RUN, run->dir);
		set_env(CT_ENV_ROOT, run->work);
		set_number(CT_ENV_AT, at);
		set_number(CT_ENV_PGID, getpid());
		set_env(CT_ENV_WRITES, o->writes ? "1" : "0");
		set_stderr();
		inherit_points(run);
		preload_prepend(o->preload);
		if (chdir(run->work) != 0 || dup2(fd, 1) < 0)
			die("cannot enter %s: %s", run->work, strerror(errno));
		exec_command(o->cmd[0], o->cmd);
	}
	setpgid(pid, pid);
	close(fd);
	status = wait_for(pid);
	power_off(pid);
	stop_if_caught();
	read_counters(run);
	/* A command that exits 125-127 may still have run: only one that
	 * counted nothing is taken as not run. */
	if (WIFEXITED(status) && WEXITSTATUS(status) >= EXIT_TOOL &&
	    WEXITSTATUS(status) <= EXIT_NOT_FOUND && !run->syncs && !run->writes) {
		remove_current(); /* COMMAND never ran: nothing to test */
		exit(WEXITSTATUS(status));
	}
}

/* The checker's verdict on the rolled-back copy: its wait status. */
static int check(const struct ct_run *run, const char *cmd)
{
	char out[PATH_MAX + 8], *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};

	path_join(out, sizeof(out), run->dir, "out");
	set_env("CRASHTEST_OUTPUT", out);
	return run_child(argv, run->work, 2);
}

/* One crash point in a fresh copy; at == 0: the end of the command. */
static void crash_at(const struct options *o, long at, struct point *p)
{
	struct snapshot *before;
	int passed;

	memset(p, 0, sizeof(*p));
	p->run.model = o->model;
	prepare(&p->run, o->dir);
	before = snapshot_take(p->run.work);
	command(&p->run, o, at);
	p->run.point = at;
	rollback(&p->run, before);
	snapshot_free(before);
	free(before);
	if (!p->run.after[0])
		p->run.point = 0; /* not reached: the command ended first */
	p->status = o->check ? check(&p->run, o->check) : -1;
	passed = WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
	if (o->check && !passed)
		p->v = FAILED;
	else
		p->v = p->run.unknown.n ? UNKNOWN : o->check ? OK : UNCHECKED;
	if (p->status >= 0)
		p->status = WIFEXITED(p->status) ? WEXITSTATUS(p->status) : 128 + WTERMSIG(p->status);
	remove_current();
	stop_if_caught();
}

/* DIR, a directory, as a path with no symlink: cp -a copies a symlink as a
 * link, and the command would run in DIR itself. */
static const char *real_dir(const char *dir)
{
	struct stat st;
	char *real;

	if (stat(dir, &st) != 0)
		die("cannot use %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("%s is not a directory", dir);
	if (!(real = realpath(dir, NULL)))
		die("cannot resolve %s: %s", dir, strerror(errno));
	return real;
}

/* A step of splitmix64: the draw of --random, the same for the same seed. */
static unsigned long long next_random(unsigned long long *state)
{
	unsigned long long z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int by_number(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The crash points to run, of the n the whole run counted, ascending. */
static long *choose(const struct options *o, long n, long *count)
{
	long k = o->each ? (o->max && o->max < n ? o->max : n) : o->random < n ? o->random : n;
	long *v = calloc((size_t)k + 1, sizeof(*v)), got = 0;
	unsigned long long state = o->seed;

	if (!v)
		die("out of memory");
	if (o->each || k == n)
		for (got = 0; got < k; got++)
			v[got] = got + 1;
	/* Floyd's draw: k distinct points, each set of k equally likely. */
	for (long j = n - k + 1; got < k; j++) {
		long t = 1 + (long)(next_random(&state) % (unsigned long long)j);
		int seen = 0;

		for (long i = 0; i < got; i++)
			seen |= v[i] == t;
		v[got++] = seen ? j : t;
	}
	qsort(v, (size_t)k, sizeof(*v), by_number);
	*count = k;
	return v;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct point end, p;
	long n = 0, *at;

	tool_name = "crashtest";
	crashtest_pid = getpid();
	atexit(remove_current); /* die() after prepare() */
	catch_signals();
	parse(argc, argv, &o);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		die("cannot become a subreaper: %s", strerror(errno));
	o.dir = real_dir(o.dir);
	if (o.random && !o.seeded)
		o.seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
	o.preload = preload_entry("libcrashtest.so");
	report_start(model_name[o.model], o.writes, o.random ? &o.seed : NULL, o.json);
	if (o.at) {
		crash_at(&o, o.at, &p);
		report_point(&p, o.json);
	} else {
		/* The whole run counts the points, and is the crash at the end. */
		crash_at(&o, 0, &end);
		at = o.each || o.random ? choose(&o, end.run.points, &n) : NULL;
		for (long i = 0; i < n; i++) {
			crash_at(&o, at[i], &p);
			report_point(&p, o.json);
		}
		report_point(&end, o.json);
		free(at);
	}
	return report_end(o.json);
}
