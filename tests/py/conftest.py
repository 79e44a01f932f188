# SPDX-License-Identifier: MIT
"""Shared fixtures: paths to the build, running commands natively and under
eatmydata, and reading the kernel's own counters of what reached the disk.

Every assertion message carries a command line that can be pasted to rerun
the failing step by hand.
"""
import atexit
import functools
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

# A suite started in the background by a shell without job control (`make
# check &`, a CI step's) inherits SIGINT and SIGQUIT ignored, one under
# nohup SIGHUP, and so would every program it runs: crashtest keeps an
# ignored signal ignored, as a shell's background job does, and the tests
# that interrupt it would test nothing, or wait for ever (SIGHUP's did).
# The programs get the default back (a handler here is reset to it at their
# exec).
for _sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, signal.default_int_handler if _sig == signal.SIGINT else
                      lambda *_: None)

ROOT = Path(__file__).resolve().parents[2]


# The markers make check-quick selects by (Makefile, QUICK): what takes long,
# what needs root beyond counting with perf (mounts, loop devices, other
# users, installing), and each language toolchain or server a test runs.
MARKERS = {
    "slow": "takes more than a few seconds",
    "root": "needs root for more than perf's counters (mounts, other users, installing)",
    "go": "builds or runs a Go program",
    "java": "runs a Java program",
    "node": "runs a Node.js program",
    "rust": "builds a Rust program",
    "postgres": "runs PostgreSQL's initdb",
    "browser": "opens a page in headless Chromium",
}
# A fixture that needs a toolchain or root marks the tests that use it.
FIXTURE_MARKERS = {"go_program": "go", "go_runner": "go", "go_replace": "go", "cgo_program": "go",
                   "go_commit": "go", "go_rw": "go",
                   "other_user": "root", "debs": "root", "loop_mount": "root",
                   "memory_cgroup": "root"}


def pytest_configure(config):
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


def pytest_collection_modifyitems(config, items):
    """Markers from fixtures; without root, the tests that need it are
    skipped, saying so (make check-quick deselects them)."""
    for item in items:
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in item.fixturenames:
                item.add_marker(marker)
        if os.geteuid() != 0 and item.get_closest_marker("root"):
            item.add_marker(pytest.mark.skip(reason="needs root"))


def reachable_by_all(path):
    """Can any user reach path (every directory on the way searchable)?"""
    return all(p.stat().st_mode & 0o001 for p in [path, *path.parents])


def public_build(build):
    """The build where every user can run it: tests run programs as other
    users (nobody, postgres), which cannot enter a checkout in a private
    directory (/root, a 0700 home).  Then the build is copied, for the
    session, into a directory of /tmp that is removed at its end."""
    if os.geteuid() != 0 or reachable_by_all(build):
        return build
    top = Path(tempfile.mkdtemp(prefix="emd-build-"))
    atexit.register(shutil.rmtree, top, ignore_errors=True)
    copy = top / build.name
    shutil.copytree(build, copy, symlinks=True,
                    ignore=shutil.ignore_patterns("obj32", "obj64", "cli", "deb*"))
    for p in [top, *top.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | 0o555 if p.is_dir() else p.stat().st_mode | 0o444)
    return copy


# Every program the tests run gets a TMPDIR of the session's own, as
# shared as /tmp (sticky, anyone writes): whatever a run leaves there (a
# supervisor's directory, a sync-on-exit notes directory) fails the session
# at its end (pytest_sessionfinish).  pytest's own directories, and the
# tests' tempfile calls, stay where they were.
tempfile.gettempdir()
SESSION_TMPDIR = Path(tempfile.mkdtemp(prefix="emd-tmpdir-"))
SESSION_TMPDIR.chmod(0o1777)
os.environ["TMPDIR"] = str(SESSION_TMPDIR)
# How long a supervisor may take to leave after its tree (it answers its
# last notification, sees the socket hang up, removes its directory).
LEAVE_TIMEOUT = 10


