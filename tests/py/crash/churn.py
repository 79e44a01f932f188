# SPDX-License-Identifier: MIT
"""churn.py SEED OPS -- seeded random writes, appends, truncations and fsyncs
on two files of the current directory, for crashtest's differential test.
Before each fsync it prints "want FILE SHA256": what the file holds, which
the fsync makes durable; crash points come only after calls return, so the
last such line of a file is what the posix model must leave."""
import hashlib
import os
import random
import sys

rng = random.Random(int(sys.argv[1]))
names = ["a", "b"]
fds = {n: os.open(n, os.O_RDWR | os.O_CREAT, 0o644) for n in names}
appends = {n: os.open(n, os.O_WRONLY | os.O_APPEND) for n in names}
for _ in range(int(sys.argv[2])):
    n = rng.choice(names)
    op = rng.random()
    if op < 0.45:
        os.pwrite(fds[n], rng.randbytes(rng.randrange(1, 9000)), rng.randrange(0, 20000))
    elif op < 0.6:
        os.write(appends[n], rng.randbytes(rng.randrange(1, 3000)))
    elif op < 0.75:
        os.ftruncate(fds[n], rng.randrange(0, 15000))
    else:
        with open(n, "rb") as f:
            print("want", n, hashlib.sha256(f.read()).hexdigest(), flush=True)
        os.fsync(fds[n])
