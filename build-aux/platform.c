/* SPDX-License-Identifier: MIT */
/* platform.c -- a program of one ELF class for the build to ask ld.so what
 * it substitutes for $LIB in that class (see the Makefile): the libraries'
 * directory, a constant of ld.so, unlike $PLATFORM, which glibc derives
 * from the CPU and valgrind leaves unset. */
int main(void)
{
	return 0;
}
