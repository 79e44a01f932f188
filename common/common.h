/* SPDX-License-Identifier: MIT */
/* common.h -- what the tools share (the launchers, the seccomp supervisor,
 * the report and crashtest's engine): messages, finding the preload
 * library, and running the command the way env(1) does.
 */
#ifndef EMD_COMMON_H
#define EMD_COMMON_H

#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdnoreturn.h>

/* Exit statuses of env(1) and the shell. */
enum {
	EXIT_TOOL = 125,     /* the launcher's own error */
	EXIT_CANNOT_RUN = 126,
	EXIT_NOT_FOUND = 127,
};

/* The tool's name, prefixed to every message. */
extern const char *tool_name;

__attribute__((format(printf, 1, 2))) noreturn void die(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void warn(const char *fmt, ...);

/* This launcher's file, as the kernel names it (/proc/self/exe, read
 * once), or NULL. */
const char *launcher_path(void);

/* The LD_PRELOAD entry for the library `lib` (e.g. "libeatmydata.so"):
 * a path with $LIB in it, so that each process loads the library of
 * its own ELF class.  Dies when the library is not installed. */
const char *preload_entry(const char *lib);

/* Put `entry` first in LD_PRELOAD, keeping the other entries. */
void preload_prepend(const char *entry);

/* Leave our entry out of LD_PRELOAD if the program `file` (found as
 * execvp would) has an ld.so that would say it cannot preload it: a glibc
 * program beside the musl build alone (elf_kind.h).  exec_command does. */
void preload_drop_refused(const char *file);

/* execvp(argv) with argv0 as the path to look up (what find_command
 * found, exec'ed without a second search); never returns.  Exits 127 when
 * it is not found, 126 when it cannot be run. */
noreturn void exec_command(const char *file, char *const argv[]);

/* The first `name` in PATH that is not this very executable, the file argv0
 * names when it is a path, nor a launcher that ran this one in link mode, or
 * NULL: symlink mode, where `dpkg` is a link to the launcher early in PATH. */
char *find_in_path_skipping_self(const char *name, const char *argv0);

/* Run argv in a child and wait for it, passing on the signals a terminal or
 * a supervisor sends; returns its wait status.  The child calls
 * before_exec(arg), if given, first. */
int run_and_wait(char *const argv[], void (*before_exec)(const void *),
		 const void *arg);

/* After run_and_wait: the error of the child's exec of the command, which
 * then never ran (its status is 126 or 127, as a shell's), or 0.  Nothing
 * is reported of a run that never was. */
int command_never_ran(void);

/* From now on, until the command runs (run_and_wait's forwarding, or
 * exec_command), the signals run_and_wait passes on, SIGINT and SIGQUIT
 * are held: one that comes while the launcher sets up (temporary
 * directories made) is the command's, not the launcher's death with them
 * left behind. */
void hold_signals(void);

/* While run_and_wait waits: call tick() every `seconds` (syncstat samples
 * the disks' counters), from the waiting loop, not from a signal handler. */
void run_and_wait_tick(void (*tick)(void), unsigned seconds);

/* Where execvp would find `name`, or NULL; the same answer, unsearched,
 * for the name asked last. */
const char *find_command(const char *name);

/* An option every launcher has (-h, --help; -V, --version), or else an
 * unknown one: prints and exits either way. */
noreturn void common_option(int c, char **argv, const char *usage);

/* main() of a launcher that has only the common options: preload `lib`,
 * let `check` look at COMMAND (it may warn), and become COMMAND. */
noreturn void simple_launcher(int argc, char **argv, const char *usage,
			      const char *lib, void (*check)(const char *cmd));

/* `arg` as a whole decimal number in [lo, hi], or die naming `what`. */
long parse_number(const char *what, const char *arg, long lo, long hi);

/* A regular file opened for reading, or die. */
int open_regular(const char *path);

/* CLOCK_MONOTONIC in seconds. */
double monotonic_seconds(void);

/* Exit as the child did: its code, or its signal. */
noreturn void exit_like(int status);

/* A new private directory NAME.XXXXXX in $TMPDIR, its path made absolute
 * (the tree may change directory); dies if it cannot. */
void private_tmpdir(const char *name, char *out, size_t size);

/* The same, but -1 with the reason in `out` instead of dying. */
int try_private_tmpdir(const char *name, char *out, size_t size);

#endif
