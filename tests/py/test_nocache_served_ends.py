# SPDX-License-Identifier: MIT
"""nocache through the supervisor, at the end of a static or Go program's
use of a file (issue 33): its close, which nocache's filter notifies, and
its exit or death by a signal (its filter's listener hangs up).  What
the program wrote (with RWF_DONTCACHE, which the kernel drops only once
written back, and not a page it read in again for the next small write),
and what the kernel read ahead of a reader that stops short, is gone once
the program is; natively all of it stays cached: at once where it closes
the file (a process of its filter kept alive meanwhile, so that no later
drop hides a missing one), and once the supervisor is done where it exits
with the file open or is killed (the run waited for whole, by a
subreaper).  A killed supervisor never keeps a program from exiting.  No durability
request is nocache's: the kernel counts the program's own, as natively."""
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from conftest import go_build, require, run
from helpers import (DURABLE, NOCACHE, SUBREAPER, cached_under, evict_all, first_line,
                     supervisor_of)


@pytest.fixture(scope="module")
def go_programs(tmp_path_factory):
    return {"fsync": go_build(tmp_path_factory, "fsync.go", "fsync-go"),
            "replace": go_build(tmp_path_factory, "replace.go", "replace-go")}


def whole(cmd, cwd, count):
    """cmd, and every process it leaves (the supervisor), run to their end
    under perf: its Run (its exit status, the command's)."""
    return run([sys.executable, "-c", SUBREAPER, count, *cmd], cwd=cwd, events=DURABLE,
               check=False)


def held(cmd):
    """cmd run by busybox's sh (static), beside a sleep of its own under the
    same filter: the filter's listener outlives cmd, and what is dropped
    when cmd ends is dropped at its close or its exit, not when every
    process of the filter is gone."""
    return [require("busybox"), "sh", "-c", 'sleep 5 > /dev/null 2>&1 & exec "$@"', "sh", *cmd]


def compare(tmp_path, cmd, names, setup=None, wait=True):
    """cmd natively, then under nocache, in directories of their own: the
    files `names` cached after each, and the runs.  `wait`: the supervisor
    too has ended (and any process cmd left), else only cmd."""
    out = []
    for tool in ([], [NOCACHE]):
        d = tmp_path / ("nocache" if tool else "native")
        d.mkdir(parents=True)
        if setup:
            setup(d)
        r = whole([*tool, *cmd], d, tmp_path / "count") if wait else \
            run([*tool, *cmd], cwd=d, events=DURABLE)
        out.append((r, {n: cached_under([str(d / n)])[0] for n in names if (d / n).exists()}))
    return out


def check(native, nocache, names):
    (n_run, n_left), (run_, left) = native, nocache
    assert all(n_left.get(n) for n in names), f"natively they stay cached: {n_left}" + n_run.why()
    assert set(left) == set(names), left
    assert not any(left.values()), f"left cached: {left}" + run_.why()
    assert run_.returncode == n_run.returncode, run_.why()
    assert run_.counts == n_run.counts, "nocache's own durability requests" + run_.why()


@pytest.mark.go
def test_go_file_synced_never_closed(tmp_path, go_programs):
    """fsync.go: 20 records each followed by f.Sync, the file never closed
    (its exit ends it: dropped once the supervisor is done); one more
    written O_SYNC and closed (dropped at its close)."""
    native, nocache = compare(tmp_path / "exit", [go_programs["fsync"], "out", "20"],
                              ["out", "out.sync"])
    check(native, nocache, ["out", "out.sync"])
    native, nocache = compare(tmp_path / "close", held([go_programs["fsync"], "out", "20"]),
                              ["out.sync"], wait=False)
    check(native, nocache, ["out.sync"])


@pytest.mark.go
@pytest.mark.root
def test_go_exits_with_its_supervisor_killed(tmp_path, tmp_path_factory):
    """A Go program with more than one thread, its supervisor killed
    (SIGKILL) after a read it served, exits with its own status: its exit
    is never a call the filter notifies, which the kernel would then answer
    ENOSYS (the runtime waited for ever)."""
    exe = go_build(tmp_path_factory, "exits.go", "exits-go")
    tag = uuid.uuid4().hex
    (tmp_path / "in").write_bytes(b"x" * 4096)
    p = subprocess.Popen([NOCACHE, exe, tmp_path / "in"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, EMD_TEST_TAG=tag, TMPDIR=str(tmp_path)))
    try:
        assert first_line(p) == "read\n"
        os.kill(supervisor_of(p, f"EMD_TEST_TAG={tag}"), signal.SIGKILL)
        time.sleep(0.2)
        p.communicate("\n", timeout=30)
        assert p.returncode == 3
    finally:
        p.kill()


@pytest.mark.go
def test_go_replace(tmp_path, go_programs):
    """replace.go: data.tmp written, synced, closed, renamed over data."""
    native, nocache = compare(tmp_path, held([go_programs["replace"], "good", "3"]), ["data"],
                              wait=False)
    check(native, nocache, ["data"])


def test_static_reader_stops_short(tmp_path):
    """busybox head (static) reads the first 300 KB of a cold 4 MiB file:
    what the kernel read ahead past them is dropped at its end."""
    def setup(d):
        (d / "big").write_bytes(b"x" * (4 << 20))
        evict_all([str(d / "big")])
    native, nocache = compare(tmp_path, held([require("busybox"), "head", "-c", "300000", "big"]),
                              ["big"], setup, wait=False)
    check(native, nocache, ["big"])


# busybox sh writes lines with its echo builtin, in its own process, to
# what its stdout is, then kills itself: no close, no exit_group.
LINES = 'i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done'


def test_static_writer_killed(tmp_path):
    """busybox sh (static) writes a file and is killed (SIGKILL): once no
    process of its filter is left, the file is found again by its path and
    dropped."""
    native, nocache = compare(tmp_path, [require("busybox"), "sh", "-c",
                                         f"exec > out; {LINES}; kill -KILL $$"], ["out"])
    assert native[0].returncode == 256 - 9, "killed by SIGKILL" + native[0].why()
    check(native, nocache, ["out"])


def test_static_writer_killed_file_moved(tmp_path):
    """The same, the file renamed away and another one put at its path
    before the kill: that one, whose I/O the supervisor did not make, is
    not dropped when the path is opened again, and stays as natively
    (cached: busybox's cat copies with sendfile, the kernel's)."""
    script = (f"exec > out; {LINES}; mv out moved; head -c 100000 /dev/zero > other; "
              "cat other > out; kill -KILL $$")
    native, nocache = compare(tmp_path, [require("busybox"), "sh", "-c", script], ["out"])
    assert native[1]["out"] and nocache[1]["out"] == native[1]["out"], \
        f"the file now at the path was dropped: {nocache[1]}" + nocache[0].why()


def test_unrelated_close_untouched(tmp_path):
    """A close of a pipe or of a file the supervisor made no call on goes
    on as it came (busybox's cat of a file it copies with sendfile, which
    stays the kernel's: doc/nocache.md)."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "f").write_text("hello\n")
    r = subprocess.run([NOCACHE, require("busybox"), "sh", "-c", "cat f | cat; exec 3< f; "
                        "exec 3<&-; echo $?"], cwd=d, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "hello\n0\n", r.stderr