def litter(directory, timeout=LEAVE_TIMEOUT, prefixes=("",)):
    """What is still in directory (of the names that start with one of
    `prefixes`) once `timeout` seconds have passed, or earlier once nothing
    is."""
    deadline = time.monotonic() + timeout
    while True:
        left = sorted(p.name for p in Path(directory).iterdir() if p.name.startswith(prefixes))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


# What our tools make in TMPDIR starts with one of these (other programs the
# tests run, lintian, leave their own).
OURS = ("eatmydata", "syncstat", "nocache", "crashtest", "hirestimes", "cachestats", "cachedel")


def pytest_sessionfinish(session, exitstatus):
    left = litter(SESSION_TMPDIR, prefixes=OURS)
    shutil.rmtree(SESSION_TMPDIR, ignore_errors=True)
    if left:
        print(f"\nthe runs left in TMPDIR: {' '.join(left)}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# make check SANITIZE=1 names its own build directory.
BUILD = public_build(ROOT / os.environ.get("EATMYDATA_BUILD", "build"))
EATMYDATA = BUILD / "bin" / "eatmydata"
TESTS = BUILD / "tests"
SIGCHLD_WRAPPER = str(TESTS / "sigchld-static")
TIMEOUT = 300
# Where each ELF class's libraries are: the directories ld.so names $LIB
# (not the copy of the tree make deb builds in, BUILD/deb-src).
LIB_DIRS = sorted({p.parent.relative_to(BUILD) for p in BUILD.glob("**/libeatmydata.so")
                   if p.relative_to(BUILD).parts[0] != "deb-src"})



@dataclass(frozen=True)
class Request:
    """A row of the request table (include/requests.h), as
    tests/c/requests.c prints it."""
    name: str
    nr: int
    nr32: int
    arg: int
    arg32: int
    field: str
    bits: int
    test: str
    eat: str


def request_table():
    out = subprocess.run([TESTS / "requests"], capture_output=True, text=True, check=True).stdout
    return [Request(n, int(nr), int(nr32), int(a), int(a32), f, int(b, 16), t, e)
            for n, nr, nr32, a, a32, f, b, t, e in (line.split() for line in out.splitlines())]


REQUESTS = request_table()


def sync_event(r):
    """The syscall tracepoint that counts request r when it syncs: the
    library validates descriptors with sync_file_range(fd, 0, 0, 0), which
    does no I/O, hence the filter on the flags."""
    return (f"syscalls:sys_enter_{r.name}", f"{r.field} & {r.bits:#x}" if r.test == "bits" else None)


# What reached the disk, as the kernel saw it: the file system's own syncs,
# and every request of the table whose flags the tracepoint can see (not
# openat2's, in memory; not io_uring's or AIO's, whose submissions are
# counted by the file system's events).
SYNC_EVENTS = [("ext4:ext4_sync_file_enter", None), ("ext4:ext4_sync_fs", None)] + [
    sync_event(r) for r in REQUESTS
    if r.nr >= 0 and r.test in ("fd", "always", "bits") and r.eat not in ("uring", "aio")]


def tool(name):
    """A program from PATH or the usual per-user toolchain places."""
    extra = [str(Path.home() / ".cargo" / "bin"), "/usr/local/go/bin",
             *sorted(map(str, Path("/usr/lib/postgresql").glob("*/bin")))[-1:]]
    found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(extra))
    return found


def cmdline(cmd, env_diff=None, cwd=None):
    """A shell command line doing what cmd did with env_diff over the test's
    environment, in cwd."""
    env = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in (env_diff or {}).items())
    cd = f"cd {shlex.quote(str(cwd))} && " if cwd else ""
    return cd + (env + " " if env else "") + " ".join(shlex.quote(str(c)) for c in cmd)


@dataclass
class Run:
    cmd: list
    returncode: int
    stdout: str
    stderr: str
    counts: dict
    env: dict = None
    cwd: str = None

    @property
    def syncs(self):
        """Every durability request the kernel saw, all counters together."""
        return sum(self.counts.values())

    def why(self):
        return (f"\nrerun: {cmdline(self.cmd, self.env, self.cwd)}\nexit {self.returncode}\n"
                f"counts {self.counts}\nstderr:\n{self.stderr[-3000:]}")


