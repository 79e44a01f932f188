/* SPDX-License-Identifier: MIT */
/* run.c -- a crashtest run: its private directory (base/, the copy of DIR
 * every state is built from; work/, where the command runs; the journal,
 * the points file, the command's output), the command run once under
 * libcrashtest, and what its journal says.
 *
 * The command runs in a process group of its own; crashtest is the
 * subreaper of its tree and kills all of it, those that left the group
 * too, before anything is built: no process of the tree runs on while the
 * states are made and checked.
 */
#define _GNU_SOURCE 1
#include "crashtest/run.h"
#include "crashtest/build.h"
#include "crashtest/check.h"
#include "crashtest/text.h"
#include "common/common.h"
#include "seccomp/seccomp.h"
#include "elf_kind.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *current_run;
static pid_t crashtest_pid;

void run_remove(void)
{
	if (current_run && getpid() == crashtest_pid)
		remove_tree_at(AT_FDCWD, current_run);
	current_run = NULL;
}

/* fn on each child of crashtest's (as a subreaper it inherits every
 * process of the tree whose parent died): its pid, state and name (which
 * may hold anything), until fn returns non-zero; that value, or 0. */
static int each_child(int (*fn)(pid_t pid, char state, const char *name, size_t len))
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	char path[300], buf[512], *lp, *rp, state;
	long ppid;
	int fd, r = 0;
	ssize_t n;

	while (proc && !r && (e = readdir(proc))) {
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		lp = strchr(buf, '(');
		rp = strrchr(buf, ')');
		if (lp && rp && sscanf(rp, ") %c %ld", &state, &ppid) == 2 && ppid == getpid())
			r = fn((pid_t)atol(e->d_name), state, lp + 1, (size_t)(rp - lp - 1));
	}
	if (proc)
		closedir(proc);
	return r;
}

static int kill_child(pid_t pid, char state, const char *name, size_t len)
{
	(void)state, (void)name, (void)len;
	kill(pid, SIGKILL);
	return 0;
}

static void kill_children(void)
{
	each_child(kill_child);
}

/* A supervisor of the run that died of a signal while the command ran (a
 * child of crashtest's, the subreaper, that exited named as serve.c names
 * it)?  From then on, the calls its filter sends it fail (ENOSYS) and the
 * program does not run as it would.  Looked at before the power-off,
 * which kills it too; a zombie stays until then. */
static int dead_supervisor(pid_t pid, char state, const char *name, size_t len)
{
	siginfo_t si = {0};

	return state == 'Z' && len == 9 && !strncmp(name, "eatmydata", 9) &&
	       waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED);
}

static int supervisor_died(void)
{
	return each_child(dead_supervisor);
}

void power_off(pid_t group)
{
	do {
		if (group > 0)
			kill(-group, SIGKILL);
		kill_children();
	} while (waitpid(-1, NULL, 0) > 0 || errno == EINTR);
}

/* What a signal to crashtest, or its own error, must not leave behind: the
 * child it waits for (the command's group, the checker) and the run
 * directory.  The handler only kills the child, so that the wait returns;
 * the rest is done there, outside the handler. */
static volatile sig_atomic_t caught;
static volatile pid_t waited;
static volatile pid_t workers[MAX_JOBS]; /* check.c's, running */

static void on_signal(int sig)
{
	caught = sig;
	if (waited > 0) {
		kill(-waited, SIGKILL);
		kill(waited, SIGKILL);
	}
	for (size_t k = 0; k < MAX_JOBS; k++)
		if (workers[k] > 0)
			kill(workers[k], SIGKILL);
}

void watch_worker(pid_t pid, int on)
{
	size_t k = 0;

	while (k < MAX_JOBS && workers[k] != (on ? 0 : pid))
		k++;
	if (k < MAX_JOBS)
		workers[k] = on ? pid : 0;
	if (on && caught)
		on_signal(caught); /* it came before pid was known */
}

void run_interrupt(int sig)
{
	on_signal(sig);
}

void catch_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	struct sigaction sa = {.sa_handler = on_signal}, old;

	crashtest_pid = getpid();
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL); /* no SA_RESTART: waits return */
}

int run_caught(void)
{
	return caught;
}

static double deadline;
static int stopped;

void run_stop_at(double when)
{
	deadline = when;
}

void run_stop(void)
{
	stopped = 1;
}

int run_budget_spent(void)
{
	return deadline > 0 && monotonic_seconds() >= deadline;
}

int run_stopping(void)
{
	return caught || stopped || run_budget_spent();
}

