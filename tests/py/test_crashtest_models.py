# SPDX-License-Identifier: MIT
"""crashtest's crash points at writes (--writes), its random points
(--random, --seed), the ext4-ordered model beside posix, and the library's
saving of only the first change to a region after a durability point.  Each
model's finding sits beside the other model's, which is its control."""
import hashlib
import subprocess

import pytest

from conftest import TESTS
from crashlib import PYTHON, CRASH, CRASHTEST, CRASHY, REPLACED, SQL, SQL_CHECK, crash_report, database, old  # noqa: F401 (fixtures)

crashtest = crash_report


def verdicts(report):
    return [(p["after"], p["verdict"]) for p in report["points"]]




def test_writes_are_crash_points(old):
    """--writes: each write and directory operation in the copy is a crash
    point, after it returned, between the durability calls."""
    _, report = crashtest("--each", "--writes", old, "--", CRASHY, "good", "data", "expected")
    assert [p["after"] for p in report["points"]] == [
        "create(data.tmp)", "write(data.tmp)", "fsync(data.tmp)", "rename(data)",
        "fsync(.)", "end"], report
    assert [(p["durability_calls"], p["writes"]) for p in report["points"]] == [
        (0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 3)], report
    _, plain = crashtest("--each", old, "--", CRASHY, "good", "data", "expected")
    assert [p["after"] for p in plain["points"]] == ["fsync(data.tmp)", "fsync(.)", "end"]


def test_ext4_ordered_keeps_a_replacing_rename(old):
    """No fsync at all, rename over the old file: posix loses the new file
    (the rename is not durable), ext4 with data=ordered keeps it at every
    point (auto_da_alloc writes the data before the rename commits)."""
    status, posix = crashtest("--each", "--writes", f"--check={REPLACED}", old, "--",
                              CRASHY, "bad", "data", "expected")
    assert status == 1 and posix["points"][-1]["verdict"] == "failed", posix
    status, ext4 = crashtest("--each", "--writes", "--model=ext4-ordered",
                             f"--check={REPLACED}", old, "--", CRASHY, "bad", "data",
                             "expected")
    assert ext4["model"] == "ext4-ordered" and len(ext4["points"]) == 4, ext4
    assert status == 0 and {p["verdict"] for p in ext4["points"]} == {"ok"}, ext4


def test_ext4_ordered_loses_the_data_of_a_new_name(old):
    """The same program renaming to a name that did not exist: no
    auto_da_alloc, the name is durable with its file empty (the zero-length
    files of ext4's early delayed allocation)."""
    check = 'test ! -e fresh || grep -qx expected fresh'
    status, ext4 = crashtest("--model=ext4-ordered", f"--check={check}", old, "--", CRASHY,
                             "bad", "fresh", "expected")
    assert status == 1 and "fresh" in ext4["points"][0]["rolled_back"], ext4
    status, posix = crashtest(f"--check={check}", old, "--", CRASHY, "bad", "fresh",
                              "expected")
    assert status == 0 and "renamed fresh.tmp -> fresh" in posix["points"][0]["undone"]


def test_ext4_ordered_keeps_a_truncation(old):
    """Rewriting in place with O_TRUNC and no fsync: the truncation is
    journaled metadata and survives, the data does not: an empty file right
    after the open.  Under posix the old contents come back."""
    check = "grep -qx -e old -e expected data"
    status, ext4 = crashtest("--each", "--writes", "--model=ext4-ordered", f"--check={check}",
                             old, "--", CRASHY, "truncate", "data", "expected")
    assert status == 1 and verdicts(ext4)[0] == ("O_TRUNC(data)", "failed"), ext4
    status, posix = crashtest("--each", "--writes", f"--check={check}", old, "--", CRASHY,
                              "truncate", "data", "expected")
    assert status == 0 and len(posix["points"]) == 3, posix


