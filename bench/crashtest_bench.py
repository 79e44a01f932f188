# SPDX-License-Identifier: MIT
"""crashtest's costs (make bench; alone: bench.py crashtest): what recording
the journal costs against the plain run (time, interleaved rounds; system
calls, perf), how big the journal grows, how many states a second crashtest
builds and checks, and what a crash point costs with a real checker."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CRASHTEST = ROOT / "build" / "bin" / "crashtest"
TESTS = ROOT / "build" / "tests"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "9"))

SQL = ("PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL; CREATE TABLE IF NOT EXISTS t(x);"
       + "INSERT INTO t VALUES(randomblob(2000));" * 30)
SQL_CHECK = 'test "$(sqlite3 db "PRAGMA integrity_check")" = ok'
PY = ("import os\nfd = os.open('f', os.O_WRONLY | os.O_CREAT, 0o644)\n"
      "for i in range(200):\n    os.write(fd, b'x' * 512)\n    os.fdatasync(fd)\n")
PY_CHECK = "test $(($(stat -c %s f) % 512)) = 0"
GIT = ("git -c core.fsync=all add -A && git -c core.fsync=all -c user.name=b "
       "-c user.email=b@b -c gc.auto=0 commit -qm bench")
GIT_CHECK = "git fsck --no-progress >/dev/null 2>&1"

# The three-transaction SQLite case of the tests, every change a crash point.
SQL3 = ('for k in 1 2 3; do sqlite3 db "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL; '
        'BEGIN; INSERT INTO t VALUES($k, randomblob(3000)); COMMIT;" >/dev/null && echo $k; done')
SQL3_CHECK = ('test "$(sqlite3 db "PRAGMA integrity_check")" = ok || exit 3; '
              'for k in $(cat "$CRASHTEST_OUTPUT"); do '
              'test "$(sqlite3 db "SELECT count(*) FROM t WHERE k=$k")" = 1 || exit 4; done')


def nothing(d):
    """The command makes what it needs."""


def git_repo(d):
    subprocess.run(["git", "init", "-q", d], check=True)
    for i in range(100):
        (d / f"f{i}").write_text(f"{i}\n" * 50)


def database(d):
    subprocess.run(["sqlite3", d / "db", "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"],
                   check=True)


# name, setup of the directory, command run in it, its checker
WORKLOADS = [
    ("sqlite: 30 inserts, synchronous=FULL", nothing, ["sqlite3", "db", SQL], SQL_CHECK),
    ("python: 200 x write+fdatasync", nothing, [sys.executable, "-c", PY], PY_CHECK),
    ("git: add+commit 100 files, core.fsync=all", git_repo, ["sh", "-c", GIT], GIT_CHECK),
    # The same calls from a dynamic and a static program: the library's
    # journal against the seccomp supervisor's (seccomp/crash.c).
    ("C, dynamic: 200 x write+fdatasync (library)", nothing,
     [TESTS / "fsyncs", "f", "200", "fdatasync"], "test -f f"),
    ("C, static: the same (supervisor)", nothing,
     [TESTS / "fsyncs-static", "f", "200", "fdatasync"], "test -f f"),
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
    if r.returncode not in (0, 1, 2, 3):
        sys.exit(f"bench: crashtest failed: {r.stderr[-2000:]}")
    return time.perf_counter() - t0, json.loads(r.stdout)


def syscalls(top, setup, cmd, under):
    """System calls of the command alone (perf inside crashtest counts only
    its child), natively or under the library."""
    d = fresh(top, setup)
    handle, name = tempfile.mkstemp(dir=top)
    os.close(handle)
    out = Path(name)
    perf = ["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-o", str(out), "--", *cmd]
    if under:
        if subprocess.run([CRASHTEST, d, "--", *perf], capture_output=True).returncode > 3:
            sys.exit("bench: crashtest failed to count system calls")
    else:
        subprocess.run(perf, cwd=d, capture_output=True, check=True)
    return next(int(l.split(",")[0]) for l in out.read_text().splitlines()
                if l.split(",")[0].isdigit())


def journal_kib(top, setup, cmd):
    """The journal the run left: crashtest removes it, so the command copies
    it out as it ends."""
    d = fresh(top, setup)
    keep = Path(tempfile.mkdtemp(dir=top)) / "journal"
    script = '"$@"; cp "$CRASHTEST_RUN/journal" "$0"'
    subprocess.run([CRASHTEST, d, "--", "sh", "-c", script, str(keep), *cmd],
                   capture_output=True)
    return keep.stat().st_size / 1024


def row(top, name, setup, cmd, check):
    ratios, plains = [], []
    for _ in range(ROUNDS):
        p = plain(top, setup, cmd)
        c, _ = crashtest(top, setup, cmd)
        ratios.append(c / p)
        plains.append(p)
    base = statistics.median(plains)
    trivial, report = crashtest(top, setup, cmd, "--each", "--states=16", "--check=true")
    checked, real = crashtest(top, setup, cmd, "--each", "--states=16", f"--check={check}")
    n = len(real["points"])
    print(f"| {name} | {base:.3f} | {statistics.median(ratios):.2f} | "
          f"{journal_kib(top, setup, cmd):.0f} | {n - 1} | {report['totals']['checked']} | "
          f"{report['totals']['checked'] / trivial:.0f} | {checked / n:.3f} | "
          f"{checked / n / base:.1f} | {syscalls(top, setup, cmd, False)} | "
          f"{syscalls(top, setup, cmd, True)} |", flush=True)


def crashtest_bench(top):
    print(f"\ncrashtest: the run under the library (recording the journal, the copies, the "
          f"comparison) against the plain run, median of per-round ratios over {ROUNDS} "
          "interleaved rounds; the journal; --each with at most 16 states a point, checked "
          "by `true` (states a second) and by the workload's checker (a point's cost); "
          "system calls of the command alone (perf):\n")
    print("| workload | plain s | recorded / plain | journal KiB | points | states checked | "
          "states/s | per point s, checker | per point / plain | system calls plain | "
          "under the library |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, setup, cmd, check in WORKLOADS:
        row(top, name, setup, cmd, check)
    seconds, report = crashtest(top, database, ["sh", "-c", SQL3, "sql"], "--each", "--writes",
                                "--states=100000", f"--check={SQL3_CHECK}")
    t = report["totals"]
    print(f"\nsqlite, 3 transactions, synchronous=FULL, --each --writes, every state the "
          f"posix model allows: {t['points']} points, {t['states']} states, {t['distinct']} "
          f"distinct, {t['checked']} checked, {seconds:.1f} s")
    scale_bench(top)


# ---- at scale: workers, shards, etcd's first start ---------------------------

BENCH = ROOT / "bench"
# 30 syncs, each a point: a checker-bound run when the checker takes time.
THIRTY = "for i in $(seq 30); do echo $i > f$i; sync; done"


def timed(cmd, **kw):
    t0 = time.perf_counter()
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode not in (0, 1, 2, 3):
        sys.exit(f"bench: {cmd[:3]} failed: {r.stderr[-2000:]}")
    return time.perf_counter() - t0, r


def load():
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def workers_row(top, jobs, rounds):
    """-jN against -j1 on a checker-bound run (the checker sleeps 0.25 s),
    interleaved; the median of per-round ratios."""
    ratios, ones, ns = [], [], []
    for _ in range(rounds):
        t = {}
        for j in (1, jobs):
            d = fresh(top, nothing)
            t[j], _ = timed([CRASHTEST, f"-j{j}", "--each", "--check=sleep 0.25", d, "--", "sh",
                             "-c", THIRTY])
        ones.append(t[1])
        ns.append(t[jobs])
        ratios.append(t[1] / t[jobs])
    return statistics.median(ones), statistics.median(ns), statistics.median(ratios)


def shards_row(top, n):
    """The three-transaction SQLite case recorded once, checked whole, then
    in n shards one after another and merged (-j1 each: the work)."""
    d = fresh(top, database)
    bundle = Path(tempfile.mkdtemp(dir=top)) / "run.ctb"
    timed([CRASHTEST, "record", f"--bundle={bundle}", "--each", "--writes", "--seed=1",
           f"--check={SQL3_CHECK}", d, "--", "sh", "-c", SQL3, "sql"])
    whole, _ = timed([CRASHTEST, "check", "-j1", bundle])
    parts, spent = [], 0.0
    for i in range(1, n + 1):
        parts.append(bundle.parent / f"s{i}.json")
        t, _ = timed([CRASHTEST, "check", "-j1", f"--shard={i}/{n}", f"--json={parts[-1]}",
                      bundle])
        spent += t
    merge, _ = timed([CRASHTEST, "merge", bundle, *parts])
    return whole, spent, merge


def etcd_row(top, jobs):
    """etcd's first start, --each --writes, its real checker (etcd started
    on each state, the acknowledged key read back): recorded once, checked
    with -jN."""
    d = fresh(top, nothing)
    bundle = Path(tempfile.mkdtemp(dir=top)) / "etcd.ctb"
    record, _ = timed([CRASHTEST, "record", f"--bundle={bundle}", "--each", "--writes", "--seed=1",
                       f"--check=sh {BENCH / 'etcd_check.sh'}", d, "--", "sh",
                       BENCH / "etcd_first_start.sh"])
    check, r = timed([CRASHTEST, "check", f"-j{jobs}", "--json", bundle])
    return record, check, json.loads(r.stdout)["totals"]


def scale_bench(top):
    jobs = len(os.sched_getaffinity(0))
    rounds = max(3, ROUNDS // 3)
    before = load()
    one, many, ratio = workers_row(top, jobs, rounds)
    print(f"\ncrashtest at scale, {jobs} CPUs (load average {before} before, {load()} after):\n")
    print(f"- -j{jobs} against -j1, a checker that sleeps 0.25 s, 31 points, {rounds} "
          f"interleaved rounds: -j1 {one:.1f} s, -j{jobs} {many:.1f} s, {ratio:.2f}x "
          "(median of per-round ratios)")
    for n in (2, 4):
        whole, spent, merge = shards_row(top, n)
        print(f"- {n} shards one after another plus the merge against the whole bundle checked "
              f"at once (sqlite, 3 transactions, --each --writes, -j1): {spent:.1f} + "
              f"{merge:.2f} s against {whole:.1f} s, {(spent + merge) / whole:.2f}x the work")
    if os.environ.get("BENCH_ETCD", "1") != "0" and shutil.which("etcd"):
        record, check, t = etcd_row(top, jobs)
        print(f"- etcd's first start, --each --writes, etcd started on each state: "
              f"{t['points']} points, {t['states']} states, {t['distinct']} distinct, "
              f"{t['checked']} checked ({t['failed']} failed, {t['unknown']} unknown); recorded "
              f"in {record:.1f} s, checked with -j{jobs} in {check:.0f} s "
              f"(load average {load()} after)")
