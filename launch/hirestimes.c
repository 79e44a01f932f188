/* SPDX-License-Identifier: MIT */
/* hirestimes.c -- run a command whose times() counts in microseconds. */
#include "common/common.h"
#include "elf_kind.h"

#include <limits.h>

static const char usage[] =
	"Usage: hirestimes [OPTION]... [--] COMMAND [ARG]...\n"
	"Run COMMAND with times() and sysconf(_SC_CLK_TCK) in microseconds:\n"
	"the tick is 1000000 per second, the elapsed count is monotonic, and\n"
	"the CPU times come from the kernel's precise accounting.\n"
	"\n"
	"  -h, --help     show this help and exit\n"
	"  -V, --version  show the version and exit\n"
	"\n"
	"Exit status: 125 for an error of hirestimes itself, 126 if COMMAND\n"
	"cannot be run, 127 if it is not found, else COMMAND's status.\n";

/* A program the library cannot enter keeps the kernel's ticks: said, not
 * left to be taken for microseconds. */
static void check_command(const char *cmd)
{
	char path[PATH_MAX];
	int kind = emd_command_unreachable(cmd, path, sizeof(path));

	if (kind)
		warn("%s is %s: its times() and CLK_TCK stay the kernel's", path, emd_elf_reason(kind));
}

int main(int argc, char **argv)
{
	tool_name = "hirestimes";
	simple_launcher(argc, argv, usage, "libhirestimes.so", check_command);
}
