/* SPDX-License-Identifier: MIT */
/* nocache.c -- run a command without letting it evict the page cache. */
#include "common.h"

static const char usage[] =
	"Usage: nocache [OPTION]... [--] COMMAND [ARG]...\n"
	"Run COMMAND so that its file I/O leaves the page cache as it found it:\n"
	"pages cached before stay cached, pages COMMAND brings in are dropped\n"
	"as it goes (RWF_DONTCACHE, else posix_fadvise behind its position).\n"
	"Nothing is ever synced.\n"
	"\n"
	"  -h, --help     show this help and exit\n"
	"  -V, --version  show the version and exit\n"
	"\n"
	"Exit status: 125 for an error of nocache itself, 126 if COMMAND\n"
	"cannot be run, 127 if it is not found, else COMMAND's status.\n";

int main(int argc, char **argv)
{
	tool_name = "nocache";
	simple_launcher(argc, argv, usage, "libnocache.so");
}
