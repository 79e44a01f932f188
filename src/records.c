/* SPDX-License-Identifier: MIT */
/* records.c -- a run's record directory: DIR/records (slots the library
 * fills), DIR/command (one argument a line), DIR/run ("status N\nwall S"). */
#include "common.h"
#include "records.h"
#include "../libeatmydata/record.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char path_buf[PATH_MAX];

/* A file in the record directory. */
static const char *in_dir(const char *dir, const char *name)
{
	static char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* EATMYDATA_RECORD_SLOTS: a smaller record file, for tests that fill it. */
static unsigned long long slot_capacity(void)
{
	const char *v = getenv("EATMYDATA_RECORD_SLOTS");
	unsigned long long n;
	char *end;

	if (!v || !*v)
		return EMD_REC_SLOTS_DEFAULT;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || n == 0 || n > EMD_REC_SLOTS_MAX)
		die("EATMYDATA_RECORD_SLOTS=%s: expected 1 to %u", v, EMD_REC_SLOTS_MAX);
	return n;
}

const char *records_prepare(const char *dir, unsigned flags)
{
	struct emd_rec_header h = {.version = EMD_REC_VERSION,
				   .slot_size = sizeof(struct emd_rec_slot),
				   .slots = slot_capacity(),
				   .flags = flags};
	const char *file;
	int fd;

	if (dir) {
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			die("cannot create %s: %s", dir, strerror(errno));
		if (!realpath(dir, path_buf))
			die("cannot use %s: %s", dir, strerror(errno));
	} else {
		/* tmpfs when there is one: the records never touch a disk. */
		const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

		snprintf(path_buf, sizeof(path_buf), "%s/syncstat.XXXXXX", tmp);
		if (!mkdtemp(path_buf))
			die("cannot create %s: %s", path_buf, strerror(errno));
	}
	file = in_dir(path_buf, "records");
	memcpy(h.magic, EMD_REC_MAGIC, 8);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0 || write(fd, &h, sizeof(h)) != sizeof(h) ||
	    ftruncate(fd, EMD_REC_HEADER +
				  h.slots * sizeof(struct emd_rec_slot)) != 0)
		die("cannot create %s: %s", file, strerror(errno));
	/* Processes of the tree that change user still record. */
	fchmod(fd, 0666);
	close(fd);
	chmod(path_buf, 01777);
	if (setenv("EATMYDATA_RECORD", file, 1) != 0 ||
	    ((flags & EMD_REC_AUDIT) && setenv("EATMYDATA_AUDIT", "1", 1) != 0))
		die("cannot set EATMYDATA_RECORD");
	return path_buf;
}

void records_save_run(const char *dir, char *const argv[], int status,
		      double wall_seconds)
{
	FILE *f = fopen(in_dir(dir, "command"), "we");

	for (; f && *argv; argv++)
		fprintf(f, "%s\n", *argv);
	if (!f || fclose(f) != 0)
		warn("cannot write %s", in_dir(dir, "command"));
	f = fopen(in_dir(dir, "run"), "we");
	if (f)
		fprintf(f, "status %d\nwall %.9f\n",
			WIFEXITED(status) ? WEXITSTATUS(status)
					  : 128 + WTERMSIG(status),
			wall_seconds);
	if (!f || fclose(f) != 0)
		warn("cannot write %s", in_dir(dir, "run"));
}

void records_remove(const char *dir)
{
	static const char *const names[] = {"records", "command", "run", "tails"};

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		unlink(in_dir(dir, names[i]));
	if (rmdir(dir) != 0)
		warn("cannot remove %s: %s", dir, strerror(errno));
}

void records_check_version(const char *file, unsigned version)
{
	if (version != EMD_REC_VERSION)
		die("%s: format version %u, this %s reads version %u", file, version,
		    tool_name, EMD_REC_VERSION);
}
