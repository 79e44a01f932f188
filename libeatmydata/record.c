/* SPDX-License-Identifier: MIT */
/* record.c -- writes each durability request to the record file the
 * launcher (syncstat, eatmydata --stats) left open for the tree; see
 * record.h.
 *
 * Per call: two clock reads and no other system call.  The file is known
 * from its descriptor's first request (fdid.c), its path looked up once per
 * file, the process from its start or fork, the thread from its first
 * record, the call site from a cache.  No lock and no allocation: the
 * caches are seqlocked and a race only costs a lookup.  The audit still
 * looks at the file at each request: it compares the file's size and
 * modification time between requests.
 */
#include "emd.h"
#include "filter.h"
#include "inherit.h"
#include "maps.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

/* The mapping, and how many slots it holds: both this process's own, set
 * once.  Everything in the mapping can be changed by any process of the tree
 * at any time, so nothing read back from it sizes or places a store. */
static struct emd_rec_header *rec_file;
static unsigned long long rec_slots;
int emd_auditing;
/* This process, learnt at the library's start and again in a fork's child
 * (pthread_atfork; a child of a bare clone() or vfork() that records before
 * its exec is counted as its parent).  Never learnt at a first record: a
 * vfork child's, made in its parent's memory, would have named the parent
 * after the child for good. */
static int cached_pid, cached_ppid;
static char program[sizeof(((struct emd_rec_slot *)0)->program)];
/* This thread, learnt at its first record and kept beside the process it
 * was learnt in: a fork's child (its one thread renumbered) sees cached_pid
 * change and learns again; a thread started later has none.  A vfork child
 * runs on its parent's thread, TLS and all: it never keeps what it learns
 * there (the parent's thread would be named after the child for good), and
 * once the parent's thread knows itself, the child is counted as that
 * thread, as it is counted as its process. */
static __thread struct {
	int pid, tid;
} me;
/* The seccomp supervisor records this process's requests (filter.h's
 * probe), writes on descriptors that sync included: the library leaves
 * them to it. */
static int supervised;

/* The slots a record file mapped with `size` bytes holds, or 0 if it is not
 * one this library writes (checked once, at map time). */
static unsigned long long slots_of(const struct emd_rec_header *h, size_t size)
{
	if (memcmp(h->magic, EMD_REC_MAGIC, 8) != 0 ||
	    h->version != EMD_REC_VERSION ||
	    h->slot_size != sizeof(struct emd_rec_slot) ||
	    !(h->flags & EMD_REC_LIVE))
		return 0;
	return (size - EMD_REC_HEADER) / sizeof(struct emd_rec_slot);
}

/* How much of a record file of `file_size` bytes to map: at most a
 * sixteenth of the address space the process may use (`ulimit -v`, a 32-bit
 * process's 4 GiB), the rest being the program's.  The slots not mapped are
 * lost, counted. */
static size_t map_size(off_t file_size)
{
	unsigned long long cap = sizeof(void *) == 4 ? 1ULL << 28 : ~0ULL;
	unsigned long long size = (unsigned long long)file_size;
	struct rlimit r;

	if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
	    r.rlim_cur / 16 < cap)
		cap = r.rlim_cur / 16;
	if (size > cap)
		size = cap - cap % sizeof(struct emd_rec_slot);
	return (size_t)size;
}

/* The record file the launcher left open for the tree: EATMYDATA_RECORD_FD
 * is "N:DEV:INO", the descriptor and the file it must still be.  Never in
 * a setuid program (secure execution: /etc/ld.so.preload loads us there):
 * its caller could name a file of root's that root's program would write. */
static int record_id(struct emd_inherited *id)
{
	return emd_inherited_parse(id, secure_getenv(EMD_ENV_RECORD_FD)) == 0;
}

/* Map the record file open at fd, once per process image (fork keeps the
 * mapping), if it is the launcher's file; the capacity is what this process
 * mapped. */
