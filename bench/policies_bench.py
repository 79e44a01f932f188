# SPDX-License-Identifier: MIT
"""What the supervisor's other policies cost a static program per request
(make bench; alone: bench.py syncstat, beside syncstat's): eatmydata's (a
fdatasync eaten: answered, nothing synced) and nocache's (a 64 KiB read of
a cached file served with RWF_DONTCACHE; a close, which its filter
notifies), each against the native run,
interleaved, with the tree's system calls per request beyond native (perf
stat -e raw_syscalls:sys_enter, a long run less a short one)."""
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"


def syscalls(cmd):
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["perf", "stat", "-x,", "-o", out.name, "-e", "raw_syscalls:sys_enter",
                        "--", *map(str, cmd)], check=True, stdout=subprocess.DEVNULL)
        return next(int(l.split(",")[0]) for l in out.read().splitlines() if "raw_syscalls" in l)


def per_request(tool, make, n, runs):
    """(µs, system calls) per request of tool over native; make(n) is the
    command for n requests, run after `before` warms what it reads."""
    t = {"native": [], "tool": []}
    for _ in range(runs):
        for m in random.sample(list(t), 2):
            cmd, before = make(n)
            before()
            t0 = time.perf_counter()
            subprocess.run([*map(str, (tool if m == "tool" else [])), *map(str, cmd)],
                           check=True, stdout=subprocess.DEVNULL)
            t[m].append(time.perf_counter() - t0)
    us = (statistics.median(t["tool"]) - statistics.median(t["native"])) / n * 1e6
    counts = {}
    for k in (n // 4, n // 2):
        cmd, before = make(k)
        before()
        native = syscalls(cmd)
        before()
        counts[k] = syscalls([*tool, *cmd]) - native
    return us, (counts[n // 2] - counts[n // 4]) / (n // 2 - n // 4)


def policies_bench(runs=7):
    shm = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/dev/shm"))
    big = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/var/tmp")) / "big"
    try:
        subprocess.run([BUILD / "tests" / "rw-static", "write", big, "64"], check=True,
                       stdout=subprocess.DEVNULL)
        warm = lambda: subprocess.run(["cat", big], check=True, stdout=subprocess.DEVNULL)
        rows = [("eatmydata: static C, write+fdatasync on tmpfs", [BUILD / "bin" / "eatmydata", "--"],
                 lambda n: ([BUILD / "tests" / "fsyncs-static", shm / "f", n, "fdatasync"], lambda: None),
                 20000),
                ("nocache: static C, 64 KiB reads of a cached file", [BUILD / "bin" / "nocache"],
                 lambda n: ([BUILD / "tests" / "rw-static", "read", big], warm), 1024),
                ("nocache: static C, open+close of a file it does not read",
                 [BUILD / "bin" / "nocache"],
                 lambda n: ([BUILD / "bench" / "syscalls", "close", n, big], lambda: None), 20000)]
        print(f"\nThe supervisor's other policies, per request beyond native (median of {runs} "
              "interleaved runs; system calls of the tree from perf):\n")
        print("| policy and program | µs per request | system calls per request |\n|---|---:|---:|")
        for name, tool, make, n in rows:
            if "nocache" in name:  # one file read whole: requests fixed by its size
                us, _ = per_request(tool, make, n, runs)
                cmd, before = make(n)
                before()
                native = syscalls(cmd)
                before()
                per = (syscalls([*tool, *cmd]) - native) / n
            else:
                us, per = per_request(tool, make, n, runs)
            print(f"| {name} | {us:.1f} | {per:.1f} |", flush=True)
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(big.parent, ignore_errors=True)
