# SPDX-License-Identifier: MIT
"""crashtest's states and models: every kind of state, each shown by a
program that it alone catches; the rules of posix, ext4-ordered and xfs,
each beside another model or setting that is its control; crash points at
writes (--writes) and drawn at random (--random, --seed)."""
import hashlib
import subprocess

import pytest

from conftest import TESTS, require
from helpers import CRASH, CRASHTEST, CRASHY, PYTHON, REPLACED, SQL, crash_report

crashtest = crash_report
CLASSES = ["lost", "kept", "prefix", "omit", "alone", "torn", "journal", "pair"]


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "dir"
    d.mkdir()
    for name in "abcdexy":
        (d / name).write_text("0")
    (d / "t").write_bytes(b"0" * 8192)
    return d


@pytest.mark.parametrize("kind", CLASSES)
def test_each_kind_of_state_catches_what_no_other_does(files, kind):
    """classes.py makes changes that fail only in a state of one kind (all
    lost, all kept, a prefix, all but one, one alone, a torn write, a
    prefix of a journal's metadata): built alone, that kind finds the
    failure; every other kind together finds none."""
    model = "--model=ext4-ordered" if kind == "journal" else "--model=posix"
    args = [model, f"--check={PYTHON} {CRASH / 'classes_check.py'} {kind}", files, "--",
            PYTHON, CRASH / "classes.py", kind]
    status, alone = crashtest(f"--classes={kind}", *args)
    assert status == 1, alone.verdicts()
    others = ",".join(c for c in CLASSES if c != kind)
    status, rest = crashtest(f"--classes={others}", *args)
    assert status == 0, rest.failed()


