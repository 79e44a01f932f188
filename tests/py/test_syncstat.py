# SPDX-License-Identifier: MIT
"""syncstat and eatmydata --stats: every durability call of the tree is
recorded, exactly as many as the kernel saw, whatever the tree does; the
report's layout, JSON schema and errors."""
import json
import os
import signal
import struct
import subprocess
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import EATMYDATA, REQUESTS, TESTS, cmdline, require, run
from helpers import FSYNC, SCHEMA, SYNCSTAT, recorded, slot, write_records

STORMS = {
    "16 threads": ["threads", "16", "20"],
    "100 children, half _exit": ["fork", "100", "2"],
    "child killed mid-run": ["kill", "40"],
    "exec chain": ["exec", "5", "3"],
}


@pytest.mark.parametrize("storm", STORMS)
def test_counts_equal_the_kernels(scratch, tmp_path, storm):
    r, data = recorded([TESTS / "storm", *STORMS[storm], scratch], tmp_path)
    kernel = r.counts["syscalls:sys_enter_fsync"]
    assert kernel > 0
    fsyncs = sum(g["count"] for g in data["groups"] if g["kind"] == "fsync")
    assert fsyncs == data["calls"], r.why()
    assert data["lost"] == 0
    if storm == "child killed mid-run":
        # SIGKILL lands anywhere: a call recorded as started may or may not
        # have entered the kernel, or the child may be between calls.
        assert data["incomplete"] <= 1, r.why()
        assert data["calls"] - data["incomplete"] <= kernel <= data["calls"], r.why()
    else:
        assert data["incomplete"] == 0 and data["calls"] == kernel, r.why()
    pids = {p["pid"] for p in data["processes"]}
    expected_pids = {"16 threads": 1, "100 children, half _exit": 100,
                     "child killed mid-run": 1, "exec chain": 1}[storm]
    assert len(pids) == expected_pids


KINDS = [
    ("fsync", ["fsync"]), ("fdatasync", ["fdatasync"]),
    ("sync_file_range", ["sync_file_range"]), ("msync", ["msync"]),
    ("syncfs", ["syncfs"]), ("syscall-fsync", ["fsync"]),
    ("syscall-sync_file_range", ["sync_file_range"]),
    ("pwritev2", ["pwritev2(RWF_DSYNC)"]), ("syscall-pwritev2", ["pwritev2(RWF_DSYNC)"]),
    ("pwritev64v2", ["pwritev2(RWF_SYNC)"]),
    ("open", ["open(O_SYNC)", "write(O_SYNC)"]), ("syscall-msync", ["msync"]),
    ("open64", ["open(O_DSYNC)", "write(O_DSYNC)"]),
    ("syscall-open", ["open(O_SYNC)", "write(O_SYNC)"]),
    ("syscall-openat", ["open(O_SYNC)", "write(O_SYNC)"]),
    ("syscall-openat2", ["open(O_SYNC)", "write(O_SYNC)"]),
    ("syscall-write", ["open(O_SYNC)", "write(O_SYNC)", "open(O_DSYNC)", "write(O_DSYNC)"]),
]
# Every request of the table recorded as the kind its row names (include/
# requests.h), made through syscall(): the kind is the call's own name.
KINDS += [(f"syscall-{r.name}", [r.name]) for r in REQUESTS
          if r.eat in ("fd_sync", "fs_sync", "all_sync", "range", "mapping")
          and f"syscall-{r.name}" not in dict(KINDS)]


@pytest.mark.parametrize("call,kinds", KINDS)
def test_every_kind_and_its_file(scratch, tmp_path, call, kinds):
    """Each kind is recorded once per request, with the file and the call
    site; what syncs is what the kernel synced (ext4 counts O_SYNC writes and
    RWF_SYNC writes among its fsyncs)."""
    events = [("syscalls:sys_enter_fsync", None), ("syscalls:sys_enter_fdatasync", None),
              ("syscalls:sys_enter_sync_file_range", "flags != 0"),
              ("syscalls:sys_enter_msync", "flags & 4"), ("syscalls:sys_enter_syncfs", None),
              ("syscalls:sys_enter_sync", None), ("ext4:ext4_sync_file_enter", None)]
    r, data = recorded([TESTS / "entry", call, scratch], tmp_path, events=events)
    assert sorted(g["kind"] for g in data["groups"]) == sorted(kinds), r.why()
    if kinds == ["sync"]:  # no file of its own
        assert [f["path"] for f in data["files"]] == ["-"], data["files"]
    else:
        assert all(f["path"].startswith(str(scratch)) for f in data["files"]), data["files"]
    assert all("entry+0x" in s["site"] for s in data["sites"]), data["sites"]
    syscalls = sum(v for k, v in r.counts.items() if k.startswith("syscalls:"))
    synced = [g for g in data["groups"] if not g["kind"].startswith("open(")]
    if kinds[-1].startswith(("pwritev2(", "write(")):
        ext4 = r.counts["ext4:ext4_sync_file_enter"]
        assert sum(g["count"] for g in synced) == ext4 == (10 if call == "syscall-write" else 1), r.why()
    else:
        assert data["calls"] == syscalls == 1, r.why()


