/* SPDX-License-Identifier: MIT */
/* platform.c -- prints what ld.so substitutes for $PLATFORM in this ELF
 * class, the directory each class's library is installed in. */
#include <stdio.h>
#include <sys/auxv.h>

int main(void)
{
	const char *p = (const char *)getauxval(AT_PLATFORM);

	return p ? puts(p) < 0 : 1;
}
