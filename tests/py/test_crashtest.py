# SPDX-License-Identifier: MIT
"""crashtest: a command runs on a copy of a directory, is stopped at each
durability call as a power failure would stop it, and the copy is rolled back
to what the posix model says the disk holds.  The programs are real (a small
C program that replaces a file, the sqlite3 shell); the crash points are
checked against the kernel's own count of the durability calls."""
import hashlib
import json
import os
import shutil
import subprocess

import pytest

from conftest import TESTS, require, run
from crashlib import PYTHON, CRASHTEST, CRASHY, REPLACED, SQL, SQL_CHECK, crash_points, database, old  # noqa: F401 (fixtures)

STDIOSYNC = TESTS / "stdiosync"

crashtest = crash_points


def tree_hash(d):
    h = hashlib.sha256()
    for p in sorted(d.rglob("*")):
        h.update(str(p.relative_to(d)).encode() + b"\0")
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()




def test_points_are_the_kernels_fsyncs(old, tmp_path):
    """--each crashes once per durability call the kernel saw in a native
    run, and once at the end; the original directory is untouched, while the
    same program run natively in a copy changes it."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    before = tree_hash(old)
    r = run([CRASHY, "good", "data", "expected"], cwd=native,
            events=[("syscalls:sys_enter_fsync", None)])
    assert r.counts["syscalls:sys_enter_fsync"] == 2, r.why()
    assert tree_hash(native) != before, "the native control did not change its copy"
    status, points = crashtest("--each", f"--check={REPLACED}", old, "--", CRASHY,
                               "good", "data", "expected")
    assert [p["point"] for p in points] == [1, 2, None], points
    assert [p["after"] for p in points] == ["fsync(data.tmp)", "fsync(.)", "end"], points
    assert tree_hash(old) == before, "crashtest changed the original directory"


def test_rename_without_fsync_loses_the_file(old):
    """No fsync: at the end of the run the rename and the data are lost, the
    old file is back although the program said it replaced it."""
    status, points = crashtest("--each", f"--check={REPLACED}", old, "--", CRASHY,
                               "bad", "data", "expected")
    assert status == 1 and [p["verdict"] for p in points] == ["failed"], points
    assert "renamed data.tmp -> data" in points[0]["undone"], points


def test_directory_fsync_alone_leaves_an_empty_file(old):
    """fsync of the directory only: the rename is durable, the data is not:
    the name holds an empty file."""
    status, points = crashtest("--at=1", "--check=test -s data", old, "--", CRASHY,
                               "dironly", "data", "expected")
    assert status == 1 and points[0]["verdict"] == "failed", points
    assert points[0]["rolled_back"] == ["data"] and not points[0]["undone"], points


def test_fsync_rename_fsync_survives_every_point(old):
    status, points = crashtest("--each", f"--check={REPLACED}", old, "--", CRASHY,
                               "good", "data", "expected")
    assert status == 0 and {p["verdict"] for p in points} == {"ok"}, points
    # The check can fail: the first point rolled the temporary file back.
    assert points[0]["undone"] == ["created data.tmp"], points


def sqlite_points(database, synchronous):
    return crashtest("--each", f"--check={SQL_CHECK}", database, "--", "sh", "-c", SQL,
                     "sql", synchronous)


def test_sqlite_extra_survives_every_point(database):
    """synchronous=EXTRA syncs the directory after deleting the journal: every
    transaction that returned is there, at every crash point."""
    status, points = sqlite_points(database, "EXTRA")
    assert len(points) > 10 and status == 0, points
    assert {p["verdict"] for p in points} == {"ok"}, points


def test_sqlite_full_keeps_integrity_but_not_the_last_commit(database):
    """synchronous=FULL: never corrupt, but the deletion of the journal that
    commits is not durable until the directory is synced (SQLite's own
    documentation of EXTRA): a crash brings the hot journal back and a
    transaction that returned is rolled back."""
    status, points = sqlite_points(database, "FULL")
    assert status == 1, points
    assert {p["check_status"] for p in points} == {0, 4}, points
    lost = [p for p in points if p["check_status"] == 4]
    assert all("removed db-journal" in p["undone"] for p in lost), lost


def test_sqlite_off_loses_committed_data(database):
    status, points = sqlite_points(database, "OFF")
    assert status == 1 and [p["after"] for p in points] == ["end"], points
    assert points[0]["check_status"] == 4 and "db" in points[0]["rolled_back"], points


@pytest.mark.parametrize("args, message", [
    (["/nonexistent/dir", "true"], "cannot use /nonexistent/dir"),
    (["--at=0", ".", "true"], "--at"),
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
    number are journaled and counted as the functions of those names (the
    fsync fails as natively, EBADF, and is a crash point); what a program
    does past libc entirely is unknown (test_static_and_go_programs_are_unknown)."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    subprocess.run([PYTHON, "-c", BY_NUMBER], cwd=native, check=True)
    assert (native / "moved").read_text() == "new\n", "the native control changed nothing"
    status, points = crashtest("--each", "--check=grep -qx old data && test ! -e moved", old,
                               "--", PYTHON, "-c", BY_NUMBER)
    assert status == 0 and [p["after"] for p in points] == ["fsync()", "end"], points
    assert points[-1]["undone"] == ["renamed data -> moved"], points


def test_writes_through_a_shell_redirection_are_tracked(old):
    """dash's open and write go through libc: the rollback undoes them."""
    status, points = crashtest("--check=grep -qx old data", old, "--", "sh", "-c",
                               "echo new > data")
    assert status == 0 and points[0]["rolled_back"] == ["data"], points


