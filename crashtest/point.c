/* SPDX-License-Identifier: MIT */
/* point.c -- one crash point: its states, each built where the command ran
 * (the same absolute path), checked by `sh -c CHECK` with what the command
 * had printed up to the point, its output kept for the report; a state the
 * same as one checked before is not checked again.
 */
#define _GNU_SOURCE 1
#include "crashtest/build.h"
#include "crashtest/run.h"
#include "crashtest/text.h"
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The most of a checker's output the report keeps: its end. */
#define OUTPUT_KEPT 4096

/* The call a crash point followed, its file named as it was. */
static char *after(const struct run *run, uint32_t rec)
{
	const struct run_model *m = &run->m;
	const struct ct_record *h = &run->j.r[rec].h;
	const char *p = m->file[rec], *failed = h->flags & CT_F_FAILED ? ", failed" : "";
	const char *call = h->kind == CT_SYNC ? (h->flags & CT_F_RANGE ? "msync" :
						 h->flags & CT_F_DATA ? "fdatasync" : "fsync")
			   : h->kind == CT_SYNC_ALL
				? (h->flags & CT_F_OUTSIDE ? "syncfs of another file system" : "sync")
			   : h->kind == CT_CLAIM ? (h->ino ? "a write to a pipe or socket" : "output")
			   : h->kind == CT_DURING ? (h->flags & CT_F_RANGE ? "during msync" :
						     h->ino ? "during fsync" : "during sync")
			   : "a change";
	char *text;
	int r;

	if (h->kind == CT_WRITE && (h->flags & (CT_F_DSYNC | CT_F_SYNC)))
		r = asprintf(&text, "%s %s", h->flags & CT_F_SYNC ? "O_SYNC" : "O_DSYNC",
			     m->text[rec] ? m->text[rec] : "write");
	else if (h->kind != CT_CLAIM && (m->flags[rec] & R_CHANGE))
		r = asprintf(&text, "%s", m->text[rec] ? m->text[rec] : "a change");
	else
		r = p ? asprintf(&text, "%s(%s)%s", call, *p ? p : ".", failed)
		      : asprintf(&text, "%s%s", call, failed);
	if (r < 0)
		die("out of memory");
	return text;
}

/* The durability calls and changes before record rec (inclusive). */
static void counts(const struct run *run, uint32_t rec, struct point_result *p)
{
	for (uint32_t i = 0; rec != NEVER && i <= rec; i++) {
		const struct ct_record *h = &run->j.r[i].h;

		if (h->kind == CT_SYNC || h->kind == CT_SYNC_ALL ||
		    (h->kind == CT_WRITE && (h->flags & (CT_F_DSYNC | CT_F_SYNC))))
			p->syncs++;
		else if ((run->m.flags[i] & R_CHANGE) && h->kind != CT_IMAGE)
			p->changes++; /* a picture is no call of the program's */
	}
}

/* The changes a state lost, named, when there are three at most. */
static void lost_changes(const struct run *run, const struct point_states *ps,
			 const struct state *s, struct state_result *r)
{
	size_t n = 0;

	for (size_t u = 0; u < ps->nu; u++)
		n += !s->in[u] || s->torn == ps->u[u];
	for (size_t u = 0, k = 0; n <= 3 && u < ps->nu; u++)
		if ((!s->in[u] || s->torn == ps->u[u]) &&
		    !(r->changes[k++] = strdup(run->m.text[ps->u[u]] ? run->m.text[ps->u[u]] : "?")))
			die("out of memory");
}

/* Per state, the files whose unsynced changes it lost, with how many. */
static void lost(const struct run *run, const struct point_states *ps, const struct state *s,
		 struct state_result *r)
{
	lost_changes(run, ps, s, r);
	for (size_t u = 0; u < ps->nu; u++) {
		char *f;
		size_t k;

		if (s->in[u] && s->torn != ps->u[u])
			continue;
		if (!(f = strdup(run->m.file[ps->u[u]] ? run->m.file[ps->u[u]] : "?")))
			die("out of memory");
		for (k = 0; k < r->nlost && strcmp(r->lost[k].file, f); k++)
			;
		if (k < r->nlost) {
			r->lost[k].changes++;
			free(f);
			continue;
		}
		if (!(r->lost = realloc(r->lost, (r->nlost + 1) * sizeof(*r->lost))))
			die("out of memory");
		r->lost[r->nlost++] = (struct lost){f, 1};
	}
}

/* The first n bytes of the run's file `from` as the new file `to`: what the
 * command had printed up to the point. */
