# SPDX-License-Identifier: MIT
"""What the test files share beyond conftest's fixtures: the table of entry
points, the launchers' paths, and one way each to run syncstat, nocache, the
supervisor's hostile program, a browser and crashtest and read what they
say.  Test modules import from here and from conftest, never from each
other."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

import jsonschema

from conftest import (BUILD, EATMYDATA, REQUESTS as TABLE, ROOT, SYNC_EVENTS, TESTS, cmdline,
                      require, run)

# The intercepted functions, one row each: the symbol the library exports and
# the tests/c/entry.c requests that reach it (program, call).

ENTRY_POINTS = {
    "fsync": [("entry", "fsync")],
    "fdatasync": [("entry", "fdatasync")],
    "sync": [("entry", "sync")],
    "syncfs": [("entry", "syncfs")],
    "sync_file_range": [("entry", "sync_file_range")],
    "msync": [("entry", "msync")],
    "open": [("entry", "open")],
    "open64": [("entry", "open64")],
    "openat": [("entry", "openat")],
    "openat64": [("entry", "openat64")],
    # A fortified build calls these when the flags are not a constant.
    "__open_2": [("entry-fortify", "open-nomode")],
    "__open64_2": [("entry-fortify", "open64-nomode")],
    "__openat_2": [("entry-fortify", "openat-nomode")],
    "__openat64_2": [("entry-fortify", "openat64-nomode")],
    # glibc's own open makes these, with the flags they are given.
    "mkostemp": [("entry", "mkostemp")],
    "mkostemp64": [("entry", "mkostemp64")],
    "mkostemps": [("entry", "mkostemps")],
    "mkostemps64": [("entry", "mkostemps64")],
    "open_by_handle_at": [("entry", "open_by_handle_at")],
    "pwritev2": [("entry", "pwritev2")],
    "pwritev64v2": [("entry", "pwritev64v2")],
    # Every request of the table the library eats (include/requests.h);
    # syscall-osync: two O_SYNC files opened through syscall(), written
    # through syscall() and through libc.
    # (Not io_uring's: its rings make no request through syscall() that
    # syncs by itself; test_static_programs.py runs them.)
    "syscall": [("entry", f"syscall-{r.name}") for r in TABLE
                if r.nr >= 0 and r.eat not in ("none", "uring", "ring")] + [("entry", "syscall-osync")],
    # A static program started through each exec entry point: the process
    # puts itself under the filter first (posix_spawn: the launcher stands
    # in for the program).
    **{f: [("entry", f"exec-{f}")] for f in (
        "execve", "execv", "execvp", "execvpe", "execl", "execle", "execlp", "fexecve",
        "execveat", "posix_spawn", "posix_spawnp")},
}

REQUESTS = [(sym, prog, call) for sym, rows in ENTRY_POINTS.items()
            for prog, call in rows]

# The requests that open with O_SYNC or O_DSYNC and write: syncstat records
# each open, and each write, which the kernel syncs.
SYNC_OPENS = [r for r in REQUESTS
              if "open" in r[2] or r[2] in ("syscall-osync",) or r[2].startswith("mk")]

# The calls that make a directory entry (create, rename, link) for a file
# they sync or find synced, never syncing the directory: syncstat --audit
# follows each entry, whatever the call.
NEW_ENTRIES = {
    "open": ["open"], "open64": ["open64"], "openat": ["openat"],
    "openat64": ["openat64"], "creat": ["creat"], "creat64": ["creat64"],
    "rename": ["rename"], "renameat": ["renameat"], "renameat2": ["renameat2"],
    "link": ["link"], "linkat": ["linkat"],
    **{c: [c] for c in ("fopen", "fopen64", "freopen", "freopen64", "mkstemp", "mkstemp64", "mkstemps", "mkstemps64", "mkostemp",
                        "mkostemp64", "mkostemps", "mkostemps64")},
    "syscall": [f"syscall-{c}" for c in (
        "open", "openat", "openat2", "creat", "rename", "renameat", "renameat2",
        "link", "linkat")],
}

# Wrapped only for syncstat: the writes on O_SYNC descriptors, the
# directory entries --audit follows, and creat, which cannot sync.
RECORDED_ONLY = {"write", "writev", "pwrite", "pwrite64", "pwritev", "pwritev64",
                 "rename", "renameat", "renameat2", "link", "linkat",
                 "creat", "creat64",
                 # what lets a descriptor number go, so the record forgets
                 # its file (libeatmydata/close.c)
                 "close", "close_range", "closefrom", "dup2", "dup3", "fclose", "pclose", "closedir",
                 # a stdio stream on a descriptor that syncs is named (osync.c)
                 "fdopen"}


# What the programs no preloaded library sees ask of the disk, and two of
# them (tests/c/entry.c built static, in each ELF class).
FS_SYNCS = [("ext4:ext4_sync_file_enter", None), ("ext4:ext4_sync_fs", None),
            ("ext4:ext4_writepages", None)]
STATIC = {"static": TESTS / "entry-static", "static32": TESTS / "entry32-static"}


# syncstat: its report, its record files, its audit.
SYNCSTAT = BUILD / "bin" / "syncstat"


SCHEMA = json.loads((ROOT / "doc" / "syncstat.schema.json").read_text())


FSYNC = [("syscalls:sys_enter_fsync", None)]


def recorded(cmd, tmp_path, tool=(SYNCSTAT, "--json"), events=FSYNC, **kw):
    """Run cmd under syncstat (or eatmydata --stats) and perf; the report."""
    out = tmp_path / "report.json"
    r = run([*tool, "--output", out, "--", *cmd], events=events, **kw)
    return r, report(out)


def report(path):
    """syncstat's JSON report at path, checked against its schema."""
    data = json.loads(path.read_text())
    jsonschema.validate(data, SCHEMA)
    return data


