# SPDX-License-Identifier: MIT
"""appenders_check.py -- every line of `log` is a whole record (a record
padded with spaces is one), and every record printed is there."""
import os
import sys

lines = open("log", "rb").read().split(b"\n")
if lines[-1] == b"":
    lines.pop()
records = [line.rstrip(b" ") for line in lines]
for r in records:
    if r not in (b"rec 1", b"rec 11"):
        print("not a record:", r)
        sys.exit(1)
for r in open(os.environ["CRASHTEST_OUTPUT"], "rb").read().split(b"\n")[:-1]:
    if r not in records:
        print("printed, then lost:", r)
        sys.exit(2)
