/* SPDX-License-Identifier: MIT */
/* real.c -- the table of real libc functions, and the configuration.
 *
 * Runs on the first intercepted call, which may come from another library's
 * constructor before ours, in several threads at once: nothing here takes a
 * lock or allocates, and running it twice gives the same result.
 */
#include "emd.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void *emd_real_fn[EMD_NREAL];
const char *const emd_real_name[EMD_NREAL] = {EMD_REAL_SYMBOLS(PL_NAME)};
int emd_mode;

long emd_syscall(long nr, long a, long b, long c, long d, long e, long f)
{
	int saved = errno;
	long r = EMD_REAL(syscall)(nr, a, b, c, d, e, f);

	if (r == -1)
		r = -errno;
	errno = saved;
	return r;
}

/* --only: match the name the program was started as, and the file it runs. */
static int program_matches(const char *globs)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (program_invocation_name &&
	    emd_glob_list_match(globs, program_invocation_name))
		return 1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	return emd_glob_list_match(globs, exe);
}

static int decide_mode(void)
{
	const char *only = getenv(EMD_ENV_ONLY);

	if (emd_env_true(getenv(EMD_ENV_DISABLE)))
		return EMD_PASS;
	if (only && *only && !program_matches(only))
		return EMD_PASS;
	return EMD_EAT;
}

int emd_init(void)
{
	int saved = errno;
	int mode = decide_mode(), follow;

	if (emd_note_init() != 0)
		mode = EMD_PASS;
	if (emd_record_init())
		mode |= EMD_RECORD;
	/* Writes are followed only once every forget runs (osync.c). */
	if ((mode & (EMD_RECORD | EMD_EAT)) != EMD_RECORD || emd_rec_supervised())
		follow = EMD_FOLLOW_OFF;
	else
		follow = emd_fd_map() == 0 ? EMD_FOLLOW_ON : EMD_FOLLOW_ASK;
	__atomic_store_n(&emd_follow_writes, follow, __ATOMIC_RELEASE);
	__atomic_store_n(&emd_mode, mode, __ATOMIC_RELEASE);
	errno = saved;
	return mode;
}

/* close, close_range, dup2 and dup3 are async-signal-safe, and these and
 * closefrom are called in fork and vfork children: maybe first in a signal
 * handler or such a child, where finding them (dlsym) is not safe.  They
 * are found here (close, dup2 and dup3 by setting their entries).  The
 * mode is known from here on: a process that records nothing keeps no
 * per-descriptor state, and its opens and closes go straight through. */
__attribute__((constructor)) static void emd_constructor(void)
{
	int forget = emd_mode_now() & EMD_RECORD;

	emd_open_entries(forget);
	emd_close_entries(forget);
	(void)EMD_REAL(close_range);
	(void)EMD_REAL(closefrom);
}
