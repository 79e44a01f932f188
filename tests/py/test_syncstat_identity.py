# SPDX-License-Identifier: MIT
"""syncstat's library knows a descriptor's file from its first request and
its process from its start or fork (libeatmydata/fdid.c, record.c): no
system call of its own per durability call, and still the right file after
the number changed hands by every route, and the right process after a
fork."""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import TESTS, run
from helpers import FSYNC, SYNCSTAT, recorded

# tests/c/fdreuse.c: each file, by the route that handed its number over,
# and how many fsyncs it got (after the route: the one before gets one).
ROUTES = {"a-open": 1, "b-open": 2, "c-close": 1, "d-close": 3, "e-fclose": 1, "f-fclose": 4,
          "g-closedir": 5, "h-dup2": 1, "i-dup2": 6, "j-close_range": 1, "k-close_range": 7,
          "l-syscall": 1, "m-syscall": 8, "n-unseen": 1, "o-child": 1, "p-parent": 1,
          "q-closefrom": 1, "r-closefrom": 9, "s-pclose": 10}


def test_a_reused_number_names_its_file_now(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    r, data = recorded([TESTS / "fdreuse", work], tmp_path)
    files = {f["path"]: (f["count"], f["errors"]) for f in data["files"]}
    assert {p[len(f"{work}/"):]: c for p, (c, _) in files.items() if p.startswith(f"{work}/")} \
        == ROUTES, r.why()
    # The number closed and reused where the library saw neither: the call
    # failed, and named the socket it was made on.
    sockets = [c for p, c in files.items() if p.startswith("socket:")]
    assert sockets == [(1, 1)], files
    # popen's pipe, synced (failing) before its pclose.
    assert [c for p, c in files.items() if p.startswith("pipe:")] == [(1, 1)], files
    assert data["calls"] == r.counts["syscalls:sys_enter_fsync"] == sum(ROUTES.values()) + 2


def test_a_forked_child_is_its_own_process(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    _, data = recorded([TESTS / "fdreuse", work], tmp_path)
    procs = {p["pid"]: p for p in data["processes"]}
    child = [p for p in procs.values() if p["count"] == 1]
    assert len(procs) == 2 and len(child) == 1 and child[0]["ppid"] in procs, procs


SYSCALLS = [("raw_syscalls:sys_enter", None), *FSYNC]


@pytest.mark.parametrize("kind", ["fsync", "fdatasync"])
def test_no_system_call_of_its_own_per_call(tmp_path, kind):
    """The tree's system calls beyond native grow by less than 1 per 100
    durability calls (a chunk of the record file is reserved every 256).
    On tmpfs: a run of milliseconds, which the launcher's sampling of the
    disks every 2 s does not reach."""
    extra = {}
    shm = tempfile.mkdtemp(dir="/dev/shm")
    for n in (2000, 6000):
        f = Path(shm) / f"f{n}"
        native = run([TESTS / "fsyncs", f, n, kind], events=SYSCALLS)
        ours = run([SYNCSTAT, "--output=/dev/null", "--", TESTS / "fsyncs", f, n, kind],
                   events=SYSCALLS)
        extra[n] = ours.counts["raw_syscalls:sys_enter"] - native.counts["raw_syscalls:sys_enter"]
    shutil.rmtree(shm)
    assert extra[6000] - extra[2000] < 4000 / 100, extra


def test_threads_trading_numbers_name_each_file_once(tmp_path):
    """16 threads open, sync and close 1000 files each on tmpfs, the numbers
    changing hands between them all the time: every file is named once."""
    shm = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        r, data = recorded([TESTS / "fdrace", shm, 16, 1000], tmp_path)
        files = {f["path"]: f["count"] for f in data["files"]}
    finally:
        shutil.rmtree(shm)
    assert data["calls"] == r.counts["syscalls:sys_enter_fsync"] == 16000, r.why()
    assert len(files) == 16000 and set(files.values()) == {1}, \
        [(p, n) for p, n in files.items() if n != 1][:5]


def test_a_forget_that_overtakes_a_lookup_leaves_nothing_kept():
    """tests/c/fdid.c: fdid.c with its statx stood in for, so that another
    thread's dup2 lands between a lookup's statx and its store on cue."""
    r = subprocess.run([TESTS / "fdid"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stdout + r.stderr


def test_close_wrappers_on_edge_streams_answer_as_libc(tmp_path):
    """tests/c/closeedge.c: fclose of a stream with no descriptor (fmemopen)
    leaves errno alone, and closedir(NULL) fails with EINVAL, as natively
    (the control), once the library keeps identities."""
    native = subprocess.run([TESTS / "closeedge", tmp_path / "n"], capture_output=True, text=True)
    assert native.returncode == 0 and native.stdout == "fclose 0 0\nclosedir -1 22\n", native
    r, _ = recorded([TESTS / "closeedge", tmp_path / "f"], tmp_path)
    assert r.returncode == 0 and r.stdout == native.stdout, r.why()


def test_a_vfork_child_does_not_rename_its_parent(tmp_path):
    """tests/c/vforksync.c: a vfork child syncs once before it leaves, then
    its parent 5 times.  The child is counted as its parent (a known limit),
    never the parent as the child: a process learnt at its first record,
    made by the child in memory it shares with its parent, named the
    parent's 5 after the child.  So with its thread: the child, which
    records first, learns its own number but never keeps it in its
    parent's thread, whose 5 are its own (its tid its pid)."""
    r, data = recorded([TESTS / "vforksync", tmp_path / "f"], tmp_path)
    parent = int(r.stdout.split()[1])
    procs = {p["pid"]: p["count"] for p in data["processes"]}
    assert procs == {parent: 6}, (procs, parent, r.why())
    threads = {(t["pid"], t["tid"]): t["count"] for t in data["threads"]}
    assert threads.pop((parent, parent)) == 5 and list(threads.values()) == [1], \
        (data["threads"], parent)


def test_a_sync_makes_no_system_call_of_its_own():
    """sync() names no descriptor: the library makes no statx for it (a
    statx(-1) that could only fail was made at every one).  Counted between
    a run of 5 and one of 25, so that the start-up cancels out."""
    statx = {}
    for n in (5, 25):
        cmd = [SYNCSTAT, "-o", "/dev/null", "--", sys.executable, "-c",
               f"import os\nfor _ in range({n}): os.sync()"]
        r = run(cmd, events=[("syscalls:sys_enter_statx", None), *FSYNC])
        statx[n] = r.counts["syscalls:sys_enter_statx"]
    assert statx[25] - statx[5] < 5, statx