HEADER = struct.Struct("<8sIIQQQ")


# include/record.h: EMD_REC_VERSION, and struct emd_rec_slot, its struct
# emd_rec_file inside, then the thread (tid) and the program's name; the
# last 112 bytes are the site's text (80), build id, its length and address,
# which these tests leave zero (see test_syncstat_sites.py).
REC_VERSION = 5
SLOT = struct.Struct("<IIiiiiqQQ" "QQQQQII" "QQ" "i28s256s112s")


def write_records(d, slots, magic=b"EMDREC01", capacity=16, flags=0, version=REC_VERSION):
    assert SLOT.size == 512
    d.mkdir(exist_ok=True)
    data = bytearray(4096 + capacity * 512)
    HEADER.pack_into(data, 0, magic, version, 512, capacity, len(slots), flags)
    for i, s in enumerate(slots):
        SLOT.pack_into(data, 4096 + 512 * i, *s)
    (d / "records").write_bytes(bytes(data))


def slot(latency, kind=0, state=2, program=b"prog", path=b"/data/f", site=b"prog+0x10"):
    return (state, kind, 7, 1, 0, 0, 0, 0, latency, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0, 7,
            program, path, site)


def audit(cmd, tmp_path, **kw):
    out = tmp_path / "audit.json"
    r = run([SYNCSTAT, "--audit", "--json", "--output", out, "--", *cmd], **kw)
    return r, findings(out)


def findings(path):
    """The findings of syncstat --audit's JSON report at path: (pattern,
    program, example)."""
    return [(f["pattern"], f["program"], f["example"]) for f in report(path)["findings"]]


# nocache: what the page cache holds.
NOCACHE = BUILD / "bin" / "nocache"


# What nocache must never make: every durability request but the writeback
# it starts and waits for itself (sync_file_range: data I/O, no journal
# commit, no device flush).
DURABLE = [e for e in SYNC_EVENTS if e[0] != "syscalls:sys_enter_sync_file_range"]


def cached_bytes(path):
    out = subprocess.run([require("fincore"), "--bytes", "--noheadings", "--output", "RES",
                          path], capture_output=True, text=True, check=True).stdout
    return int(out.strip() or 0)


