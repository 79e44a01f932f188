/* SPDX-License-Identifier: MIT */
/* unit.c -- unit tests of the library's pure helpers (the --only globs). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int emd_glob_list_match(const char *globs, const char *name);

#include "check.h"

static void test_globs(void)
{
	CHECK(emd_glob_list_match("postgres", "/usr/lib/postgresql/15/bin/postgres"));
	CHECK(emd_glob_list_match("post*", "postgres"));
	CHECK(!emd_glob_list_match("post*", "mysqld"));
	CHECK(emd_glob_list_match("mysqld,postgres", "postgres"));
	CHECK(emd_glob_list_match("a,,b", "b"));
	CHECK(!emd_glob_list_match("", "anything"));
	CHECK(!emd_glob_list_match(",", "anything"));
	CHECK(emd_glob_list_match("python3.?", "python3.1"));
	CHECK(!emd_glob_list_match("python3.?", "python3.11"));
	CHECK(emd_glob_list_match("python3.[0-9]*", "python3.11"));
	CHECK(!emd_glob_list_match("python3.[!0-9]", "python3.1"));
	CHECK(emd_glob_list_match("[dp]pkg", "dpkg"));
	CHECK(!emd_glob_list_match("[dp]pkg", "rpkg"));
	CHECK(emd_glob_list_match("/usr/bin/*", "/usr/bin/git"));
	CHECK(!emd_glob_list_match("/usr/bin/*", "git"));
	CHECK(emd_glob_list_match("*", "x"));
	CHECK(!emd_glob_list_match("git", "git-upload-pack"));
	CHECK(emd_glob_list_match("git*", "git-upload-pack"));
	CHECK(emd_glob_list_match("[abc", "[abc"));
	CHECK(emd_glob_list_match("*.so*", "libc.so.6"));
	CHECK(!emd_glob_list_match("*.so", "libc.so.6"));
	CHECK(emd_glob_list_match("a*b*c", "aXbYbZc"));
	CHECK(!emd_glob_list_match("a*b*c", "aXbYbZ"));
	CHECK(emd_glob_list_match("**x", "x"));
	CHECK(!emd_glob_list_match("?", ""));
}

/* Many '*' against a long name that almost matches: a backtracking matcher
 * takes exponential time (every process start of the tree pays it), so the
 * alarm ends the test where it would hang. */
static void test_glob_time(void)
{
	char name[200], pattern[80];

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	strcpy(pattern, "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b");
	alarm(5);
	CHECK(!emd_glob_list_match(pattern, name));
	CHECK(emd_glob_list_match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*", name));
	CHECK(emd_glob_list_match("a*?*[a]*a", name));
	CHECK(!emd_glob_list_match("*[!a]*", name));
	alarm(0);
}

int main(void)
{
	test_globs();
	test_glob_time();
	if (failures)
		fprintf(stderr, "unit: %d check(s) failed\n", failures);
	else
		printf("unit: all checks passed\n");
	return failures != 0;
}