def test_command_not_found_and_no_leftovers(old, tmp_path):
    """127 like a shell when COMMAND is missing; the private run directories
    are removed, after a run as after a failure."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    r = subprocess.run([CRASHTEST, old, "--", "/nonexistent/program"], capture_output=True,
                       text=True, timeout=60, env=env)
    assert r.returncode == 127 and "crashtest: cannot run" in r.stderr, r
    r = subprocess.run([CRASHTEST, "--each", old, "--", CRASHY, "good", "data", "x"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r
    assert [line.split(",")[0].split(" (")[0] for line in r.stdout.splitlines()
            if not line.startswith(" ")] == ["point 1", "point 2", "end"], r.stdout
    assert not list(tmp.iterdir()), list(tmp.iterdir())


def test_written_outside_is_unknown_but_not_the_log(old, tmp_path):
    """A regular file written outside DIR is state the rollback cannot
    represent: unknown.  crashtest's own standard error, a file here, is a
    log: the command's messages to it leave the point ok."""
    outside = tmp_path / "outside"
    for script, verdict in [("echo oops >&2", "ok"), (f"echo x > {outside}", "unknown")]:
        log = tmp_path / f"log-{verdict}"
        with open(log, "w") as err:
            r = subprocess.run([CRASHTEST, "--json", "--check=true", old, "--", "sh", "-c",
                                script], stdout=subprocess.PIPE, stderr=err, text=True,
                               timeout=60)
        assert json.loads(r.stdout)["points"][0]["verdict"] == verdict, (script, r.stdout)
    assert (tmp_path / "log-ok").read_text() == "oops\n"


STDIO = "awk 'BEGIN { print \"new\" > \"data\" }'"  # glibc's fopen, fwrite: past the preload


def test_stdio_writes_are_rolled_back(old, tmp_path):
    """awk writes through glibc's fopen and fwrite, whose open and write are
    glibc-internal: the file is saved when the stream opens, and with no
    fsync the crash brings the old contents back: ok, not unknown.  Native
    control: awk does replace the contents."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    subprocess.run(["sh", "-c", STDIO], cwd=native, check=True, timeout=60)
    assert (native / "data").read_text() == "new\n"
    status, points = crashtest("--each", "--check=grep -qx old data", old, "--", "sh", "-c",
                               STDIO)
    assert status == 0 and [p["verdict"] for p in points] == ["ok"], points
    assert points[0]["rolled_back"] == ["data"] and not points[0]["unknown"], points


# The new text once the program said it was written with an fsync, else the
# old or the new.
STDIO_DURABLE = ('if grep -q written "$CRASHTEST_OUTPUT"; then grep -qx new data; '
                 'else grep -qx -e old -e new data; fi')


def test_stdio_fsync_keeps_what_it_synced(old, tmp_path):
    """fopen, fputs, fflush, fsync(fileno), fclose: the fsync's image keeps
    the new contents at the crash after it and at the end; without the fsync
    they are lost at the end (the same checker fails: it can fail)."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    r = run([STDIOSYNC, "fsync", "data", "new"], cwd=native,
            events=[("syscalls:sys_enter_fsync", None)])
    assert r.counts["syscalls:sys_enter_fsync"] == 1, r.why()
    status, points = crashtest("--each", f"--check={STDIO_DURABLE}", old, "--", STDIOSYNC,
                               "fsync", "data", "new")
    assert [p["after"] for p in points] == ["fsync(data)", "end"], points
    assert status == 0 and {p["verdict"] for p in points} == {"ok"}, points
    status, points = crashtest("--each", f"--check={STDIO_DURABLE}", old, "--", STDIOSYNC,
                               "plain", "data", "new")
    assert status == 1 and points[0]["verdict"] == "failed", points
    assert points[0]["rolled_back"] == ["data"], points


