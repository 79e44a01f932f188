#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make demo: a SQLite workload with synchronous=FULL, natively, under
eatmydata, and under eatmydata --sync-on-exit, with what the kernel saw."""

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EATMYDATA = Path(__file__).resolve().parents[1] / "build" / "bin" / "eatmydata"
WORKLOAD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=DELETE"); db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
for i in range(500):
    db.execute("INSERT INTO t(v) VALUES (?)", (f"row {i}",))  # one transaction each
print(db.execute("SELECT count(*) FROM t").fetchone()[0], end="")
"""
EVENTS = ["ext4:ext4_sync_file_enter", "syscalls:sys_enter_fsync",
          "syscalls:sys_enter_fdatasync", "syscalls:sys_enter_syncfs"]


def perf_works():
    if not shutil.which("perf"):
        return False
    r = subprocess.run(["perf", "stat", "-e", EVENTS[0], "true"], capture_output=True)
    return r.returncode == 0


def run(label, prefix, work, counting):
    db = Path(tempfile.mkdtemp(dir=work)) / "demo.db"
    cmd = prefix + [sys.executable, "-c", WORKLOAD, str(db)]
    stats = work / "perf.csv"
    if counting:
        cmd = ["perf", "stat", "-x,", "-o", str(stats)] + \
              [a for e in EVENTS for a in ("-e", e)] + ["--"] + cmd
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    secs = time.perf_counter() - t0
    counts = {}
    if counting:
        for line in stats.read_text().splitlines():
            f = line.split(",")
            if len(f) > 2 and f[0].isdigit():
                counts[f[2].split(":")[1]] = int(f[0])
    print(f"{label:<28} {secs:7.3f} s  rows={out}  " +
          "  ".join(f"{k}={v}" for k, v in counts.items()))
    return secs, counts.get("sys_enter_fsync", 0) + counts.get("sys_enter_fdatasync", 0)


def main():
    counting = perf_works()
    work = Path(tempfile.mkdtemp(prefix="eatmydata-demo-", dir="/var/tmp"))
    try:
        print("500 SQLite transactions, journal_mode=DELETE, synchronous=FULL")
        if not counting:
            print("(perf is not available: times only, no kernel counts)")
        native, syncs = run("native", [], work, counting)
        eaten, _ = run("eatmydata", [str(EATMYDATA)], work, counting)
        run("eatmydata --sync-on-exit", [str(EATMYDATA), "--sync-on-exit"], work, counting)
        print(f"\neatmydata ran it {native / eaten:.1f}x faster here.")
        if syncs:
            print(f"The native run waited for {syncs} syncs, ~{1e6 * (native - eaten) / syncs:.0f} us "
                  f"each on this disk; where one costs 5 ms it would take ~{syncs * 0.005:.0f} s more.")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