@functools.cache
def perf_counts():
    """Can perf count tracepoints here (root, CAP_PERFMON or
    kernel.perf_event_paranoid=-1)?"""
    r = subprocess.run(["perf", "stat", "-e", "syscalls:sys_enter_fsync", "-e",
                        "ext4:ext4_sync_file_enter", "--", "true"], capture_output=True, timeout=60)
    return r.returncode == 0


def need_perf():
    """Skip the test where perf cannot count: it checks nothing there (CI
    runs as root, where a skip fails the run)."""
    if not perf_counts():
        if os.environ.get("CI") == "true":
            pytest.fail("perf cannot count tracepoints (run as root)")
        pytest.skip("perf cannot count tracepoints: needs root or kernel.perf_event_paranoid=-1")


def run(cmd, *, env=None, cwd=None, events=SYNC_EVENTS, check=True, input=None,
        system_wide=False, timeout=TIMEOUT):
    """Run cmd under `perf stat`, counting events over its whole tree (or,
    system_wide, on every CPU while it runs: work the kernel does for it in
    its own threads, then to be filtered to its files)."""
    need_perf()
    cmd = [str(c) for c in cmd]
    with tempfile.NamedTemporaryFile("r", prefix="perf-", suffix=".csv") as stats:
        perf = ["perf", "stat", "-x", "\x1f", "-o", stats.name] + (["-a"] if system_wide else [])
        for name, flt in events:
            perf += ["-e", name] + (["--filter", flt] if flt else [])
        # perf inherits SIGCHLD blocked, its workload unblocks it (see
        # tests/c/sigchld.c): else a quick exit's status is lost.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        try:
            proc = subprocess.run(perf + ["--", SIGCHLD_WRAPPER] + cmd, capture_output=True,
                                  text=True, env=dict(os.environ, **(env or {})), cwd=cwd,
                                  input=input, timeout=timeout)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        out, err = proc.stdout, proc.stderr
        stats = stats.read()
    counts = {}
    for line in stats.splitlines():
        fields = line.split("\x1f")
        if len(fields) > 2 and fields[2] in dict(events):
            counts[fields[2]] = int(fields[0]) if fields[0].isdigit() else 0
    changed = {k: str(v) for k, v in (env or {}).items() if os.environ.get(k) != str(v)}
    result = Run(cmd, proc.returncode, out, err, counts, changed, cwd)
    assert set(counts) == {e for e, _ in events}, "perf counted nothing" + result.why()
    if check:
        assert proc.returncode == 0, result.why()
    # The library never prints in the host program, and ld.so never
    # complains about it (a wrong ELF class, a missing file).
    assert "ld.so" not in err and "libeatmydata" not in err, result.why()
    return result


def eating(cmd):
    """cmd, under eatmydata."""
    return [EATMYDATA, "--", *cmd]


def eaten(cmd, **kw):
    return run(eating([str(c) for c in cmd]), **kw)