static void prefix(const struct run *run, const char *from, const char *to, uint64_t n)
{
	int in = openat(run->fd, from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), out;
	struct stat st;

	unlinkat(run->fd, to, 0);
	out = openat(run->fd, to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		die("cannot create %s/%s: %s", run->dir, to, strerror(errno));
	while (in >= 0 && fstat(in, &st) == 0 && S_ISREG(st.st_mode) && n > 0) {
		ssize_t c = copy_file_range(in, NULL, out, NULL, n, 0);

		if (c <= 0)
			break;
		n -= (uint64_t)c;
	}
	if (in >= 0)
		close(in);
	close(out);
}

/* The end of the checker's output, escaped. */
static char *read_output(const struct run *run)
{
	char buf[OUTPUT_KEPT];
	struct stat st;
	int fd = openat(run->fd, "check", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		n = pread(fd, buf, sizeof(buf),
			  st.st_size > (off_t)sizeof(buf) ? st.st_size - (off_t)sizeof(buf) : 0);
	if (fd >= 0)
		close(fd);
	return escape(buf, n > 0 ? (size_t)n : 0, 1);
}

static void checker_env(const struct run *run, long number, const char *what)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/output", run->dir);
	setenv("CRASHTEST_OUTPUT", path, 1);
	snprintf(path, sizeof(path), "%s/errors", run->dir);
	setenv("CRASHTEST_ERRORS", path, 1);
	snprintf(path, sizeof(path), "%ld", number);
	setenv("CRASHTEST_POINT", path, 1);
	setenv("CRASHTEST_STATE", what, 1);
}

/* `sh -c CHECK` in the state, its output in the run's file `check`. */
static void check(const struct run *run, const struct options *o, long number,
		  struct state_result *r)
{
	char *argv[] = {"/bin/sh", "-c", (char *)o->check, NULL};
	int out, status;
	pid_t pid;

	unlinkat(run->fd, "check", 0);
	out = openat(run->fd, "check", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0 || (pid = fork()) < 0)
		die("cannot run the check: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		checker_env(run, number, r->what);
		if (fchdir(run->fd) != 0 || chdir("work") != 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			die("cannot enter %s/work: %s", run->dir, strerror(errno));
		exec_command(argv[0], argv);
	}
	setpgid(pid, pid);
	close(out);
	status = wait_for(pid);
	power_off(pid);
	if (run_caught())
		return; /* killed by crashtest: no verdict, and the point is dropped */
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->v = r->status == 0 ? OK : FAILED;
	r->output = read_output(run);
}

/* Has a state with this hash been seen at this point?  Then not again. */
static int seen_before(uint64_t (**seen)[2], size_t *n, const uint64_t h[2])
{
	for (size_t i = 0; i < *n; i++)
		if ((*seen)[i][0] == h[0] && (*seen)[i][1] == h[1])
			return 1;
	if (!(*seen = realloc(*seen, (*n + 1) * sizeof(**seen))))
		die("out of memory");
	(*seen)[*n][0] = h[0];
	(*seen)[(*n)++][1] = h[1];
	return 0;
}

/* The same state checked at an earlier point with the same output: its
 * verdict holds here too. */
static const struct checked *checked_before(const struct run *run, const uint64_t h[2],
					    uint64_t out, uint64_t err)
{
	for (size_t i = 0; i < run->nchecked; i++) {
		const struct checked *c = &run->checked[i];

		if (c->h[0] == h[0] && c->h[1] == h[1] && c->out == out && c->err == err)
			return c;
	}
	return NULL;
}

static void remember(struct run *run, const uint64_t h[2], const struct point_result *p,
		     uint64_t err, const struct state_result *r)
{
	struct checked *c;

	if (run->nchecked == run->capchecked &&
	    !(run->checked = realloc(run->checked, (run->capchecked = run->capchecked ?
						    2 * run->capchecked : 64) * sizeof(*c))))
		die("out of memory");
	c = &run->checked[run->nchecked++];
	*c = (struct checked){{h[0], h[1]}, p->output, err, p->number, r->v, r->status,
			      strdup(r->output ? r->output : "")};
	if (!c->output)
		die("out of memory");
}

/* The verdict of state r: checked now, or as it was at an earlier point. */
static void verdict_of(struct run *run, const struct options *o, const struct built *b,
		       const uint64_t h[2], uint64_t err, struct point_result *p,
		       struct state_result *r)
{
	const struct checked *c = checked_before(run, h, p->output, err);
	size_t known = p->unknown.n;

	if (c) {
		r->v = c->v;
		r->status = c->status;
		r->same_as = c->point;
		r->checked_before = 1;
		if (!(r->output = strdup(c->output)))
			die("out of memory");
		return;
	}
	state_build(b, run->fd, "work");
	if (p->unknown.n > known)
		r->v = UNKNOWN; /* not built as the journal says: no checker runs in it */
	else
		check(run, o, p->number, r);
	remove_tree_at(run->fd, "work");
	if (r->v == UNKNOWN || run_caught())
		return;
	p->checked++;
	remember(run, h, p, err, r);
}

/* State s of the point: built, checked, its result in p (unless it is one
 * already there). */
static int one_state(struct run *run, const struct options *o, const struct run_model *m,
		     const struct point_states *ps, size_t i, struct point_result *p,
		     uint64_t (**seen)[2], uint64_t err)
{
	struct listing l;
	uint64_t h[2];
	struct built b = {.m = m, .ps = ps, .s = &ps->s[i], .t = &run->t, .l = &l,
			  .base = &run->base, .why = &p->unknown};
	struct state_result *r = &p->s[i];
	int fresh;

	p->built++;
	state_names(m, ps, b.s, &run->t);
	tree_list(&run->t, &l);
	state_hash(&b, h);
	r->status = -1;
	r->v = UNCHECKED;
	/* At an unknown point, the states are not what a crash would leave:
	 * no checker runs in them. */
	if ((fresh = !seen_before(seen, &p->distinct, h)) && o->check && p->unknown.n)
		r->v = UNKNOWN;
	else if (fresh && o->check)
		verdict_of(run, o, &b, h, err, p, r);
	listing_free(&l);
	tree_undo(&run->t, run->base_mark);
	return fresh;
}

static void drop_result(struct state_result *r)
{
	for (int k = 0; k < 3; k++)
		free(r->changes[k]);
	free(r->what);
	free(r->output);
	for (size_t k = 0; k < r->nlost; k++)
		free(r->lost[k].file);
	free(r->lost);
}

/* The point's verdict: unknown if the run was not all seen up to it (or a
 * state could not be built), never failed then; else failed if a state
 * failed; else ok once checked. */
static enum verdict verdict(const struct point_result *p, const struct options *o)
{
	if (p->unknown.n)
		return UNKNOWN;
	for (size_t i = 0; i < p->ns; i++)
		if (p->s[i].v == FAILED)
			return FAILED;
	return o->check ? OK : UNCHECKED;
}

/* What the point is; its states, described, and what each lost. */
static void describe(struct run *run, const struct options *o, const struct run_model *m,
		     uint32_t rec, struct point_states *ps, struct point_result *p)
{
	if (p->number)
		p->after = after(run, rec);
	model_states(m, rec, o->states, o->seed, o->classes, ps);
	if (!(p->s = calloc(ps->ns ? ps->ns : 1, sizeof(*p->s))))
		die("out of memory");
	for (size_t i = 0; i < ps->ns; i++) {
		if (!(p->s[i].what = strdup(ps->s[i].what)))
			die("out of memory");
		lost(run, ps, &ps->s[i], &p->s[i]);
	}
}

void run_point(struct run *run, const struct options *o, size_t k, long number,
	       struct point_result *p)
{
	const struct run_model *m = run_view(run, k);
	uint32_t rec = number ? m->point_rec[number - 1] : run->j.n ? (uint32_t)run->j.n - 1 : NEVER;
	uint64_t (*seen)[2] = NULL, err;
	struct point_states ps;

	*p = (struct point_result){.number = number};
	counts(run, rec, p);
	p->output = number ? run->j.r[rec].h.out : run->out_size;
	for (size_t i = 0; i < m->unknown.n; i++)
		problem(&p->unknown, "%s", m->unknown.v[i]);
	for (size_t i = 0; rec != NEVER && m->unknown_from <= rec && i < m->unknown_at.n; i++)
		problem(&p->unknown, "%s", m->unknown_at.v[i]);
	describe(run, o, m, rec, &ps, p);
	p->unsynced = ps.nu;
	p->allowed = ps.candidates;
	p->cut = ps.cut;
	err = number ? run->j.r[rec].h.err : run->err_size;
	prefix(run, CT_OUT, "output", p->output);
	prefix(run, CT_ERR, "errors", err);
	/* A signal to crashtest: the states not built are dropped, and so is
	 * the point (main's loop). */
	for (size_t i = 0; i < ps.ns; i++)
		if (!run_caught() && one_state(run, o, m, &ps, i, p, &seen, err))
			p->s[p->ns++] = p->s[i];
		else
			drop_result(&p->s[i]);
	p->v = verdict(p, o);
	free(seen);
	point_states_free(&ps);
}
