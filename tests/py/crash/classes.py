# SPDX-License-Identifier: MIT
"""classes.py CASE -- changes made so that one kind of crash state alone
shows a failure, for crashtest's test of each kind (--classes).  Files a..e
and x, y hold "0" (t: 8 KiB of "0") before; nothing is synced; the program
says "done" at the end.  classes_check.py CASE is the checker."""
import os
import sys


def write(name, text):
    fd = os.open(name, os.O_WRONLY)
    os.write(fd, text)
    os.close(fd)


def make(name):
    os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644))


case = sys.argv[1]
if case in ("lost", "kept", "prefix", "omit", "alone", "pair"):
    for name in "abcde":
        write(name, b"1")
elif case == "torn":
    write("t", b"1" * 8192)
elif case == "journal":
    make("A")
    write("x", b"1")
    make("B")
    write("y", b"1")
    make("C")
print("done")
