# SPDX-License-Identifier: MIT
"""syncstat follows a descriptor whose writes sync wherever it goes (issue
33): O_SYNC and O_DSYNC are the open file's, shared by every copy of the
descriptor (dup, dup2, dup3, F_DUPFD, SCM_RIGHTS), a forked child and what
it execs; F_SETFL can neither set nor clear them.  Each write through any
copy is a durability call, counted as often as the kernel synced (ext4's
own count), timed where the library made it, named untimed where the
supervisor let it go on."""
import json
import os
import sys

import pytest

from conftest import TESTS, checked, require, run
from helpers import SYNCSTAT

SYNCS = "ext4:ext4_sync_file_enter"
EVENTS = [(SYNCS, None)]

# tests/c/syncdup.c's modes: five writes through the copy each way makes
# (F_SETFL-set's never sync: the kernel ignores the flag; aio's are Linux
# AIO's, through syscall(); fdopen's a stdio stream's, which the C library
# makes itself: the supervisor sees them, the library names the file
# unobserved).
MODES = ["open", "dup", "dup2", "dup3", "dup2-over-plain", "syscall-dup3-over-plain", "F_DUPFD",
         "F_DUPFD_CLOEXEC", "syscall-dup", "syscall-F_DUPFD", "SCM_RIGHTS", "F_SETFL-clear",
         "F_SETFL-set", "fork", "exec", "fork-exec", "posix_spawn", "aio", "fdopen"]
# The library's way and the supervisor's, in each ELF class.
PROGRAMS = {"library": "syncdup", "library-32": "syncdup32", "supervisor": "syncdup-static",
            "supervisor-32": "syncdup32-static"}


def writes(report):
    """The report's writes on descriptors that sync: (count, timed)."""
    rows = [g for g in report["groups"] if g["kind"] in ("write(O_SYNC)", "write(O_DSYNC)")]
    return sum(g["count"] for g in rows), sum(g["timed"] for g in rows)


def report_of(r, tmp):
    checked(r)
    return json.loads((tmp / "report.json").read_text())


def under(cmd, tmp):
    return [SYNCSTAT, f"--json={tmp / 'report.json'}", "-o", tmp / "report.txt", "--", *cmd]


@pytest.fixture
def copies(batch):
    rows = [(p, m, how) for p in PROGRAMS.values() for m in MODES for how in ("native", "syncstat")]

    def make(row, d, tmp):
        cmd = [TESTS / row[0], row[1], d / "f"]
        return cmd if row[2] == "native" else under(cmd, tmp)
    return batch("copies", rows, make, events=EVENTS)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", PROGRAMS)
def test_every_write_through_a_copy_is_counted(copies, path, mode):
    prog = PROGRAMS[path]
    native, _ = copies[prog, mode, "native"]
    expected = 0 if mode == "F_SETFL-set" else 5
    assert checked(native).counts[SYNCS] == expected, native.why()
    r, tmp = copies[prog, mode, "syncstat"]
    report = report_of(r, tmp)
    count, timed = writes(report)
    assert r.counts[SYNCS] == expected, r.why()
    if mode == "fdopen" and path.startswith("library"):
        assert count == 0 and [u["path"] for u in report["unobserved"]] == [str(tmp / "w" / "f")], \
            f"{report['unobserved']}" + r.why()
        return
    assert count == expected, f"{mode}: {count} writes counted, the kernel synced " \
        f"{expected}" + r.why()
    # The supervisor lets the write go on to the kernel: counted, untimed;
    # so do both with an AIO submission (its completion is unseen).
    assert timed == (count if path.startswith("library") and mode != "aio" else 0), \
        f"{mode}: {timed} of {count} timed" + r.why()


