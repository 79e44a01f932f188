# SPDX-License-Identifier: MIT
"""crashtest's costs (make bench; alone: bench.py crashtest): what recording
the journal costs against the plain run (time, interleaved rounds; system
calls, perf), how big the journal grows, how many states a second crashtest
builds and checks, and what a crash point costs with a real checker."""
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
