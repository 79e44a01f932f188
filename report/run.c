/* SPDX-License-Identifier: MIT */
/* run.c -- a run's record directory: DIR/records (slots the library
 * fills), DIR/command (the arguments, NUL-terminated), DIR/run ("status
 * N\nwall S"), DIR/devices (syncstat's samples of the disks' counters,
 * report/device_sample.c).
 *
 * The records are the user's and their tree's alone.  The directory is made
 * 0700, or is an existing one of the user's that no one else can write in;
 * every file in it is created here, exclusively, never through a link, mode
 * 0600.  The tree reaches the record file through a descriptor it inherits
 * (EATMYDATA_RECORD_FD), so a process that changes user still records.
 */
#include "common/common.h"
#include "run.h"
#include "record.h"
#include "env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* The files a run leaves in its directory (tails: syncstat --audit's; .run:
 * the space of `run`, taken before the command can fill the file system). */
static const char *const run_files[] = {"records", "command", "run", "tails",
					"devices", ".run"};
#define RUN_FILES (sizeof(run_files) / sizeof(*run_files))

static char path_buf[PATH_MAX];
static int dir_fd = -1, run_fd = -1, record_fd = -1;
static pid_t temporary_owner; /* the launcher, while its temporary dir is there */

/* A file in the record directory. */
static const char *in_dir(const char *dir, const char *name)
{
	static char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* The user's `ulimit -f` and `-n` and SIGXFSZ disposition are meant for
 * the command: the launcher's own files (the record file, command, run,
 * the report) would make it die of SIGXFSZ, leaving its directory, or run
 * out of descriptors.  It takes the hard limits for itself and gives the
 * user's back in the child it forks for the command. */
static struct rlimit user_fsize, user_nofile;
static struct sigaction user_xfsz;

static void give_back_limits(void)
{
	setrlimit(RLIMIT_FSIZE, &user_fsize);
	setrlimit(RLIMIT_NOFILE, &user_nofile);
	sigaction(SIGXFSZ, &user_xfsz, NULL);
}

static void take_hard_limits(void)
{
	struct sigaction ignore = {.sa_handler = SIG_IGN};
	struct rlimit fsize, nofile;

	if (getrlimit(RLIMIT_FSIZE, &user_fsize) != 0 ||
	    getrlimit(RLIMIT_NOFILE, &user_nofile) != 0 ||
	    sigaction(SIGXFSZ, &ignore, &user_xfsz) != 0 ||
	    pthread_atfork(NULL, NULL, give_back_limits) != 0)
		die("cannot set the launcher's own limits");
	fsize = user_fsize;
	nofile = user_nofile;
	fsize.rlim_cur = fsize.rlim_max;
	nofile.rlim_cur = nofile.rlim_max;
	setrlimit(RLIMIT_FSIZE, &fsize);
	setrlimit(RLIMIT_NOFILE, &nofile);
}

/* EATMYDATA_RECORD_SLOTS: a smaller record file, for tests that fill it. */
static unsigned long long slots_wanted(void)
{
	const char *v = getenv(EMD_ENV_RECORD_SLOTS);
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

/* The slots that fit in `bytes` of file, at least one. */
static unsigned long long slots_in(unsigned long long bytes)
{
	unsigned long long n = bytes > EMD_REC_HEADER ? bytes - EMD_REC_HEADER : 0;

	n /= sizeof(struct emd_rec_slot);
	return n ? n : 1;
}

/* The lowest memory limit of `dir` and the cgroups above it, from `file`
 * in each (memory.max, memory.limit_in_bytes); `dir` is consumed. */
static unsigned long long lowest_limit(const char *fmt, char *dir, const char *file)
{
	unsigned long long low = ~0ULL, v;
	char path[PATH_MAX + 64];
	char *slash;
	FILE *f;

	for (;;) {
		snprintf(path, sizeof(path), fmt, dir, file);
		if ((f = fopen(path, "re"))) {
			if (fscanf(f, "%llu", &v) == 1 && v < low)
				low = v;
			fclose(f);
		}
		if (!(slash = strrchr(dir, '/')) || dir[1] == '\0')
			return low;
		slash[slash == dir] = '\0'; /* "/a" goes up to "/" */
	}
}

/* The memory limit of the launcher's cgroup (v2, or v1's memory
 * hierarchy), which the tree is in; ~0 if none.  The records' pages are
 * charged to the processes that touch them, so they come out of it. */
static unsigned long long memory_limit(void)
{
	char line[PATH_MAX + 64], *dir;
	unsigned long long low = ~0ULL, v;
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "0::/", 4) == 0)
			v = lowest_limit("/sys/fs/cgroup%s/%s", line + 3, "memory.max");
		else if ((dir = strstr(line, ":memory:/")))
			v = lowest_limit("/sys/fs/cgroup/memory%s/%s", dir + 8,
					 "memory.limit_in_bytes");
		else
			continue;
		low = v < low ? v : low;
	}
	if (f)
		fclose(f);
	return low;
}

