# SPDX-License-Identifier: MIT
"""crashtest: a command runs once on a copy of a directory under the
library; for each crash point (a durability call, a claim) the states a
power failure could leave are built from its journal and checked.  The
programs are real (a small C program that replaces a file, the sqlite3
shell, awk, git); the crash points are checked against the kernel's own
count of the durability calls."""
import hashlib
import json
import os
import shutil
import subprocess

import pytest

from conftest import TESTS, run
from helpers import CRASHTEST, CRASHY, PYTHON, REPLACED, SQL, SQL_CHECK, Report, crash_report

STDIOSYNC = TESTS / "stdiosync"

crashtest = crash_report


def tree_hash(d):
    h = hashlib.sha256()
    for p in sorted(d.rglob("*")):
        h.update(str(p.relative_to(d)).encode() + b"\0")
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def test_points_are_the_kernels_fsyncs(old, tmp_path):
    """--each: a crash point per durability call the kernel saw in a native
    run, and the end; the original directory is untouched, while the same
    program run natively in a copy changes it."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    before = tree_hash(old)
    r = run([CRASHY, "good", "data", "expected"], cwd=native,
            events=[("syscalls:sys_enter_fsync", None)])
    assert r.counts["syscalls:sys_enter_fsync"] == 2, r.why()
    assert tree_hash(native) != before, "the native control did not change its copy"
    status, report = crashtest("--each", f"--check={REPLACED}", old, "--", CRASHY,
                               "good", "data", "expected")
    assert [p["point"] for p in report.points] == [1, 2, None], report
    assert [a for a, _ in report.verdicts()] == ["fsync(data.tmp)", "fsync(.)", "end"]
    assert tree_hash(old) == before, "crashtest changed the original directory"


def test_rename_without_fsync_loses_the_file(old):
    """No fsync: the state where nothing unsynced reached the disk has the
    old file back, although the program said it replaced it."""
    status, report = crashtest("--each", f"--check={REPLACED}", old, "--", CRASHY,
                               "bad", "data", "expected")
    assert status == 1 and report.verdicts() == [("end", "failed")], report
    failed = [s["what"] for _, s in report.failed()]
    assert "all 3 unsynced changes lost" in failed, failed


def test_directory_fsync_alone_leaves_an_empty_file(old):
    """fsync of the directory only: the rename is durable, the data is not:
    the name holds an empty file."""
    status, report = crashtest("--at=1", "--check=test -s data", old, "--", CRASHY,
                               "dironly", "data", "expected")
    assert status == 1 and report.verdicts() == [("fsync(.)", "failed")], report
    assert [s["lost"] for _, s in report.failed()] == [[{"file": "data.tmp", "changes": 1}]]


def test_fsync_rename_fsync_survives_every_point(old):
    """The careful program is ok in every state of every point; before its
    first fsync the states hold no new file or an empty one (the check can
    fail: those states are there)."""
    status, report = crashtest("--each", "--writes", f"--check={REPLACED}", old, "--",
                               CRASHY, "good", "data", "expected")
    assert status == 0 and {v for _, v in report.verdicts()} == {"ok"}, report
    assert report.points[1]["states_distinct"] == 3, report.points[1]


def sqlite_report(database, synchronous, *args):
    return crashtest("--each", *args, f"--check={SQL_CHECK}", database, "--", "sh", "-c", SQL,
                     "sql", synchronous)


def test_sqlite_extra_survives_every_point(database):
    """synchronous=EXTRA syncs the directory after deleting the journal:
    every transaction that returned is there, in every state of every
    point, the claims ("echo $k") among them (the last is the end's)."""
    status, report = sqlite_report(database, "EXTRA")
    assert len(report.points) > 10 and status == 0, report.verdicts()
    assert sum(a == "output" for a, _ in report.verdicts()) == 2, report.verdicts()


@pytest.mark.parametrize("model", ["posix", "ext4-ordered", "xfs"])
def test_sqlite_full_keeps_integrity_but_not_the_last_commit(database, model):
    """synchronous=FULL: never corrupt, but the deletion of the journal that
    commits is not durable until the directory is synced (SQLite's own
    documentation of EXTRA); on ext4 and xfs not until the journal commits:
    a crash after the program said a transaction committed brings the hot
    journal back, and the transaction is rolled back."""
    status, report = sqlite_report(database, "FULL", f"--model={model}")
    assert status == 1 and report.statuses() == {0, 4}, report.verdicts()
    assert "output" in {a for a, _ in report.failed()}, report.failed()


@pytest.mark.slow
def test_sqlite_off_loses_committed_data(database):
    status, report = sqlite_report(database, "OFF")
    assert status == 1 and 4 in report.statuses(), report.verdicts()


@pytest.mark.parametrize("args, message", [
    (["/nonexistent/dir", "true"], "cannot use /nonexistent/dir"),
    (["--at=0", ".", "true"], "--at"),
    (["--states=0", ".", "true"], "--states"),
    (["--model=ntfs", ".", "true"], "'ntfs' is not"),
    (["--bogus", ".", "true"], "unrecognized option"),
    (["--at=1", "--each", ".", "true"], "exclude"),
    (["."], "no command"),
])
def test_bad_input(args, message):
    r = subprocess.run([CRASHTEST, *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 125 and "crashtest: " in r.stderr and message in r.stderr, r


# libc's syscall() by number (x86_64): a write, a failing fsync, a rename.
BY_NUMBER = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True)\n"
             "fd = os.open('data', os.O_WRONLY); libc.syscall(1, fd, b'new', 3)\n"
             "assert libc.syscall(74, 9999) == -1 and ctypes.get_errno() == 9\n"
             "assert libc.syscall(82, b'data', b'moved') == 0")


def test_syscall_by_number_is_journaled(old, tmp_path):
    """libc's syscall() is wrapped: a write, an fsync and a rename asked by
    number are journaled as the functions of those names (the fsync fails
    as natively, EBADF, and is a crash point); the run is all seen (its copy
    matches its journal), where an unrouted rename would make it unknown."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    subprocess.run([PYTHON, "-c", BY_NUMBER], cwd=native, check=True)
    assert (native / "moved").read_text() == "new\n", "the native control changed nothing"
    status, report = crashtest("--each", "--check=grep -qx old data && test ! -e moved", old,
                               "--", PYTHON, "-c", BY_NUMBER)
    assert report.verdicts()[0] == ("fsync, failed", "failed"), report
    assert report.points[-1]["states_distinct"] > 1 and not report.points[-1]["unknown"]


def test_writes_through_a_shell_redirection_are_tracked(old):
    """dash's open (O_TRUNC) and write go through libc: the state where both
    are lost has the old contents, the others not."""
    status, report = crashtest("--check=grep -qx old data", old, "--", "sh", "-c",
                               "echo new > data")
    states = report.points[0]["states"]
    assert status == 1 and report.points[0]["unknown"] == [], report
    assert states[0]["what"] == "all 2 unsynced changes lost" and states[0]["verdict"] == "ok"
    assert {s["verdict"] for s in states[1:]} == {"failed"}, states


def test_command_not_found_and_no_leftovers(old, tmp_path):
    """127 like a shell when COMMAND is missing; the private run directories
    are removed, after a run as after a failure."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    r = subprocess.run([CRASHTEST, old, "--", "/nonexistent/program"], capture_output=True,
                       text=True, timeout=60, env=env)
    assert r.returncode == 127 and "crashtest: cannot run" in r.stderr, r
    r = subprocess.run([CRASHTEST, "--each", "--check=true", old, "--", CRASHY, "good",
                        "data", "x"], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r
    assert [line.split(" (")[0] for line in r.stdout.splitlines()
            if line.startswith(("point", "end"))] == [
        "point 1 after fsync(data.tmp)", "point 2 after fsync(.)", "end"], r.stdout
    assert not list(tmp.iterdir()), list(tmp.iterdir())


def test_written_outside_is_unknown_but_not_the_errors(old, tmp_path):
    """A regular file written outside DIR is state no crash state can
    represent: unknown.  The command's own standard error is passed on to
    crashtest's, and is no change of the directory."""
    outside = tmp_path / "outside"
    for script, verdict in [("echo oops >&2", "ok"), (f"echo x > {outside}", "unknown")]:
        cmd = [CRASHTEST, "--json", "--check=true", old, "--", "sh", "-c", script]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert Report(json.loads(r.stdout)).points[0]["verdict"] == verdict, (script, r.stdout)
        assert ("oops" in r.stderr) == (verdict == "ok"), r.stderr


STDIO = "awk 'BEGIN { print \"new\" > \"data\" }'"  # glibc's fopen, fwrite: past the preload


def test_stdio_writes_are_seen(old, tmp_path):
    """awk writes through glibc's fopen and fwrite, whose writes are
    glibc-internal: the file is held from the open, pictured as it is
    closed; a state has the old contents, another the new, none unknown.
    Native control: awk does replace the contents."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    subprocess.run(["sh", "-c", STDIO], cwd=native, check=True, timeout=60)
    assert (native / "data").read_text() == "new\n"
    status, report = crashtest("--check=grep -qx old data", old, "--", "sh", "-c", STDIO)
    point = report.points[0]
    assert status == 1 and not point["unknown"], report
    assert {s["verdict"] for s in point["states"]} == {"ok", "failed"}, point


# The new text once the program said it was written with an fsync, else the
# old or the new, or nothing (fopen "w" truncated it).
STDIO_DURABLE = ('if grep -q written "$CRASHTEST_OUTPUT"; then grep -qx new data; '
                 'else test ! -s data || grep -qx -e old -e new data; fi')


def test_stdio_fsync_keeps_what_it_synced(old, tmp_path):
    """fopen, fputs, fflush, fsync(fileno), fclose: the fsync's picture
    keeps the new contents at the crash after it and at the end (while the
    fsync runs, they may or may not be on the disk); without the fsync they
    are lost at the end (the same checker fails: it can fail)."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    r = run([STDIOSYNC, "fsync", "data", "new"], cwd=native,
            events=[("syscalls:sys_enter_fsync", None)])
    assert r.counts["syscalls:sys_enter_fsync"] == 1, r.why()
    status, report = crashtest("--each", f"--check={STDIO_DURABLE}", old, "--", STDIOSYNC,
                               "fsync", "data", "new")
    assert report.verdicts() == [("during fsync(data)", "ok"), ("fsync(data)", "ok"),
                                 ("end", "ok")], report
    status, report = crashtest("--each", f"--check={STDIO_DURABLE}", old, "--", STDIOSYNC,
                               "plain", "data", "new")
    assert status == 1 and report.verdicts() == [("end", "failed")], report


