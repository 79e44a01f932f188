/* SPDX-License-Identifier: MIT */
/* timed.c -- syncstat's policy (supervisor.h): each durability request of
 * a program the library cannot reach is made here, on the caller's own
 * open file (pidfd_getfd: the same struct file, so the kernel's answer,
 * a writeback error reported once per open file included, is the one the
 * caller would have had), timed and recorded, and its result handed back.
 *
 * Nothing is done that the caller could not do itself: it syncs its own
 * file, or every file system (sync, which anyone may).  What cannot be
 * made from here (an msync of its mapping, an open or a write with sync
 * flags, a write on a descriptor whose open file syncs, an io_uring or AIO
 * submission) goes on to the kernel as it is and is counted, marked
 * untimed; an io_uring or AIO sync is named as such.  A descriptor that
 * cannot be fetched goes on too, counted.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"
#include "iocb.h"
#include "maps.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The process the calling thread is in, its parent and its name. */
static void caller(pid_t tid, struct emd_rec_slot *s)
{
	char path[64], buf[512], *at;
	int fd = open_proc(tid, "status");
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	s->pid = (at = strstr(buf, "\nTgid:")) ? (int)strtol(at + 6, NULL, 10) : tid;
	s->ppid = (at = strstr(buf, "\nPPid:")) ? (int)strtol(at + 6, NULL, 10) : 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, s->program, sizeof(s->program) - 1) : -1;
	s->program[n > 0 ? n : 0] = '\0';
	s->program[strcspn(s->program, "\n")] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Who called, and the module of its system call: looked up once per
 * thread and address of the call, then kept, per worker, while the process
 * runs the same image: its AT_RANDOM bytes, read again each time with its
 * stack (site.c), by one process_vm_readv.  An exec keeps the thread's
 * number, and a program laid out alike makes its call from the same
 * address: the entry would give the old program's name and module, and
 * its functions as the sites.  A number
 * taken again by another process is told apart the same way, but for a
 * fork of the same image (its bytes are its parent's).  The site, which
 * differs from call to call through one wrapper, is found each time
 * (site.c).  The bytes, a secret of the caller's (its stack protector's
 * seed), stay in this process, as everything it reads of the caller. */
#define WHO_CACHED 16
struct who {
	pid_t tid;
	unsigned long ip;
	struct image_stamp image;
	struct emd_rec_slot s; /* pid, ppid, program */
	struct site_module m, prog;
};

/* The paths of the files seen last, by device, inode and birth time (a
 * reused inode number is another file), per worker: the path is read once
 * per file, as the library reads it. */
#define PATHS_CACHED 32
struct known {
	unsigned long long dev, ino, btime;
	char path[sizeof(((struct emd_rec_slot *)0)->path)];
};

/* Whether the open file of a caller's descriptor syncs its writes, asked
 * at each of its writes: its /proc/TID/fdinfo/N, opened once per thread
 * and number and kept, then read again (one pread).  The kernel looks the
 * number up in the thread's table at each read, so a number closed and
 * given to another file answers for that file, and a thread gone answers
 * nothing (then it is opened again); no duplicate of the caller's file is
 * made, whose close a FUSE server would see. */
#define INFOS_KEPT 8
struct info {
	pid_t tid;
	int num;
	int fd; /* here; 0: none */
};

/* What a worker keeps, allocated at its first request and freed when it
 * leaves: not in the static TLS, which every start of the launcher (each
 * `eatmydata true`, not only the supervisor) would zero, 31 KiB.  NULL
 * when there was no memory: then nothing is kept. */
struct kept {
	struct who who[WHO_CACHED];
	unsigned who_next;
	struct known known[PATHS_CACHED];
	struct info infos[INFOS_KEPT];
	unsigned infos_next;
};
static __thread struct kept *kept;
static pthread_key_t kept_key;
static int kept_key_made;

static void kept_leaves(void *mine)
{
	struct kept *k = mine;

	for (int i = 0; i < INFOS_KEPT; i++)
		if (k->infos[i].fd > 0)
			close(k->infos[i].fd);
	free(k);
}

static void make_kept_key(void)
{
	kept_key_made = pthread_key_create(&kept_key, kept_leaves) == 0;
}

static struct kept *worker_kept(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, make_kept_key);
	if (!kept && kept_key_made && (kept = calloc(1, sizeof(*kept))))
		pthread_setspecific(kept_key, kept);
	return kept;
}