@pytest.mark.parametrize("prog", ["uring-osync", "uring-osync-static"])
def test_io_uring_writes_on_a_descriptor_that_syncs(batch, prog):
    """liburing (dynamic or static: the supervisor's either way): io_uring
    writes without flags of their own on a file opened with O_DSYNC, each
    synced by the kernel, each counted at its submission."""
    runs = batch("uring", [(p, how) for p in ("uring-osync", "uring-osync-static")
                           for how in ("native", "syncstat")],
                 lambda row, d, tmp: (lambda cmd: cmd if row[1] == "native" else under(cmd, tmp))(
                     [TESTS / row[0], d / "f"]), events=EVENTS)
    native, _ = runs[prog, "native"]
    assert checked(native).counts[SYNCS] == 3, native.why()
    r, tmp = runs[prog, "syncstat"]
    count, _ = writes(report_of(r, tmp))
    assert r.counts[SYNCS] == count == 3, f"{count} counted" + r.why()


OFLAGS = {"sync": 50, "dsync": 50, "direct": 0, "direct,dsync": 50}


@pytest.mark.parametrize("oflag", OFLAGS)
def test_dd_each_oflag(batch, oflag):
    """dd opens its output with the flags, dup2s it onto its standard
    output and writes there: each write that syncs is one call."""
    dd = require("dd")
    runs = batch("dd", [(f, how) for f in OFLAGS for how in ("native", "syncstat")],
                 lambda row, d, tmp: (lambda cmd: cmd if row[1] == "native" else under(cmd, tmp))(
                     [dd, "if=/dev/zero", f"of={d}/f", "bs=4k", "count=50", f"oflag={row[0]}"]),
                 events=EVENTS)
    native, _ = runs[oflag, "native"]
    assert checked(native).counts[SYNCS] == OFLAGS[oflag], native.why()
    r, tmp = runs[oflag, "syncstat"]
    count, timed = writes(report_of(r, tmp))
    assert r.counts[SYNCS] == OFLAGS[oflag] == count == timed, f"{count} counted, {timed} " \
        "timed" + r.why()


def test_dd_execd_on_an_inherited_descriptor(batch):
    """A program started on a descriptor that syncs (Python opens it, dup2s
    it onto standard output and execs dd, which only writes there): its
    library never saw the open."""
    dd = require("dd")
    script = ("import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_DSYNC);"
              "os.dup2(fd, 1); os.close(fd); os.execv(sys.argv[2], sys.argv[2:])")
    runs = batch("dd-exec", ["native", "syncstat"],
                 lambda how, d, tmp: (lambda cmd: cmd if how == "native" else under(cmd, tmp))(
                     [sys.executable, "-c", script, d / "f", dd, "if=/dev/zero", "bs=4k",
                      "count=20"]), events=EVENTS)
    assert checked(runs["native"][0]).counts[SYNCS] == 20, runs["native"][0].why()
    r, tmp = runs["syncstat"]
    count, timed = writes(report_of(r, tmp))
    assert r.counts[SYNCS] == count == timed == 20, f"{count} counted, {timed} timed" + r.why()


@pytest.mark.parametrize("name", ["relative", "absolute", "existing"])
def test_a_served_open_is_on_its_files_device(scratch, tmp_path, name):
    """The supervisor counts an O_DSYNC open before the kernel makes it:
    the file it names (or, for one it creates, its directory) gives the
    device, and the path is whole, as the library's are; never a file on
    "an unknown device"."""
    f = scratch / "f"
    if name == "existing":
        f.write_text("old")
    r = run(under([TESTS / "syncdup-static", "open", "f" if name == "relative" else f], tmp_path),
            cwd=scratch, events=EVENTS)
    report = report_of(r, tmp_path)
    assert [(x["path"], x["count"]) for x in report["files"]] == [(str(f), 6)], report["files"]
    dev = os.stat(scratch).st_dev
    fs = {x["dev"]: x["calls"] for x in report["devices"]["file_systems"]}
    assert fs == {f"{os.major(dev)}:{os.minor(dev)}": 6}, report["devices"]
    assert report["devices"]["unknown_device"]["calls"] == 0, report["devices"]