def test_sqlite_full_is_durable_on_ext4_ordered(database):
    """synchronous=FULL at every write and sync: on ext4 the unlink of the
    journal commits in order with what follows, so no transaction that
    returned is lost; posix (the control) loses one at the points between
    the unlink and the next directory sync."""
    args = ["--each", "--writes", f"--check={SQL_CHECK}", database, "--", "sh", "-c", SQL,
            "sql", "FULL"]
    status, ext4 = crashtest("--model=ext4-ordered", *args)
    assert len(ext4["points"]) > 30 and status == 0, verdicts(ext4)
    status, posix = crashtest(*args)
    lost = [p for p in posix["points"] if p["check_status"] == 4]
    assert status == 1 and lost and all("removed db-journal" in p["undone"] for p in lost)


def test_random_points_are_reproducible(database):
    """--random=K draws K distinct points of the whole run; the same seed
    draws the same ones, and the report gives the seed it drew with."""
    args = ["--writes", "--check=true", database, "--", "sh", "-c", SQL, "sql", "EXTRA"]
    _, first = crashtest("--random=5", "--seed=42", *args)
    _, again = crashtest("--random=5", "--seed=42", *args)
    _, other = crashtest("--random=5", "--seed=7", *args)
    points = [p["point"] for p in first["points"]]
    total = first["points"][-1]["durability_calls"] + first["points"][-1]["writes"]
    assert points[-1] is None and points[:-1] == sorted(set(points[:-1])), points
    assert len(points) == 6 and all(1 <= p <= total for p in points[:-1]), (points, total)
    assert first["seed"] == 42 and [p["point"] for p in again["points"]] == points
    assert [p["point"] for p in other["points"]] != points
    r = subprocess.run([CRASHTEST, "--random=2", *map(str, args)], capture_output=True,
                       text=True, timeout=120)
    seed = r.stdout.splitlines()[0].split()[-1]
    _, same = crashtest("--random=2", f"--seed={seed}", *args)
    assert [f"point {p['point']}" for p in same["points"][:-1]] == \
        [line.split(",")[0] for line in r.stdout.splitlines() if line.startswith("point")]
    _, every = crashtest("--random=1000", *args)
    assert len(every["points"]) == total + 1


def test_only_the_first_change_to_a_region_is_saved(old):
    """The same 4 KiB written 200 times between two fsyncs is saved once;
    with an fsync after each write (the control) it is saved each time.
    Both roll back to what the last fsync made durable."""
    prog = ("import os, sys; fd = os.open('data', os.O_RDWR); each = sys.argv[1] == 'each'\n"
            "for i in range(200):\n"
            "    os.pwrite(fd, bytes([i]) * 4096, 0)\n"
            "    each and os.fsync(fd)\n"
            "os.fsync(fd); os.pwrite(fd, b'lost', 0)")
    want = hashlib.sha256(bytes([199]) * 4096).hexdigest()
    check = f'test "$(sha256sum < data | cut -d" " -f1)" = {want}'
    sizes = {}
    for mode in ("once", "each"):
        status, report = crashtest(f"--check={check}", old, "--", PYTHON, "-c", prog, mode)
        assert status == 0, report
        sizes[mode] = report["points"][0]["journal_bytes"]
    assert sizes["once"] < 3 * 4096 and sizes["each"] > 200 * 4096, sizes