def test_mkstemp_and_mkdtemp_are_recorded(old, tmp_path):
    """glibc's mkstemp and mkdtemp create through internal calls: the file
    (written through fdopen) and the directory are recorded; a state with
    no fsync of the directory has neither; natively they stay."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    for mode, template in [("temp", "tmpXXXXXX"), ("tempdir", "dirXXXXXX")]:
        subprocess.run([STDIOSYNC, mode, template, "new"], cwd=native, check=True, timeout=60)
        status, report = crashtest("--check=test -z \"$(ls -d tmp* dir* 2>/dev/null)\"", old,
                                   "--", STDIOSYNC, mode, template, "new")
        point = report.points[0]
        assert not point["unknown"] and point["states"][0]["verdict"] == "ok", (mode, report)
        assert point["states"][0]["what"].startswith("all"), point
    assert len(list(native.glob("tmp*"))) == 1 and len(list(native.glob("dir*"))) == 1


MAPPED = ("import mmap, os; fd = os.open('data', os.O_RDWR); m = mmap.mmap(fd, 4); "
          "m[0:3] = b'new'; {flush}; print('synced', flush=True); m[0:1] = b'X'; m.close()")
# Once the program said it synced, the synced bytes (or the later ones).
MAPPED_CHECK = ('if grep -q synced "$CRASHTEST_OUTPUT"; then grep -qx -e {durable} -e Xew data; '
                'else grep -qx -e old -e new -e Xew data; fi')


@pytest.mark.parametrize("flush, durable, points", [
    ("m.flush()", "new", ["during msync", "msync", "end"]),
    ("os.fsync(fd)", "new", ["during fsync(data)", "fsync(data)", "end"]),
    ("pass", "old", ["end"])], ids=["msync", "fsync", "none"])
def test_shared_mapping_keeps_what_msync_synced(old, tmp_path, flush, durable, points):
    """Writes through a shared writable mapping: what m.flush() (msync
    MS_SYNC) or an fsync of the file made durable is in every state after
    it (while it runs, its pages in any part); the write after it is in
    some.  Native control: the mapping does write the file."""
    program = MAPPED.format(flush=flush)
    native = tmp_path / "native"
    shutil.copytree(old, native)
    subprocess.run([PYTHON, "-c", program], cwd=native, check=True, timeout=60)
    assert (native / "data").read_text() == "Xew\n"
    status, report = crashtest("--each", f"--check={MAPPED_CHECK.format(durable=durable)}",
                               old, "--", PYTHON, "-c", program)
    assert status == 0 and [a for a, _ in report.verdicts()] == points, report
    assert not [p for p in report.points if p["unknown"]], report
    assert "shared mapping" in report["unexplored"][0], report["unexplored"]


def sqlite_wal(database, synchronous):
    return crashtest("--each", f"--check={SQL_CHECK}", database, "--", "sh", "-c",
                     SQL.replace("journal_mode=DELETE", "journal_mode=WAL"), "sql", synchronous)


@pytest.mark.slow
def test_sqlite_wal_full_survives_every_point(database, tmp_path):
    """journal_mode=WAL, synchronous=FULL: SQLite maps its -shm index shared
    and writable; the mapping is accounted for, so no point is unknown, and
    every transaction that returned is there in every state.  The points are
    the kernel's fsync and fdatasync calls in a native run, and the claims."""
    native = tmp_path / "native"
    shutil.copytree(database, native)
    sql = SQL.replace("journal_mode=DELETE", "journal_mode=WAL")
    r = run(["sh", "-c", sql, "sql", "FULL"], cwd=native,
            events=[("syscalls:sys_enter_fsync", None), ("syscalls:sys_enter_fdatasync", None)])
    status, report = sqlite_wal(database, "FULL")
    syncs = [a for a, _ in report.verdicts() if a not in ("output", "end")]
    assert len(syncs) > 6 and len(syncs) == r.syncs, (report.verdicts(), r.why())
    assert status == 0, report.failed()