def run_many(cmds, *, events=SYNC_EVENTS, env=None, timeout=TIMEOUT):
    """Run each command of cmds ({key: cmd}) in turn, all under one `perf
    record` of events, and count each command's events over its own tree:
    {key: Run}, as run() gives (check them with checked()).  One perf run
    costs what a few hundred commands do; its samples carry the process
    that made them, and its fork records tell whose tree that process is
    in, however deep or detached (an exec, a forked child, a supervisor)."""
    need_perf()
    cmds = {k: [str(c) for c in cmd] for k, cmd in cmds.items()}
    keys = list(cmds)
    with tempfile.TemporaryDirectory(prefix="perf-") as d:
        # One shell runs the commands in turn, each in the foreground (an
        # asynchronous one would ignore SIGINT) from a shell that says its
        # process id and execs it; its exit status, output and errors go to
        # files of its own.
        q = shlex.quote(d)
        start = "sh -c 'echo \"$1 $$\" >>\"$0\"; shift; exec \"$@\"'"
        Path(d, "run.sh").write_text("".join(
            f"{start} {q}/pids {i} {shlex.join(cmd)} "
            f">{q}/{i}.out 2>{q}/{i}.err </dev/null; echo $? >{q}/{i}.rc\n"
            for i, cmd in enumerate(cmds.values())))
        perf = ["perf", "record", "-q", "--no-bpf-event", "-B", "-N", "-o", f"{d}/perf.data"]
        for name, flt in events:
            perf += ["-e", name] + (["--filter", flt] if flt else [])
        proc = subprocess.Popen(perf + ["--", "sh", f"{d}/run.sh"], start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, **(env or {})))
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            done = sum(1 for i in range(len(keys)) if os.path.exists(f"{d}/{i}.rc"))
            raise AssertionError(f"timed out after {timeout}s in {keys[done]!r}: "
                                 f"{cmdline(cmds[keys[done]], env)}")
        assert proc.returncode == 0, f"perf record failed:\n{err}"
        trace = subprocess.run(["perf", "script", "-i", f"{d}/perf.data", "--show-task-events",
                                "--show-lost-events", "-F", "pid,event"], capture_output=True,
                               text=True, check=True, timeout=timeout).stdout
        roots = {int(pid): keys[int(i)] for i, pid in
                 (line.split() for line in Path(f"{d}/pids").read_text().splitlines())}
        results = {}
        for i, key in enumerate(keys):
            read = lambda ext: Path(f"{d}/{i}.{ext}").read_text(errors="replace")  # noqa: E731
            changed = {k: str(v) for k, v in (env or {}).items() if os.environ.get(k) != str(v)}
            results[key] = Run(cmds[key], int(read("rc")), read("out"), read("err"),
                               {e: 0 for e, _ in events}, changed)
    # Whose tree each process is in, as the fork records come (in time
    # order, so that a process id used again is counted anew).
    owner, stray, names = {}, [], {e for e, _ in events}
    for line in trace.splitlines():
        assert "PERF_RECORD_LOST" not in line, f"perf lost samples: {line}"
        fork = re.search(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)", line)
        if fork:
            child, parent = int(fork[1]), int(fork[2])
            if child != parent:
                owner[child] = roots.get(child, owner.get(parent))
            continue
        sample = re.match(r"\s*(\d+)\s+(\S+):", line)
        if sample and sample[2] in names:
            key = owner.get(int(sample[1]))
            if key is None:
                stray.append(line)
            else:
                results[key].counts[sample[2]] += 1
    assert not stray, f"events outside every command's tree: {stray[:5]}"
    return results


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """batch(name, rows, make, **kw): for every row, the run of the command
    make(row, scratch, tmp) (a directory where anyone writes, on the file
    system the counters watch, and one for reports), all made in one perf
    run the first time a test asks for `name`: {row: (Run, tmp)}."""
    made = {}

    def get(name, rows, make, **kw):
        if name not in made:
            top = tmp_path_factory.mktemp(name)
            top.chmod(0o755)
            cmds, tmps = {}, {}
            for i, row in enumerate(rows):
                tmps[row] = top / str(i)
                (tmps[row] / "w").mkdir(parents=True)
                (tmps[row] / "w").chmod(0o777)
                cmds[row] = make(row, tmps[row] / "w", tmps[row])
            runs = run_many(cmds, **kw)
            made[name] = {row: (runs[row], tmps[row]) for row in rows}
        return made[name]
    return get


def checked(result):
    """What run() asserts of its command, for a result of run_many()."""
    assert result.returncode == 0, result.why()
    assert "ld.so" not in result.stderr and "libeatmydata" not in result.stderr, result.why()
    return result


@pytest.fixture
def scratch(tmp_path):
    """A directory on the ext4 file system the counters watch."""
    d = tmp_path / "w"
    d.mkdir()
    d.chmod(0o777)
    tmp_path.chmod(0o755)
    yield d


@pytest.fixture
def shared_lib():
    """The build, where an unprivileged user can load it."""
    if not reachable_by_all(BUILD):
        pytest.skip("the build is in a private directory and the tests do not run as root")
    yield BUILD