void die_of_caught(void)
{
	int sig = caught;

	if (!sig)
		return;
	power_off(0);
	run_remove();
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

int wait_for(pid_t pid)
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

/* A new file of the run directory, private and never someone else's. */
static int create_in(struct run *run, const char *name, int flags)
{
	int fd = openat(run->fd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		die("cannot create %s/%s: %s", run->dir, name, strerror(errno));
	return fd;
}

/* The base's names as the tree, a node per inode (hard links share one). */
static void tree_of_base(struct run *run)
{
	const struct base *b = &run->base;

	tree_init(&run->t);
	if (!(run->base_node = calloc(b->n, sizeof(*run->base_node))) ||
	    (!run->work_ino && !(run->work_ino = calloc(b->n, sizeof(*run->work_ino)))))
		die("out of memory");
	for (size_t i = 0; i < b->n; i++) {
		const struct base_entry *e = &b->e[i];
		uint32_t same = e->same ? run->base_node[e->same] : 0;

		run->base_node[i] = same ? same : tree_add_node(&run->t, &(struct node){
			.type = S_ISDIR(e->mode) ? NODE_DIR : S_ISREG(e->mode) ? NODE_FILE :
				S_ISLNK(e->mode) ? NODE_LINK : NODE_SPECIAL,
			.mode = e->mode, .uid = e->uid, .gid = e->gid, .base = (uint32_t)i + 1,
			.target = e->target});
		if (i)
			tree_set(&run->t, run->base_node[e->parent], e->name, run->base_node[i]);
	}
	run->base_mark = tree_mark(&run->t);
}

/* The copy the command runs in: the base, built as a state with no change,
 * and the inode each of its entries got. */
static void make_work(struct run *run)
{
	struct listing l;
	struct stat st;
	struct problems why = {0};
	uint64_t *ino = calloc(run->t.nnodes + 1, sizeof(*ino));
	struct run_model m = {.t = &run->t};
	struct built b = {.m = &m, .t = &run->t, .l = &l, .base = &run->base, .why = &why,
			  .ino = ino};

	if (!ino)
		die("out of memory");
	tree_list(&run->t, &l);
	state_build(&b, run->fd, "work");
	listing_free(&l);
	if (why.n)
		die("cannot copy %s: %s", run->dir, why.v[0]);
	for (size_t i = 0; i < run->base.n; i++)
		run->work_ino[i] = ino[run->base_node[i]];
	free(ino);
	if (fstatat(run->fd, "work", &st, AT_SYMLINK_NOFOLLOW) != 0)
		die("cannot use %s/work: %s", run->dir, strerror(errno));
	run->dev = st.st_dev;
}

struct run_model *run_view(struct run *run, size_t k)
{
	return k ? &run->alt[k] : &run->m;
}

/* The models asked for, and the control of auto_da_alloc's rule. */
static void choose_models(struct run *run, const struct options *o)
{
	static const enum model all[] = {MODEL_POSIX, MODEL_EXT4_ORDERED, MODEL_XFS};
	int ext4 = 0;

	run->shown = o->all_models ? 3 : 1;
	for (size_t k = 0; k < run->shown; k++) {
		run->models[k] = o->all_models ? all[k] : o->model;
		ext4 |= run->models[k] == MODEL_EXT4_ORDERED;
	}
	run->nmodels = run->shown;
	if (ext4)
		run->models[run->nmodels++] = MODEL_EXT4_NOADA;
}

void run_directory(struct run *run)
{
	private_tmpdir("crashtest", run->dir, sizeof(run->dir));
	current_run = run->dir;
	if ((run->fd = open(run->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die("cannot open %s: %s", run->dir, strerror(errno));
	if (mkdirat(run->fd, "base", 0700) != 0 ||
	    (run->base.fd = openat(run->fd, "base", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				   O_CLOEXEC)) < 0)
		die("cannot create %s/base: %s", run->dir, strerror(errno));
}

void run_prepare_recorded(struct run *run, const struct options *o)
{
	choose_models(run, o);
	tree_of_base(run);
	run->recorded = 1;
}

void run_prepare(struct run *run, const struct options *o)
{
	static const struct ct_counters zero;
	int fd;

	choose_models(run, o);
	private_tmpdir("crashtest", run->dir, sizeof(run->dir));
	current_run = run->dir;
	if ((run->fd = open(run->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die("cannot open %s: %s", run->dir, strerror(errno));
	base_copy(o->dir, run->fd, "base", &run->base);
	tree_of_base(run);
	make_work(run);
	close(create_in(run, CT_JOURNAL, O_WRONLY));
	fd = create_in(run, CT_POINTS, O_WRONLY);
	if (write(fd, &zero, sizeof(zero)) != sizeof(zero))
		die("cannot write %s/%s: %s", run->dir, CT_POINTS, strerror(errno));
	close(fd);
	/* The kernel-reference tests copy the device at each crash point: the
	 * copy the command starts from must be on it. */
	if (getenv(CT_ENV_HOOK) && syncfs(run->fd) != 0)
		die("cannot sync %s: %s", run->dir, strerror(errno));
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

/* In the child: the environment the library reads, and the points file on
 * a descriptor it inherits (a process that cannot open the journal, one
 * that dropped its privileges, counts itself lost through it). */
static void command_env(const struct run *run, const struct options *o, long at)
{
	char path[PATH_MAX + 16];
	int fd;

	set_env(CT_ENV_RUN, run->dir);
	snprintf(path, sizeof(path), "%s/work", run->dir);
	set_env(CT_ENV_ROOT, path);
	set_number(CT_ENV_AT, at);
	set_number(CT_ENV_PGID, getpid());
	set_env(CT_ENV_WRITES, o->writes ? "1" : "0");
	set_env(CT_ENV_OUTSIDE_OK, o->outside_ok);
	if ((fd = openat(run->fd, CT_POINTS, O_RDWR | O_NOFOLLOW)) < 0)
		die("cannot open %s/%s: %s", run->dir, CT_POINTS, strerror(errno));
	set_number(CT_ENV_POINTS, fd);
	preload_prepend(o->preload);
}

/* For the kernel-reference tests: the command's tree is gone, and what it
 * left is the end's state: the hook (CT_ENV_HOOK) hears "0 0 0". */
static void hook_at_end(void)
{
	const char *hook = getenv(CT_ENV_HOOK);
	int w, r;
	char c;

	if (hook && sscanf(hook, "%d:%d", &w, &r) == 2 && write(w, "0 0 0\n", 6) == 6 &&
	    read(r, &c, 1) != 1)
		warn("the test hook did not answer");
}

/* COMMAND itself, if the library cannot enter it (elf_kind.h) and no
 * supervisor follows it (--seccomp=off): its changes are all past the
 * journal, and the run's every point unknown.  With one, the child says
 * so in the journal if the filter cannot be had (seccomp/start.c). */
static char *unreached(const char *cmd)
{
	char path[PATH_MAX], *why = NULL;
	int kind = emd_command_unreachable(cmd, path, sizeof(path));

	if (kind && asprintf(&why, "%s is %s: what it changes is past crashtest's library", path,
			     emd_elf_reason(kind)) < 0)
		die("out of memory");
	return why;
}

void run_command(struct run *run, const struct options *o, long at)
{
	int out = create_in(run, CT_OUT, O_WRONLY), err = create_in(run, CT_ERR, O_WRONLY);
	pid_t pid;

	struct seccomp_options filter = {.mode = o->seccomp, .policy = "crashtest"};

	free(run->unreached);
	run->unreached = strcmp(o->seccomp, "off") ? NULL : unreached(o->cmd[0]);
	pid = fork();

	if (pid < 0)
		die("cannot fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		command_env(run, o, at);
		seccomp_prepare(&filter);
		if (fchdir(run->fd) != 0 || chdir("work") != 0 || dup2(out, 1) < 0 ||
		    dup2(err, 2) < 0)
			die("cannot enter %s/work: %s", run->dir, strerror(errno));
		seccomp_before_exec(&filter, find_command(o->cmd[0]));
		exec_command(o->cmd[0], o->cmd);
	}
	setpgid(pid, pid);
	close(out);
	close(err);
	run->status = wait_for(pid);
	if (caught && WIFSIGNALED(run->status) && WTERMSIG(run->status) == SIGKILL)
		run->caught = caught;
	if (!run->unreached && supervisor_died() &&
	    !(run->unreached = strdup("crashtest's supervisor died while the command ran: the "
				      "calls it follows failed from then on")))
		die("out of memory");
	power_off(pid);
	if (!caught)
		hook_at_end();
}

/* A regular file of the run directory, opened as untrusted input: no link
 * followed, no FIFO waited on; -1 if it is not one. */
static int open_input(const struct run *run, const char *name, struct stat *st)
{
	int fd = openat(run->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* What the tree counted; a points file that is no longer one is a run
 * whose counts cannot be trusted. */
static void read_counters(struct run *run, struct problems *why)
{
	struct stat st;
	int fd = open_input(run, CT_POINTS, &st);

	if (fd < 0 || pread(fd, &run->count, sizeof(run->count), 0) != sizeof(run->count))
		problem(why, "the points file is gone or is no file");
	if (fd >= 0)
		close(fd);
	if (run->count.lost)
		problem(why, "%llu records the journal could not take (a file size limit, a full "
			"disk, a process that could not open it)", (unsigned long long)run->count.lost);
	if ((fd = open_input(run, CT_OUT, &st)) >= 0)
		run->out_size = (uint64_t)st.st_size, close(fd);
	if ((fd = open_input(run, CT_ERR, &st)) >= 0)
		run->err_size = (uint64_t)st.st_size, close(fd);
}

/* What the command printed on its standard error, passed on (it ran with
 * its standard error in the run directory, where claims are counted). */
void run_show_errors(const struct run *run)
{
	struct stat st;
	char buf[65536];
	int fd = open_input(run, CT_ERR, &st);
	ssize_t n;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		if (write(2, buf, (size_t)n) != n)
			break;
	if (fd >= 0)
		close(fd);
}

/* The run's copy against what the journal says the command did to it:
 * all of it kept, as the end's page cache held it.  Any difference is a
 * change made past the library. */
static void compare_with_journal(struct run *run)
{
	struct run_model *m = &run->m;
	struct point_states ps;
	struct listing l;
	struct built b = {.m = m, .ps = &ps, .t = &run->t, .l = &l, .base = &run->base,
			  .why = &run->compared};
	/* a file whose change the journal says it could not follow (where a
	 * write went) differs for that reason, already said */
	struct file_id *told;
	size_t ntold = 0;

	model_states(m, run->j.n ? (uint32_t)run->j.n - 1 : NEVER, 1, 0, CLASS_KEPT, &ps);
	b.s = &ps.s[0];
	state_names(m, &ps, b.s, &run->t);
	tree_list(&run->t, &l);
	state_build(&b, run->fd, "kept");
	told = calloc(run->j.n ? run->j.n : 1, sizeof(*told));
	for (size_t i = 0; told && i < run->j.n; i++)
		if (run->j.r[i].h.kind == CT_UNKNOWN && run->j.r[i].h.ino)
			told[ntold++] = (struct file_id){(dev_t)run->j.r[i].h.dev,
							 (ino_t)run->j.r[i].h.ino};
	compare_trees(run->fd, "work", "kept", told, ntold, &run->compared);
	free(told);
	remove_tree_at(run->fd, "kept");
	listing_free(&l);
	tree_undo(&run->t, run->base_mark);
	point_states_free(&ps);
}

/* Files written through a shared mapping: their writes between two
 * durability calls are seen only whole. */
static void unexplored(struct run *run)
{
	struct run_model *m = &run->m;

	for (size_t i = 0; i < run->j.n; i++)
		if (run->j.r[i].h.kind == CT_HOLD && (run->j.r[i].h.flags & CT_F_MAPPED) && m->node[i])
			problem(&m->unexplored, "%s, written through a shared mapping: its writes are "
				"seen only at durability calls (then page by page), not between",
				m->file[i] ? m->file[i] : "a file");
}

void run_analyse(struct run *run)
{
	struct problems why = {0};

	read_counters(run, &why);
	journal_read(run->fd, &run->j, &why);
	model_resolve(&run->m, &run->j, &run->t, run->dev, run->work_ino, run->base_node,
		      run->base.n);
	if (run->unreached)
		problem(&run->m.unknown, "%s", run->unreached);
	for (size_t i = 0; i < why.n; i++)
		problem(&run->m.unknown, "%s", why.v[i]);
	problems_free(&why);
	model_name_changes(&run->m);
	for (size_t k = 1; k < run->nmodels; k++)
		model_view(&run->alt[k], &run->m);
	for (size_t k = 0; k < run->nmodels; k++) {
		model_durability(run_view(run, k), run->models[k]);
		model_pictures(run_view(run, k));
	}
	/* Recorded: the copy was compared then (bundle.c keeps the result). */
	if (!run->recorded)
		compare_with_journal(run);
	for (size_t i = 0; i < run->compared.n; i++)
		problem(&run->m.unknown, "%s", run->compared.v[i]);
	for (size_t k = 1; k < run->nmodels; k++)
		model_view_unknowns(&run->alt[k], &run->m);
	if (!run->recorded)
		remove_tree_at(run->fd, "work");
	unexplored(run);
}

void run_free(struct run *run)
{
	for (size_t i = 0; i < run->nchecked; i++) {
		free(run->checked[i].output);
		problems_free(&run->checked[i].why);
	}
	free(run->checked);
	free(run->check_index);
	free(run->unreached);
	problems_free(&run->compared);
	for (size_t k = 1; k < run->nmodels; k++)
		model_free(&run->alt[k]);
	model_free(&run->m);
	journal_free(&run->j);
	tree_free(&run->t);
	base_free(&run->base);
	free(run->base_node);
	free(run->work_ino);
	if (run->fd >= 0)
		close(run->fd);
}