/* The entry of the thread and address, or a free one (*fresh = 1): the
 * thread's own when its image is gone, else the oldest; `alone` when
 * nothing is kept.  The caller's stack is read with its stamp (st). */
static struct who *entry_of(pid_t tid, unsigned long ip, int *fresh, struct who *alone,
			    struct site_stack *st)
{
	struct kept *k = worker_kept();
	struct who *w = NULL;

	for (int i = 0; k && !w && i < WHO_CACHED; i++)
		if (k->who[i].tid == tid && k->who[i].ip == ip)
			w = &k->who[i];
	st->sp = st->lo = site_sp(tid);
	*fresh = !same_image_and(tid, w ? &w->image : NULL, st->sp, st->bytes,
				 st->sp ? sizeof(st->bytes) : 0, &st->have);
	if (w)
		return w;
	return k ? &k->who[k->who_next++ % WHO_CACHED] : alone;
}

static void identify(const struct call *c, struct emd_rec_slot *s)
{
	pid_t tid = c->req->pid;
	unsigned long ip = (unsigned long)c->req->data.instruction_pointer;
	int fresh;
	struct site_stack stack;
	struct who alone, *w = entry_of(tid, ip, &fresh, &alone, &stack);

	if (fresh) {
		memset(w, 0, sizeof(*w));
		/* Stamped first: an exec after it is seen at the next call. */
		image_stamp(tid, &w->image);
		caller(tid, &w->s);
		site_module(w->s.pid, ip, &w->m, &w->prog);
		w->tid = tid;
		w->ip = ip;
	}
	s->pid = w->s.pid;
	s->tid = tid; /* the notification's pid is the calling thread's */
	s->ppid = w->s.ppid;
	memcpy(s->program, w->s.program, sizeof(s->program));
	site_name(c, &w->m, &w->prog, &stack, s);
}

/* The path of the file s->file, by its link in /proc: descriptor fd of
 * process pid (0: this one), looked up only when not known. */
static void path_of(pid_t pid, int fd, struct emd_rec_slot *s)
{
	struct kept *all = worker_kept();
	struct known alone, *k = all ? &all->known[(s->file.dev ^ s->file.ino ^ s->file.btime_ns) %
						  PATHS_CACHED] : &alone;
	char proc[64];
	ssize_t n;

	if (all && k->dev == s->file.dev && k->ino == s->file.ino &&
	    k->btime == s->file.btime_ns && k->path[0]) {
		memcpy(s->path, k->path, sizeof(s->path));
		return;
	}
	if (pid)
		snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", pid, fd);
	else
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, s->path, sizeof(s->path) - 1);
	s->path[n > 0 ? n : 0] = '\0';
	*k = (struct known){s->file.dev, s->file.ino, s->file.btime_ns, ""};
	memcpy(k->path, s->path, sizeof(k->path));
}

/* The file stx, open at fd of process pid (0: this one). */
static void file_is(const struct statx *stx, pid_t pid, int fd, struct emd_rec_slot *s)
{
	s->file.dev = (unsigned long long)stx->stx_dev_major << 32 | stx->stx_dev_minor;
	s->file.ino = stx->stx_ino;
	s->file.btime_ns = stx->stx_btime.tv_sec * 1000000000ULL + stx->stx_btime.tv_nsec;
	s->file.size = stx->stx_size;
	s->file.mode = stx->stx_mode;
	path_of(pid, fd, s);
}

/* The file open at fd here (one this process opened), or none (-1). */
static void file_of(int fd, struct emd_rec_slot *s)
{
	struct statx stx;

	memcpy(s->path, "-", 2);
	if (fd >= 0 && statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
			     STATX_TYPE | STATX_MODE | STATX_INO | STATX_BTIME | STATX_SIZE, &stx) == 0)
		file_is(&stx, 0, fd, s);
}

/* The file of the caller's descriptor num, looked at without a duplicate
 * of it (fds.c), or none. */
static void file_theirs(const struct call *c, int num, struct emd_rec_slot *s)
{
	struct statx stx;

	memcpy(s->path, "-", 2);
	if (num >= 0 && their_file(c, num, &stx) == 0)
		file_is(&stx, (pid_t)c->req->pid, num, s);
}

