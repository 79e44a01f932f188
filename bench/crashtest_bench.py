# SPDX-License-Identifier: MIT
"""crashtest's costs (make bench; alone: bench.py crashtest): what a crash
point costs against the plain run of the same command, what recording the
undo journal costs (time, interleaved rounds; system calls, perf), and how
big the journal grows against what the program writes."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CRASHTEST = ROOT / "build" / "bin" / "crashtest"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "9"))

SQL = ("PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL; CREATE TABLE IF NOT EXISTS t(x);"
       + "INSERT INTO t VALUES(randomblob(2000));" * 30)
PY = ("import os\nfd = os.open('f', os.O_WRONLY | os.O_CREAT, 0o644)\n"
      "for i in range(200):\n    os.write(fd, b'x' * 512)\n    os.fdatasync(fd)\n")
GIT = ("git -c core.fsync=all add -A && git -c core.fsync=all -c user.name=b "
       "-c user.email=b@b -c gc.auto=0 commit -qm bench")


def nothing(d):
    """The command makes what it needs."""


def git_repo(d):
    subprocess.run(["git", "init", "-q", d], check=True)
    for i in range(100):
        (d / f"f{i}").write_text(f"{i}\n" * 50)


# name, setup of the directory, command run in it
WORKLOADS = [
    ("sqlite: 30 inserts, synchronous=FULL", nothing, ["sqlite3", "db", SQL]),
    ("python: 200 x write+fdatasync", nothing, [sys.executable, "-c", PY]),
    ("git: add+commit 100 files, core.fsync=all", git_repo, ["sh", "-c", GIT]),
]


def fresh(top, setup):
    d = Path(tempfile.mkdtemp(dir=top))
    setup(d)
    return d


def plain(top, setup, cmd):
    """The command natively, in a fresh directory, timed."""
    d = fresh(top, setup)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=d, check=True, capture_output=True)
    return time.perf_counter() - t0


def crashtest(top, setup, cmd, *args):
    d = fresh(top, setup)
    t0 = time.perf_counter()
    r = subprocess.run([CRASHTEST, "--json", *args, d, "--", *cmd], capture_output=True,
                       text=True)
    if r.returncode not in (0, 1, 2):
        sys.exit(f"bench: crashtest failed: {r.stderr[-2000:]}")
    return time.perf_counter() - t0, json.loads(r.stdout)["points"]


def syscalls(top, setup, cmd, under):
    """System calls of the command alone (perf inside crashtest counts only
    its child), natively or under the library."""
    d = fresh(top, setup)
    handle, name = tempfile.mkstemp(dir=top)
    os.close(handle)
    out = Path(name)
    perf = ["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-o", str(out), "--", *cmd]
    if under:
        if subprocess.run([CRASHTEST, d, "--", *perf], capture_output=True).returncode > 2:
            sys.exit("bench: crashtest failed to count system calls")
    else:
        subprocess.run(perf, cwd=d, capture_output=True, check=True)
    return next(int(l.split(",")[0]) for l in out.read_text().splitlines()
                if l.split(",")[0].isdigit())


def crashtest_bench(top):
    print(f"\ncrashtest: a crash at the end (one run recording the journal, a copy, a "
          f"rollback) against the plain run, median of per-round ratios over {ROUNDS} "
          "interleaved rounds; then --each, every durability call a crash point; "
          "system calls of the command alone (perf):\n")
    print("| workload | plain s | end-only / plain | points | --each s per point | "
          "per point / plain | journal KiB | system calls plain | under the library |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, setup, cmd in WORKLOADS:
        ratios, plains = [], []
        for _ in range(ROUNDS):
            p = plain(top, setup, cmd)
            c, points = crashtest(top, setup, cmd)
            ratios.append(c / p)
            plains.append(p)
        total, each = crashtest(top, setup, cmd, "--each")
        n = len(each)
        base = statistics.median(plains)
        print(f"| {name} | {base:.3f} | {statistics.median(ratios):.2f} | {n - 1} | "
              f"{total / n:.3f} | {total / n / base:.2f} | "
              f"{points[-1]['journal_bytes'] / 1024:.0f} | {syscalls(top, setup, cmd, False)} | "
              f"{syscalls(top, setup, cmd, True)} |", flush=True)

