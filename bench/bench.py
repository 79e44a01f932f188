#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench: what eatmydata costs and saves, on real workloads, and what
nocache costs on a large copy, on reading a cold tree and on written data.

Each workload runs natively, under eatmydata, under the floor (a do-nothing
preload: the least any interposer can cost), with the application's own
durability knob off, and under Debian's libeatmydata when installed.  Runs
are interleaved (A B C ... A B C ...) and each figure is the median of
per-round ratios, since wall time here drifts by 10% between identical runs.
The deterministic costs follow: system calls per eaten call beyond the
floor's (perf), and instructions per open+close pair (callgrind).
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from crashtest_bench import crashtest_bench, scale_bench
from library_bench import library_per_call
from musl_bench import musl_bench
from nocache_reads_bench import nocache_read_bench
from policies_bench import policies_bench

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
LIB_DIRS = sorted({p.parent.relative_to(BUILD) for p in BUILD.glob("**/libeatmydata.so")})
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "9"))
DEBIAN_LIB = Path("/usr/lib/x86_64-linux-gnu/libeatmydata.so")


def tool(name):
    extra = sorted(map(str, Path("/usr/lib/postgresql").glob("*/bin")))[-1:]
    return shutil.which(name) or shutil.which(name, path=":".join(extra))


class Libs:
    """The libraries, copied where the postgres user can load them."""

    def __init__(self, top):
        self.dir = top / "libs"
        for d in LIB_DIRS:
            shutil.copytree(BUILD / d, self.dir / d)
        shutil.copytree(BUILD / "bin", self.dir / "bin")
        shutil.copy(BUILD / "bench" / "libfloor.so", self.dir / "libfloor.so")
        for p in [top, *top.rglob("*")]:
            p.chmod(0o755)
        self.ours = f"{self.dir}/$LIB/libeatmydata.so"
        self.floor = str(self.dir / "libfloor.so")

    def modes(self):
        m = {"native": None, "eatmydata": self.ours, "floor": self.floor, "knob": None}
        if DEBIAN_LIB.exists():
            m["debian"] = str(DEBIAN_LIB)
        return m


# A workload: setup(dir) makes what one run needs, untimed; cmd(dir, knob)
# is the command timed.  user: run as this user (initdb refuses root).
def no_setup(d):
    """The command makes what it needs itself."""


def sqlite_cmd(d, knob):
    sync = "OFF" if knob else "FULL"
    sql = (f"PRAGMA journal_mode=DELETE; PRAGMA synchronous={sync}; CREATE TABLE t(x);"
           + "INSERT INTO t VALUES(randomblob(200));" * 300)
    return [tool("sqlite3"), d / "db", sql]


def git_setup(d):
    subprocess.run(["git", "init", "-q", d], check=True)
    for i in range(300):
        (d / f"f{i}").write_text(f"file {i}\n" * 20)
        # Old files: none is "racily clean" (written in the index's second),
        # which git would read again, a varying number of times.
        os.utime(d / f"f{i}", (1e9, 1e9))


def git_cmd(d, knob):
    level = "none" if knob else "all"
    # Fixed dates and no automatic gc keep the system call count repeatable.
    cfg = (f"-c core.fsync={level} -c core.fsyncMethod=fsync -c user.name=b "
           "-c user.email=b@b -c gc.auto=0 -c maintenance.auto=false")
    date = "GIT_AUTHOR_DATE=@1700000000 GIT_COMMITTER_DATE=@1700000000"
    return ["sh", "-c", f"cd {d} && git {cfg} add -A && {date} git {cfg} commit -qm bench"]


PY_LOOP = """
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(1000):
    os.write(fd, b"x" * 512)
    if sys.argv[2] == "sync":
        os.fdatasync(fd)
"""


def python_cmd(d, knob):
    return [sys.executable, "-c", PY_LOOP, d / "f", "nosync" if knob else "sync"]


def initdb_cmd(d, knob):
    return [tool("initdb"), "-A", "trust", "-U", "postgres", "-D", d / "data"] + (
        ["--no-sync"] if knob else [])


def make_deb(top):
    pkg = top / "pkg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        "Package: emd-bench\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: b <b@b>\nDescription: eatmydata benchmark package\n")
    for i in range(1000):
        sub = pkg / "usr" / "share" / "emd-bench" / f"d{i // 100}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i}").write_text(f"{i}\n" * 200)
    deb = top / "emd-bench.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", pkg, deb], check=True,
                   capture_output=True)
    return deb


def dpkg_setup(d):
    admin = d / "root" / "var" / "lib" / "dpkg"
    for sub in ["info", "updates", "triggers"]:
        (admin / sub).mkdir(parents=True)
    (admin / "status").write_text("")
    (admin / "available").write_text("")


def dpkg_cmd_for(deb):
    def cmd(d, knob):
        return (["dpkg", f"--root={d / 'root'}", "--force-not-root", "--force-script-chrootless",
                 "--force-depends"] + (["--force-unsafe-io"] if knob else []) + ["-i", deb])
    return cmd