def test_mkstemp_and_mkdtemp_are_recorded(old, tmp_path):
    """glibc's mkstemp and mkdtemp create through internal calls: the file
    (written through fdopen) and the directory are recorded, and a crash with
    no fsync of the directory removes them; natively they stay."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    for mode, template in [("temp", "tmpXXXXXX"), ("tempdir", "dirXXXXXX")]:
        subprocess.run([STDIOSYNC, mode, template, "new"], cwd=native, check=True, timeout=60)
        status, points = crashtest("--check=test -z \"$(ls -d tmp* dir* 2>/dev/null)\"", old,
                                   "--", STDIOSYNC, mode, template, "new")
        assert status == 0 and points[0]["verdict"] == "ok", (mode, points)
        assert [u.split()[0] for u in points[0]["undone"]] == ["created"], (mode, points)
    assert len(list(native.glob("tmp*"))) == 1 and len(list(native.glob("dir*"))) == 1


MAPPED = ("import mmap, os; fd = os.open('data', os.O_RDWR); m = mmap.mmap(fd, 4); "
          "m[0:3] = b'new'; {flush}; m[0:1] = b'X'; m.close()")


@pytest.mark.parametrize("flush, expected", [("m.flush()", "new\n"), ("os.fsync(fd)", "new\n"),
                                             ("pass", "old\n")], ids=["msync", "fsync", "none"])
def test_shared_mapping_keeps_what_msync_synced(old, tmp_path, flush, expected):
    """Writes through a shared writable mapping: what m.flush() (msync
    MS_SYNC) or an fsync of the file made durable survives every crash after
    it, the write after it is lost; with neither all is lost.  Native control: the mapping does
    write the file."""
    program = MAPPED.format(flush=flush)
    native = tmp_path / "native"
    shutil.copytree(old, native)
    subprocess.run([PYTHON, "-c", program], cwd=native, check=True, timeout=60)
    assert (native / "data").read_text() == "Xew\n"
    status, points = crashtest("--each", f"--check=test \"$(cat data)\" = {expected.strip()}",
                               old, "--", PYTHON, "-c", program)
    assert status == 0 and {p["verdict"] for p in points} == {"ok"}, points
    assert len(points) == (2 if flush != "pass" else 1), points


def sqlite_wal_points(database, synchronous):
    return crashtest("--each", f"--check={SQL_CHECK}", database, "--", "sh", "-c",
                     SQL.replace("journal_mode=DELETE", "journal_mode=WAL"), "sql", synchronous)


def test_sqlite_wal_full_survives_every_point(database, tmp_path):
    """journal_mode=WAL, synchronous=FULL: SQLite maps its -shm index shared
    and writable; the mapping is accounted for, so no point is unknown, and
    every transaction that returned is there at every point.  The points are
    the kernel's fsync and fdatasync calls in a native run."""
    native = tmp_path / "native"
    shutil.copytree(database, native)
    sql = SQL.replace("journal_mode=DELETE", "journal_mode=WAL")
    r = run(["sh", "-c", sql, "sql", "FULL"], cwd=native,
            events=[("syscalls:sys_enter_fsync", None), ("syscalls:sys_enter_fdatasync", None)])
    status, points = sqlite_wal_points(database, "FULL")
    assert len(points) > 6 and len(points) - 1 == r.syncs, (points, r.why())
    assert status == 0 and {p["verdict"] for p in points} == {"ok"}, points


