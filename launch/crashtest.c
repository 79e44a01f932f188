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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
	"Usage: crashtest [OPTION]... DIR [--] COMMAND [ARG]...\n"
	"Run COMMAND in a copy of DIR, stop it as a power failure would at a\n"
	"durability call (fsync, fdatasync, sync, syncfs, O_SYNC writes), roll the\n"
	"copy back to what the disk would hold (model posix: what was not made\n"
	"durable is lost), and run a checker on what is left.  DIR is not changed.\n"
	"\n"
	"      --at=N       crash right after the Nth durability call\n"
	"      --each       crash at each durability call in turn, then at the end\n"
	"      --max=M      with --each, at most the first M calls\n"
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
	long at, max;
	int each, json;
	const char *check, *dir, *preload;
	char **cmd;
};

static void parse(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"at", required_argument, 0, 'a'},   {"each", no_argument, 0, 'e'},
		{"max", required_argument, 0, 'm'},  {"check", required_argument, 0, 'c'},
		{"json", no_argument, 0, 'j'},       {"help", no_argument, 0, 'h'},
		{"version", no_argument, 0, 'V'},    {0, 0, 0, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "+hV", longs, NULL)) != -1) {
		if (c == 'a')
			o->at = parse_number("--at", optarg, 1, 1L << 40);
		else if (c == 'm')
			o->max = parse_number("--max", optarg, 1, 1L << 40);
		else if (c == 'e')
			o->each = 1;
		else if (c == 'c')
			o->check = optarg;
		else if (c == 'j')
			o->json = 1;
		else
			common_option(c, argv, usage);
	}
	if (o->at && o->each)
		die("--at and --each exclude each other");
	if (optind >= argc)
		die("no directory given (try --help)");
	o->dir = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc)
		die("no command given (try --help)");
	o->cmd = argv + optind;
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
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("cannot wait: %s", strerror(errno));
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
	static const unsigned long long zero;
	int fd, status;

	private_tmpdir("crashtest", run->dir, sizeof(run->dir));
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

/* Did the library count anything?  (A command that exits 125-127 may still
 * have run: only one that left the points at zero is taken as not run.) */
static int points_counted(const struct ct_run *run)
{
	char path[PATH_MAX];
	unsigned long long n = 0;
	int fd;

	path_join(path, sizeof(path), run->dir, CT_POINTS);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && read(fd, &n, sizeof(n)) != sizeof(n))
		n = 0;
	if (fd >= 0)
		close(fd);
	return n != 0;
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
		set_stderr();
		preload_prepend(o->preload);
		if (chdir(run->work) != 0 || dup2(fd, 1) < 0)
			die("cannot enter %s: %s", run->work, strerror(errno));
		exec_command(o->cmd[0], o->cmd);
	}
	setpgid(pid, pid);
	close(fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("cannot wait: %s", strerror(errno));
	kill(-pid, SIGKILL); /* what the tree left running dies with the power */
	if (WIFEXITED(status) && WEXITSTATUS(status) >= EXIT_TOOL &&
	    WEXITSTATUS(status) <= EXIT_NOT_FOUND && !points_counted(run)) {
		remove_tree(run->dir); /* COMMAND never ran: nothing to test */
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

enum verdict { OK, FAILED, UNKNOWN, UNCHECKED };
static const char *const verdict_name[] = {"ok", "failed", "unknown", "unchecked"};

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_list(const char *key, const struct strlist *l)
{
	printf(",\"%s\":[", key);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			putchar(',');
		json_string(l->v[i]);
	}
	putchar(']');
}

static void text_list(const char *what, const struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		printf("%s%s", i ? ", " : what, l->v[i]);
	if (l->n)
		putchar('\n');
}

/* The durability call is named by its path in the copy. */
static const char *after_what(const struct ct_run *run)
{
	static char buf[PATH_MAX + 32];
	char *at = strstr(run->after, run->work);

	snprintf(buf, sizeof(buf), "%s", run->after);
	if (at && (at[strlen(run->work)] == '/' || at[strlen(run->work)] == ')'))
		snprintf(buf + (at - run->after), sizeof(buf) - (size_t)(at - run->after), "%s%s",
			 at[strlen(run->work)] == '/' ? "" : ".",
			 at + strlen(run->work) + (at[strlen(run->work)] == '/'));
	return buf;
}

static void report(const struct ct_run *run, int json, enum verdict v, int status, int first)
{
	if (json) {
		printf("%s{\"point\":", first ? "" : ",\n");
		run->point ? printf("%ld", run->point) : printf("null");
		printf(",\"durability_calls\":%ld,\"after\":", run->point ? run->point : run->points);
		json_string(run->point ? after_what(run) : "end");
		printf(",\"verdict\":\"%s\",\"check_status\":%d", verdict_name[v], status);
		json_list("rolled_back", &run->rolled_back);
		json_list("undone", &run->undone);
		json_list("unknown", &run->unknown);
		putchar('}');
		return;
	}
	if (run->point)
		printf("point %ld, after %s: %s", run->point, after_what(run), verdict_name[v]);
	else
		printf("end, after %ld durability calls: %s", run->points, verdict_name[v]);
	v == FAILED ? printf(" (check exit %d)\n", status) : printf("\n");
	text_list("  rolled back: ", &run->rolled_back);
	text_list("  undone: ", &run->undone);
	text_list("  unknown: ", &run->unknown);
}

struct point {
	struct ct_run run;
	enum verdict v;
	int status;
};

/* One crash point in a fresh copy; at == 0: the end of the command. */
static void crash_at(const struct options *o, long at, struct point *p)
{
	struct snapshot *before;
	int passed;

	memset(p, 0, sizeof(*p));
	prepare(&p->run, o->dir);
	before = snapshot_take(p->run.work);
	command(&p->run, o, at);
	p->run.point = at;
	rollback(&p->run, before);
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
	remove_tree(p->run.dir);
}

static int worst = 0;

static void show(const struct options *o, const struct point *p, int first)
{
	report(&p->run, o->json, p->v, p->status, first);
	if (p->v == FAILED)
		worst = 1;
	else if (p->v == UNKNOWN && !worst)
		worst = 2;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct point end, p;
	struct stat st;

	tool_name = "crashtest";
	parse(argc, argv, &o);
	if (stat(o.dir, &st) != 0)
		die("cannot use %s: %s", o.dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("%s is not a directory", o.dir);
	o.preload = preload_entry("libcrashtest.so");
	if (o.json)
		printf("{\"model\":\"posix\",\"points\":[\n");
	if (o.at) {
		crash_at(&o, o.at, &p);
		show(&o, &p, 1);
	} else {
		/* The whole run counts the points, and is the crash at the end. */
		crash_at(&o, 0, &end);
		for (long n = 1; o.each && n <= end.run.points && (!o.max || n <= o.max); n++) {
			crash_at(&o, n, &p);
			show(&o, &p, n == 1);
		}
		show(&o, &end, !o.each || !end.run.points);
	}
	if (o.json)
		printf("\n]}\n");
	return worst;
}