def run_one(workload, top, preload, knob, counter=None, wrapper=()):
    """Set up, then time one run; returns seconds (or perf's output)."""
    name, setup, cmd, user = workload
    d = Path(tempfile.mkdtemp(dir=top))
    d.chmod(0o777)
    setup(d)
    argv = [str(c) for c in cmd(d, knob)]
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    prefix = list(wrapper) + ["env"] + ([f"LD_PRELOAD={preload}"] if preload else [])
    if user:
        prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--"] + prefix
    if counter:
        events = [a for name, flt in counter
                  for a in ["-e", name] + (["--filter", flt] if flt else [])]
        prefix = ["perf", "stat", "-x,"] + events + ["--"] + prefix
    t0 = time.perf_counter()
    r = subprocess.run(prefix + argv, capture_output=True, text=True, env=env, cwd=d)
    elapsed = time.perf_counter() - t0
    shutil.rmtree(d, ignore_errors=True)
    if r.returncode != 0:
        sys.exit(f"bench: {name} failed: {' '.join(prefix + argv)}\n{r.stderr[-2000:]}")
    if counter:
        return sum(int(l.split(",")[0]) for l in r.stderr.splitlines()
                   if l and l.split(",")[0].isdigit())
    return elapsed


def time_workload(workload, top, modes):
    times = {m: [] for m in modes}
    order = list(modes)
    for _ in range(ROUNDS):
        random.shuffle(order)
        for m in order:
            times[m].append(run_one(workload, top, modes[m], m == "knob"))
    return times


def ratio(times, a, b):
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def syscall_cost(workload, top, libs):
    """System calls beyond the floor's, per durability call eaten."""
    eaten_events = [("syscalls:sys_enter_fsync", None), ("syscalls:sys_enter_fdatasync", None),
                    ("syscalls:sys_enter_syncfs", None), ("syscalls:sys_enter_msync", "flags & 4"),
                    ("syscalls:sys_enter_sync_file_range", "flags != 0")]
    every = [("raw_syscalls:sys_enter", None)]
    calls = run_one(workload, top, None, False, eaten_events)
    ours = statistics.median(run_one(workload, top, libs.ours, False, every) for _ in range(3))
    floor = statistics.median(run_one(workload, top, libs.floor, False, every) for _ in range(3))
    return calls, (ours - floor) / calls if calls else float("nan")


def instructions_per_open(preload, launcher=()):
    """Instructions per open+close pair, from a 200k and a 0 iteration run;
    under `launcher` (syncstat, eatmydata --stats: the library then keeps
    what each descriptor is) with its own preload."""
    exe, target = BUILD / "bench" / "openclose", BUILD / "bench" / "target"
    target.write_text("x")
    counts = []
    for n in (0, 200000):
        env = dict(os.environ, **({"LD_PRELOAD": preload} if preload else {}))
        r = subprocess.run([*launcher, "valgrind", "--tool=callgrind",
                            "--callgrind-out-file=/dev/null", exe, target, str(n)],
                           capture_output=True, text=True, env=env)
        counts += [int(l.split()[-1]) for l in r.stderr.splitlines() if "Collected" in l]
    return (counts[1] - counts[0]) / 200000


def open_close_rows():
    """The instructions table: the preloads, and the library where it
    records (the bookkeeping of each descriptor's file is paid there
    only)."""
    print("\nUser-space instructions per open+close pair beyond native, 200k iterations "
          "(valgrind --tool=callgrind):\n")
    native = instructions_per_open(None)
    print(f"| preload | extra instructions per pair |\n|---|---:|\n| (native: {native:.0f} a pair) | |")
    rows = [("eatmydata", f"{BUILD}/$LIB/libeatmydata.so", ()),
            ("floor", str(BUILD / "bench" / "libfloor.so"), ()),
            ("debian", str(DEBIAN_LIB) if DEBIAN_LIB.exists() else None, ()),
            ("eatmydata --stats (records: keeps each descriptor's file)", None,
             (BUILD / "bin" / "eatmydata", "--stats")),
            ("syncstat (records: the same)", None,
             (BUILD / "bin" / "syncstat", "--output=/dev/null", "--"))]
    for name, lib, launcher in rows:
        if lib or launcher:
            extra = instructions_per_open(lib, tuple(map(str, launcher))) - native
            print(f"| {name} | {extra:.1f} |", flush=True)


def per_run(cmds, runs, raw=False):
    """Median wall time of each command in ms, the commands interleaved,
    in a new random order each round (raw: every round's times, in s)."""
    t = {k: [] for k in cmds}
    for _ in range(runs):
        for k in random.sample(list(cmds), len(cmds)):
            t0 = time.perf_counter()
            subprocess.run(cmds[k], check=True, stdout=subprocess.DEVNULL)
            t[k].append(time.perf_counter() - t0)
    return t if raw else {k: statistics.median(v) * 1000 for k, v in t.items()}


