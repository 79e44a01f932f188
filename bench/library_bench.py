# SPDX-License-Identifier: MIT
"""syncstat's own cost per durability call where its library is loaded
(make bench; alone: bench.py syncstat): a dynamic program's 10^6
write+fdatasync on a tmpfs file, where the call itself costs about a
microsecond, natively, under the floor (a do-nothing preload), under
syncstat and under strace -f -c, interleaved; then the deterministic count
per durability call: the tree's system calls beyond native (perf stat -e
raw_syscalls:sys_enter).  Not instructions: valgrind's core is a static
program, which syncstat serves through its supervisor, not its library,
and this machine has no hardware counter for perf."""
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
FSYNCS = BUILD / "bench" / "fsyncs"
SYNCSTAT = [str(BUILD / "bin" / "syncstat"), "--output=/dev/null", "--"]


def timed(modes, cmd, runs):
    """Each mode's wall times and the program's loop times (fsyncs.c's
    FSYNCS_LOOP_NS), in seconds, the modes interleaved."""
    t = {m: [] for m in modes}
    loop = {m: [] for m in modes}
    for _ in range(runs):
        for m in random.sample(list(modes), len(modes)):
            wrap, env = modes[m]
            t0 = time.perf_counter()
            r = subprocess.run([*wrap, *cmd], check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, FSYNCS_LOOP_NS="1", **env))
            t[m].append(time.perf_counter() - t0)
            loop[m].append(int(r.stderr.split()[-1]) / 1e9)
    return t, loop


def syscalls(wrap, cmd):
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["perf", "stat", "-x,", "-o", out.name, "-e", "raw_syscalls:sys_enter",
                        "--", *wrap, *cmd], check=True, stdout=subprocess.DEVNULL)
        return next(int(l.split(",")[0]) for l in out.read().splitlines()
                    if "raw_syscalls" in l)


def library_per_call(floor, calls=1000000, runs=5):
    shm = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/dev/shm"))
    try:
        cmd = [str(FSYNCS), str(shm / "f"), str(calls), "fdatasync"]
        modes = {"native": ([], {}), "floor": ([], {"LD_PRELOAD": str(floor)}),
                 "syncstat": (SYNCSTAT, {})}
        t, loop = timed(modes, cmd, runs)
        # strace on a fifth of the calls (it takes 50 times as long), with
        # its own native run, interleaved the same way.
        few = [str(FSYNCS), str(shm / "f"), str(calls // 5), "fdatasync"]
        ts, loops = timed({"native": ([], {}), "strace": (["strace", "-f", "-c", "-o", "/dev/null"],
                                                          {})}, few, runs)
        med = {m: statistics.median(v) for m, v in t.items()}
        ns = {m: (med[m] - med["native"]) / calls * 1e9 for m in med}
        ns["strace"] = (statistics.median(ts["strace"]) - statistics.median(ts["native"])) / (
            calls // 5) * 1e9
        med_in = {m: statistics.median(v) for m, v in loop.items()}
        ns_in = {m: (med_in[m] - med_in["native"]) / calls * 1e9 for m in med_in}
        ns_in["strace"] = (statistics.median(loops["strace"]) - statistics.median(
            loops["native"])) / (calls // 5) * 1e9
        few = [str(FSYNCS), str(shm / "g"), "20000", "fdatasync"]
        more = [str(FSYNCS), str(shm / "g"), "40000", "fdatasync"]
        sys_per = (syscalls(SYNCSTAT, more) - syscalls([], more)
                   - syscalls(SYNCSTAT, few) + syscalls([], few)) / 20000
    finally:
        shutil.rmtree(shm, ignore_errors=True)
    print(f"\nsyncstat's cost per durability call where its library is loaded: {calls} x "
          f"write+fdatasync on tmpfs (a dynamic program; strace on a fifth of them), median of "
          f"{runs} interleaved runs. In "
          "the process: the program's loop, (time - native) / calls; whole run: the command's "
          "wall time, the report included:\n")
    print("| | native s | floor ns/call | syncstat ns/call | strace -f -c ns/call | "
          "strace / syncstat |\n|---|---:|---:|---:|---:|---:|")
    for name, m, n in [("in the process", med_in, ns_in), ("whole run", med, ns)]:
        print(f"| {name} | {m['native']:.3f} | {n['floor']:.0f} | {n['syncstat']:.0f} | "
              f"{n['strace']:.0f} | {n['strace'] / n['syncstat']:.1f} |")
    print(f"\nSystem calls of the tree beyond native per durability call under syncstat, "
          f"from 40000 calls less 20000 (perf stat -e raw_syscalls:sys_enter): {sys_per:.3f}.",
          flush=True)