def test_sqlite_shows_its_journal_and_database(tmp_path):
    db = tmp_path / "t.db"
    sql = "PRAGMA synchronous=FULL; CREATE TABLE t(x);" + "INSERT INTO t VALUES(1);" * 20
    r, data = recorded([require("sqlite3"), db, sql], tmp_path,
                       events=[("syscalls:sys_enter_fdatasync", None)])
    assert data["calls"] == r.counts["syscalls:sys_enter_fdatasync"] > 40
    top = [f["path"] for f in data["files"][:3]]
    assert f"{db}-journal" in top and str(db) in top, top
    assert all("libsqlite3" in s["site"] for s in data["sites"])
    assert data["groups"][0]["program"] == "sqlite3"


def test_git_shows_its_objects(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(10):
        (repo / f"f{i}").write_text(f"{i}\n")
    script = ("git init -q . && git -c core.fsync=all -c core.fsyncMethod=fsync add . && "
              "git -c core.fsync=all -c user.name=t -c user.email=t@t commit -qm m")
    r, data = recorded(["sh", "-c", script], tmp_path, cwd=repo)
    assert data["calls"] == r.counts["syscalls:sys_enter_fsync"] > 10, r.why()
    objects = [f for f in data["files"] if "/.git/objects/" in f["path"]]
    assert len(objects) >= 10, data["files"][:5]
    assert {g["program"] for g in data["groups"]} == {"git"}


@pytest.mark.postgres
@pytest.mark.root
@pytest.mark.parametrize("dropped", ["syncstat as postgres", "initdb as postgres"])
def test_initdb_shows_its_data_files(shared_lib, tmp_path, dropped):
    """Run by postgres, or by root with initdb dropping to postgres under
    setpriv: then initdb cannot open the root's private records, and records
    through the descriptor it inherited."""
    pgdata = Path("/tmp") / f"syncstat-initdb-{os.getpid()}"
    out = Path("/tmp") / f"syncstat-initdb-{os.getpid()}.json"
    as_postgres = [require("setpriv"), "--reuid=postgres", "--regid=postgres",
                   "--init-groups", "--"]
    syncstat = [shared_lib / "bin" / "syncstat", "--json", "--output", out, "--"]
    initdb = [require("initdb"), "-A", "trust", "-D", pgdata]
    try:
        cmd = (as_postgres + syncstat if dropped == "syncstat as postgres"
               else syncstat + as_postgres) + initdb
        r = run(cmd, cwd="/tmp", events=FSYNC)
        data = json.loads(out.read_text())
        assert data["calls"] > 500 and data["exit_status"] == 0 and data["lost"] == 0
        assert any(f["path"].startswith(f"{pgdata}/base/") for f in data["files"][:20])
        assert "initdb" in {g["program"] for g in data["groups"]}
        assert sum(g["count"] for g in data["groups"] if g["kind"] == "fsync") == \
            r.counts["syscalls:sys_enter_fsync"]
    finally:
        subprocess.run(["rm", "-rf", pgdata, out])


def test_eatmydata_stats_counts_without_syncing(scratch, tmp_path):
    cmd = [TESTS / "storm", "fork", "10", "3", scratch]
    native = run(cmd, events=FSYNC)
    r = run([EATMYDATA, "--stats", "--", *cmd], events=FSYNC)
    assert r.counts["syscalls:sys_enter_fsync"] == 0
    assert "30 durability calls, all eaten" in r.stderr
    assert native.counts["syscalls:sys_enter_fsync"] == 30
    assert "storm fsync: 30 calls\n" in r.stderr, r.why()


def test_the_command_keeps_its_status_and_output(tmp_path):
    r = subprocess.run([SYNCSTAT, "sh", "-c", "echo out; exit 3"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 3 and r.stdout == "out\n"
    assert r.stderr.startswith("syncstat: sh -c 'echo out; exit 3'\n  exit status 3")


@pytest.mark.parametrize("tool", [[SYNCSTAT], [SYNCSTAT, "--json"], [EATMYDATA, "--stats"]])
def test_a_command_that_never_ran_has_no_report(tmp_path, tool):
    """`syncstat nosuchcmd` said it could not run it, then printed an empty
    report of 0 calls; a command that ran and exited 127 (the control) keeps
    its report."""
    (tmp_path / "plain").write_text("not a program\n")
    for cmd, status, why in [("nosuchcmd", 127, "No such file or directory"),
                             (tmp_path / "plain", 126, "Permission denied")]:
        r = subprocess.run([*tool, cmd], capture_output=True, text=True, timeout=60)
        assert r.returncode == status, cmdline([*tool, cmd])
        assert r.stderr == f"{Path(tool[0]).name}: cannot run {cmd}: {why}\n", r.stderr
        assert r.stdout == ""
    r = subprocess.run([*tool, "sh", "-c", "exit 127"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 127, r.stderr
    assert "exit status 127" in r.stderr or '"exit_status": 127' in r.stderr, r.stderr


def test_report_of_a_killed_run(scratch, tmp_path):
    keep = tmp_path / "kept"
    proc = subprocess.Popen([SYNCSTAT, "--keep", keep, "--", TESTS / "storm", "threads",
                             "2", "100000000", scratch], start_new_session=True,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and struct.unpack_from(
            "<Q", (keep / "records").read_bytes()[:40] if (keep / "records").exists()
            else bytes(40), 24)[0] < 100:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    r = subprocess.run([SYNCSTAT, "report", keep], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "the run did not finish" in r.stderr
    assert "storm fsync:" in r.stderr
    j = subprocess.run([SYNCSTAT, "report", "--json", keep], capture_output=True,
                       text=True, timeout=60)
    data = json.loads(j.stderr)
    jsonschema.validate(data, SCHEMA)
    assert data["exit_status"] is None and data["calls"] >= 100


GOLDEN = """\
syncstat:
  the run did not finish (no exit status recorded)
  5 durability calls; the process tree spent 0.000 s in them
  eatmydata would answer them in about 1000 ns: 0.000 s saved

prog fsync: 5 calls, total 77.1 us, min 100 ns, median 1000 ns, p99 70.0 us, max 70.0 us
      value (ns)  ------------- Distribution ------------- count
              32 |                                         0
              64 |@@@@@@@@                                 1
             128 |                                         0
             256 |                                         0
             512 |@@@@@@@@@@@@@@@@                         2
            1024 |                                         0
            2048 |                                         0
            4096 |@@@@@@@@                                 1
            8192 |                                         0
           16384 |                                         0
           32768 |                                         0
           65536 |@@@@@@@@                                 1
          131072 |                                         0

Top files by time in durability calls:
       total    calls  file
     77.1 us        5  /data/f

Top call sites by time in durability calls:
       total    calls  site
     77.1 us        5  prog+0x10
"""


def test_histogram_layout_is_dtrace_quantize(tmp_path):
    write_records(tmp_path / "r", [slot(v) for v in (100, 1000, 1000, 5000, 70000)])
    r = subprocess.run([SYNCSTAT, "report", tmp_path / "r"], capture_output=True, text=True)
    assert r.returncode == 0
    assert r.stderr == GOLDEN


@pytest.mark.parametrize("damage,message", [
    ("missing", ": not a record directory (one kept with syncstat --keep): it holds no records"),
    ("short", "records: too short for a record file"),
    ("magic", "records: not an eatmydata record file (bad magic)"),
    ("kind", "records: corrupt record"),
    ("run", "run: expected \"status N\" (0 to 255) and \"wall SECONDS\""),
])
def test_bad_record_directories_are_named(tmp_path, damage, message):
    d = tmp_path / "r"
    write_records(d, [slot(5, kind=99 if damage == "kind" else 0)],
                  magic=b"NOTREC01" if damage == "magic" else b"EMDREC01")
    if damage == "missing":
        (d / "records").unlink()
    if damage == "short":
        (d / "records").write_bytes(b"EMDREC01")
    if damage == "run":
        (d / "run").write_text("garbage\n")
    r = subprocess.run([SYNCSTAT, "report", d], capture_output=True, text=True)
    assert r.returncode == 125, cmdline([SYNCSTAT, "report", d])
    # (a directory without records is named, not its missing file)
    name = f"{d}{message}" if message.startswith(":") else f"{d}/{message}"
    assert r.stderr == f"syncstat: {name}\n"


@pytest.mark.parametrize("args,message", [
    (["--bogus", "true"], "syncstat: unknown or incomplete option '--bogus'"),
    ([], "syncstat: no command given"),
    (["report"], "syncstat: usage: syncstat report"),
    (["report", "--keep", "x", "y"], "syncstat: usage: syncstat report"),
])
def test_bad_usage(args, message):
    r = subprocess.run([SYNCSTAT, *args], capture_output=True, text=True)
    assert r.returncode == 125 and r.stderr.startswith(message), r.stderr