def test_sqlite_wal_off_loses_committed_data(database):
    """synchronous=OFF never syncs: a transaction that returned is lost, and
    the state is known (no reason for unknown, though the -shm is mapped)."""
    status, points = sqlite_wal_points(database, "OFF")
    assert status == 1 and 4 in {p["check_status"] for p in points}, points
    assert not [p for p in points if p["unknown"]], points


@pytest.fixture
def repo(tmp_path):
    git = require("git")
    d = tmp_path / "repo"
    d.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"],
                 ["config", "user.name", "t"]):
        subprocess.run([git, *args], cwd=d, check=True, timeout=60)
    (d / "f").write_text("hello\n")
    return d


def test_git_commit_is_accounted_for(repo):
    """git add and commit with core.fsync=all: COMMIT_EDITMSG (stdio) and the
    loose objects are accounted for, so the end point is not unknown."""
    status, points = crashtest("--check=true", repo, "--", "sh", "-c",
                               "git -c core.fsync=all add f && "
                               "git -c core.fsync=all commit -qm m")
    assert points[0]["verdict"] == "ok" and not points[0]["unknown"], points
    assert "created .git/COMMIT_EDITMSG" in points[0]["undone"], points


SYNCED_BY = ("import mmap, os, subprocess; fd = os.open('data', os.O_RDWR); "
             "m = mmap.mmap(fd, 4); m[0:3] = b'new'; {sync}; m[0:1] = b'X'; m.close()")


def test_sync_by_another_process_of_a_mapped_file_is_unknown(old):
    """sync(1), another process, makes the mapped writes durable but cannot
    image them: unknown at its point and after, though the checker passes.
    Control: the same program's own sync() images the file, and then the
    synced bytes survive at both points."""
    program = SYNCED_BY.format(sync="subprocess.run(['sync'], check=True)")
    status, points = crashtest("--each", "--check=true", old, "--", PYTHON, "-c", program)
    assert status == 2 and [p["verdict"] for p in points] == ["unknown", "unknown"], points
    program = SYNCED_BY.format(sync="os.sync()")
    status, points = crashtest("--each", "--check=test \"$(cat data)\" = new", old, "--",
                               PYTHON, "-c", program)
    assert status == 0 and [p["verdict"] for p in points] == ["ok", "ok"], points


def test_stdout_to_a_file_is_imaged_from_its_fsync(old, tmp_path):
    """A shell redirects standard output to a file of the copy; the program
    prints through stdio, fsyncs it, prints more: what it printed after the
    fsync is lost, what it synced is kept.  Native control: both lines are
    in the file."""
    native = tmp_path / "native"
    shutil.copytree(old, native)
    script = f"{STDIOSYNC} stdout - new > data"
    subprocess.run(["sh", "-c", script], cwd=native, check=True, timeout=60)
    assert (native / "data").read_text() == "new\nmore\n"
    status, points = crashtest("--each", "--check=test \"$(cat data)\" = new", old, "--",
                               "sh", "-c", script)
    assert [p["after"] for p in points] == ["fsync(data)", "end"], points
    assert status == 0 and {p["verdict"] for p in points} == {"ok"}, points


RENAMED_MAPPED = ("import mmap, os; fd = os.open('data', os.O_RDWR); m = mmap.mmap(fd, 4); "
                  "m[0:3] = b'new'; os.rename('data', 'other'); m[0:1] = b'X'")


def test_ext4_rename_of_a_mapped_file_is_unknown(old):
    """ext4-ordered makes a file's data durable when a rename makes it replace
    another; a mapped file's writes were never imaged: unknown.  The same run
    under posix loses the rename and the writes: ok (the control)."""
    (old / "other").write_text("o\n")
    status, points = crashtest("--model=ext4-ordered", "--check=true", old, "--", "python3",
                               "-c", RENAMED_MAPPED)
    assert status == 2 and points[0]["verdict"] == "unknown", points
    status, points = crashtest("--check=true", old, "--", PYTHON, "-c", RENAMED_MAPPED)
    assert status == 0 and points[0]["verdict"] == "ok", points
    assert "renamed data -> other" in points[0]["undone"], points