def tree_counts(cmd, runs=5):
    """System calls and new tasks (processes and threads) of a run and
    everything it starts, medians over a few runs (perf stat)."""
    calls, tasks = [], []
    for _ in range(runs):
        with tempfile.NamedTemporaryFile("r") as out:
            subprocess.run(["perf", "stat", "-x,", "-o", out.name, "-e", "raw_syscalls:sys_enter",
                            "-e", "task:task_newtask", "--", *map(str, cmd)], check=True,
                           stdout=subprocess.DEVNULL)
            counts = {l.split(",")[2]: int(l.split(",")[0]) for l in out.read().splitlines()
                      if len(l.split(",")) > 2 and l.split(",")[0].isdigit()}
        calls.append(counts["raw_syscalls:sys_enter"])
        tasks.append(counts["task:task_newtask"])
    return statistics.median(calls), statistics.median(tasks)


def launcher_commands():
    """The launcher's rows, each (name, command, the row it is compared
    with): `true` found in PATH and /bin/true, Debian's and ours."""
    emd = str(BUILD / "bin" / "eatmydata")
    debian = shutil.which("eatmydata") == "/usr/bin/eatmydata"
    rows = [("`/bin/true`", ["/bin/true"], None)]
    for prog in ["true", "/bin/true"]:
        theirs = f"Debian's `eatmydata {prog}`"
        if debian:
            rows.append((theirs, ["/usr/bin/eatmydata", prog], None))
        rows.append((f"`eatmydata {prog}` (the default)", [emd, prog], theirs if debian else None))
    rows.append(("`eatmydata --seccomp=off /bin/true`", [emd, "--seccomp=off", "/bin/true"],
                 "Debian's `eatmydata /bin/true`" if debian else None))
    return rows


def launcher_rows(runs=400):
    """The launcher's own cost on a command that needs no filter, against
    Debian's (a shell script), in one interleaved run: the median of the
    per-round ratios; and the first static program's, which starts the
    supervisor."""
    emd = str(BUILD / "bin" / "eatmydata")
    static = [str(BUILD / "bench" / "syscalls"), "getppid", "1"]
    rows = launcher_commands()
    firsts = {"a static program": static,
              "`eatmydata --seccomp=off` a static program": [emd, "--seccomp=off", *static],
              "`eatmydata` a static program (starts the supervisor)": [emd, *static]}
    t = per_run({**{k: c for k, c, _ in rows}, **firsts}, runs, raw=True)
    ms = {k: statistics.median(v) * 1000 for k, v in t.items()}
    print(f"\nThe launcher, {runs} runs of each, interleaved; medians; the ratio to Debian's "
          "launcher is the median of the per-round ratios; system calls and new tasks of the "
          "whole run (perf stat -e raw_syscalls:sys_enter -e task:task_newtask, median of 5):\n")
    print("| command | per run ms | beyond `/bin/true` ms | / Debian's, same command | "
          "system calls | new tasks |\n|---|---:|---:|---:|---:|---:|")
    for k, cmd, theirs in rows:
        calls, tasks = tree_counts(cmd)
        vs = f"{ratio(t, k, theirs):.3f}" if theirs else "-"
        print(f"| {k} | {ms[k]:.2f} | {ms[k] - ms['`/bin/true`']:.2f} | {vs} | {calls:.0f} | "
              f"{tasks:.0f} |", flush=True)
    print("\nThe first static program of a tree, which starts the supervisor (same run):\n")
    print("| command | per run ms | beyond the program alone ms | system calls | new tasks |\n"
          "|---|---:|---:|---:|---:|")
    for k in firsts:
        calls, tasks = tree_counts(firsts[k])
        print(f"| {k} | {ms[k]:.2f} | {ms[k] - ms['a static program']:.2f} | {calls:.0f} | "
              f"{tasks:.0f} |", flush=True)
    library_start_rows(runs)


def start_instructions(preload):
    """User-space instructions of /bin/true's whole run (callgrind): the
    loader's, the library's constructor, the program's."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    if preload:
        env["LD_PRELOAD"] = preload
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        "/bin/true"], capture_output=True, text=True, env=env)
    return next(int(l.split()[-1]) for l in r.stderr.splitlines() if "Collected" in l)


def library_start_rows(runs):
    """What each process of a tree pays for the library loaded into it:
    /bin/true with it preloaded, ours and Debian's, interleaved."""
    base = dict(os.environ)
    base.pop("LD_PRELOAD", None)
    libs = {"none": None, "ours": f"{BUILD}/$LIB/libeatmydata.so"}
    if DEBIAN_LIB.exists():
        libs["debian"] = str(DEBIAN_LIB)
    t = {k: [] for k in libs}
    for _ in range(runs):
        for k in random.sample(list(libs), len(libs)):
            env = dict(base, **({"LD_PRELOAD": libs[k]} if libs[k] else {}))
            t0 = time.perf_counter()
            subprocess.run(["/bin/true"], check=True, env=env)
            t[k].append(time.perf_counter() - t0)
    print(f"\nEach process of the tree: /bin/true with the library preloaded, {runs} runs "
          "interleaved; user-space instructions of the whole run (valgrind --tool=callgrind):\n")
    print("| preload | per run ms | beyond none ms | / Debian's | instructions |\n"
          "|---|---:|---:|---:|---:|")
    for k, lib in libs.items():
        ms = statistics.median(t[k]) * 1000
        vs = f"{ratio(t, k, 'debian'):.3f}" if "debian" in libs else "-"
        print(f"| {k} | {ms:.3f} | {ms - statistics.median(t['none']) * 1000:.3f} | {vs} | "
              f"{start_instructions(lib)} |", flush=True)