/* The record file takes at most half the space free where it lives: on a
 * small /dev/shm (a container's) the tree's own files there come first.
 * It also fits the hard file size limit, and takes at most an eighth of
 * the tree's memory limit (it was OOM-killed). */
static unsigned long long slot_capacity(void)
{
	unsigned long long n = slots_wanted(), fit, memory = memory_limit();
	struct statvfs fs;

	if (user_fsize.rlim_max != RLIM_INFINITY &&
	    (fit = slots_in(user_fsize.rlim_max)) < n)
		n = fit;
	if (memory != ~0ULL && (fit = slots_in(memory / 8)) < n)
		n = fit;
	if (fstatvfs(dir_fd, &fs) != 0)
		return n;
	fit = slots_in((unsigned long long)fs.f_bavail * fs.f_frsize / 2);
	return fit < n ? fit : n;
}

/* The directories above DIR: whoever owns one, or may write in one (the
 * sticky bit keeps others' entries their owners'), could move DIR aside
 * during the run and put one of theirs in its place, which the report would
 * then read and write by name.  Only root and the user are trusted. */
static void check_parents(const char *dir)
{
	struct stat st, up;
	int fd = dup(dir_fd), parent;

	if (fd < 0 || fstat(fd, &st) != 0)
		die("cannot use %s: %s", dir, strerror(errno));
	for (;; st = up, close(fd), fd = parent) {
		parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0 || fstat(parent, &up) != 0)
			die("cannot use %s: %s", dir, strerror(errno));
		if (up.st_dev == st.st_dev && up.st_ino == st.st_ino)
			break; /* the root */
		if (up.st_uid != 0 && up.st_uid != geteuid())
			die("cannot keep the records in %s: a directory above it "
			    "belongs to another user", dir);
		if ((up.st_mode & (S_IWGRP | S_IWOTH)) && !(up.st_mode & S_ISVTX))
			die("cannot keep the records in %s: others can write in a "
			    "directory above it", dir);
	}
	close(parent);
	close(fd);
}

