# SPDX-License-Identifier: MIT
"""names_check.py -- the checker of names.py: the files of '.' and 'd' must be
the entries each directory had at its last fsync (at the start: a and b),
each holding what its inode had at its last fsync (else at the start: "A",
"B", or nothing for a new file).  names.py says what an fsync makes durable
before it makes it: at a crash point between, the fsync before counts."""
import hashlib
import os
import sys

init = {"a0": hashlib.sha256(b"A").hexdigest(), "b0": hashlib.sha256(b"B").hexdigest()}


def wanted(lines):
    content = {}
    entries = {".": {"a": "a0", "b": "b0"}, "d": {}}
    for line in lines:
        w = line.split()
        if w[0] == "filesync":
            content[w[1]] = w[2]
        elif w[0] == "dirsync":
            entries[w[1]] = dict(e.split(":") for e in w[2:])
    want = {}
    for d, es in entries.items():
        for p, l in es.items():
            want[p] = content.get(l, init.get(l, hashlib.sha256(b"").hexdigest()))
    return want


lines = open(os.environ["CRASHTEST_OUTPUT"]).readlines()
want = wanted(lines)
got = {}
for d in (".", "d"):
    for e in os.listdir(d):
        p = os.path.normpath(os.path.join(d, e))
        if os.path.isfile(p):
            got[p] = hashlib.sha256(open(p, "rb").read()).hexdigest()
if got != want and got != wanted(lines[:-1]):
    print("want", {k: v[:6] for k, v in sorted(want.items())}, file=sys.stderr)
    print("got ", {k: v[:6] for k, v in sorted(got.items())}, file=sys.stderr)
    sys.exit(1)