def syncstat_bench(top, libs, workloads):
    """syncstat's cost on the fsync-heavy workloads, and strace's."""
    wrappers = {"native": (),
                "syncstat": (f"{libs.dir}/bin/syncstat", "--output=/dev/null", "--"),
                "audit": (f"{libs.dir}/bin/syncstat", "--audit", "--output=/dev/null", "--"),
                "strace": ("strace", "-f", "-w", "-c", "-o", "/dev/null")}
    print(f"\nsyncstat: median of per-round ratios over {ROUNDS} interleaved rounds; "
          "overhead = time added to the native run:\n")
    print("| workload | native s | syncstat / native | syncstat --audit / native | "
          "strace -f -w -c / native | strace overhead / syncstat overhead |\n"
          "|---|---:|---:|---:|---:|---:|")
    for w in workloads:
        t = {m: [] for m in wrappers}
        for _ in range(ROUNDS):
            for m in random.sample(list(wrappers), len(wrappers)):
                t[m].append(run_one(w, top, None, False, wrapper=wrappers[m]))
        native = statistics.median(t["native"])
        ours = statistics.median(t["syncstat"]) - native
        theirs = statistics.median(t["strace"]) - native
        times = f"{theirs / ours:.0f}" if ours > 0 else "> 100 (syncstat's is in the noise)"
        print(f"| {w[0]} | {native:.3f} | {ratio(t, 'syncstat', 'native'):.3f} | "
              f"{ratio(t, 'audit', 'native'):.3f} | {ratio(t, 'strace', 'native'):.3f} | "
              f"{times} |", flush=True)


def default_vs_off(top, libs, workloads):
    """The default (a supervisor for the tree, a filter only where a program
    needs one) against --seccomp=off: wall time and system calls."""
    emd = f"{libs.dir}/bin/eatmydata"
    wrappers = {"off": (emd, "--seccomp=off", "--"), "default": (emd, "--")}
    loop = ("sh: 1000 x exec of /bin/true (each exec's ELF check)", no_setup,
            lambda d, knob: ["sh", "-c", "i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done"],
            None)
    print(f"\nThe launcher's default against --seccomp=off: median of per-round ratios over "
          f"{ROUNDS} interleaved rounds; system calls of the whole tree, supervisor included "
          "(perf stat -e raw_syscalls:sys_enter, median of 3):\n")
    print("| workload | off s | default s | default / off | off syscalls | default syscalls |\n"
          "|---|---:|---:|---:|---:|---:|")
    every = [("raw_syscalls:sys_enter", None)]
    for w in workloads + [loop]:
        t = {m: [] for m in wrappers}
        for _ in range(ROUNDS):
            for m in random.sample(list(wrappers), 2):
                t[m].append(run_one(w, top, None, False, wrapper=wrappers[m]))
        calls = {m: statistics.median(run_one(w, top, None, False, every, wrapper=wrappers[m])
                                      for _ in range(3)) for m in wrappers}
        print(f"| {w[0]} | {statistics.median(t['off']):.3f} | "
              f"{statistics.median(t['default']):.3f} | {ratio(t, 'default', 'off'):.3f} | "
              f"{calls['off']:.0f} | {calls['default']:.0f} |", flush=True)


def seccomp_bench(top):
    """The filter: a Go program's fsync loop eaten, and the cost on a tree
    that makes a million cheap system calls."""
    go = shutil.which("go") or shutil.which("go", path="/usr/local/go/bin")
    exe = top / "fsync-go"
    subprocess.run([go, "build", "-o", exe, ROOT / "tests" / "go" / "fsync.go"], check=True,
                   env=dict(os.environ, CGO_ENABLED="0", GOCACHE=str(top / "gocache")))
    emd = str(BUILD / "bin" / "eatmydata")
    cases = {
        "go: 1000 x write+fsync (eaten through the filter)": {
            "native": [exe, top / "g", "1000"], "eatmydata": [emd, exe, top / "g", "1000"]},
    }
    (top / "page").write_bytes(b"x" * 4096)
    for what, args in [("getppid", []), ("pread of 4 KiB", [top / "page"])]:
        call = what.split()[0]
        cases[f"static: 1,000,000 x {what} (filter off / on)"] = {
            "native": [emd, "--seccomp=off", BUILD / "bench" / "syscalls", call, "1000000", *args],
            "eatmydata": [emd, "--seccomp=on", BUILD / "bench" / "syscalls", call, "1000000", *args]}
        cases[f"static: 1,000,000 x {what} (no filter / a one-instruction filter)"] = {
            "native": [BUILD / "bench" / "syscalls", call, "1000000", *args],
            "eatmydata": ["env", "ALLOW=1", BUILD / "bench" / "syscalls", call, "1000000", *args]}
    print(f"\nThe seccomp filter: median of per-round ratios over {ROUNDS} interleaved rounds:\n")
    print("| workload | first s | second s | second / first |\n|---|---:|---:|---:|")
    for name, modes in cases.items():
        t = {m: [] for m in modes}
        for _ in range(ROUNDS):
            for m in random.sample(list(modes), 2):
                t0 = time.perf_counter()
                subprocess.run([str(c) for c in modes[m]], check=True, capture_output=True)
                t[m].append(time.perf_counter() - t0)
        print(f"| {name} | {statistics.median(t['native']):.3f} | "
              f"{statistics.median(t['eatmydata']):.3f} | "
              f"{ratio(t, 'eatmydata', 'native'):.3f} |", flush=True)