static int map_record_file(int fd, const struct emd_inherited *id, int reopened)
{
	struct emd_rec_header *map, *none = NULL;
	unsigned long long slots;
	struct stat st;
	size_t size;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != id->dev ||
	    st.st_ino != id->ino || st.st_size <= EMD_REC_HEADER)
		return 0;
	/* By name, only the user's own private file: not one a process that
	 * changed user could reach, nor one others could have written. */
	if (reopened && (st.st_uid != geteuid() || (st.st_mode & 077)))
		return 0;
	size = map_size(st.st_size);
	if (size < EMD_REC_HEADER + sizeof(struct emd_rec_slot))
		return 0;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 0;
	/* The capacity goes with the mapping that won: a thread that sees the
	 * mapping before its capacity loses a record, counted. */
	slots = slots_of(map, size);
	if (slots && __atomic_compare_exchange_n(&rec_file, &none, map, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		__atomic_store_n(&rec_slots, slots, __ATOMIC_RELEASE);
	else
		munmap(map, size);
	return __atomic_load_n(&rec_file, __ATOMIC_ACQUIRE) != NULL;
}

/* The inherited descriptor, through a reference of our own, so that a
 * thread closing or reusing its number cannot change the file between the
 * check and the map; else the file by name, never through a link. */
static int map_inherited(const struct emd_inherited *id)
{
	const char *path = secure_getenv(EMD_ENV_RECORD);
	int fd = (int)emd_syscall(SYS_fcntl, id->fd, F_DUPFD_CLOEXEC, 0, 0, 0, 0);
	int mapped = 0;

	if (fd >= 0) {
		mapped = map_record_file(fd, id, 0);
		close(fd);
	}
	if (mapped || !path || !*path)
		return mapped;
	fd = (int)emd_syscall(SYS_openat, AT_FDCWD, (long)path,
			      O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return 0;
	mapped = map_record_file(fd, id, 1);
	close(fd);
	return mapped;
}

static void forked(void)
{
	cached_ppid = getppid();
	__atomic_store_n(&cached_pid, getpid(), __ATOMIC_RELEASE);
}

int emd_record_init(void)
{
	struct emd_inherited id;

	if (__atomic_load_n(&rec_file, __ATOMIC_ACQUIRE))
		return 1;
	if (!record_id(&id) || !map_inherited(&id))
		return 0;
	emd_auditing = emd_env_true(secure_getenv(EMD_ENV_AUDIT));
	snprintf(program, sizeof(program), "%s",
		 program_invocation_short_name ? program_invocation_short_name : "?");
	forked();
	pthread_atfork(NULL, NULL, forked);
	supervised = secure_getenv(EMD_ENV_SECCOMP) && emd_under_own_filter() &&
		     emd_probe_errno(secure_getenv(EMD_ENV_SECCOMP_POLICY)) == EMD_PROBE_TIME;
	return 1;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A small shared cache whose entries are seqlocked. */
struct cache_entry {
	unsigned seq;
	unsigned long long key[3];
	char val[256];
};

static int cache_get(struct cache_entry *e, const unsigned long long key[3],
		     char *out, size_t size)
{
	unsigned seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

	if ((seq & 1) || memcmp(e->key, key, sizeof(e->key)) != 0)
		return 0;
	memcpy(out, e->val, size);
	out[size - 1] = '\0';
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq;
}

static void cache_put(struct cache_entry *e, const unsigned long long key[3],
		      const char *val)
{
	unsigned seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	if ((seq & 1) || !__atomic_compare_exchange_n(&e->seq, &seq, seq + 1, 0,
						      __ATOMIC_ACQUIRE,
						      __ATOMIC_RELAXED))
		return;
	memcpy(e->key, key, sizeof(e->key));
	snprintf(e->val, sizeof(e->val), "%s", val);
	__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
}

#define CACHE_SLOTS 64
static struct cache_entry path_cache[CACHE_SLOTS];

/* The modification time only for the audit: asking for it makes the
 * kernel's next write take a fine-grained timestamp (multigrain times,
 * Linux 6.13), which ext4 journals on every write. */
int emd_rec_stat(int dirfd, const char *path, int flags,
		 struct emd_rec_file *f)
{
	unsigned mask = STATX_TYPE | STATX_MODE | STATX_INO | STATX_BTIME |
			STATX_SIZE | (emd_auditing ? STATX_MTIME : 0);
	struct statx stx;
	int saved = errno;

	if (statx(dirfd, path, flags | AT_STATX_DONT_SYNC, mask, &stx) != 0) {
		errno = saved;
		return -1;
	}
	f->dev = (unsigned long long)stx.stx_dev_major << 32 | stx.stx_dev_minor;
	f->ino = stx.stx_ino;
	f->btime_ns = stx.stx_btime.tv_sec * 1000000000ULL + stx.stx_btime.tv_nsec;
	f->mtime_ns = stx.stx_mtime.tv_sec * 1000000000ULL + stx.stx_mtime.tv_nsec;
	f->size = stx.stx_size;
	f->mode = stx.stx_mode;
	return 0;
}

/* The path behind fd now, and the file's state.  A file is known by device,
 * inode and birth time, so a reused descriptor or inode number is never
 * taken for another. */
static void fd_path(int fd, struct emd_rec_file *f, char *out, size_t size)
{
	char proc[32];
	unsigned long long key[3];
	struct cache_entry *e;
	ssize_t n;
	/* fd -1 (sync): no file to look at, and no statx to make. */
	int known = fd < 0 ? -1
		    : emd_auditing ? emd_rec_stat(fd, "", AT_EMPTY_PATH, f)
				   : emd_fd_identity(fd, f);

	if (known != 0) {
		snprintf(out, size, "-");
		return;
	}
	key[0] = f->dev;
	key[1] = f->ino;
	key[2] = f->btime_ns;
	e = &path_cache[(key[1] ^ key[0] ^ key[2]) % CACHE_SLOTS];
	if (cache_get(e, key, out, size))
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, out, size - 1);
	out[n > 0 ? n : 0] = '\0';
	cache_put(e, key, out);
}

struct map_query {
	unsigned long addr;
	char *out;
	size_t size;
};

static int path_at(const struct emd_map *m, void *arg)
{
	struct map_query *q = arg;

	if (q->addr < m->lo || q->addr >= m->hi)
		return 0;
	snprintf(q->out, q->size, "%s", *m->path == '/' ? m->path : "-");
	return 1;
}

/* The file mapped at addr, from /proc/self/maps ("-" if none): msync names
 * no descriptor, and a call site's module is named by its file. */
void emd_map_path(const void *addr, char *out, size_t size)
{
	struct map_query q = {(unsigned long)addr, out, size};
	int fd = (int)emd_syscall(SYS_openat, AT_FDCWD, (long)"/proc/self/maps",
				  O_RDONLY | O_CLOEXEC, 0, 0, 0);

	snprintf(out, size, "-");
	if (fd >= 0) {
		emd_maps_each(fd, path_at, &q);
		close(fd);
	}
}

/* Slots are used a chunk at a time, and a chunk's pages are reserved before
 * its first store: on a full tmpfs (a container's small /dev/shm) a store to
 * a page the file system cannot allocate is SIGBUS, an madvise is an error.
 * Reserving with the mapping, not fallocate on a descriptor, needs none that
 * the program could have closed or reused. */
#define CHUNK_SLOTS 256 /* 128 KiB */
static unsigned long long backed_chunk; /* the last this process reserved, + 1 */

/* Stop recording at slot `end`: the header's capacity is the one thing the
 * library writes there for the reader, and only ever lowers. */
static void lower_capacity(struct emd_rec_header *h, unsigned long long end)
{
	unsigned long long slots = __atomic_load_n(&h->slots, __ATOMIC_RELAXED);

	while (slots > end &&
	       !__atomic_compare_exchange_n(&h->slots, &slots, end, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static int slot_backed(struct emd_rec_header *h, unsigned long long i,
		       unsigned long long slots)
{
	unsigned long long chunk = i / CHUNK_SLOTS, first = chunk * CHUNK_SLOTS;
	unsigned long long n = slots - first < CHUNK_SLOTS ? slots - first : CHUNK_SLOTS;
	struct emd_rec_slot *s = (struct emd_rec_slot *)((char *)h + EMD_REC_HEADER);

	if (__atomic_load_n(&backed_chunk, __ATOMIC_RELAXED) == chunk + 1)
		return 1;
	if (madvise(s + first, n * sizeof(*s), MADV_POPULATE_WRITE) != 0 &&
	    errno != EINVAL) {
		lower_capacity(h, first);
		return 0;
	}
	__atomic_store_n(&backed_chunk, chunk + 1, __ATOMIC_RELAXED);
	return 1;
}

/* Claim a slot: bounded by what this process mapped, and by the header's
 * capacity only when that is lower (records are lost, never misplaced);
 * none once the run has ended (the header's flag can only stop us). */
static struct emd_rec_slot *claim_slot(struct emd_rec_header *h)
{
	unsigned long long slots = __atomic_load_n(&rec_slots, __ATOMIC_ACQUIRE);
	unsigned long long said = __atomic_load_n(&h->slots, __ATOMIC_RELAXED);
	unsigned long long i;

	if (!(__atomic_load_n(&h->flags, __ATOMIC_ACQUIRE) & EMD_REC_LIVE))
		return NULL;
	i = __atomic_fetch_add(&h->next, 1, __ATOMIC_RELAXED);
	if (said < slots)
		slots = said;
	if (i >= slots || !slot_backed(h, i, slots))
		return NULL; /* the reader counts what did not fit */
	return (struct emd_rec_slot *)((char *)h + EMD_REC_HEADER) + i;
}

/* The calling thread of process `pid`: two system calls once per thread
 * (and per fork), none after.  Kept only if it is `pid`'s own: not in a
 * vfork child or a bare clone()'s, whose process is its parent's here. */
static int this_thread(int pid)
{
	int tid;

	if (__builtin_expect(me.pid == pid, 1))
		return me.tid;
	tid = (int)emd_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
	if (emd_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0) == pid) {
		me.tid = tid;
		/* A signal handler's record in between sees the pid last. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		me.pid = pid;
	}
	return tid;
}

/* The slot's process and thread: its pid, its parent's, its name, all kept. */
static void this_process(struct emd_rec_slot *s)
{
	s->pid = __atomic_load_n(&cached_pid, __ATOMIC_ACQUIRE);
	s->ppid = cached_ppid;
	s->tid = this_thread(s->pid);
	memcpy(s->program, program, sizeof(s->program));
}

void emd_rec_claim(struct emd_rec *rec, int kind, int fd, const void *addr,
		  const void *site)
{
	struct emd_rec_header *h = __atomic_load_n(&rec_file, __ATOMIC_ACQUIRE);
	struct emd_rec_slot *s;
	int saved = errno;

	rec->slot = NULL; /* for emd_rec_event: no slot, nothing to fill */
	if (supervised && kind < EMD_K_FIRST_EVENT)
		return;
	s = claim_slot(h);
	if (!s) {
		errno = saved;
		return;
	}
	s->kind = kind;
	/* eatmydata --stats: a program that does not eat (--only,
	 * EATMYDATA_DISABLE) leaves its requests to the kernel. */
	if (kind < EMD_K_FIRST_EVENT && !(emd_mode_now() & EMD_EAT) &&
	    (__atomic_load_n(&h->flags, __ATOMIC_RELAXED) & EMD_REC_EATEN))
		s->flags = EMD_REC_LEFT | EMD_REC_NOT_EATING;
	this_process(s);
	if (fd < 0 && addr)
		emd_map_path(addr, s->path, sizeof(s->path));
	else
		fd_path(fd, &s->file, s->path, sizeof(s->path));
	emd_site(site, s);
	rec->slot = s;
	rec->fd = fd;
	s->start_ns = rec->start = now_ns();
	__atomic_store_n(&s->state, EMD_REC_STARTED, __ATOMIC_RELEASE);
	errno = saved;
}

/* The module that holds a call site, named by the file /proc/self/maps
 * shows at its pc (`path`: the file, not a link to it), with the call's
 * build id. */
void emd_rec_module(const char *path, const struct emd_rec_slot *call)
{
	struct emd_rec_header *h = __atomic_load_n(&rec_file, __ATOMIC_ACQUIRE);
	struct emd_rec_slot *s = claim_slot(h);
	const char *end;

	if (!s)
		return;
	s->kind = EMD_K_MODULE;
	this_process(s);
	snprintf(s->path, sizeof(s->path), "%s", path);
	end = strchr(call->site, '+');
	snprintf(s->site, sizeof(s->site), "%.*s", end ? (int)(end - call->site) : 0, call->site);
	memcpy(s->build_id, call->build_id, sizeof(s->build_id));
	s->build_id_len = call->build_id_len;
	__atomic_store_n(&s->state, EMD_REC_DONE, __ATOMIC_RELEASE);
}

void emd_rec_event(int kind, const struct emd_rec_event *ev, const void *site)
{
	struct emd_rec rec;
	struct emd_rec_slot *s;

	emd_rec_claim(&rec, kind, -1, NULL, site);
	if (!(s = rec.slot))
		return;
	s->file = ev->file;
	s->dir_dev = ev->dir.dev;
	s->dir_ino = ev->dir.ino;
	s->flags = ev->flags;
	snprintf(s->path, sizeof(s->path), "%s", ev->path);
	emd_rec_complete(&rec, 0);
}

void emd_rec_complete(struct emd_rec *rec, long result)
{
	struct emd_rec_slot *s = rec->slot;
	int saved = errno;

	s->latency_ns = now_ns() - rec->start;
	s->result = result;
	s->error = result < 0 ? saved : 0;
	/* A kept identity may be of a file closed and replaced by a route the
	 * library does not see (fdid.c): a failure looks again. */
	if (result < 0 && rec->fd >= 0 && !emd_auditing) {
		emd_fd_forget(rec->fd);
		fd_path(rec->fd, &s->file, s->path, sizeof(s->path));
	}
	/* What a synced write made durable is the file as it left it. */
	if (emd_auditing && (s->kind == EMD_K_WRITE_SYNC || s->kind == EMD_K_WRITE_DSYNC ||
			     s->kind == EMD_K_PWRITEV2_SYNC || s->kind == EMD_K_PWRITEV2_DSYNC))
		emd_rec_stat(rec->fd, "", AT_EMPTY_PATH, &s->file);
	__atomic_store_n(&s->state, EMD_REC_DONE, __ATOMIC_RELEASE);
	errno = saved;
}

void emd_unobserved(const char *path, const char *why, int err)
{
	struct emd_rec rec;
	char line[512];
	int saved = errno, n;

	if (emd_mode_now() & EMD_RECORD) {
		emd_rec_claim(&rec, EMD_K_UNOBSERVED, -1, NULL, (const void *)emd_unobserved);
		if (rec.slot) {
			struct emd_rec_slot *s = rec.slot;

			snprintf(s->path, sizeof(s->path), "%s", path);
			snprintf(s->site, sizeof(s->site), "%s", why);
			errno = err;
			emd_rec_complete(&rec, err ? -1 : 0);
		}
	} else if (emd_mode_now() & EMD_EAT) {
		n = snprintf(line, sizeof(line), "eatmydata: %s: not eaten: %s%s%s\n", path, why,
			     err ? ": " : "", err ? strerror(err) : "");
		if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
			(void)0;
	}
	errno = saved;
}

/* A nocache run names its own supervisor in the tree of an outer
 * eatmydata's: this library eats, and eatmydata's filter is its own. */
int emd_rec_supervised(void)
{
	return supervised;
}

int emd_under_own_filter(void)
{
	const char *policy = secure_getenv(EMD_ENV_SECCOMP_POLICY);

	if (policy && !strcmp(policy, "nocache"))
		policy = "eatmydata";
	return emd_syscall(EMD_PROBE_NR, EMD_PROBE_FD, 0, 0, 0, 0, 0) == -emd_probe_errno(policy);
}

void emd_rec_counted(int kind, int fd, const void *site)
{
	struct emd_rec rec;

	emd_rec_claim(&rec, kind, fd, NULL, site);
	if (rec.slot) {
		((struct emd_rec_slot *)rec.slot)->flags |= EMD_REC_UNTIMED;
		emd_rec_complete(&rec, 0);
	}
}