/* A record of kind `kind` in s, its file at fd here (-1: none), made
 * from span[0] to span[1] (NULL: untimed, the call goes on to the kernel):
 * both read around the call alone, not the looking up done here after it. */
static void fill(const struct call *c, int kind, int fd, const unsigned long long *span, long r,
		 struct emd_rec_slot *s)
{
	memset(s, 0, sizeof(*s));
	s->kind = (unsigned)kind;
	s->start_ns = span ? span[0] : record_now();
	s->latency_ns = span ? span[1] - span[0] : 0;
	identify(c, s);
	file_of(fd, s);
	s->flags = span ? 0 : EMD_REC_UNTIMED;
	s->result = r;
	s->error = r < 0 ? (int)-r : 0;
	s->state = EMD_REC_DONE;
}

static void record(const struct call *c, int kind, int fd, const unsigned long long *span,
		   long r)
{
	struct emd_rec_slot s;

	if (!recording())
		return;
	fill(c, kind, fd, span, r, &s);
	record_write(&s);
}

/* A record, untimed, of the caller's descriptor num's file (or none). */
static void record_theirs(const struct call *c, int kind, int num)
{
	struct emd_rec_slot s;

	if (!recording())
		return;
	fill(c, kind, -1, NULL, 0, &s);
	file_theirs(c, num, &s);
	record_write(&s);
}

/* The caller's descriptor in argument 0, fetched, and what it is (*stx);
 * CONTINUE'd and counted when it cannot be (another user's process, no
 * pidfd_getfd; a file whose close its file system sees, FUSE's, NFS's:
 * made by the kernel). */
static int fetch(struct call *c, int *fd, struct statx *stx)
{
	*fd = their_fd(c, (int)call_arg(c, 0), stx);
	if (*fd >= 0 || *fd == -EBADF)
		return 0;
	record_theirs(c, c->request->kind, (int)call_arg(c, 0));
	return CONTINUE;
}

/* Answer with the call's result r (0 or -errno), just made (its clock
 * read before it at `start`), recorded: its file fd here (-1: none),
 * which is stx. */
static int answer(struct call *c, int fd, const struct statx *stx, unsigned long long start,
		  long r)
{
	unsigned long long span[2] = {start, record_now()};
	struct emd_rec_slot s;

	if (recording()) {
		fill(c, c->request->kind, -1, span, r, &s);
		if (fd >= 0)
			file_is(stx, 0, fd, &s);
		record_write(&s);
	}
	if (fd >= 0)
		close(fd);
	return r < 0 ? reply_error(c, (int)-r) : 0;
}

/* fsync, fdatasync, syncfs: made on the caller's open file. */
static int timed_fd(struct call *c)
{
	unsigned long long start;
	struct statx stx;
	int fd, r;

	if (fetch(c, &fd, &stx))
		return CONTINUE;
	start = record_now();
	if (fd < 0)
		r = fd;
	else if (c->request->kind == EMD_K_FSYNC)
		r = fsync(fd) ? -errno : 0;
	else if (c->request->kind == EMD_K_FDATASYNC)
		r = fdatasync(fd) ? -errno : 0;
	else
		r = syncfs(fd) ? -errno : 0;
	return answer(c, fd, &stx, start, r);
}

static int timed_all(struct call *c)
{
	unsigned long long start = record_now();

	sync();
	return answer(c, -1, NULL, start, 0);
}

/* The offsets follow the descriptor, or on arm's sync_file_range2 the
 * flags (argument 1); each is two arguments in the compat ABI. */
static int timed_range(struct call *c)
{
	int flags_arg = c->compat ? c->request->arg32 : c->request->arg;
	int off_arg = flags_arg == 1 ? 2 : 1, width = c->compat ? 2 : 1, fd;
	unsigned long long start;
	struct statx stx;
	long r;

	if (fetch(c, &fd, &stx))
		return CONTINUE;
	start = record_now();
	r = fd < 0 ? fd
		   : syscall(SYS_sync_file_range, fd, call_arg64(c, off_arg),
			     call_arg64(c, off_arg + width), (unsigned)call_arg(c, flags_arg))
			   ? -errno
			   : 0;
	return answer(c, fd, &stx, start, r);
}

static int counted_mapping(struct call *c)
{
	record(c, EMD_K_MSYNC, -1, NULL, 0);
	return CONTINUE;
}

