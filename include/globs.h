/* SPDX-License-Identifier: MIT */
/* globs.h -- --only's patterns (shared/glob.c), matched by the library
 * against its program and by the supervisor against the programs it is
 * asked about.
 */
#ifndef EMD_GLOBS_H
#define EMD_GLOBS_H

/* Does `name` (a program's name or path) match the comma-separated globs? */
int emd_glob_list_match(const char *globs, const char *name);

#endif