def tree_cpu_ms(cmd, runs=3):
    """CPU time of a run and everything it starts (perf stat -e task-clock),
    in ms, median of a few runs: what a per-call cost is when other work
    shares the machine and wall time waits for it."""
    ms = []
    for _ in range(runs):
        with tempfile.NamedTemporaryFile("r") as out:
            subprocess.run(["perf", "stat", "-x,", "-o", out.name, "-e", "task-clock", "--",
                            *map(str, cmd)], check=True, stdout=subprocess.DEVNULL)
            ms += [float(l.split(",")[0]) for l in out.read().splitlines()
                   if "task-clock" in l and l.split(",")[0].replace(".", "", 1).isdigit()]
    return statistics.median(ms)


def roundtrip_us(top, calls=100000, runs=5):
    """The bare round trip of a seccomp user notification here (bench/roundtrip.c,
    a supervisor that answers getppid and does nothing else), with and
    without SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: the floor of any supervisor's
    per-call cost, in us (median of runs)."""
    exe = top / "roundtrip"
    subprocess.run(["cc", "-O2", "-o", exe, ROOT / "bench" / "roundtrip.c"], check=True)
    return {sync: statistics.median(float(subprocess.run([exe, str(calls), str(sync)], check=True,
                                                         capture_output=True, text=True).stdout)
                                    for _ in range(runs))
            for sync in (1, 0)}