@pytest.mark.parametrize("seed", [1, 2])
def test_rollback_is_the_last_synced_state(tmp_path, seed):
    """Differential: seeded random overwrites, appends, truncations and
    fsyncs on two files; at every write and every sync, each file rolls back
    to the contents its last fsync made durable."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a").write_bytes(b"a" * 5000)
    (d / "b").write_bytes(b"")
    hashes = tmp_path / "before"
    hashes.write_text("".join(f"{f} {hashlib.sha256((d / f).read_bytes()).hexdigest()}\n"
                              for f in "ab"))
    status, report = crashtest("--each", "--writes",
                               f"--check=sh {CRASH / 'churn_check.sh'} {hashes}", d, "--",
                               PYTHON, CRASH / "churn.py", seed, 60)
    assert len(report["points"]) > 40, report
    assert status == 0, [p for p in report["points"] if p["verdict"] != "ok"][:3]


def test_ext4_ordered_truncation_between_writes(old):
    """A write, a truncation, the same region written again, no fsync: ext4
    keeps the truncation and loses both writes (an empty file); the library
    must save the region again after the truncation for that.  posix (the
    control) brings the old contents back."""
    prog = ("import os; fd = os.open('data', os.O_RDWR); os.pwrite(fd, b'x' * 100, 0); "
            "os.ftruncate(fd, 0); os.pwrite(fd, b'y' * 100, 0)")
    status, ext4 = crashtest("--model=ext4-ordered", "--check=test ! -s data", old, "--",
                             PYTHON, "-c", prog)
    assert status == 0, ext4
    status, posix = crashtest("--check=grep -qx old data", old, "--", PYTHON, "-c", prog)
    assert status == 0, posix


def test_a_forked_child_writes(old):
    """bash writes from a command substitution, a fork with no exec: the
    child's copy of the library's lock, taken by the parent's thread for the
    fork, must not leave the child waiting for ever (it did)."""
    status, report = crashtest("--check=grep -qx old data", old, "--", "bash", "-c",
                               'x=$(echo new > data; echo done); echo "$x"')
    assert status == 0 and report["points"][0]["rolled_back"] == ["data"], report


def test_ext4_ordered_extending_truncation(tmp_path):
    """A write past the end, a truncation that extends the file, a write in
    the new part: ext4 keeps the size and loses both writes (zeros)."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "data").write_bytes(b"0123456789")
    prog = ("import os; fd = os.open('data', os.O_RDWR); os.pwrite(fd, b'abc', 10); "
            "os.ftruncate(fd, 20); os.pwrite(fd, b'zz', 14)")
    check = ("python3 -c \"import sys; sys.exit(open('data', 'rb').read() != "
             "b'0123456789' + bytes(10))\"")
    status, ext4 = crashtest("--model=ext4-ordered", f"--check={check}", d, "--", "python3",
                             "-c", prog)
    assert status == 0 and ext4["points"][0]["kept"] == [
        "the truncation of data to 20 bytes"], ext4
    status, posix = crashtest(f"--check={check}", d, "--", PYTHON, "-c", prog)
    assert status == 1, posix


def test_the_whole_tree_is_gone_before_the_check(old):
    """A process that left the command's process group (setsid) and holds a
    lock on a file of the copy: the power failure kills it, and it is gone
    (its lock released) before the checker runs; a native run of the same
    command leaves it holding the lock (the control)."""
    cmd = ("setsid sh -c 'exec flock data sleep 30' </dev/null >/dev/null 2>&1 & "
           "until ! flock -n data true; do sleep 0.01; done")
    native = subprocess.run(["sh", "-c", cmd + "; flock -n data true"], cwd=old, timeout=60)
    assert native.returncode == 1, "the native control did not hold the lock"
    subprocess.run(["pkill", "-f", "flock data sleep 30"])
    status, report = crashtest("--check=flock -n data true", old, "--", "sh", "-c", cmd)
    assert status == 0 and report["points"][0]["verdict"] == "ok", report
    assert subprocess.run(["pgrep", "-f", "flock data sleep 30"]).returncode == 1


COPIES = {
    "copy_file_range": "os.copy_file_range(os.open('src', 0), fd, 4, offset_dst=1)",
    "sendfile": "os.lseek(fd, 1, 0); os.sendfile(fd, os.open('src', 0), 0, 4)",
    "posix_fallocate": "os.posix_fallocate(fd, 0, 5000)",
    "fallocate": "import ctypes; ctypes.CDLL(None).fallocate(fd, 3, 0, 2)",  # punch a hole
    "pwritev2": "os.pwritev(fd, [b'new'], 0, os.RWF_APPEND)",
}