@pytest.mark.parametrize("model", ["posix", "ext4-ordered", "xfs"])
def test_two_appends_to_one_sector_land_in_order(tmp_path, model):
    """Two processes append a record each to one log ("rec 1", then "rec
    11": 13 bytes of one sector) and fsync it.  At the second write, a state
    keeping it and not the first -- six zero bytes, then "rec 11" -- is no
    disk's (a sector is written as it was at one moment of its history) and
    is not built.  Control: the first record padded to 512 bytes puts the
    second in the next sector, where a crash can keep it alone."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "log").write_bytes(b"")
    args = ["--each", "--writes", f"--model={model}",
            f"--check={PYTHON} {CRASH / 'appenders_check.py'}", d, "--", PYTHON,
            CRASH / "appenders.py"]
    status, report = crashtest(*args)
    assert status == 0, report.failed()
    status, report = crashtest(*args, "512")
    assert status == 1, report.verdicts()
    assert {s["what"] for _, s in report.failed()} == {
        "all 2 unsynced changes kept but: write log [0, +512)"}, report.failed()


# Replace by rename, no fsync, then syncfs: the claim between the two.
SYNCFS = ("import ctypes, os\n"
          "fd = os.open('data.tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n"
          "os.write(fd, b'expected\\n'); os.close(fd)\n"
          "os.rename('data.tmp', 'data')\n"
          "print('renamed', flush=True)\n"
          "ctypes.CDLL(None).syncfs(os.open('.', os.O_RDONLY))\n")


@pytest.mark.parametrize("model,status", [("ext4-ordered", 0), ("ext4-noauto_da_alloc", 1),
                                          ("xfs", 1), ("posix", 1)])
@pytest.mark.parametrize("program", ["bad", "syncfs"])
def test_auto_da_alloc_replaces_by_rename_whole(old, model, status, program):
    """ext4's auto_da_alloc (on by default): a rename over an existing file
    starts writing the renamed file's data back before the rename's
    transaction begins (ext4_rename calls ext4_alloc_da_blocks), so a commit
    that holds the rename holds the data: replacing a file by rename with no
    fsync is atomic there -- the old contents or the new, never an empty
    file -- though not durable.  With noauto_da_alloc, on xfs and under
    posix: an empty file at some point."""
    command = [CRASHY, "bad", "data", "expected"] if program == "bad" else [PYTHON, "-c", SYNCFS]
    got, report = crashtest("--each", "--writes", f"--model={model}",
                            "--check=grep -qx -e old -e expected data", old, "--", *command)
    assert got == status, report.verdicts()
    if status:
        assert {s["what"].rsplit(" [", 1)[0] for _, s in report.failed()} == {
            "all 3 unsynced changes kept but: write data.tmp"}, report.failed()


def test_all_models_side_by_side(old):
    """--model=all: one recording, the verdicts of posix, ext4-ordered and
    xfs at each point side by side -- in JSON one result per point and
    model, each model's totals; in text one line a point -- and the worst as
    the exit status.  Replacing by rename with no fsync, checked for
    atomicity: ok on ext4 only by auto_da_alloc (the report says so), FAILED
    on xfs and under posix, as the runs of one model say.  Control: the
    careful program is ok under all three (exit 0)."""
    atomic = "--check=grep -qx -e old -e expected data"
    bad = [old, "--", CRASHY, "bad", "data", "expected"]
    status, report = crashtest("--model=all", atomic, *bad)
    assert status == 1 and report["model"] == "all", report
    assert report["models"] == ["posix", "ext4-ordered", "xfs"]
    assert [(p["model"], p["verdict"], p["ok_only_with_auto_da_alloc"]) for p in report.points] \
        == [("posix", "failed", False), ("ext4-ordered", "ok", True), ("xfs", "failed", False)]
    assert report["totals"]["by_model"]["ext4-ordered"]["ok"] == 1
    for model in report["models"]:
        _, alone = crashtest(f"--model={model}", atomic, *bad)
        assert [p["verdict"] for p in report.points if p["model"] == model] == \
            [p["verdict"] for p in alone.points], model
    text = subprocess.run([CRASHTEST, "--model=all", atomic, *map(str, bad)], capture_output=True,
                          text=True, timeout=120).stdout.splitlines()
    end = next(line for line in text if line.startswith("end "))
    assert "posix FAILED" in end and "xfs FAILED" in end, text
    assert "ext4-ordered ok" in end and "with noauto_da_alloc: FAILED" in end, text
    status, _ = crashtest("--model=all", atomic, old, "--", CRASHY, "good", "data", "expected")
    assert status == 0


RECORDS = 'while read -r r; do grep -qx "$r" data || exit 1; done < "$CRASHTEST_OUTPUT"'


@pytest.mark.java
def test_a_jvm_has_verdicts_past_its_performance_counters(tmp_path):
    """A Java program appends three records, an fsync each, and prints
    each: the JVM writes its performance counters (/tmp/hsperfdata_USER/PID,
    a shared mapping) and /proc/self/coredump_filter, files outside DIR no
    state holds (--outside-ok's defaults).  Every point has a verdict, and
    the report names those files.  Control: -XX:-UsePerfData writes no
    hsperfdata (the report names none)."""
    javac = require("javac")
    subprocess.run([javac, "-d", tmp_path, CRASH / "Records.java"], check=True, timeout=120)
    d = tmp_path / "dir"
    d.mkdir()
    (d / "data").write_bytes(b"")
    java = [require("java"), "-cp", tmp_path]
    status, report = crashtest("--each", f"--check={RECORDS}", d, "--", *java, "Records")
    verdicts = report.verdicts()
    assert status == 0 and [a for a, _ in verdicts].count("fsync(data)") == 3, verdicts
    assert {v for _, v in verdicts} == {"ok"}, verdicts
    assert any("/tmp/hsperfdata_" in u and "--outside-ok" in u for u in report["unexplored"]), \
        report["unexplored"]
    status, report = crashtest("--each", f"--check={RECORDS}", d, "--", java[0],
                               "-XX:-UsePerfData", *java[1:], "Records")
    assert status == 0 and not [u for u in report["unexplored"] if "hsperfdata" in u], report


def test_a_write_outside_the_directory_is_unknown_unless_named(tmp_path):
    """A file outside DIR written: no state holds it, so the run is
    unknown -- unless --outside-ok names it (a glob), when each point has
    its verdict and the report names the file."""
    d, elsewhere = tmp_path / "dir", tmp_path / "counters"
    d.mkdir()
    elsewhere.mkdir()
    prog = (f"import os; open('{elsewhere}/c1', 'w').write('1'); "
            "fd = os.open('data', os.O_WRONLY | os.O_CREAT); os.write(fd, b'x'); os.fsync(fd)")
    status, report = crashtest("--check=true", d, "--", PYTHON, "-c", prog)
    assert status == 2 and report.points[-1]["unknown"] == [
        "a file outside the directory was written"], report
    status, report = crashtest(f"--outside-ok={elsewhere}/c*", "--check=true", d, "--", PYTHON,
                               "-c", prog)
    assert status == 0, report
    assert report["unexplored"] == [f"{elsewhere}/c1, outside the directory, was written: no "
                                    "state holds it (--outside-ok)"], report


def test_writes_are_crash_points(old):
    """--writes: each change in the copy is a crash point, after it returned,
    between the durability calls; each is named as it was made."""
    _, report = crashtest("--each", "--writes", old, "--", CRASHY, "good", "data", "expected")
    assert [a for a, _ in report.verdicts()] == [
        "create data.tmp", "write data.tmp [0, +8)", "fsync(data.tmp)",
        "rename data.tmp -> data", "fsync(.)", "end"], report
    assert [(p["durability_calls"], p["changes"]) for p in report.points] == [
        (0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 3)], report
    _, plain = crashtest("--each", old, "--", CRASHY, "good", "data", "expected")
    assert [a for a, _ in plain.verdicts()] == ["fsync(data.tmp)", "fsync(.)", "end"]


@pytest.mark.parametrize("model", ["posix", "ext4-ordered", "xfs"])
def test_a_directory_fsync_after_a_replacing_rename(old, model):
    """Write a temporary file, rename it over the old one, fsync the
    directory, no fsync of the file: the name is durable, the data is not,
    under every model.  ext4's auto_da_alloc starts the data's writeback at
    the rename but its commit does not wait for it: the kernel-reference
    test saw the empty file.  Control: the careful program is ok."""
    status, report = crashtest("--each", f"--model={model}", f"--check={REPLACED}", old, "--",
                               CRASHY, "dironly", "data", "expected")
    assert [v for _, v in report.verdicts()] == ["failed", "failed"], report.verdicts()
    status, report = crashtest("--each", f"--model={model}", f"--check={REPLACED}", old, "--",
                               CRASHY, "good", "data", "expected")
    assert status == 0, report.failed()


@pytest.mark.parametrize("model", ["posix", "ext4-ordered", "xfs"])
def test_an_unsynced_replacing_rename_is_lost_after_the_claim(old, model):
    """No fsync at all: the program says "replaced"; a crash right after can
    lose the rename under every model -- ext4 and xfs commit it only with
    their next journal commit, seconds later.  Control: the careful program
    (fsync the file, rename, fsync the directory) is ok in every state."""
    status, report = crashtest(f"--model={model}", f"--check={REPLACED}", old, "--", CRASHY,
                               "bad", "data", "expected")
    assert status == 1 and report.verdicts() == [("end", "failed")], report
    status, report = crashtest("--each", "--writes", f"--model={model}", f"--check={REPLACED}",
                               old, "--", CRASHY, "good", "data", "expected")
    assert status == 0, report.failed()


# A file moved to another directory, then the directories named fsynced;
# the check: once the program said so, the file is at its new name alone.
MOVE = ("import os, sys\n"
        "os.rename('a/f', 'b/f')\n"
        "for d in sys.argv[1:]:\n"
        "    fd = os.open(d, os.O_RDONLY); os.fsync(fd); os.close(fd)\n"
        "print('moved', flush=True)\n")
MOVED = 'if grep -q moved "$CRASHTEST_OUTPUT"; then test -e b/f && ! test -e a/f; fi'


@pytest.mark.parametrize("synced,status", [(["b"], 1), (["a"], 1), (["a", "b"], 0)],
                         ids=["target only", "source only", "both"])
def test_a_rename_across_directories_needs_both_synced(tmp_path, synced, status):
    """posix: a rename from one directory to another is durable once both
    directories were fsynced; one of them alone leaves a state where the
    file is still at its old name (the control: both)."""
    d = tmp_path / "dir"
    (d / "a").mkdir(parents=True)
    (d / "b").mkdir()
    (d / "a" / "f").write_text("f\n")
    got, report = crashtest(f"--check={MOVED}", d, "--", PYTHON, "-c", MOVE, *synced)
    assert got == status, report.verdicts()


def test_a_new_name_can_hold_an_empty_file(old):
    """Renamed to a name that did not exist: nothing is replaced, no
    auto_da_alloc: ext4 may commit the name before the data (the
    zero-length files of its delayed allocation)."""
    check = "test ! -e fresh || grep -qx expected fresh"
    status, report = crashtest("--model=ext4-ordered", "--classes=journal", f"--check={check}",
                               old, "--", CRASHY, "bad", "fresh", "expected")
    assert status == 1, report.verdicts()
    assert any("without the unsynced data" in s["what"] for _, s in report.failed())


def test_ext4_keeps_a_truncation_without_the_data(old):
    """Rewriting in place with O_TRUNC and no fsync: the truncation is
    metadata the journal commits on its own, the data is not: a state has an
    empty file, though the program said it replaced the contents."""
    check = "grep -qx -e old -e expected data"
    status, report = crashtest("--each", "--writes", "--model=ext4-ordered",
                               "--classes=journal", f"--check={check}", old, "--", CRASHY,
                               "truncate", "data", "expected")
    assert status == 1 and report.verdicts()[0] == ("truncate data to 0 bytes", "failed")


# Rewrite data with O_TRUNC, close it, then make a marker; argv[1] says
# what else holds the open file when it is closed.
REWRITE = """import os, sys, time
fd = os.open('data', os.O_WRONLY | os.O_TRUNC)
os.write(fd, b'expected\\n')
how = sys.argv[1]
keep = os.dup(fd) if how == 'dup' else None
child = os.fork() if how == 'fork' else None
if child == 0:
    time.sleep(0.3)
    os._exit(0)
if how == 'marker-first':
    os.close(os.open('done', os.O_WRONLY | os.O_CREAT, 0o644))
os.close(fd)
os.close(os.open('done', os.O_WRONLY | os.O_CREAT, 0o644))
if child:
    os.waitpid(child, 0)
"""
MARKED = "--check=test ! -e done || grep -qx expected data"


@pytest.mark.parametrize("model,status", [("ext4-ordered", 0), ("xfs", 0),
                                          ("ext4-noauto_da_alloc", 1), ("posix", 1)])
@pytest.mark.parametrize("program", ["close", "dash", "bash", "stdio"])
def test_a_release_carries_what_was_written_since_the_truncation(old, model, status, program):
    """ext4's auto_da_alloc marks a file its truncation left empty, and the
    release of an open file of it (ext4_release_file: its last descriptor
    closed) starts writing back what was written since; xfs does the same
    after a truncation (XFS_ITRUNCATED, xfs_release).  A commit of anything
    changed after the close holds the data: a rewrite with O_TRUNC, closed,
    then a marker made, never leaves the marker beside an empty file -- by a
    close, a shell's redirection (restored by dup2), fclose.  With
    noauto_da_alloc and under posix it does."""
    command = {"close": [PYTHON, "-c", REWRITE, "close"],
               "dash": [require("dash"), "-c", "echo expected > data; : > done"],
               "bash": [require("bash"), "-c", "echo expected > data; : > done"],
               "stdio": [require("awk"), 'BEGIN { print "expected" > "data"; close("data");'
                         ' printf "" > "done" }']}[program]
    got, report = crashtest("--each", "--writes", f"--model={model}", MARKED, old, "--",
                            *command)
    assert got == status, report.verdicts()


@pytest.mark.parametrize("how", ["dup", "fork", "marker-first"])
def test_a_close_that_is_no_release_carries_nothing(old, how):
    """The close is no release while another descriptor (a dup) or a child
    of fork still holds the open file; nor does a release carry the data to
    what was committed before it.  Then ext4 may commit the marker beside an
    empty file.  Control: the plain close (the test above)."""
    status, report = crashtest("--each", "--writes", "--model=ext4-ordered", MARKED, old, "--",
                               PYTHON, "-c", REWRITE, how)
    assert status == 1, report.verdicts()


def test_ext4_extending_truncation_keeps_zeros(tmp_path):
    """A write past the end, a truncation that extends the file, a write in
    the new part: a state commits the size and none of the writes (zeros).
    posix (the control) has no such state: the size goes with the data."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "data").write_bytes(b"0123456789")
    prog = ("import os; fd = os.open('data', os.O_RDWR); os.pwrite(fd, b'abc', 10); "
            "os.ftruncate(fd, 20); os.pwrite(fd, b'zz', 14)")
    check = ("python3 -c \"import sys; sys.exit(open('data', 'rb').read() == "
             "b'0123456789' + bytes(10))\"")
    status, ext4 = crashtest("--model=ext4-ordered", f"--check={check}", d, "--", PYTHON,
                             "-c", prog)
    assert status == 1, ext4.verdicts()
    status, posix = crashtest("--classes=lost,kept,prefix,omit,alone", f"--check={check}", d,
                              "--", PYTHON, "-c", prog)
    assert status == 1, "a truncation is kept alone under posix too"


def test_random_points_are_reproducible(database):
    """--random=K draws K distinct points of the whole run; the same seed
    draws the same ones, and the report gives the seed it drew with."""
    args = ["--writes", "--check=true", database, "--", "sh", "-c", SQL, "sql", "EXTRA"]
    _, first = crashtest("--random=5", "--seed=42", *args)
    _, again = crashtest("--random=5", "--seed=42", *args)
    _, other = crashtest("--random=5", "--seed=7", *args)
    _, every = crashtest("--random=100000", *args)
    points = [p["point"] for p in first.points]
    total = len(every.points) - 1
    assert points[-1] is None and points[:-1] == sorted(set(points[:-1])), points
    assert len(points) == 6 and all(1 <= p <= total for p in points[:-1]), (points, total)
    assert first["seed"] == 42 and [p["point"] for p in again.points] == points
    assert [p["point"] for p in other.points] != points
    r = subprocess.run([CRASHTEST, "--random=2", *map(str, args)], capture_output=True,
                       text=True, timeout=120)
    seed = r.stdout.splitlines()[0].split()[-1]
    _, same = crashtest("--random=2", f"--seed={seed}", *args)
    assert [f"point {p['point']}" for p in same.points[:-1]] == \
        [line.split(" after")[0] for line in r.stdout.splitlines() if line.startswith("point")]


@pytest.mark.parametrize("seed", [1, 2])
def test_all_lost_is_the_last_synced_state(tmp_path, seed):
    """Differential: seeded random overwrites, appends, truncations and
    fsyncs on two files; at every write and every sync, the state where all
    unsynced changes are lost has each file as its last fsync left it."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a").write_bytes(b"a" * 5000)
    (d / "b").write_bytes(b"")
    hashes = tmp_path / "before"
    hashes.write_text("".join(f"{f} {hashlib.sha256((d / f).read_bytes()).hexdigest()}\n"
                              for f in "ab"))
    status, report = crashtest("--each", "--writes", "--classes=lost",
                               f"--check=sh {CRASH / 'churn_check.sh'} {hashes}", d, "--",
                               PYTHON, CRASH / "churn.py", seed, 60)
    assert len(report.points) > 40, report.verdicts()
    assert status == 0, report.failed()[:3]


def test_a_forked_child_writes(old):
    """bash writes from a command substitution, a fork with no exec: the
    child's copy of the library's lock, taken by the parent's thread for the
    fork, must not leave the child waiting for ever (it did)."""
    status, report = crashtest("--check=test ! -s data || grep -qx -e old -e new data", old,
                               "--", "bash", "-c", 'x=$(echo new > data; echo done); echo "$x"')
    assert status == 0 and not report.points[0]["unknown"], report


def test_the_whole_tree_is_gone_before_the_check(old):
    """A process that left the command's process group (setsid) and holds a
    lock on a file of the copy: the power failure kills it, and it is gone
    (its lock released) before any state is built; a native run of the same
    command leaves it holding the lock (the control)."""
    cmd = ("setsid sh -c 'exec flock data sleep 30' </dev/null >/dev/null 2>&1 & "
           "until ! flock -n data true; do sleep 0.01; done")
    native = subprocess.run(["sh", "-c", cmd + "; flock -n data true"], cwd=old, timeout=60)
    assert native.returncode == 1, "the native control did not hold the lock"
    subprocess.run(["pkill", "-f", "flock data sleep 30"])
    status, report = crashtest("--check=flock -n data true", old, "--", "sh", "-c", cmd)
    assert status == 0 and report.points[0]["verdict"] == "ok", report
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
    file past write(): each is journaled as the change it made, so the run
    is all seen (its copy matches its journal, not unknown), the state with
    the change lost has the old contents, the one with it kept the new."""
    (old / "src").write_text("new\n")
    (old / "orig").write_text("old\n")
    prog = f"import os; fd = os.open('data', os.O_RDWR); {COPIES[call]}"
    native = old.parent / "native"
    subprocess.run(["cp", "-a", old, native], check=True)
    subprocess.run([PYTHON, "-c", prog], cwd=native, check=True)
    assert (native / "data").read_bytes() != b"old\n", "the native control changed nothing"
    status, report = crashtest("--check=cmp -s data orig", old, "--", PYTHON, "-c", prog)
    point = report.points[0]
    assert not point["unknown"] and point["changes"] >= 1, report
    assert [s["verdict"] for s in point["states"]][:2] == ["ok", "failed"], point


def test_rwf_dsync_is_a_durability_call(old):
    prog = ("import os; fd = os.open('data', os.O_RDWR); "
            "os.pwritev(fd, [b'new\\n'], 0, os.RWF_DSYNC)")
    status, report = crashtest("--each", "--check=grep -qx new data", old, "--", PYTHON, "-c",
                               prog)
    assert status == 0 and [a for a, _ in report.verdicts()] == [
        "O_DSYNC write data [0, +4)", "end"], report


def test_a_removed_directory_comes_back_with_its_mode(old):
    (old / "d").mkdir(mode=0o750)
    (old / "d").chmod(0o750)
    status, report = crashtest("--classes=lost", '--check=test "$(stat -c %a d)" = 750', old,
                               "--", "rmdir", "d")
    assert status == 0, report


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
    status, report = crashtest("--classes=lost",
                               "--check=grep -qx reused $CRASHTEST_OUTPUT && ! ls -d t*",
                               old, "--", PYTHON, "-c", prog)
    assert status == 0, report.failed()


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
    status, report = crashtest("--each", "--classes=lost", f"--check={check}", d, "--",
                               PYTHON, "-c", prog)
    assert status == 0, report
    assert [a for a, _ in report.verdicts()] == ["O_DSYNC write data [10, +4)", "end"], report


def test_static_and_go_programs_are_unknown_unfollowed(old, go_program):
    """A static C program and a Go program make their system calls past the
    library: without the supervisor (--seccomp=off) what they write in the
    copy is not in the journal, and the run is unknown, never ok, though the
    checker passes; with it (the default), they are followed."""
    for prog in ([TESTS / "entry-static", "fsync", "."], [go_program, "data", "2"]):
        status, report = crashtest("--seccomp=off", "--check=true", old, "--", *prog)
        assert status == 2 and report.points[0]["verdict"] == "unknown", (prog, report)
        status, report = crashtest("--check=true", old, "--", *prog)
        assert status == 0 and report.points[-1]["verdict"] == "ok", (prog, report)


@pytest.mark.parametrize("model", ["ext4-ordered", "xfs"])
def test_the_first_record_is_committed_like_any(tmp_path, model):
    """A name made by the journal's very first record is committed by its
    directory's fsync (a model that took record 0 for "no commit" lost it),
    as it is after any other change."""
    d = tmp_path / "d"
    d.mkdir()
    prog = ("import os\nos.close(os.open('f', os.O_CREAT | os.O_WRONLY))\n"
            "fd = os.open('.', os.O_RDONLY)\nos.fsync(fd)\nprint('done', flush=True)\n")
    check = 'test -e f || ! grep -q done "$CRASHTEST_OUTPUT"'
    status, report = crashtest("--each", f"--model={model}", f"--check={check}", d, "--",
                               PYTHON, "-c", prog)
    assert status == 0 and {v for _, v in report.verdicts()} == {"ok"}, report