/* Has the directory at fd nothing in it but "." and ".."? */
static int empty_dir(int fd)
{
	DIR *d = fdopendir(dup(fd));
	struct dirent *e;
	int empty = d != NULL;

	while (d && empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return empty;
}

/* --keep DIR: made 0700 if new; if not, the user's own, writable by no one
 * else (who could swap its files), and empty (`--keep=/etc` as root wrote
 * its records among /etc's files).  An existing directory is used as it
 * is: never chmod what the user made. */
/* The directory --keep made, until it is found fit: a refusal takes it
 * away again, that very directory (it is empty), not whatever took its
 * name meanwhile. */
static const char *made_path;
static struct stat made_st;

static void unmake_keep_dir(void)
{
	struct stat st;

	if (made_path && lstat(made_path, &st) == 0 && st.st_dev == made_st.st_dev &&
	    st.st_ino == made_st.st_ino)
		rmdir(made_path);
}

static void open_keep_dir(const char *dir)
{
	struct stat st;
	int made = mkdir(dir, 0700) == 0;

	if (!made && errno != EEXIST)
		die("cannot create %s: %s", dir, strerror(errno));
	if (made && lstat(dir, &made_st) == 0) {
		made_path = dir;
		atexit(unmake_keep_dir);
	}
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
		die("cannot keep the records in %s: it is a symbolic link", dir);
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd < 0 || fstat(dir_fd, &st) != 0)
		die("cannot use %s: %s", dir, strerror(errno));
	if (st.st_uid != geteuid())
		die("cannot keep the records in %s: it belongs to another user", dir);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		die("cannot keep the records in %s: others can write in it", dir);
	check_parents(dir);
	for (size_t i = 0; i < RUN_FILES; i++)
		if (fstatat(dir_fd, run_files[i], &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		    errno != ENOENT)
			die("cannot keep the records in %s: it holds an earlier run "
			    "(%s); remove it or choose another directory",
			    dir, run_files[i]);
	if (!made && !empty_dir(dir_fd))
		die("cannot keep the records in %s: it is not empty; choose a new or empty "
		    "directory", dir);
	made_path = NULL;
}

/* A temporary directory goes however the launcher ends (a report that
 * fails exits 125), but not with the child forked to run the command. */
static void remove_at_exit(void)
{
	if (temporary_owner && temporary_owner == getpid())
		records_remove(path_buf);
}

/* Once the command has ended, a signal is the launcher's own: the report's
 * reader gone (`syncstat cmd 2>&1 | head`), or someone stopping a long
 * report (the command's pid, long reaped, must not be sent it).  It dies of
 * the signal as any program does, but not before its temporary directory
 * (atexit does not run then).  Only async-signal-safe calls. */
static const int own_signals[] = {SIGHUP, SIGINT, SIGPIPE, SIGTERM};

static void remove_then_die(int sig)
{
	for (size_t i = 0; temporary_owner && i < RUN_FILES; i++)
		unlinkat(dir_fd, run_files[i], 0);
	if (temporary_owner)
		rmdir(path_buf);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* No --keep: a new private directory, on tmpfs when there is one (the
 * records never touch a disk), else in /tmp: another user can fill
 * /dev/shm, and must not stop every run. */
static void make_temporary_dir(void)
{
	snprintf(path_buf, sizeof(path_buf), "/dev/shm/syncstat.XXXXXX");
	if (!mkdtemp(path_buf)) {
		snprintf(path_buf, sizeof(path_buf), "/tmp/syncstat.XXXXXX");
		if (!mkdtemp(path_buf))
			die("cannot create %s: %s", path_buf, strerror(errno));
	}
	dir_fd = open(path_buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd < 0)
		die("cannot use %s: %s", path_buf, strerror(errno));
	temporary_owner = getpid();
	atexit(remove_at_exit);
}

/* The kept directory's absolute name, for the tree and the report. */
static void name_dir(const char *dir)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dir_fd);
	n = readlink(proc, path_buf, sizeof(path_buf) - 1);
	if (n > 0 && path_buf[0] == '/') {
		path_buf[n] = '\0';
		return;
	}
	if (!realpath(dir, path_buf))
		die("cannot use %s: %s", dir, strerror(errno));
}

/* A new file in the run's directory: exclusively, never through a link,
 * the user's alone; -1 and errno if it cannot be. */