def require(name):
    """The path of a client program; CI installs them all, so a missing one
    fails the test rather than skipping it silently there."""
    found = tool(name)
    if not found:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed (.ci/run installs it)")
        pytest.skip(f"{name} is not installed")
    return found


# Under make check SANITIZE=1 the launchers and test programs carry ASan and
# UBSan, which neither valgrind nor a static link can host.
SANITIZED = os.environ.get("SANITIZE") == "1"
no_sanitizer = pytest.mark.skipif(SANITIZED, reason="ASan and valgrind exclude each other")


@pytest.fixture(scope="session")
def debs():
    """make deb, once a session (dpkg-buildpackage takes half a minute):
    {"package_arch": path} of what it built in BUILD/deb."""
    require("dpkg-buildpackage"), require("dh"), require("dpkg-architecture")
    r = subprocess.run(["make", "-s", "-C", str(ROOT), "deb"], capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = Path(os.environ.get("EATMYDATA_BUILD", ROOT / "build")) / "deb"
    found = {p.name.split("_")[0] + "_" + p.name.split("_")[2][:-4]: p
             for p in out.glob("*.deb")}
    assert found, "make deb built nothing"
    return found


def go_build(tmp_path_factory, src, name, cgo=False, strip=False):
    """tests/go/SRC built as NAME: static (CGO_ENABLED=0) unless cgo, which
    links it with the system's linker, dynamic; strip drops its symbols."""
    go = tool("go")
    if not go:
        pytest.fail("go is not installed (.ci/run installs it)")
    d = tmp_path_factory.mktemp(name)
    exe = d / name
    flags = ["-ldflags=" + " ".join((["-linkmode=external"] if cgo else []) +
                                    (["-s", "-w"] if strip else []))]
    subprocess.run([go, "build", *flags, "-o", exe,
                    os.path.join(os.path.dirname(__file__), "..", "go", src)],
                   check=True, timeout=600,
                   env=dict(os.environ, CGO_ENABLED="1" if cgo else "0", GOCACHE=str(d / "cache"),
                            GOPATH=str(d / "gopath"), GOFLAGS="-mod=mod"))
    return exe


@pytest.fixture(scope="session")
def go_program(tmp_path_factory):
    """tests/go/fsync.go, built once for the session: a Go program that
    fsyncs its own way."""
    go = tool("go")
    if not go:
        pytest.fail("go is not installed (.ci/run installs it)")
    d = tmp_path_factory.mktemp("go")
    exe = d / "fsync-go"
    src = os.path.join(os.path.dirname(__file__), "..", "go", "fsync.go")
    subprocess.run([go, "build", "-o", exe, src], check=True, timeout=600,
                   env=dict(os.environ, CGO_ENABLED="0", GOCACHE=str(d / "cache"),
                            GOPATH=str(d / "gopath"), GOFLAGS="-mod=mod"))
    yield exe


@pytest.fixture(scope="module")
def other_user():
    """A local user of its own, neither root nor the run's."""
    name = f"emdrec{os.getpid() % 100000}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", name],
                   check=True, timeout=60)
    yield name
    subprocess.run(["userdel", name], check=True, timeout=60)


# crashtest's starting points.
@pytest.fixture
def old(tmp_path):
    """A directory holding `data`, "old"."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "data").write_text("old\n")
    return d


@pytest.fixture
def database(tmp_path):
    """A directory holding an SQLite database `db`, table t."""
    sqlite3 = require("sqlite3")
    d = tmp_path / "db"
    d.mkdir()
    subprocess.run([sqlite3, d / "db", "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"
                    "INSERT INTO t VALUES(0, randomblob(5000));"], check=True)
    return d


@pytest.fixture
def protected_regular():
    """fs.protected_regular=1 for the test (Debian's default is 2, and it
    may be 0): the sticky-directory rule of O_CREAT, as the supervisors
    must answer it."""
    path = "/proc/sys/fs/protected_regular"
    with open(path) as f:
        old = f.read().strip()
    with open(path, "w") as f:
        f.write("1")
    yield
    with open(path, "w") as f:
        f.write(old)