@pytest.mark.slow
def test_sqlite_wal_off_loses_committed_data(database):
    """synchronous=OFF never syncs: a transaction that returned is lost, and
    the state is known (no reason for unknown, though the -shm is mapped)."""
    status, report = sqlite_wal(database, "OFF")
    assert status == 1 and 4 in report.statuses(), report.verdicts()
    assert not [p for p in report.points if p["unknown"]], report


SYNCED_BY = ("import mmap, os, subprocess; fd = os.open('data', os.O_RDWR); "
             "m = mmap.mmap(fd, 4); m[0:3] = b'new'; {sync}; print('synced', flush=True); "
             "m[0:1] = b'X'; m.close()")


def test_sync_by_another_process_of_a_mapped_file_is_unknown(old):
    """sync(1), another process, makes the mapped writes durable but cannot
    picture them: unknown at its point and after, though the checker passes.
    Control: the same program's own sync() pictures the file, and then the
    synced bytes are in every state."""
    program = SYNCED_BY.format(sync="subprocess.run(['sync'], check=True)")
    status, report = crashtest("--each", "--check=true", old, "--", PYTHON, "-c", program)
    assert status == 2 and {v for _, v in report.verdicts()} == {"unknown"}, report
    program = SYNCED_BY.format(sync="os.sync()")
    status, report = crashtest("--each", f"--check={MAPPED_CHECK.format(durable='new')}", old,
                               "--", PYTHON, "-c", program)
    assert status == 0 and {v for _, v in report.verdicts()} == {"ok"}, report