@pytest.mark.parametrize("call", COPIES)
def test_writes_that_are_not_write(old, call):
    """copy_file_range, sendfile, (posix_)fallocate and pwritev2 change the
    file past write(): each is journaled like a write (ok, old contents back,
    not unknown), and with RWF_DSYNC pwritev2 is a durability call."""
    (old / "src").write_text("new\n")
    prog = f"import os; fd = os.open('data', os.O_RDWR); {COPIES[call]}"
    native = old.parent / "native"
    subprocess.run(["cp", "-a", old, native], check=True)
    subprocess.run([PYTHON, "-c", prog], cwd=native, check=True)
    assert (native / "data").read_bytes() != b"old\n", "the native control changed nothing"
    status, report = crashtest("--check=grep -qx old data", old, "--", PYTHON, "-c", prog)
    assert status == 0 and report["points"][0]["rolled_back"] == ["data"], report
    assert report["points"][0]["writes"] == 1, report


def test_rwf_dsync_is_a_durability_call(old):
    prog = ("import os; fd = os.open('data', os.O_RDWR); "
            "os.pwritev(fd, [b'new\\n'], 0, os.RWF_DSYNC)")
    status, report = crashtest("--each", "--check=grep -qx new data", old, "--", "python3",
                               "-c", prog)
    assert status == 0 and [p["after"] for p in report["points"]] == ["pwritev2(data)", "end"]


def test_a_removed_directory_comes_back_with_its_mode(old):
    (old / "d").mkdir(mode=0o750)
    (old / "d").chmod(0o750)
    status, report = crashtest('--check=test "$(stat -c %a d)" = 750', old, "--", "rmdir", "d")
    assert status == 0 and report["points"][0]["undone"] == ["removed directory d"], report


def test_a_reused_inode_number_is_another_file(old):
    """ext4 gives a removed directory's inode number to the next file made:
    an fsync of that file says nothing of the directory's entries.  (git's
    bulk-checkin removes its temporary object directory, then fsyncs new
    files.)  Nothing of t was durable, so it must not come back."""
    prog = ("import os\n"
            "for i in range(2000):\n"  # another process may take the number first
            "    t = f't{i}'; os.mkdir(t); os.mkdir(t + '/a'); ino = os.stat(t).st_ino\n"
            "    os.close(os.open(t + '/a/x', os.O_CREAT | os.O_WRONLY)); os.unlink(t + '/a/x')\n"
            "    os.rmdir(t + '/a'); os.rmdir(t)\n"
            "    fd = os.open(f'f{i}', os.O_CREAT | os.O_WRONLY, 0o644); os.fsync(fd)\n"
            "    if os.fstat(fd).st_ino == ino:\n"
            "        print('reused'); break\n")
    status, report = crashtest("--check=grep -qx reused $CRASHTEST_OUTPUT && ! ls -d t*",
                               old, "--", PYTHON, "-c", prog)
    assert status == 0, report


def test_an_o_dsync_write_makes_only_its_range_durable(tmp_path):
    """An O_DSYNC write is durable, with the size it needs; an earlier
    unsynced write elsewhere in the file is not made durable by it (taking
    it for an fsync of the file would show a state safer than it is), nor is
    a later one."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "data").write_bytes(b"0123456789abcdef")
    prog = ("import os; fd = os.open('data', os.O_RDWR); os.pwrite(fd, b'xxxx', 0)\n"
            "sfd = os.open('data', os.O_RDWR | os.O_DSYNC); os.pwrite(sfd, b'yyyy', 10)\n"
            "os.pwrite(fd, b'zz', 20)")
    check = ("python3 -c \"import sys; sys.exit(open('data', 'rb').read() != "
             "b'0123456789yyyyef')\"")
    status, report = crashtest("--each", f"--check={check}", d, "--", PYTHON, "-c", prog)
    assert status == 0, report
    assert [p["after"] for p in report["points"]] == ["O_SYNC write(data)", "end"], report


def test_static_and_go_programs_are_unknown(old, go_program):
    """A static C program and a Go program make their system calls past the
    library: what they write in the copy makes the state unknown, never ok,
    though the checker passes (the library does not reach them; eatmydata's
    seccomp supervisor would, crashtest does not use it yet)."""
    for prog in ([TESTS / "entry-static", "fsync", "."], [go_program, "data", "2"]):
        status, report = crashtest("--check=true", old, "--", *prog)
        assert status == 2 and report["points"][0]["verdict"] == "unknown", (prog, report)