def settled(path, at_most, timeout=10):
    """Cached bytes of path once at most `at_most` (a write's pages are
    dropped as their writeback completes), or as they are at the timeout."""
    deadline = time.monotonic() + timeout
    while (n := cached_bytes(path)) > at_most and time.monotonic() < deadline:
        time.sleep(0.1)
    return n


def evicted_random(path, mib):
    """path written with mib MiB of random bytes, none of them cached."""
    path.write_bytes(os.urandom(mib << 20))
    evict(path)
    return path


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    assert cached_bytes(path) == 0


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
    assert cached_bytes(path) == os.path.getsize(path)


def files_under(d):
    return sorted(str(p) for p in Path(d).rglob("*") if p.is_file())


def cached_under(paths):
    """Bytes cached of all the files, and their size, in as few fincore runs
    as the command line allows."""
    cached = 0
    for i in range(0, len(paths), 500):
        out = subprocess.run([require("fincore"), "--bytes", "--noheadings", "--output",
                              "RES", *paths[i:i + 500]], capture_output=True, text=True,
                             check=True).stdout
        cached += sum(int(x) for x in out.split())
    return cached, sum(os.path.getsize(p) for p in paths)


# What a command's whole tree read from the disk, as the kernel counts it:
# the ru_inblock of every process of the tree once reaped.  The command runs
# under a subreaper, which also reaps the supervisor (started by a double
# fork, it leaves the tree).
SUBREAPER = """
import ctypes, os, resource, sys
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
status = 0
while True:
    try:
        p, st = os.wait()
    except ChildProcessError:
        break
    status = st if p == pid else status
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_inblock * 512))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def disk_reads(cmd, timeout=120):
    """cmd run to its end, and every process it started: (the bytes they
    read from the disk, its CompletedProcess)."""
    with tempfile.TemporaryDirectory() as d:
        count = Path(d) / "count"
        r = subprocess.run([sys.executable, "-c", SUBREAPER, count, *cmd], capture_output=True,
                           text=True, timeout=timeout)
        assert r.returncode == 0, cmdline(cmd) + r.stderr
        return int(count.read_text()), r


def evict_all(paths):
    """None of paths cached (written back first: a dirty page stays)."""
    for p in paths:
        evict(p)


def random_tree(d, count, size):
    d.mkdir(parents=True)
    for i in range(count):
        (d / f"f{i:04d}").write_bytes(os.urandom(size))
    return d


# The supervisor, against a hostile static program.
HOSTILE = TESTS / "hostile-static"


SYNCS = [("ext4:ext4_sync_file_enter", None)]


def same_as_native(args, expected, cwd=None, events=SYNCS, program=False):
    """Run hostile (or args itself: `program`) natively and eaten, under the
    filter; both must print `expected`."""
    cmd = args if program else [HOSTILE, *args]
    native = run(cmd, cwd=cwd, events=events)
    assert native.stdout == expected, native.why()
    under = run([EATMYDATA, "--seccomp=on", "--on-behalf=on", *cmd], cwd=cwd, events=events)
    assert under.stdout == expected, under.why()
    return native, under


def first_line(proc, timeout=30):
    """proc's first line of output; the process is killed if none comes
    within `timeout` seconds (then the line is empty)."""
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        return proc.stdout.readline()
    finally:
        timer.cancel()


def holds_listener(pid):
    fds = f"/proc/{pid}/fd"
    return any(os.readlink(f"{fds}/{fd}") == "anon_inode:seccomp notify" for fd in os.listdir(fds))


def supervisor_of(proc, tag, timeout=10):
    """The supervisor started for a launcher's tree: an eatmydata process
    holding a seccomp listener, with the launcher's tag in its environment
    (its starter's).  The program runs once its listener is sent, which the
    supervisor's main thread takes when it next wakes: looked for again
    until `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            try:
                if (open(f"/proc/{pid}/comm").read() == "eatmydata\n" and holds_listener(pid)
                        and tag.encode() in open(f"/proc/{pid}/environ", "rb").read().split(b"\0")):
                    return pid
            except OSError:
                pass
        if time.monotonic() > deadline:
            raise AssertionError(f"no supervisor found for {proc.pid}")
        time.sleep(0.02)


# syncstat --html pages, rendered by a real browser.
class Dom(HTMLParser):
    """The rendered DOM's elements (tag, attributes, id path) and its text."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.ids = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def count(self, tag, **attrs):
        return sum(1 for t, a in self.tags
                   if t == tag and all(a.get(k) == v for k, v in attrs.items()))

    def all_text(self):
        return "".join(self.text)


def browse(page, tmp_path, screenshot=None):
    """Chromium's rendered DOM of page, and what its console said."""
    chromium = require("chromium")
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
            f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    cmd = base + ["--dump-dom", f"file://{page}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, cmdline(cmd) + r.stderr[-2000:]
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    if screenshot:
        shot = base + ["--window-size=1100,2400", f"--screenshot={screenshot}",
                       f"file://{page}"]
        subprocess.run(shot, capture_output=True, timeout=120, check=True)
        assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return Dom(r.stdout), console


# crashtest: the launcher, the programs, the checkers, one way to run it
# and to read its report.
CRASHTEST = BUILD / "bin" / "crashtest"
CRASHY = TESTS / "crashy"
CRASH = ROOT / "tests" / "py" / "crash"
CRASHTEST_SCHEMA = ROOT / "doc" / "crashtest.schema.json"
# The interpreter itself, not a version manager's shell shim.
PYTHON = sys.executable

# The file holds the old text or the new one, and the new one once the
# program said it replaced it.
REPLACED = ('if grep -q replaced "$CRASHTEST_OUTPUT"; then grep -qx expected data; '
            'else grep -qx -e old -e expected data; fi')

SQL = ('for k in 1 2 3; do sqlite3 db "PRAGMA journal_mode=DELETE; PRAGMA synchronous=$1; '
       'BEGIN; INSERT INTO t VALUES($k, randomblob(3000)); COMMIT;" >/dev/null && echo $k; done')
# 3: the database is corrupt; 4: a transaction that returned is missing.
SQL_CHECK = ('test "$(sqlite3 db "PRAGMA integrity_check")" = ok || exit 3; '
             'for k in $(cat "$CRASHTEST_OUTPUT"); do '
             'test "$(sqlite3 db "SELECT count(*) FROM t WHERE k=$k")" = 1 || exit 4; done')


class Report(dict):
    """crashtest's JSON report, and what the tests ask of it."""

    @property
    def points(self):
        return self["points"]

    def verdicts(self):
        """(the call each point followed, its verdict), in order."""
        return [(p["after"], p["verdict"]) for p in self.points]

    def statuses(self):
        """Every checker exit status of every state."""
        return {s["check_status"] for p in self.points for s in p["states"]}

    def failed(self):
        """The states that failed, with their point's call."""
        return [(p["after"], s) for p in self.points for s in p["states"]
                if s["verdict"] == "failed"]


def crash_report(*args, env=None, timeout=300, cwd=None):
    """crashtest --json ARGS: its exit status and its whole report."""
    cmd = [CRASHTEST, "--json", *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    assert r.returncode in (0, 1, 2, 3, 4), f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    return r.returncode, Report(json.loads(r.stdout))


def git_repository(d):
    """A repository at d (made here) with one commit of three files: what
    crashtest's git tests, plain and on the kernel, start from."""
    git = require("git")
    d.mkdir()
    for cmd in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        subprocess.run([git, *cmd], cwd=d, check=True)
    for i in range(3):
        (d / f"f{i}").write_text(f"{i}\n")
    subprocess.run([git, "add", "-A"], cwd=d, check=True)
    subprocess.run([git, "commit", "-qm", "one"], cwd=d, check=True)
