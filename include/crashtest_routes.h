/* SPDX-License-Identifier: MIT */
/* crashtest_routes.h -- the system calls that libcrashtest's syscall()
 * routes to its wrappers, so that a program asking the kernel by number is
 * journaled as one calling the function.
 *
 * Two tables: the requests of include/requests.h (durability calls, sync
 * flags), each of which crashtest must route or say why not (a
 * CT_ROUTE_<name> for every row, or the build fails); and the changes to
 * files and names that are no durability request.  tests/c/ctcalls.c makes
 * every row's call by number, and the tests check each is journaled.
 *
 * Must be included after <sys/syscall.h>, "platform.h" and "requests.h".
 */
#ifndef CRASHTEST_ROUTES_H
#define CRASHTEST_ROUTES_H

/* clang-format off */
#define CT_CHANGES(X)                                                          \
	/* name            nr */                                               \
	X(copy_file_range, SYS_copy_file_range)                                \
	X(sendfile,        SYS_sendfile)                                       \
	X(ftruncate,       SYS_ftruncate)                                      \
	X(truncate,        SYS_truncate)                                       \
	X(fallocate,       EMD_SYS_OFFSET64(SYS_fallocate))                    \
	X(creat,           EMD_SYS_PATHS(creat))                               \
	X(rename,          EMD_SYS_PATHS(rename))                              \
	X(renameat,        SYS_renameat)                                       \
	X(renameat2,       SYS_renameat2)                                      \
	X(unlink,          EMD_SYS_PATHS(unlink))                              \
	X(unlinkat,        SYS_unlinkat)                                       \
	X(rmdir,           EMD_SYS_PATHS(rmdir))                               \
	X(mkdir,           EMD_SYS_PATHS(mkdir))                               \
	X(mkdirat,         SYS_mkdirat)                                        \
	X(link,            EMD_SYS_PATHS(link))                                \
	X(linkat,          SYS_linkat)                                         \
	X(symlink,         EMD_SYS_PATHS(symlink))                             \
	X(symlinkat,       SYS_symlinkat)                                      \
	X(mknod,           EMD_SYS_PATHS(mknod))                               \
	X(mknodat,         SYS_mknodat)                                        \
	X(bind,            SYS_bind)                                           \
	X(sendto,          SYS_sendto)                                         \
	X(sendmsg,         SYS_sendmsg)                                        \
	X(sendmmsg,        SYS_sendmmsg)                                       \
	X(vmsplice,        SYS_vmsplice)                                       \
	X(splice,          SYS_splice)                                         \
	X(tee,             SYS_tee)
/* clang-format on */

#endif
