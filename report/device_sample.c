/* SPDX-License-Identifier: MIT */
/* device_sample.c -- the launcher's side of device attribution: which disks
 * lie under each mounted file system, and their counters, into DIR/devices:
 *
 *   syncstat-devices 1
 *   nosys                                   (/sys/dev/block unreadable)
 *   mount MAJ:MIN FSTYPE VIA DISK...        (VIA "-" when direct)
 *   sample NS                               (CLOCK_MONOTONIC)
 *   disk NAME MAJ:MIN SEQ WC FUA N F1 ... FN
 *
 * The disks sampled are those under the file systems mounted when the run
 * starts, at most DEV_MAX_DISKS: a few files read per sample, never per
 * call.  Everything here is best effort: a run never fails for want of /sys.
 * Nor does it hang on a /sys made up in a mount namespace: only regular
 * files are read, never blocking, and the walk from a file system to its
 * disks visits at most WALK_MAX devices (slaves/ may name each other).
 */
#include "common/common.h"
#include "device.h"
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define WALK_MAX 64

static FILE *out;
static char disks[DEV_MAX_DISKS][DEV_NAME];
static size_t ndisks;
static unsigned long ticks, samples;
static int walk_left; /* devices the walk of this file system may still visit */

/* A small sysfs file's first line, or "" if it cannot be read (open and
 * read, not stdio: a sample reads a few of them per disk). */
static const char *sys_read(const char *fmt, const char *a, const char *b)
{
	static char text[512];
	char path[PATH_MAX];
	struct stat st;
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), fmt, a, b);
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC)) >= 0) {
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	text[n > 0 ? n : 0] = '\0';
	text[strcspn(text, "\n")] = '\0';
	return text;
}

/* A name sysfs gave, fit for a token of DIR/devices. */
static int plain_name(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < DEV_NAME && strspn(s, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+!-") == n;
}

static void add_leaf(char leaves[][DEV_NAME], int *n, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(leaves[i], name) == 0)
			return;
	if (*n < DEV_MAX_LEAVES && plain_name(name))
		snprintf(leaves[(*n)++], DEV_NAME, "%s", name);
}

static void resolve(unsigned maj, unsigned min, char leaves[][DEV_NAME], int *n,
		    char *via, int depth);

/* A mapper or md device: the devices it is made of (its slaves/). */
static int resolve_slaves(const char *sys, char leaves[][DEV_NAME], int *n,
			  char *via, int depth)
{
	char path[PATH_MAX + 16];
	unsigned maj, min;
	struct dirent *e;
	int found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/slaves", sys);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    sscanf(sys_read("/sys/class/block/%s/dev%s", e->d_name, ""),
			   "%u:%u", &maj, &min) == 2) {
			resolve(maj, min, leaves, n, via, depth + 1);
			found = 1;
		}
	closedir(d);
	return found;
}

/* A loop device: the disk under its backing file. */
static int resolve_loop(const char *sys, char leaves[][DEV_NAME], int *n,
			char *via, int depth)
{
	const char *file = sys_read("%s/loop/backing_file%s", sys, "");
	struct stat st;

	if (!*file || stat(file, &st) != 0)
		return 0;
	resolve(major(st.st_dev), minor(st.st_dev), leaves, n, via, depth + 1);
	return 1;
}

/* A partition: what its whole disk is (a disk, or a loop or mapper device
 * partitioned in its turn). */
static int resolve_partition(const char *sys, char leaves[][DEV_NAME], int *n,
			     char *via, int depth)
{
	char path[PATH_MAX + 16];
	unsigned maj, min;

	snprintf(path, sizeof(path), "%s/partition", sys);
	if (access(path, F_OK) != 0 ||
	    sscanf(sys_read("%s/../dev%s", sys, ""), "%u:%u", &maj, &min) != 2)
		return 0;
	resolve(maj, min, leaves, n, via, depth + 1);
	return 1;
}

/* The whole disks under block device MAJ:MIN: a partition's disk, what a
 * mapper, md or loop device is made of; `via` names the outermost device
 * that is not a disk or a partition of one. */
static void resolve(unsigned maj, unsigned min, char leaves[][DEV_NAME], int *n,
		    char *via, int depth)
{
	char link[64], sys[PATH_MAX], outer[DEV_NAME];
	const char *base;

	/* Major 0 is the kernel's anonymous devices: tmpfs, proc, NFS... */
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", maj, min);
	if (maj == 0 || depth > 8 || walk_left-- <= 0 || !realpath(link, sys))
		return;
	if (resolve_partition(sys, leaves, n, via, depth))
		return;
	base = strrchr(sys, '/') + 1;
	snprintf(outer, sizeof(outer), "%s", via);
	if (!*via && plain_name(base))
		snprintf(via, DEV_NAME, "%s", base);
	if (resolve_slaves(sys, leaves, n, via, depth) ||
	    resolve_loop(sys, leaves, n, via, depth))
		return;
	snprintf(via, DEV_NAME, "%s", outer); /* a disk is no way through */
	add_leaf(leaves, n, base);
}

/* A file system with no block device of its own in /sys (btrfs's
 * anonymous one) may still name one as its source. */
