/* SPDX-License-Identifier: MIT */
/* preload.h -- what every preload library of the project shares: exporting
 * a wrapper, and finding the real function it wraps.
 *
 * A wrapper may run before its library's constructor and in several threads
 * at once, so the real functions are found lazily and without locks.
 */
#ifndef PRELOAD_H
#define PRELOAD_H

#include "platform.h"

#include <stdarg.h>

#define PL_EXPORT __attribute__((visibility("default")))
#define PL_LIKELY(x) __builtin_expect(!!(x), 1)
#define PL_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Look up `name` after this library (dlsym RTLD_NEXT), store it in *slot and
 * return it; a function that fails with ENOSYS if libc lacks it.  errno is
 * kept. */
void *pl_resolve(void **slot, const char *name);

/* For a name the C library has not (musl's, platform.h): the system call,
 * through the next syscall(); NULL for any other name (fallback.c). */
void *pl_fallback(const char *name);

/* syscall(nr, ...)'s six arguments into a[6], as the kernel's ABI passes
 * them (libc's own syscall reads six, whatever the number): in a wrapper
 * of syscall, whose last named parameter is nr. */
#define PL_SYSCALL_ARGS(a, nr)                                                 \
	do {                                                                   \
		va_list ap_;                                                   \
		va_start(ap_, nr);                                             \
		for (int i_ = 0; i_ < 6; i_++)                                 \
			(a)[i_] = va_arg(ap_, long);                           \
		va_end(ap_);                                                   \
	} while (0)

/* A library's table of real functions: one row per name in its
 * LIST(X) macro, an enum of ids and the accessors below. */
#define PL_ID(name) PL_REAL_##name,
#define PL_NAME(name) #name,

/* The real function `name` from a library's table (fns, names), with the
 * type the system header gives it: the library's REAL(name). */
#define PL_REAL(fns, names, name)                                              \
	((__typeof__(name) *)pl_real(&(fns)[PL_REAL_##name], (names)[PL_REAL_##name]))

/* vfork, wrapped: `before` (a function of the library's own, not exported,
 * returning the real vfork) is called, then the real vfork jumped to from
 * the caller's own frame: a C wrapper's frame would be the child's to
 * return through, and the parent's to find overwritten.  x86 only; not
 * defined elsewhere, where vfork is then not wrapped. */
#if defined(EMD_ASM_X86_64)
#define PL_VFORK_WRAPPER(before)                                               \
	__asm__(".text\n.globl vfork\n.type vfork, @function\nvfork:\n"        \
		"\t.byte 0xf3, 0x0f, 0x1e, 0xfa\n" /* endbr64 */               \
		"\tsub $8, %rsp\n\tcall " #before "\n\tadd $8, %rsp\n"            \
		"\tjmp *%rax\n.size vfork, . - vfork\n")
#elif defined(EMD_ASM_I386)
#define PL_VFORK_WRAPPER(before)                                               \
	__asm__(".text\n.globl vfork\n.type vfork, @function\nvfork:\n"        \
		"\t.byte 0xf3, 0x0f, 0x1e, 0xfb\n" /* endbr32 */               \
		"\tsub $12, %esp\n\tcall " #before "\n\tadd $12, %esp\n"         \
		"\tjmp *%eax\n.size vfork, . - vfork\n")
#endif

static inline void *pl_real(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	return PL_LIKELY(fn != 0) ? fn : pl_resolve(slot, name);
}

#endif
