/* SPDX-License-Identifier: MIT */
/* record.c -- the supervisor's records of what it served, in the run's
 * record file (include/record.h), for syncstat's report: the same slots
 * the library fills, claimed the same way (one atomic add on the header's
 * `next`), so the report cannot tell them apart but by their site.
 *
 * The file is the tree's: any process of it may scribble on it or cut it
 * short.  It is mapped whole, as the library maps it, and a slot is
 * written through the mapping (no system call: its state last, as the
 * library's); a fault there or on the header (the file cut short under
 * the mapping, a full tmpfs: SIGBUS) costs the record, never this
 * process, which serves every other process of the tree.  When the whole
 * file cannot be mapped, only the header is, and a slot is written whole
 * with pwrite.
 */
#define _GNU_SOURCE 1
#include "common/common.h"
#include "supervisor.h"
#include "env.h"
#include "inherit.h"
#include "maps.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int rec_fd = -1;
static struct emd_rec_header *rec_head;
static struct emd_rec_slot *rec_map; /* the slots, when mapped */
static unsigned long long rec_slots;

/* The one guarded access at a time per thread: a SIGBUS there jumps back. */
static __thread sigjmp_buf *guard;

/* With SA_NODEFER and no sa_mask, the handler runs with the thread's own
 * mask: a siglongjmp out of it need not restore one (sigsetjmp(.., 0), no
 * system call per record). */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if (guard && si->si_code > 0) /* a fault, not a kill(2) of the tree's */
		siglongjmp(*guard, 1);
}

/* Claim a slot as the library does (record.c there) and, when the slots
 * are mapped, fill it: its index, or -1 when the run ended, the file is
 * full, or the header faulted; -2 when the slot is filled. */
static long long claim(const struct emd_rec_slot *s)
{
	sigjmp_buf here;
	unsigned long long i, said;
	struct emd_rec_slot *to;

	if (sigsetjmp(here, 0)) {
		guard = NULL;
		return -1;
	}
	guard = &here;
	if (!(__atomic_load_n(&rec_head->flags, __ATOMIC_ACQUIRE) & EMD_REC_LIVE)) {
		guard = NULL;
		return -1;
	}
	i = __atomic_fetch_add(&rec_head->next, 1, __ATOMIC_RELAXED);
	said = __atomic_load_n(&rec_head->slots, __ATOMIC_RELAXED);
	if (i >= rec_slots || i >= said) {
		guard = NULL;
		return -1;
	}
	if (rec_map) {
		to = rec_map + i;
		memcpy((char *)to + sizeof(to->state), (const char *)s + sizeof(s->state),
		       sizeof(*s) - sizeof(s->state));
		__atomic_store_n(&to->state, s->state, __ATOMIC_RELEASE);
	}
	guard = NULL;
	return rec_map ? -2 : (long long)i;
}

/* The record file the launcher left for the tree, at `fd` (its number as
 * the starter moved it) or by name: only the file EATMYDATA_RECORD_FD
 * names by device and inode, a live one of this version. */
static int attach_fd(int fd, const struct emd_inherited *id, int by_name)
{
	struct stat st;
	struct emd_rec_header *h, head;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != id->dev ||
	    st.st_ino != id->ino || st.st_size <= EMD_REC_HEADER)
		return 0;
	/* By name, as the library: only this user's own private file. */
	if (by_name && (st.st_uid != geteuid() || (st.st_mode & 077)))
		return 0;
	/* The header is judged from a copy: the tree may truncate the file
	 * between the fstat and here, and a read of the mapping would then
	 * fault where no guard is (claim's) and fault again forever. */
	if (pread(fd, &head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
	    memcmp(head.magic, EMD_REC_MAGIC, 8) != 0 || head.version != EMD_REC_VERSION ||
	    head.slot_size != sizeof(struct emd_rec_slot) || !(head.flags & EMD_REC_LIVE))
		return 0;
	rec_slots = ((unsigned long long)st.st_size - EMD_REC_HEADER) / sizeof(struct emd_rec_slot);
	h = mmap(NULL, EMD_REC_HEADER + rec_slots * sizeof(struct emd_rec_slot),
		 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h != MAP_FAILED)
		rec_map = (struct emd_rec_slot *)((char *)h + EMD_REC_HEADER);
	else
		h = mmap(NULL, EMD_REC_HEADER, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return 0;
	rec_fd = fd;
	rec_head = h;
	return 1;
}

void record_attach(int fd)
{
	struct emd_inherited id;
	struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER};
	const char *path = getenv(EMD_ENV_RECORD);
	sigset_t bus;

	if (emd_inherited_parse(&id, getenv(EMD_ENV_RECORD_FD)) != 0)
		return;
	sigaction(SIGBUS, &sa, NULL);
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
	if (attach_fd(fd >= 0 ? fd : id.fd, &id, 0))
		return;
	/* By name, only the user's own private file, never through a link. */
	fd = path ? open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
	if (fd >= 0 && !attach_fd(fd, &id, 1))
		close(fd);
}

int recording(void)
{
	return rec_head != NULL;
}

unsigned long long record_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void record_write(const struct emd_rec_slot *s)
{
	long long i = rec_head ? claim(s) : -1;

	if (i >= 0 && pwrite(rec_fd, s, sizeof(*s), EMD_REC_HEADER + i * (long long)sizeof(*s)) < 0)
		(void)0; /* a full file system: the record is lost, as the library's */
}

int record_unobserved(const char *file, const char *why, int err)
{
	struct emd_rec_slot s = {.kind = EMD_K_UNOBSERVED, .state = EMD_REC_DONE};
	const char *base = strrchr(file, '/');

	if (!rec_head)
		record_attach(-1);
	if (!rec_head)
		return 0;
	s.pid = getpid();
	s.tid = gettid();
	s.ppid = getppid();
	s.start_ns = record_now();
	s.result = -1;
	s.error = err;
	snprintf(s.program, sizeof(s.program), "%s", base ? base + 1 : file);
	snprintf(s.path, sizeof(s.path), "%s", file);
	snprintf(s.site, sizeof(s.site), "%s", why);
	record_write(&s);
	return 1;
}
