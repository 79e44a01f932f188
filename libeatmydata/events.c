/* SPDX-License-Identifier: MIT */
/* events.c -- the events syncstat --audit needs besides the sync calls:
 * directory entries made (create, rename, link), with the file's state and
 * the directory they are in.  Without EATMYDATA_AUDIT, rename and link go
 * straight through.  syscall.c makes its renames and links through the same
 * emd_audit_rename and emd_audit_link.
 */
#include "emd.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* File times come from the kernel's coarse clock: read the same one. */
unsigned long long emd_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* `path` relative to dirfd as an absolute path, for the report. */
static void absolute(int dirfd, const char *path, char *out, size_t size)
{
	char proc[32];
	ssize_t n;

	if (path[0] == '/') {
		snprintf(out, size, "%s", path);
		return;
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(out, size))
			out[0] = '\0';
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
		n = readlink(proc, out, size - 1);
		out[n > 0 ? n : 0] = '\0';
	}
	n = strlen(out);
	snprintf(out + n, size - n, "/%s", path);
}

/* The directory an entry `path` (relative to dirfd) is in. */
static void entry_dir(int dirfd, const char *path, struct emd_rec_file *dir)
{
	char parent[PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else
		slash[slash == parent] = '\0';
	if (emd_rec_stat(dirfd, parent, 0, dir) != 0)
		*dir = (struct emd_rec_file){0};
}

static void entry_event(int kind, int dirfd, const char *path,
			const struct emd_rec_file *file, int flags,
			const void *site)
{
	char abs[PATH_MAX];
	struct emd_rec_event ev = {.file = *file, .path = abs, .flags = flags};

	absolute(dirfd, path, abs, sizeof(abs));
	entry_dir(dirfd, path, &ev.dir);
	emd_rec_event(kind, &ev, site);
}

/* An open with O_CREAT made a new file if it was born during the call. */
void emd_audit_created(int fd, int dirfd, const char *path,
		       unsigned long long before_ns, const void *site)
{
	struct emd_rec_file f;

	if (fd >= 0 && emd_rec_stat(fd, "", AT_EMPTY_PATH, &f) == 0 &&
	    f.btime_ns >= before_ns && S_ISREG(f.mode))
		entry_event(EMD_K_CREATE, dirfd, path, &f, 0, site);
}

int emd_audit_rename(int olddir, const char *old, int newdir, const char *new,
		     unsigned int flags, const void *site)
{
	struct emd_rec_file file, target;
	int existed, r;

	if (emd_rec_stat(olddir, old, AT_SYMLINK_NOFOLLOW, &file) != 0)
		file = (struct emd_rec_file){0};
	existed = emd_rec_stat(newdir, new, AT_SYMLINK_NOFOLLOW, &target) == 0;
	r = EMD_REAL(renameat2)(olddir, old, newdir, new, flags);
	if (r == 0 && S_ISREG(file.mode))
		entry_event(EMD_K_RENAME, newdir, new, &file,
			    existed ? EMD_REC_EXISTED : 0, site);
	return r;
}

int emd_audit_link(int olddir, const char *old, int newdir, const char *new,
		   int flags, const void *site)
{
	struct emd_rec_file file;
	int r = EMD_REAL(linkat)(olddir, old, newdir, new, flags);

	if (r == 0 && emd_rec_stat(newdir, new, AT_SYMLINK_NOFOLLOW, &file) == 0 &&
	    S_ISREG(file.mode))
		entry_event(EMD_K_LINK, newdir, new, &file, 0, site);
	return r;
}

EMD_EXPORT int rename(const char *old, const char *new)
{
	if (EMD_LIKELY(!emd_audit_now()))
		return EMD_REAL(rename)(old, new);
	return emd_audit_rename(AT_FDCWD, old, AT_FDCWD, new, 0, EMD_CALLER);
}

EMD_EXPORT int renameat(int olddir, const char *old, int newdir,
			const char *new)
{
	if (EMD_LIKELY(!emd_audit_now()))
		return EMD_REAL(renameat)(olddir, old, newdir, new);
	return emd_audit_rename(olddir, old, newdir, new, 0, EMD_CALLER);
}

EMD_EXPORT int renameat2(int olddir, const char *old, int newdir,
			 const char *new, unsigned int flags)
{
	if (EMD_LIKELY(!emd_audit_now()))
		return EMD_REAL(renameat2)(olddir, old, newdir, new, flags);
	return emd_audit_rename(olddir, old, newdir, new, flags, EMD_CALLER);
}

EMD_EXPORT int link(const char *old, const char *new)
{
	if (EMD_LIKELY(!emd_audit_now()))
		return EMD_REAL(link)(old, new);
	return emd_audit_link(AT_FDCWD, old, AT_FDCWD, new, 0, EMD_CALLER);
}

EMD_EXPORT int linkat(int olddir, const char *old, int newdir,
		      const char *new, int flags)
{
	if (EMD_LIKELY(!emd_audit_now()))
		return EMD_REAL(linkat)(olddir, old, newdir, new, flags);
	return emd_audit_link(olddir, old, newdir, new, flags, EMD_CALLER);
}