def supervised_syncstat_bench(top, calls=100000, runs=5):
    """syncstat on programs the library cannot reach (a static C program, a
    Go one), timed by the supervisor: the cost per durability call beyond
    native, against strace -f -c's, in wall time and in the CPU time of the
    whole tree (supervisor included); the system calls of the whole tree per
    durability call; the floor (a bare notification's round trip); then what
    the filter costs a static program's other calls (getppid), which the
    supervisor never sees, and its writes, which the supervisor asks about."""
    go = shutil.which("go") or shutil.which("go", path="/usr/local/go/bin")
    gexe = top / "fsync-go"
    subprocess.run([go, "build", "-o", gexe, ROOT / "tests" / "go" / "fsync.go"], check=True,
                   env=dict(os.environ, CGO_ENABLED="0", GOCACHE=str(top / "gocache")))
    shm = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/dev/shm"))
    syncstat = [str(BUILD / "bin" / "syncstat"), "--output=/dev/null", "--"]
    strace = ["strace", "-f", "-c", "-o", "/dev/null"]
    progs = {f"static C: {calls} x write+fdatasync on tmpfs":
             [BUILD / "bench" / "fsyncs-static", shm / "f", calls, "fdatasync"],
             f"Go: {calls} x write+fsync on tmpfs": [gexe, shm / "g", calls]}
    print(f"\nsyncstat through the supervisor (programs the library cannot reach), "
          f"median of {runs} interleaved runs; per call = (time - native) / calls, wall and "
          "CPU of the whole tree (perf stat -e task-clock, median of 3); system "
          "calls of the whole tree beyond native, per call (perf stat -e raw_syscalls:sys_enter):\n")
    print("| program | native s | syncstat s | strace -f -c s | syncstat per call us | "
          "strace per call us | strace / syncstat | CPU per call us: syncstat, strace | "
          "CPU strace / syncstat | syscalls per call |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for name, cmd in progs.items():
            cmd = [str(c) for c in cmd]
            t = per_run({"native": cmd, "syncstat": syncstat + cmd, "strace": strace + cmd}, runs)
            n = {m: tree_counts(c, 3)[0] for m, c in [("native", cmd), ("syncstat", syncstat + cmd)]}
            cpu = {m: tree_cpu_ms(c) for m, c in [("native", cmd), ("syncstat", syncstat + cmd),
                                                   ("strace", strace + cmd)]}
            ours, theirs = (t["syncstat"] - t["native"]) / calls, (t["strace"] - t["native"]) / calls
            cours = (cpu["syncstat"] - cpu["native"]) / calls
            ctheirs = (cpu["strace"] - cpu["native"]) / calls
            print(f"| {name} | {t['native'] / 1000:.3f} | {t['syncstat'] / 1000:.3f} | "
                  f"{t['strace'] / 1000:.3f} | {ours * 1000:.2f} | {theirs * 1000:.2f} | "
                  f"{theirs / ours:.1f} | {cours * 1000:.1f}, {ctheirs * 1000:.1f} | "
                  f"{ctheirs / cours:.1f} | {(n['syncstat'] - n['native']) / calls:.2f} |",
                  flush=True)
        rt = roundtrip_us(top)
        print(f"\nThe floor: a bare user notification's round trip (bench/roundtrip.c, a "
              f"supervisor that only answers) takes {rt[1]:.2f} us with "
              f"SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, {rt[0]:.2f} us without.")
        served_requests(shm, syncstat, calls, runs, rt[1])
        recorded_latency(shm, calls)
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def served_requests(shm, syncstat, calls, runs, rt):
    """Each kind of request a static program's syncstat run sends the
    supervisor, alone, against the bare round trip rt (us): per request
    beyond native, wall (median of runs, interleaved) and CPU of the whole
    tree, and its system calls."""
    (shm / "s").write_bytes(b"x")
    prog = str(BUILD / "bench" / "syscalls")
    rows = [(f"{calls:,} x getppid (filtered, never sent)", [prog, "getppid", str(calls)]),
            (f"{calls:,} x 4 KiB write to /dev/null (sent: does its file sync?)",
             [prog, "write", str(calls), "/dev/null"]),
            (f"{calls:,} x fdatasync on tmpfs (made here, timed, its file and site recorded)",
             [prog, "fdatasync", str(calls), str(shm / "s")])]
    print(f"\nEach request alone, beyond native, per request: wall (median of {runs} "
          "interleaved runs), CPU of the whole tree (task-clock, median of 3) and its system "
          f"calls (perf), against the bare round trip ({rt:.2f} us):\n")
    print("| program | wall us | / round trip | CPU us | system calls |\n|---|---:|---:|---:|---:|")
    for name, cmd in rows:
        t = per_run({"native": cmd, "syncstat": syncstat + cmd}, runs)
        us = (t["syncstat"] - t["native"]) / calls * 1000
        cpu = (tree_cpu_ms(syncstat + cmd) - tree_cpu_ms(cmd)) / calls * 1000
        n = (tree_counts(syncstat + cmd, 3)[0] - tree_counts(cmd, 3)[0]) / calls
        print(f"| {name} | {us:.2f} | {us / rt:.2f} | {cpu:.2f} | {n:.2f} |", flush=True)


def recorded_latency(shm, calls):
    """What syncstat records of a tmpfs fdatasync: median latency, made by
    the library (a dynamic program) and by the supervisor (a static one)."""
    out = {}
    for how, prog in [("library", "fsyncs"), ("supervisor", "fsyncs-static")]:
        report = shm / f"{how}.json"
        subprocess.run([str(BUILD / "bin" / "syncstat"), f"--json={report}", "-o", "/dev/null",
                        "--", str(BUILD / "bench" / prog), str(shm / how), str(calls),
                        "fdatasync"], check=True, stdout=subprocess.DEVNULL)
        groups = json.loads(report.read_text())["groups"]
        out[how] = next(g["median_ns"] for g in groups if g["kind"] == "fdatasync")
    print(f"\nThe latency syncstat records of a tmpfs fdatasync, median of {calls:,}: "
          f"{out['library']} ns made by the library, {out['supervisor']} ns made by the "
          "supervisor (its two clock reads around the call alone).")


def etcd_bench(top, puts=100, runs=3):
    """etcd (Debian's, cgo Go: under the filter) under syncstat against
    native: the wall time of 100 etcdctl puts, each waiting for its WAL's
    fdatasync."""
    import signal
    import socket
    etcd, etcdctl = tool("etcd"), tool("etcdctl")
    if not etcd or not etcdctl:
        print("\netcd: not installed (etcd-server, etcd-client), no row")
        return

    def once(wrapper):
        socks = [socket.socket() for _ in range(2)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        client, peer = (s.getsockname()[1] for s in socks)
        for s in socks:
            s.close()
        d = Path(tempfile.mkdtemp(dir=top))
        p = subprocess.Popen([*wrapper, etcd, "--name", "b", "--data-dir", d / "data",
                              "--listen-client-urls", f"http://127.0.0.1:{client}",
                              "--advertise-client-urls", f"http://127.0.0.1:{client}",
                              "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                              "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                              "--initial-cluster", f"b=http://127.0.0.1:{peer}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ctl = [etcdctl, f"--endpoints=127.0.0.1:{client}"]
        while subprocess.run([*ctl, "endpoint", "health"], capture_output=True).returncode:
            time.sleep(0.05)
        t0 = time.perf_counter()
        for i in range(puts):
            subprocess.run([*ctl, "put", f"k{i}", "v"], check=True, capture_output=True)
        elapsed = time.perf_counter() - t0
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
        shutil.rmtree(d, ignore_errors=True)
        return elapsed

    wrappers = {"native": [], "syncstat": [str(BUILD / "bin" / "syncstat"), "--output=/dev/null",
                                           "--"]}
    t = {m: [] for m in wrappers}
    for _ in range(runs):
        for m in random.sample(list(wrappers), 2):
            t[m].append(once(wrappers[m]))
    print(f"\netcd: {puts} etcdctl puts, median of {runs} interleaved runs: native "
          f"{statistics.median(t['native']):.3f} s, syncstat {statistics.median(t['syncstat']):.3f} s "
          f"({ratio(t, 'syncstat', 'native'):.3f} x)")


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def cached_mib(*paths):
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", *paths],
                         capture_output=True, text=True, check=True).stdout
    return sum(int(x) for x in out.split()) / (1 << 20)


def nocache_bench(top):
    """A 256 MiB sequential copy, its source not cached: time and what stays."""
    src, dst = top / "src", top / "dst"
    with open(src, "wb") as f:
        for _ in range(256):
            f.write(os.urandom(1 << 20))
    copies = {"cat": ["sh", "-c", f"cat {src} > {dst}"], "cp": ["cp", src, dst]}
    print("\nnocache: a 256 MiB copy whose source is not cached; median of per-round "
          f"ratios over {ROUNDS} interleaved rounds, and the MiB of source and copy "
          "left in the page cache:\n")
    print("| copy | native s | nocache s | nocache / native | cached MiB native | "
          "cached MiB nocache |\n|---|---:|---:|---:|---:|---:|")
    for name, cmd in copies.items():
        t = {"native": [], "nocache": []}
        left = {"native": 0.0, "nocache": 0.0}
        for _ in range(ROUNDS):
            for mode in random.sample(list(t), 2):
                evict(src)
                prefix = [str(BUILD / "bin" / "nocache")] if mode == "nocache" else []
                t0 = time.perf_counter()
                subprocess.run(prefix + [str(c) for c in cmd], check=True)
                t[mode].append(time.perf_counter() - t0)
                left[mode] = cached_mib(src, dst)
                os.unlink(dst)
        print(f"| {name} | {statistics.median(t['native']):.3f} | "
              f"{statistics.median(t['nocache']):.3f} | {ratio(t, 'nocache', 'native'):.3f} | "
              f"{left['native']:.0f} | {left['nocache']:.0f} |", flush=True)
    os.unlink(src)


def tree(d, count, size):
    d.mkdir(parents=True)
    for i in range(count):
        (d / f"f{i:04d}").write_bytes(os.urandom(size))
    return d


def write_workloads(src):
    """What nocache's written-data tests run: name, command writing `OUT`."""
    small = src / "small"
    small.write_bytes(b"hello")
    big = src / "big"
    big.write_bytes(os.urandom(32 << 20))
    archive = src / "a.tar"
    subprocess.run(["tar", "cf", archive, "-C", tree(src / "t", 16, 4 << 20), "."], check=True)
    files = tree(src / "files", 1000, 16 << 10)
    rtree = tree(src / "r", 200, 128 << 10)
    return [
        ("cp -r: 1000 x 16 KiB", ["cp", "-r", files, "OUT"]),
        ("cp: a 5-byte file", ["cp", small, "OUT"]),
        ("cat: 32 MiB into a file", ["sh", "-c", f'cat "{big}" > "$0"', "OUT"]),
        ("dd bs=4k: 8 MiB", ["dd", "if=/dev/zero", "of=OUT", "bs=4k", "count=2048",
                             "status=none"]),
        ("tar x: 64 MiB", ["sh", "-c", f'mkdir "$0" && tar xf "{archive}" -C "$0"', "OUT"]),
        ("rsync -a: 200 x 128 KiB", ["rsync", "-a", f"{rtree}/", "OUT"]),
    ]


def cached_in(path):
    paths = [str(p) for p in Path(path).rglob("*") if p.is_file()] if Path(path).is_dir() \
        else [str(path)]
    return sum(cached_mib(*paths[i:i + 500]) for i in range(0, len(paths), 500))


def nocache_write_bench(top):
    """Written data leaving the cache: native (which leaves it dirty and
    cached), ours (writeback started and waited for, then dropped) and
    Debian's nocache (fdatasync at close).  The sources are cached; each run
    starts with nothing dirty (sync, untimed) and writes to a new directory;
    the outputs are deleted after all rounds (ext4 is slow to create inodes
    right after deleting many)."""
    src = top / "wsrc"
    src.mkdir()
    modes = {"native": [], "nocache": [str(BUILD / "bin" / "nocache")]}
    if Path("/usr/bin/nocache").exists():
        modes["debian"] = ["/usr/bin/nocache"]
    print(f"\nnocache: written data; median of {ROUNDS} interleaved rounds, the sources "
          "cached, nothing dirty at the start; KiB of the output cached right after exit "
          "(the most of any round):\n")
    print("| workload | native s | nocache s | nocache / native | debian s | nocache / debian "
          "| cached KiB native / nocache / debian |\n|---|---:|---:|---:|---:|---:|---|")
    for name, cmd in write_workloads(src):
        t = {m: [] for m in modes}
        left = {m: 0.0 for m in modes}
        outs = top / "wout"
        outs.mkdir()
        for r in range(ROUNDS):
            for mode in random.sample(list(modes), len(modes)):
                out = outs / f"{mode}{r}"
                run_cmd = modes[mode] + [str(c).replace("OUT", str(out)) for c in cmd]
                subprocess.run(["sync"], check=True)
                t0 = time.perf_counter()
                subprocess.run(run_cmd, check=True)
                t[mode].append(time.perf_counter() - t0)
                left[mode] = max(left[mode], cached_in(out) * 1024)
        shutil.rmtree(outs)
        deb = modes.get("debian")
        print(f"| {name} | {statistics.median(t['native']):.3f} | "
              f"{statistics.median(t['nocache']):.3f} | {ratio(t, 'nocache', 'native'):.2f} | "
              + (f"{statistics.median(t['debian']):.3f} | {ratio(t, 'nocache', 'debian'):.2f} | "
                 if deb else "— | — | ")
              + f"{left['native']:.0f} / {left['nocache']:.0f} / "
              + (f"{left['debian']:.0f} |" if deb else "— |"), flush=True)
    shutil.rmtree(src)


def start_cost(runs=300):
    """nocache /bin/true beyond /bin/true, in ms, at two descriptor limits."""
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    print("\nnocache start-up beyond `true`, median over 300 runs:\n")
    print("| RLIMIT_NOFILE | extra ms |\n|---:|---:|")
    for limit in (1024, hard):
        t = {"true": [], "nocache": []}
        for _ in range(runs):
            for k, c in [("true", ["/bin/true"]), ("nocache", [str(BUILD / "bin" / "nocache"), "/bin/true"])]:
                t0 = time.perf_counter()
                subprocess.run(c, check=True, preexec_fn=lambda: resource.setrlimit(
                    resource.RLIMIT_NOFILE, (limit, hard)))
                t[k].append(time.perf_counter() - t0)
        extra = (statistics.median(t["nocache"]) - statistics.median(t["true"])) * 1000
        print(f"| {limit} | {extra:.2f} |", flush=True)


def main():
    if sys.argv[1:] == ["nocache"]:
        return nocache_only()
    if sys.argv[1:] == ["launcher"]:
        return launcher_rows()
    if sys.argv[1:] == ["crashtest"]:
        return crashtest_only()
    if sys.argv[1:] == ["crashtest-scale"]:
        return crashtest_only(scale_bench)
    if sys.argv[1:] == ["musl"]:
        return musl_bench()
    if sys.argv[1:] == ["syncstat"]:
        top = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/tmp"))
        try:
            library_per_call(BUILD / "bench" / "libfloor.so")
            supervised_syncstat_bench(top)
            policies_bench()
            return etcd_bench(top)
        finally:
            shutil.rmtree(top, ignore_errors=True)
    top = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/tmp"))
    top.chmod(0o755)
    try:
        libs = Libs(top)
        deb = make_deb(top)
        workloads = [
            ("sqlite: 300 inserts, synchronous=FULL", no_setup, sqlite_cmd, None),
            ("git: add+commit 300 files, core.fsync=all", git_setup, git_cmd, None),
            ("python: 1000 x write+fdatasync", no_setup, python_cmd, None),
            ("initdb", no_setup, initdb_cmd, "postgres"),
            ("dpkg: unpack 1000 files", dpkg_setup, dpkg_cmd_for(deb), None),
        ]
        modes = libs.modes()
        print(f"eatmydata benchmark: median of per-round ratios over {ROUNDS} interleaved rounds\n")
        head = "| workload | native s | eatmydata s | eatmydata / floor | eatmydata / native | knob / native |"
        sep = "|---|---:|---:|---:|---:|---:|"
        if "debian" in modes:
            head += " eatmydata / debian |"
            sep += "---:|"
        print(head + "\n" + sep)
        for w in workloads:
            t = time_workload(w, top, modes)
            row = (f"| {w[0]} | {statistics.median(t['native']):.3f} | "
                   f"{statistics.median(t['eatmydata']):.3f} | {ratio(t, 'eatmydata', 'floor'):.3f} | "
                   f"{ratio(t, 'eatmydata', 'native'):.3f} | {ratio(t, 'knob', 'native'):.3f} |")
            if "debian" in modes:
                row += f" {ratio(t, 'eatmydata', 'debian'):.3f} |"
            print(row, flush=True)

        print("\nSystem calls beyond the floor's, per eaten durability call "
              "(perf stat -e raw_syscalls:sys_enter):\n")
        print("| workload | durability calls eaten | extra system calls per call |\n|---|---:|---:|")
        for w in workloads:
            calls, extra = syscall_cost(w, top, libs)
            print(f"| {w[0]} | {calls} | {extra:.2f} |", flush=True)

        open_close_rows()

        launcher_rows()

        default_vs_off(top, libs, workloads)
        seccomp_bench(top)
        syncstat_bench(top, libs, [w for w in workloads if not w[0].startswith("initdb")])
        library_per_call(BUILD / "bench" / "libfloor.so")
        musl_bench()
        policies_bench()
        supervised_syncstat_bench(top)
        etcd_bench(top)
        nocache_bench(top)
        nocache_read_bench(top)
        nocache_write_bench(top)
        start_cost()
        crashtest_bench(top)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def nocache_only():
    """bench.py nocache: nocache's tables alone (BENCH_ROUNDS applies)."""
    top = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/tmp"))
    try:
        nocache_bench(top)
        nocache_read_bench(top)
        nocache_write_bench(top)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def crashtest_only(part=crashtest_bench):
    """bench.py crashtest: crashtest's table alone (BENCH_ROUNDS applies);
    crashtest-scale: its workers, shards and etcd's first start alone."""
    top = Path(tempfile.mkdtemp(prefix="emd-bench-", dir="/tmp"))
    try:
        part(top)
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
