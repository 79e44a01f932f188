# SPDX-License-Identifier: MIT
"""eatmydata's cost per eaten call by C library (make bench; alone: bench.py
musl): a dynamic program's write+fdatasync loop on a tmpfs file
(tests/c/fsyncs.c, built with gcc and with musl-gcc), natively and under
eatmydata: glibc's program under the glibc build's library, musl's under the
musl build's (build-musl/, which make bench makes where musl-gcc is
installed), and musl's under the glibc build alone, whose supervisor serves
it.  Per call: the program's own loop (fsyncs.c's FSYNCS_LOOP_NS), eaten less
native, over the calls, median of interleaved runs; and the tree's system
calls per call beyond native (perf stat -e raw_syscalls:sys_enter, a long
run less a short one)."""
import os
import random
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from policies_bench import syscalls

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
MUSL = ROOT / "build-musl"


def loop_ns(cmd):
    r = subprocess.run([*map(str, cmd)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=dict(os.environ, FSYNCS_LOOP_NS="1"))
    return int(r.stderr.split()[-1])


def extra_syscalls(tool, prog, d, n):
    """System calls per call beyond native, from n calls less n/2."""
    counts = {}
    for k in (n // 2, n):
        cmd = [prog, d / "s", k, "fdatasync"]
        counts[k] = syscalls([*tool, *cmd]) - syscalls(cmd)
    return (counts[n] - counts[n // 2]) / (n - n // 2)


def musl_bench(calls=20000, runs=7):
    rows = [("glibc program, glibc build's library", BUILD / "bench" / "fsyncs",
             BUILD / "bin" / "eatmydata"),
            ("musl program, musl build's library", MUSL / "tests" / "fsyncs",
             MUSL / "bin" / "eatmydata"),
            ("musl program, glibc build alone (supervisor)", MUSL / "tests" / "fsyncs",
             BUILD / "bin" / "eatmydata")]
    if not (MUSL / "bin" / "eatmydata").exists():
        print("\nNo musl build (build-musl/: make bench makes it where musl-gcc is installed).")
        return
    shm = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/dev/shm"))
    try:
        print(f"\neatmydata per eaten call, by C library: {calls} x write+fdatasync on tmpfs in a "
              f"dynamic program (tests/c/fsyncs.c), the program's loop, median of {runs} "
              "interleaved runs; eaten less native over the calls (the fdatasync it skips "
              "included); system calls of the tree beyond native per call (perf):\n")
        print("| program and library | native ns/call | eaten ns/call | eaten - native ns/call | "
              "system calls per call |\n|---|---:|---:|---:|---:|")
        for name, prog, emd in rows:
            cmd = [prog, shm / "f", calls, "fdatasync"]
            t = {"native": [], "eaten": []}
            for _ in range(runs):
                for m in random.sample(list(t), 2):
                    t[m].append(loop_ns([emd, "--", *cmd] if m == "eaten" else cmd) / calls)
            med = {m: statistics.median(v) for m, v in t.items()}
            per = extra_syscalls([emd, "--"], prog, shm, calls)
            print(f"| {name} | {med['native']:.0f} | {med['eaten']:.0f} | "
                  f"{med['eaten'] - med['native']:.0f} | {per:.2f} |", flush=True)
    finally:
        shutil.rmtree(shm, ignore_errors=True)