def test_stdout_to_a_file_is_pictured_from_its_fsync(old, tmp_path):
    """A shell redirects standard output to a file of the copy; the program
    prints through stdio, fsyncs it, prints more: every state has what it
    synced.  Native control: both lines are in the file."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    script = f"{STDIOSYNC} stdout - new > data"
    subprocess.run(["sh", "-c", script], cwd=native, check=True, timeout=60)
    assert (native / "data").read_text() == "new\nmore\n"
    check = 'test "$CRASHTEST_STATE" != "${CRASHTEST_STATE#*unsynced}" -a ' \
            '"$CRASHTEST_POINT" = 1 || head -n 1 data | grep -qx new'
    status, report = crashtest("--each", f"--check={check}", old, "--", "sh", "-c", script)
    assert report.verdicts() == [("during fsync(data)", "ok"), ("fsync(data)", "ok"),
                                 ("end", "ok")], report


WRITEOUT_MAPPED = ("import ctypes, mmap, os; fd = os.open('data', os.O_RDWR); "
                   "m = mmap.mmap(fd, 4); m[0:3] = b'new'; "
                   "ctypes.CDLL(None).sync_file_range(fd, 0, 0, 7); m[0:1] = b'X'")


def test_ext4_writeout_of_a_mapped_file_is_unknown(old):
    """Under ext4-ordered what sync_file_range wrote back is durable at the
    next flush; a mapped file's writes were never pictured: unknown.  The
    same run under posix makes nothing durable: known (the control)."""
    status, report = crashtest("--model=ext4-ordered", "--check=true", old, "--", PYTHON,
                               "-c", WRITEOUT_MAPPED)
    assert status == 2 and report.points[0]["verdict"] == "unknown", report
    status, report = crashtest("--check=true", old, "--", PYTHON, "-c", WRITEOUT_MAPPED)
    assert status == 0 and report.points[0]["verdict"] == "ok", report


CTCALLS = TESTS / "ctcalls"
ROUTES = [line.split() for line in subprocess.run(
    [CTCALLS, "--list"], capture_output=True, text=True, check=True).stdout.splitlines()]
# What libcrashtest leaves to the kernel on purpose (include/crashtest_routes.h
# says why): what they change is found unseen, and the run is unknown.
UNROUTED = {"open_by_handle_at", "io_uring_enter", "io_uring_setup", "io_submit"}
DURABLE = {"fsync", "fdatasync", "syncfs", "sync", "msync", "pwritev2"}
# What each call of tests/c/ctcalls.c is journaled as, in the points it makes
# (before the end): its own function's doing, with its own arguments.
JOURNALED = {
    "fsync": ["fsync(data)"], "fdatasync": ["fdatasync(data)"], "syncfs": ["sync"],
    "sync": ["sync"], "msync": ["during msync", "msync"], "sync_file_range": [],
    **dict.fromkeys(["open", "openat", "openat2", "creat"], ["create new"]),
    "pwritev2": ["O_DSYNC write data [0, +3)"],
    **dict.fromkeys(["write", "writev", "pwrite64", "pwritev", "copy_file_range", "sendfile"],
                    ["write data [0, +3)"]),
    "ftruncate": ["truncate data to 1 bytes"], "truncate": ["truncate data to 1 bytes"],
    "fallocate": ["truncate data to 9000 bytes"],
    "rename": ["rename data -> moved"], "renameat": ["rename data -> moved"],
    "renameat2": ["rename data -> src"],  # RENAME_EXCHANGE
    "unlink": ["unlink data"], "unlinkat": ["unlink data"],
    "rmdir": ["mkdir d", "rmdir d"], "mkdir": ["mkdir d"], "mkdirat": ["mkdir d"],
    "link": ["link other"], "linkat": ["link other"],
    "symlink": ["symlink sym"], "symlinkat": ["symlink sym"],
    "mknod": ["mknod node"], "mknodat": ["mknod node"],
    **dict.fromkeys(["sendto", "sendmsg", "sendmmsg", "vmsplice", "splice"],
                    ["a write to a pipe or socket"]),
    # tee's pipe is filled by a splice first, itself a claim
    "tee": ["a write to a pipe or socket", "a write to a pipe or socket"],
    "bind": ["mknod sock"],
}


@pytest.mark.parametrize("name", [n for n, nr in ROUTES if n not in UNROUTED and int(nr) >= 0])
def test_every_call_routed_by_number_is_journaled(old, name):
    """Each row of the routing tables, called by number through libc's
    syscall(): journaled as the function of that name, so the run is all
    seen (not unknown), a durability call is a crash point, a send a claim.
    A row whose route is removed, or given another row's function, fails
    here."""
    (old / "src").write_text("src\n")
    status, report = crashtest("--writes", "--each", "--check=true", old, "--", CTCALLS, name)
    end, afters = report.points[-1], [a for a, _ in report.verdicts()]
    assert not end["unknown"] and status == 0, report.verdicts()
    assert afters[:-1] == JOURNALED[name], afters
    if name in DURABLE:
        assert end["durability_calls"] == 1, afters
    elif name in ("sendto", "sendmsg", "sendmmsg", "vmsplice", "splice", "tee"):
        assert "a write to a pipe or socket" in afters, afters
    elif name != "sync_file_range":
        assert end["changes"] >= 1, afters