static int create_in_dir(const char *name, int flags)
{
	return openat(dir_fd, name,
		      flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int records_create_file(const char *name)
{
	return create_in_dir(name, O_WRONLY);
}

/* The record file, left open for the tree to inherit (not as 0, 1 or 2,
 * which the command reads as its standard streams). */
static int create_record_file(unsigned flags)
{
	struct emd_rec_header h = {.version = EMD_REC_VERSION,
				   .slot_size = sizeof(struct emd_rec_slot),
				   .slots = slot_capacity(),
				   .flags = flags | EMD_REC_LIVE};
	const char *file = in_dir(path_buf, "records");
	int fd = create_in_dir("records", O_RDWR), inherited;

	memcpy(h.magic, EMD_REC_MAGIC, 8);
	if (fd < 0 || pwrite(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    ftruncate(fd, EMD_REC_HEADER +
				  h.slots * sizeof(struct emd_rec_slot)) != 0)
		die("cannot create %s: %s", file, strerror(errno));
	inherited = fcntl(fd, F_DUPFD, 3);
	if (inherited < 0)
		die("cannot keep %s open: %s", file, strerror(errno));
	close(fd);
	return record_fd = inherited;
}

/* Tell the tree: the file's name, and the descriptor with the identity it
 * must still have to be used ("N:DEV:INO"). */
static void export_record_file(int fd, unsigned flags)
{
	char id[80];
	struct stat st;

	if (fstat(fd, &st) != 0)
		die("cannot use %s: %s", in_dir(path_buf, "records"), strerror(errno));
	snprintf(id, sizeof(id), "%d:%llu:%llu", fd, (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	if (setenv(EMD_ENV_RECORD, in_dir(path_buf, "records"), 1) != 0 ||
	    setenv(EMD_ENV_RECORD_FD, id, 1) != 0 ||
	    ((flags & EMD_REC_AUDIT) && setenv(EMD_ENV_AUDIT, "1", 1) != 0))
		die("cannot set EATMYDATA_RECORD");
}

/* A new file in the run's directory, as a stream. */
static FILE *create_stream(const char *dir, const char *name)
{
	int fd = create_in_dir(name, O_WRONLY);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");

	if (!f) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		warn("cannot write %s: %s", in_dir(dir, name), strerror(err));
	}
	return f;
}

/* DIR/command, each argument NUL-terminated, written before the command
 * runs: a killed run's directory names it too. */
static void save_command(char *const argv[])
{
	FILE *f = create_stream(path_buf, "command");

	for (; f && *argv; argv++)
		fwrite(*argv, 1, strlen(*argv) + 1, f);
	if (f && fclose(f) != 0)
		warn("cannot write %s", in_dir(path_buf, "command"));
}

/* DIR/run's space, taken now: a command that fills the file system must not
 * leave its run without a status.  (fallocate fails on some file systems;
 * the write at the end is then as lucky as any.) */
static void reserve_run(void)
{
	run_fd = create_in_dir(".run", O_WRONLY);
	if (run_fd < 0)
		die("cannot create %s: %s", in_dir(path_buf, ".run"), strerror(errno));
	(void)!fallocate(run_fd, 0, 0, 4096);
}

const char *records_prepare(const char *dir, unsigned flags, char *const argv[])
{
	take_hard_limits();
	if (dir) {
		open_keep_dir(dir);
		name_dir(dir);
	} else {
		make_temporary_dir();
	}
	export_record_file(create_record_file(flags), flags);
	save_command(argv);
	reserve_run();
	return path_buf;
}

/* The command has ended: whatever of its tree lives on (a daemon) records
 * no more, so the report, now or later, is the run's. */
static void end_records(const char *dir)
{
	struct emd_rec_header h;
	off_t at = offsetof(struct emd_rec_header, flags);

	if (pread(record_fd, &h, sizeof(h), 0) != sizeof(h))
		return; /* the report names the damage */
	h.flags &= ~(uint64_t)EMD_REC_LIVE;
	if (pwrite(record_fd, &h.flags, sizeof(h.flags), at) != sizeof(h.flags))
		warn("cannot write %s: %s", in_dir(dir, "records"), strerror(errno));
}

void records_save_run(const char *dir, int status, double wall_seconds)
{
	char text[64];
	int n = snprintf(text, sizeof(text), "status %d\nwall %.9f\n",
			 WIFEXITED(status) ? WEXITSTATUS(status)
					   : 128 + WTERMSIG(status),
			 wall_seconds);

	end_records(dir);
	if (pwrite(run_fd, text, n, 0) != (ssize_t)n || ftruncate(run_fd, n) != 0 ||
	    renameat(dir_fd, ".run", dir_fd, "run") != 0)
		warn("cannot write %s: %s", in_dir(dir, "run"), strerror(errno));
	close(run_fd);
	for (size_t i = 0; i < sizeof(own_signals) / sizeof(*own_signals); i++)
		signal(own_signals[i], remove_then_die);
}

void records_remove(const char *dir)
{
	temporary_owner = 0;
	for (size_t i = 0; i < RUN_FILES; i++)
		unlinkat(dir_fd, run_files[i], 0);
	if (rmdir(dir) != 0)
		warn("cannot remove %s: %s", dir, strerror(errno));
}

void records_check_version(const char *file, unsigned version)
{
	if (version != EMD_REC_VERSION)
		die("%s: format version %u, this %s reads version %u", file, version,
		    tool_name, EMD_REC_VERSION);
}

int records_open_input(const char *file)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && errno == ENOENT)
		return -1;
	if (fd < 0 && errno == ELOOP)
		die("%s: a symbolic link, not followed", file);
	if (fd < 0 || fstat(fd, &st) != 0)
		die("%s: %s", file, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("%s: not a regular file", file);
	return fd;
}

char *records_read_input(const char *file, size_t max, size_t *len)
{
	int fd = records_open_input(file);
	struct stat st;
	char *text;
	ssize_t n;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || (unsigned long long)st.st_size > max)
		die("%s: larger than %zu bytes", file, max);
	if (!(text = malloc((size_t)st.st_size + 1)))
		die("out of memory");
	n = pread(fd, text, (size_t)st.st_size, 0);
	if (n < 0)
		die("%s: %s", file, strerror(errno));
	close(fd);
	text[n] = '\0';
	*len = (size_t)n;
	return text;
}
