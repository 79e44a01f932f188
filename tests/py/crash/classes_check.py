# SPDX-License-Identifier: MIT
"""classes_check.py CASE -- fails (exit 1) in the one state of classes.py
CASE that only one kind of state builds, and in no other."""
import os
import sys


def get(name):
    try:
        with open(name, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


case = sys.argv[1]
ones = "".join(n for n in "abcde" if get(n) == b"1")
bad = {
    "lost": ones == "",            # all lost
    "kept": ones == "abcde",       # all kept
    "prefix": ones == "abc",       # the first three: a prefix only
    "omit": ones == "bcde",        # all but the first
    "alone": ones == "b",          # the second alone
    "pair": ones == "ac",          # the first and the third alone
    "torn": get("t") not in (b"0" * 8192, b"1" * 8192),
    "journal": (get("A") is not None and get("B") is None and get("C") is None
                and get("x") == b"1" and get("y") == b"1"),
}[case]
sys.exit(1 if bad else 0)