/* What `name` names for the caller now (O_PATH: nothing is opened), from
 * `base`, in its root when absolute; through no magic link, which would be
 * this process's. */
static int find_theirs(const struct call *c, int base, const char *name, unsigned long long flags)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW),
			       .resolve = RESOLVE_NO_MAGICLINKS};
	char root[64];
	int fd;

	if (name[0] != '/')
		return (int)syscall(SYS_openat2, base, name, &how, sizeof(how));
	snprintf(root, sizeof(root), "/proc/%d/root", c->req->pid);
	if ((base = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	how.resolve |= RESOLVE_IN_ROOT;
	fd = (int)syscall(SYS_openat2, base, name, &how, sizeof(how));
	close(base);
	return fd;
}

/* The file an open of `name` (from the caller's dirfd) is about to open:
 * as it is now, or one still to be created in its directory, known by that
 * directory's device (a file of no device would be on none the report
 * watched); `name` as it was given when neither can be found. */
static void file_named(const struct call *c, int dirfd, const char *name, unsigned long long flags,
		       struct emd_rec_slot *s)
{
	const char *slash = strrchr(name, '/');
	char dir[sizeof(s->path)];
	int base = caller_dir(c, dirfd), fd = base >= 0 ? find_theirs(c, base, name, flags) : -1;

	if (fd < 0 && base >= 0) {
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - name) + 1 : 0, name);
		fd = find_theirs(c, base, slash ? dir : ".", 0);
		if (fd >= 0) {
			file_of(fd, s);
			s->file = (struct emd_rec_file){.dev = s->file.dev};
			memcpy(dir, s->path, sizeof(dir));
			/* Cut at the record's size, as a readlink would be. */
			if (snprintf(s->path, sizeof(s->path), "%s/%s", strcmp(dir, "/") ? dir : "",
				     slash ? slash + 1 : name) < 0)
				s->path[0] = '\0';
		}
	} else if (fd >= 0) {
		file_of(fd, s);
	}
	if (fd < 0)
		snprintf(s->path, sizeof(s->path), "%s", name);
	if (fd >= 0)
		close(fd);
	if (base >= 0)
		close(base);
}

/* An open with O_SYNC or O_DSYNC (openat2's flags are in its struct): the
 * file it names, as the library's record of an open names it. */
static int counted_open(struct call *c)
{
	int arg = c->compat ? c->request->arg32 : c->request->arg, at = arg - 1;
	unsigned long long flags = call_arg(c, arg);
	struct open_how how;
	struct emd_rec_slot s;
	char name[sizeof(s.path)];

	if (c->request->test == EMD_TEST_MEMORY) {
		if (read_theirs(c->req->pid, call_arg(c, arg), &how, sizeof(how.flags), 0))
			return CONTINUE;
		flags = how.flags;
	}
	if (!(flags & EMD_OPEN_SYNC_FLAGS) || !recording())
		return CONTINUE;
	fill(c, (flags & O_SYNC) == O_SYNC ? EMD_K_OPEN_SYNC : EMD_K_OPEN_DSYNC, -1, NULL, 0, &s);
	if (read_theirs(c->req->pid, call_arg(c, at < 0 ? 0 : at), name, sizeof(name), 1) == 0)
		file_named(c, at > 0 ? (int)call_arg(c, 0) : AT_FDCWD, name, flags, &s);
	record_write(&s);
	return CONTINUE;
}

/* The record kind of a write on a file open with `flags`, or -1. */
static int kind_of_flags(int flags)
{
	if (flags < 0 || !(flags & EMD_OPEN_SYNC_FLAGS))
		return -1;
	return (flags & O_SYNC) == O_SYNC ? EMD_K_WRITE_SYNC : EMD_K_WRITE_DSYNC;
}

