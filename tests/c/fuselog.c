/* SPDX-License-Identifier: MIT */
/* fuselog.c -- a FUSE file system that passes every request on to a
 * directory and logs who asked: one line per open, read, write, flush,
 * fsync, release, statfs, getattr... ("OP COMM"), the name of the process
 * whose thread made it (tests/py/test_supervisor_behalf_attack.py: the
 * supervisor's look at a descriptor must reach no file system; FUSE tells
 * its server of every flush, which s3fs answers by uploading the file).
 * Usage: fuselog DIR MOUNTPOINT LOG  (in the foreground, one thread:
 * fusermount3 -u MOUNTPOINT ends it) */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char dir[PATH_MAX];
static int log_fd = -1;

/* The request's op and the asker's name, one line. */
static void logged(const char *op)
{
	char path[64], comm[64] = "?", line[160];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)fuse_get_context()->pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = (int)read(fd, comm, sizeof(comm) - 1);
		comm[n > 0 ? n : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		close(fd);
	}
	n = snprintf(line, sizeof(line), "%s %s\n", op, comm);
	if (write(log_fd, line, (size_t)n) != n)
		exit(3);
}

static const char *real(const char *path, char *buf)
{
	snprintf(buf, PATH_MAX, "%s%s", dir, path);
	return buf;
}

static int fl_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	char buf[PATH_MAX];

	logged("getattr");
	if (fi)
		return fstat((int)fi->fh, st) ? -errno : 0;
	return lstat(real(path, buf), st) ? -errno : 0;
}

static int fl_readdir(const char *path, void *out, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	char buf[PATH_MAX];
	DIR *d = opendir(real(path, buf));
	struct dirent *e;

	(void)off, (void)fi, (void)flags;
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		fill(out, e->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int fl_open(const char *path, struct fuse_file_info *fi)
{
	char buf[PATH_MAX];
	int fd = open(real(path, buf), fi->flags & ~O_NOFOLLOW);

	logged("open");
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int fl_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	char buf[PATH_MAX];
	int fd = open(real(path, buf), fi->flags | O_CREAT, mode);

	logged("create");
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int fl_read(const char *path, char *out, size_t n, off_t off, struct fuse_file_info *fi)
{
	ssize_t r = pread((int)fi->fh, out, n, off);

	(void)path;
	logged("read");
	return r < 0 ? -errno : (int)r;
}

static int fl_write(const char *path, const char *in, size_t n, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t r = pwrite((int)fi->fh, in, n, off);

	(void)path;
	logged("write");
	return r < 0 ? -errno : (int)r;
}

static int fl_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path, (void)fi;
	logged("flush");
	return 0;
}

static int fl_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	logged("release");
	close((int)fi->fh);
	return 0;
}

static int fl_fsync(const char *path, int data, struct fuse_file_info *fi)
{
	(void)path;
	logged("fsync");
	return (data ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) ? -errno : 0;
}

static int fl_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	char buf[PATH_MAX];

	logged("truncate");
	if (fi)
		return ftruncate((int)fi->fh, size) ? -errno : 0;
	return truncate(real(path, buf), size) ? -errno : 0;
}

static int fl_unlink(const char *path)
{
	char buf[PATH_MAX];

	logged("unlink");
	return unlink(real(path, buf)) ? -errno : 0;
}

static int fl_statfs(const char *path, struct statvfs *st)
{
	char buf[PATH_MAX];

	logged("statfs");
	return statvfs(real(path, buf), st) ? -errno : 0;
}

static const struct fuse_operations ops = {
	.getattr = fl_getattr, .readdir = fl_readdir, .open = fl_open,
	.create = fl_create,   .read = fl_read,	      .write = fl_write,
	.flush = fl_flush,     .release = fl_release, .fsync = fl_fsync,
	.truncate = fl_truncate, .unlink = fl_unlink, .statfs = fl_statfs,
};

int main(int argc, char **argv)
{
	char *args[] = {argv[0], "-f", "-s", "-o", "auto_unmount", argv[2], NULL};

	if (argc != 4 || !realpath(argv[1], dir))
		return 2;
	log_fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (log_fd < 0)
		return 2;
	return fuse_main(6, args, &ops, NULL);
}