static void resolve_source(const char *source, char leaves[][DEV_NAME], int *n,
			   char *via)
{
	struct stat st;

	walk_left = WALK_MAX;
	if (*n == 0 && source[0] == '/' && stat(source, &st) == 0 &&
	    S_ISBLK(st.st_mode))
		resolve(major(st.st_rdev), minor(st.st_rdev), leaves, n, via, 0);
}

/* Sample this disk from now on (once; at most DEV_MAX_DISKS). */
static void use_disk(const char *name)
{
	for (size_t i = 0; i < ndisks; i++)
		if (strcmp(disks[i], name) == 0)
			return;
	if (ndisks < DEV_MAX_DISKS)
		snprintf(disks[ndisks++], DEV_NAME, "%.31s", name);
}

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] -
 * FSTYPE SOURCE SUPEROPTS"; its device's line in DIR/devices, once. */
static void mount_line(char *line, unsigned long long done[], size_t *ndone)
{
	char leaves[DEV_MAX_LEAVES][DEV_NAME], via[DEV_NAME] = "", fstype[DEV_NAME];
	char source[PATH_MAX], *dash = strstr(line, " - ");
	unsigned maj, min;
	int n = 0;

	if (!dash || sscanf(line, "%*s %*s %u:%u", &maj, &min) != 2 ||
	    sscanf(dash + 3, "%31s %4095s", fstype, source) != 2)
		return;
	for (size_t i = 0; i < *ndone; i++)
		if (done[i] == ((unsigned long long)maj << 32 | min))
			return;
	if (*ndone == DEV_MAX_MOUNTS)
		return;
	done[(*ndone)++] = (unsigned long long)maj << 32 | min;
	walk_left = WALK_MAX;
	resolve(maj, min, leaves, &n, via, 0);
	resolve_source(source, leaves, &n, via);
	fprintf(out, "mount %u:%u %s %s", maj, min,
		plain_name(fstype) ? fstype : "?", *via ? via : "-");
	for (int i = 0; i < n; i++) {
		fprintf(out, " %s", leaves[i]);
		use_disk(leaves[i]);
	}
	fprintf(out, "\n");
}

/* Every file system mounted now, and the disks under each. */
static void write_mounts(void)
{
	static unsigned long long done[DEV_MAX_MOUNTS];
	static size_t ndone;
	char line[3 * PATH_MAX];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	while (f && fgets(line, sizeof(line), f))
		mount_line(line, done, &ndone);
	if (f)
		fclose(f);
}

/* One disk's line: identity, cache settings, then its counters as the
 * kernel gives them (11, 15 or 17 fields, by its age). */
static void write_disk(const char *name)
{
	unsigned long long v[DEV_FIELDS], seq = 0;
	unsigned maj, min;
	const char *text;
	int n = 0, used, wc, fua;

	if (sscanf(sys_read("/sys/block/%s/dev%s", name, ""), "%u:%u", &maj, &min) != 2)
		return;
	sscanf(sys_read("/sys/block/%s/diskseq%s", name, ""), "%llu", &seq);
	text = sys_read("/sys/block/%s/queue/write_cache%s", name, "");
	wc = strcmp(text, "write back") == 0 ? 1 : strcmp(text, "write through") == 0 ? 0 : -1;
	text = sys_read("/sys/block/%s/queue/fua%s", name, "");
	fua = *text == '1' ? 1 : *text == '0' ? 0 : -1;
	text = sys_read("/sys/block/%s/stat%s", name, "");
	while (n < DEV_FIELDS && sscanf(text, "%llu%n", &v[n], &used) == 1) {
		text += used;
		n++;
	}
	if (n < 11)
		return;
	fprintf(out, "disk %s %u:%u %llu %d %d %d", name, maj, min, seq, wc, fua, n);
	for (int i = 0; i < n; i++)
		fprintf(out, " %llu", v[i]);
	fprintf(out, "\n");
}

static void write_sample(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(out, "sample %llu\n",
		(unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
	for (size_t i = 0; i < ndisks; i++)
		write_disk(disks[i]);
	samples++;
}

/* The launcher's samples are buffered and written whole, a few system
 * calls each. */
void device_sample_start(const char *dir)
{
	int fd = records_create_file("devices");

	if (fd < 0 || !(out = fdopen(fd, "w"))) {
		warn("cannot write %s/devices: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(out, "syncstat-devices 1\n");
	if (access("/sys/dev/block", R_OK | X_OK) != 0)
		fprintf(out, "nosys\n");
	write_mounts();
	write_sample();
	fflush(out);
}

/* Called every DEVICE_TICK seconds: a sample at every tick for the first
 * 256, then at every second tick, every fourth..., so that a run of days
 * keeps a few thousand. */
void device_tick(void)
{
	ticks++;
	if (out && ticks % (1UL << (samples / 256 < 20 ? samples / 256 : 20)) == 0) {
		write_sample();
		fflush(out);
	}
}

void device_sample_end(void)
{
	if (!out)
		return;
	write_mounts(); /* those mounted during the run, for the report */
	write_sample();
	if (fclose(out) != 0)
		warn("cannot write the devices' samples: %s", strerror(errno));
	out = NULL;
}
