# SPDX-License-Identifier: MIT
"""crashtest on git: `add` + `commit` with core.fsync=none, all and
fsyncMethod=batch, under posix and ext4-ordered, at every durability call
and claim.  `git fsck --strict` and the branch head after the crash are the
verdict.  Each setting's finding sits beside another's, its control, and
the crash points are checked against the kernel's count of git's fsyncs."""
import collections
import subprocess

import pytest

from conftest import run
from helpers import crash_report, git_repository

pytestmark = [pytest.mark.slow]

SETTINGS = {
    "none": "-c core.fsync=none",
    "all": "-c core.fsync=all -c core.fsyncMethod=fsync",
    "batch": "-c core.fsync=all -c core.fsyncMethod=batch",
}
# 3: the repository is corrupt; 4: a commit that returned is missing.
CHECK = ('git fsck --no-progress --strict >/dev/null 2>&1 || exit 3; '
         'if grep -q committed "$CRASHTEST_OUTPUT"; then '
         'test "$(git log -1 --format=%s)" = two || exit 4; fi')


def workload(setting):
    cfg = f"{SETTINGS[setting]} -c gc.auto=0 -c maintenance.auto=false"
    return (f"echo b > g && echo c >> f1 && git {cfg} add -A && "
            f"git {cfg} commit -qm two && echo committed")


@pytest.fixture
def repo(tmp_path):
    d = tmp_path / "repo"
    git_repository(d)
    return d


def crash_git(repo, setting, model):
    """The checker's exit statuses over every state of every point (12 at
    most a point: git fsck is slow; the sample past them drawn the same in
    every run, else a run whose draw missed the corrupt states failed), and
    the report."""
    status, report = crash_report("--each", "--states=12", "--seed=1", f"--model={model}",
                                  f"--check={CHECK}", repo, "--", "sh", "-c",
                                  workload(setting), timeout=600)
    assert not [p for p in report.points if p["unknown"]], "every file accounted for"
    return collections.Counter(s["check_status"] for p in report.points for s in p["states"]), \
        report


def test_points_are_gits_fsyncs(repo, tmp_path):
    """The durability calls crashtest counts are the fsyncs the kernel saw
    git make natively (core.fsync=all), in a copy of the same repository."""
    native = tmp_path / "native"
    subprocess.run(["cp", "-a", repo, native], check=True)
    r = run(["sh", "-c", workload("all")], cwd=native,
            events=[("syscalls:sys_enter_fsync", None), ("syscalls:sys_enter_fdatasync", None)])
    _, report = crash_git(repo, "all", "posix")
    assert r.syncs > 3 and report.points[-1]["durability_calls"] == r.syncs, \
        (r.counts, report.points[-1])


@pytest.mark.parametrize("model", ["posix", "ext4-ordered"])
def test_fsync_none_corrupts_the_repository(repo, model):
    """core.fsync=none: object names without their data (ext4's journal
    commits the names, the data was never written), a state fsck fails."""
    none, _ = crash_git(repo, "none", model)
    assert none[3] > 0, none


@pytest.mark.parametrize("setting", ["all", "batch"])
def test_ext4_loses_the_commit_but_never_corrupts(repo, setting):
    """core.fsync=all (and batch, whose one fsync of a dummy file commits
    ext4's journal and flushes the disk's cache after sync_file_range wrote
    the objects): never corrupt on ext4, but git syncs no directory, and the
    ref's rename is not committed when git says "committed": a crash right
    then loses the commit.  posix, the control, also finds states that fsck
    fails: names persisted apart, which ext4's in-order journal never
    leaves."""
    ext4, report = crash_git(repo, setting, "ext4-ordered")
    assert set(ext4) == {0, 4}, ext4
    assert report.points[-1]["verdict"] == "failed", report.verdicts()
    posix, _ = crash_git(repo, setting, "posix")
    assert posix[3] > 0, posix


WRITEOUT = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True)\n"
            "fd = os.open('data', os.O_WRONLY); os.pwrite(fd, b'new\\n', 0)\n"
            "assert libc.sync_file_range(fd, 0, 0, {flags}) == 0\n"
            "os.fsync(os.open('other', os.O_WRONLY | os.O_CREAT, 0o644))\n")


@pytest.mark.parametrize("flags, kept", [(7, True), (2, False)], ids=["waited", "started"])
def test_writeout_then_any_fsync_is_durable_on_ext4(tmp_path, flags, kept):
    """sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER), then an fsync of
    another file: ext4 keeps the data in every state; with WRITE alone (not
    waited for) it may not have reached the disk when the cache was
    flushed."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "data").write_text("old\n")
    status, report = crash_report("--at=1", "--model=ext4-ordered", "--check=grep -qx new data",
                                  d, "--", "python3", "-c", WRITEOUT.format(flags=flags))
    assert report.points[0]["verdict"] == ("ok" if kept else "failed"), report.verdicts()
