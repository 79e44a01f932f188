/* SPDX-License-Identifier: MIT */
/* hirestimes.c -- run a command whose times() counts in microseconds. */
#include "common/common.h"

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

int main(int argc, char **argv)
{
	tool_name = "hirestimes";
	simple_launcher(argc, argv, usage, "libhirestimes.so");
}
