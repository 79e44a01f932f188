/* SPDX-License-Identifier: MIT */
/* text.h -- names and outputs from the run, made safe to show: on one line,
 * with no control character, valid UTF-8 (bytes that are not shown as
 * \xNN), so that a file name can neither forge a line of the report nor
 * reach the terminal.
 */
#ifndef CT_TEXT_H
#define CT_TEXT_H

#include <stddef.h>

/* s (n bytes) escaped: \n, \t, \\, other control characters and invalid
 * UTF-8 as \xNN; newlines kept as such when `lines`.  To be freed. */
char *escape(const char *s, size_t n, int lines);

/* The same for a NUL-terminated string, on one line. */
char *escape1(const char *s);

#endif