/* The flags line of the fdinfo open at info, or -1. */
static int info_flags(int info)
{
	char buf[128], *line;
	ssize_t n = pread(info, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	line = strstr(buf, "\nflags:");
	return line ? (int)strtol(line + 7, NULL, 8) : -1;
}

/* The entry kept for the caller's descriptor num, or a free one (the
 * oldest, closed), or NULL when nothing is kept. */
static struct info *info_entry(const struct call *c, int num)
{
	struct kept *k = worker_kept();
	struct info *e;

	for (int i = 0; k && i < INFOS_KEPT; i++)
		if (k->infos[i].tid == (pid_t)c->req->pid && k->infos[i].num == num &&
		    k->infos[i].fd > 0)
			return &k->infos[i];
	if (!k)
		return NULL;
	e = &k->infos[k->infos_next++ % INFOS_KEPT];
	if (e->fd > 0)
		close(e->fd);
	*e = (struct info){0};
	return e;
}

/* The flags of the caller's descriptor num's open file; -1 if it has none
 * (or is gone), -2 if its fdinfo cannot be opened here (no descriptor). */
static int their_info_flags(const struct call *c, int num)
{
	struct info *e = info_entry(c, num);
	char path[64];
	int flags, fd;

	if (e && e->fd > 0 && (flags = info_flags(e->fd)) >= 0)
		return flags;
	if (e && e->fd > 0) { /* its thread is gone, or the number closed */
		close(e->fd);
		e->fd = 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", c->req->pid, num);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? -2 : -1;
	flags = info_flags(fd);
	if (e)
		*e = (struct info){(pid_t)c->req->pid, num, fd};
	else
		close(fd);
	return flags;
}

/* The record kind of a write on the caller's descriptor fd whose open file
 * syncs it, or -1.  Where its fdinfo cannot be kept open here (no
 * descriptor left), asked as fds.c asks. */
static int theirs_sync(struct call *c, int fd)
{
	int flags = fd >= 0 ? their_info_flags(c, fd) : -1;

	return kind_of_flags(flags == -2 ? their_open_flags(c, fd) : flags);
}

/* A write (pwritev2 without sync flags too) on a descriptor whose open
 * file has O_SYNC or O_DSYNC, however it came to the caller (a copy, a
 * parent, an exec): counted, not timed, the write being the caller's own
 * to make (no write is made for a program: behalf.c says why).  Most
 * writes do not sync: they cost one read here. */
static int counted_file_write(struct call *c)
{
	int num = (int)call_arg(c, 0), kind = theirs_sync(c, num);

	if (kind >= 0)
		record_theirs(c, kind, num);
	return CONTINUE;
}

static int counted_write(struct call *c)
{
	int flags = (int)call_arg(c, c->compat ? c->request->arg32 : c->request->arg);

	if (!(flags & EMD_RWF_SYNC_FLAGS))
		return counted_file_write(c);
	record_theirs(c, (flags & RWF_SYNC) ? EMD_K_PWRITEV2_SYNC : EMD_K_PWRITEV2_DSYNC,
		      (int)call_arg(c, 0));
	return CONTINUE;
}

/* The record kind of the request, by its flags where they tell O_SYNC
 * from O_DSYNC (openat2's, in memory, may be cleared there already). */
static int request_kind(const struct call *c)
{
	int arg = c->compat ? c->request->arg32 : c->request->arg;
	unsigned long long flags = call_arg(c, arg);
	struct open_how how;

	if (c->request->eat == EMD_EAT_WRITE)
		return (flags & RWF_SYNC) ? EMD_K_PWRITEV2_SYNC : EMD_K_PWRITEV2_DSYNC;
	if (c->request->eat != EMD_EAT_OPEN)
		return c->request->kind;
	if (c->request->test == EMD_TEST_MEMORY)
		flags = read_theirs(c->req->pid, flags, &how, sizeof(how.flags), 0) ? 0 : how.flags;
	return (flags & O_SYNC) == O_SYNC ? EMD_K_OPEN_SYNC : EMD_K_OPEN_DSYNC;
}

/* eatmydata --stats: the request, eaten or left to the kernel (flags), its
 * file named: `file` (here) if not -1, else the descriptor's, or the one
 * an open names (read while the caller waits: never once answered). */
static void record_as(const struct call *c, int flags, int file)
{
	int eat = c->request->eat, at = (c->compat ? c->request->arg32 : c->request->arg) - 1;
	struct emd_rec_slot s;
	char name[sizeof(s.path)];

	if (!recording() || c->request->kind < 0)
		return;
	fill(c, request_kind(c), file, NULL, 0, &s);
	s.flags |= flags;
	if (file < 0 && (eat == EMD_EAT_FD_SYNC || eat == EMD_EAT_FS_SYNC || eat == EMD_EAT_RANGE ||
			 eat == EMD_EAT_WRITE))
		file_theirs(c, (int)call_arg(c, 0), &s);
	if (file < 0 && eat == EMD_EAT_OPEN &&
	    read_theirs(c->req->pid, call_arg(c, at < 0 ? 0 : at), name, sizeof(name), 1) == 0)
		file_named(c, at > 0 ? (int)call_arg(c, 0) : AT_FDCWD, name, 0, &s);
	record_write(&s);
}

void record_eaten(const struct call *c, int file)
{
	record_as(c, 0, file);
}

void record_left(const struct call *c, int needs)
{
	record_as(c, EMD_REC_LEFT | needs, -1);
}

/* An io_uring or AIO sync: counted at its submission, named as such, its
 * descriptor `fd` in the caller (-1: a registered file, no name). */
static void submitted(struct call *c, int kind, int fd, const char *how)
{
	struct emd_rec_slot s;

	fill(c, kind, -1, NULL, 0, &s);
	file_theirs(c, fd, &s);
	snprintf(s.site, sizeof(s.site), "%s submission (counted; completion not timed)", how);
	record_write(&s);
}

#define SQE_OFF_FLAGS 28

static int counted_sqe(struct call *c, unsigned long sqe, void *arg)
{
	unsigned char head[32];
	unsigned flags;
	int fd, kind;

	(void)arg;
	if (read_theirs(c->req->pid, sqe, head, sizeof(head), 0))
		return 0;
	memcpy(&fd, head + 4, sizeof(fd));
	memcpy(&flags, head + SQE_OFF_FLAGS, sizeof(flags));
	if (head[0] == IORING_OP_FSYNC)
		kind = (flags & IORING_FSYNC_DATASYNC) ? EMD_K_FDATASYNC : EMD_K_FSYNC;
	else if (head[0] == IORING_OP_SYNC_FILE_RANGE)
		kind = EMD_K_SYNC_FILE_RANGE;
	else if (!(head[0] == IORING_OP_WRITEV || head[0] == IORING_OP_WRITE ||
		   head[0] == IORING_OP_WRITE_FIXED))
		return 0;
	else if (flags & EMD_RWF_SYNC_FLAGS)
		kind = (flags & RWF_SYNC) ? EMD_K_PWRITEV2_SYNC : EMD_K_PWRITEV2_DSYNC;
	/* A registered file's open file cannot be asked from here. */
	else if ((head[1] & IOSQE_FIXED_FILE) || (kind = theirs_sync(c, fd)) < 0)
		return 0;
	submitted(c, kind, (head[1] & IOSQE_FIXED_FILE) ? -1 : fd, "io_uring");
	return 1;
}

static int counted_uring(struct call *c)
{
	if (recording())
		uring_each_sqe(c, counted_sqe, NULL);
	return CONTINUE;
}

static void counted_iocb(const struct call *c, unsigned long at)
{
	struct iocb cb;
	int kind;

	if (!at || read_theirs(c->req->pid, at, &cb, sizeof(cb), 0))
		return;
	if (emd_iocb_syncs(&cb))
		submitted((struct call *)c, emd_iocb_kind(&cb), (int)cb.aio_fildes, "aio");
	else if (emd_iocb_writes(&cb) &&
		 (kind = theirs_sync((struct call *)c, (int)cb.aio_fildes)) >= 0)
		submitted((struct call *)c, kind, (int)cb.aio_fildes, "aio");
}

static int counted_aio(struct call *c)
{
	if (recording())
		aio_each_iocb(c, counted_iocb);
	return CONTINUE;
}

/* syncstat's: every request the filter notifies is made (timed) or let
 * go on (counted), for every caller: EATMYDATA_DISABLE, which syncstat
 * sets for the library, is no concern here. */
const struct policy time_policy = {
	.name = "syncstat",
	.file_writes = 1,
	.handlers = {
		[EMD_EAT_NONE] = counted_file_write,
		[EMD_EAT_FD_SYNC] = timed_fd,
		[EMD_EAT_FS_SYNC] = timed_fd,
		[EMD_EAT_ALL_SYNC] = timed_all,
		[EMD_EAT_RANGE] = timed_range,
		[EMD_EAT_MAPPING] = counted_mapping,
		[EMD_EAT_OPEN] = counted_open,
		[EMD_EAT_WRITE] = counted_write,
		[EMD_EAT_URING] = counted_uring,
		[EMD_EAT_RING] = uring_setup,
		[EMD_EAT_AIO] = counted_aio,
	},
};
