/* SPDX-License-Identifier: MIT */
/* words.c -- the sentences the text and the HTML report share, so that
 * the page says all the text says, in the same words.  Each result lasts
 * until the next call of the same function. */
#include "report_data.h"

#include <string.h>

const char *report_would_save(const struct run *run)
{
	static char b[160];
	unsigned long long eaten_ns = run->calls * EATEN_NS;

	snprintf(b, sizeof(b), "eatmydata would answer %s in about %s: %.3f s saved",
		 run->calls == 1 ? "it" : "them", report_duration(eaten_ns),
		 run->total > eaten_ns ? (run->total - eaten_ns) / 1e9 : 0.0);
	return b;
}

const char *report_eaten(const struct run *run)
{
	static char b[600];
	unsigned long long none = run->left - run->left_eatable - run->left_not_eating;
	const char *opts = (run->left_needs & EMD_REC_NEEDS_SECCOMP_ON) ?
		(run->left_needs & EMD_REC_NEEDS_ON_BEHALF) ? "--seccomp=on --on-behalf=on" :
		"--seccomp=on" : "--on-behalf=on";
	size_t at;

	if (!run->left)
		return "all eaten";
	at = (size_t)snprintf(b, sizeof(b), "%llu eaten, %llu left to the disk",
			      run->calls - run->left, run->left);
	if (run->left_eatable)
		at += (size_t)snprintf(b + at, sizeof(b) - at, "; %s eats %s", opts,
				       run->left_eatable == run->left ? "them" :
				       report_n(run->left_eatable, "of them", "of them"));
	if (run->left_not_eating)
		at += (size_t)snprintf(b + at, sizeof(b) - at, "; %s of programs that do not eat "
				       "(--only, EATMYDATA_DISABLE)", report_n(run->left_not_eating,
									     "was one", "were"));
	if (none && at < sizeof(b))
		snprintf(b + at, sizeof(b) - at, "; no option eats %s (the supervisor may not act "
			 "for the program)", none == run->left ? "them" :
			 report_n(none, "of them", "of them"));
	return b;
}

const char *report_spent(const struct run *run)
{
	static char b[200];

	if (!run->untimed)
		return run->calls == 1 ? "it" : "them";
	snprintf(b, sizeof(b), "the %llu timed", run->calls - run->untimed);
	return b;
}

const char *report_untimed(const struct run *run)
{
	static char b[100];

	if (!run->untimed)
		return "";
	snprintf(b, sizeof(b), " (%llu counted, not timed: below)", run->untimed);
	return b;
}

/* A thread by its number (gettid, the TID of ps -L) and its process's;
 * the program's name as recorded, for the caller to escape. */
const char *report_thread_name(const struct group *thread)
{
	static char b[96];

	snprintf(b, sizeof(b), "%d of %s (pid %d)", thread->tid, thread->program, thread->pid);
	return b;
}

const char *report_incomplete(const struct run *run)
{
	static char b[160];

	snprintf(b, sizeof(b), "%s not returned when their process ended",
		 report_n(run->incomplete, "call had", "calls had"));
	return b;
}

const char *report_lost(const struct run *run)
{
	static char b[160];

	snprintf(b, sizeof(b), "%s not recorded: the record file was full",
		 report_n(run->lost, "call was", "calls were"));
	return b;
}

/* --audit of a tree that never synced: what it did instead, which "0
 * findings" would hide (nothing it wrote is durable). */
const char *report_audit_nothing(const struct run *run)
{
	static char b[300];
	unsigned long long made[EMD_K_COUNT] = {0};

	for (size_t i = 0; i < run->nslots; i++)
		if (run->slots[i].kind < EMD_K_COUNT && run->slots[i].state == EMD_REC_DONE)
			made[run->slots[i].kind]++;
	if (!made[EMD_K_CREATE] && !made[EMD_K_RENAME] && !made[EMD_K_LINK]) {
		snprintf(b, sizeof(b), "no durability call was made, and no file created or "
			 "renamed: nothing to audit");
		return b;
	}
	snprintf(b, sizeof(b), "no durability call was made: the tree created %s, renamed "
		 "%s and linked %s, and synced none of it (a crash can lose all of it)",
		 report_n(made[EMD_K_CREATE], "file", "files"),
		 report_n(made[EMD_K_RENAME], "file", "files"),
		 report_n(made[EMD_K_LINK], "file", "files"));
	return b;
}

/* A file system's line: one with no block device, or one on the way to
 * the disks above (a loop or device-mapper device). */
const char *report_mount_line(const struct devices *ds, const struct dev_mount *m)
{
	static char b[300];

	(void)ds;
	if (m->nleaves == 0)
		snprintf(b, sizeof(b), "no block device: %s (%s) on %s (%llu:%llu)",
			 report_n(m->calls, "call", "calls"), report_duration(m->total_ns),
			 report_one_line(m->fstype), m->dev >> 32, m->dev & 0xffffffff);
	else if (m->via[0])
		snprintf(b, sizeof(b), "(%s on files on %s, counted on the disks under it)",
			 report_n(m->calls, "call", "calls"), m->via);
	else
		return NULL;
	return b;
}

const char *report_nofile_line(const struct devices *ds)
{
	static char b[160];

	snprintf(b, sizeof(b), "no file: %s (%s) named none (sync)",
		 report_n(ds->nofile_calls, "call", "calls"), report_duration(ds->nofile_ns));
	return b;
}

const char *report_unknown_line(const struct devices *ds)
{
	static char b[200];

	snprintf(b, sizeof(b), "unknown device: %s (%s) on file systems mounted after the "
		 "run started", report_n(ds->unknown_calls, "call", "calls"),
		 report_duration(ds->unknown_ns));
	return b;
}
