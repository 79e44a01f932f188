# SPDX-License-Identifier: MIT
"""crashtest on git: `add` + `commit` with core.fsync=none, all and
fsyncMethod=batch, under both models, at every write and durability call.
`git fsck --strict` and the branch head after the crash are the verdict.
Each setting's finding sits beside another's, its control, and the crash
points are checked against the kernel's count of git's fsync calls."""
import collections
import json
import subprocess

import pytest

from conftest import cmdline, require, run
from crashlib import PYTHON, CRASHTEST

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
    git = require("git")
    d = tmp_path / "repo"
    d.mkdir()
    for cmd in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        subprocess.run([git, *cmd], cwd=d, check=True)
    for i in range(3):
        (d / f"f{i}").write_text(f"{i}\n")
    subprocess.run([git, "add", "-A"], cwd=d, check=True)
    subprocess.run([git, "commit", "-qm", "one"], cwd=d, check=True)
    return d


def crash_git(repo, setting, model):
    cmd = [CRASHTEST, "--json", "--each", "--writes", f"--model={model}", f"--check={CHECK}",
           repo, "--", "sh", "-c", workload(setting)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), f"\nrerun: {cmdline(cmd)}\n{r.stdout[-3000:]}{r.stderr}"
    points = json.loads(r.stdout)["points"]
    assert not [p for p in points if p["unknown"]], "every file accounted for"
    return collections.Counter(p["check_status"] for p in points), points


def test_points_are_gits_fsyncs(repo, tmp_path):
    """The durability calls crashtest counts are the fsyncs the kernel saw
    git make natively (core.fsync=all), in a copy of the same repository."""
    native = tmp_path / "native"
    subprocess.run(["cp", "-a", repo, native], check=True)
    r = run(["sh", "-c", workload("all")], cwd=native,
            events=[("syscalls:sys_enter_fsync", None), ("syscalls:sys_enter_fdatasync", None)])
    _, points = crash_git(repo, "all", "posix")
    assert r.syncs > 3 and points[-1]["durability_calls"] == r.syncs, (r.counts, points[-1])


def test_fsync_none_corrupts_the_repository_on_ext4(repo):
    """core.fsync=none on ext4: object names are journaled, their data not:
    empty objects, and fsck fails at most points (git's zero-length object
    files after a power cut).  core.fsync=all is the control: never."""
    none, _ = crash_git(repo, "none", "ext4-ordered")
    assert none[3] > 10, none
    synced, points = crash_git(repo, "all", "ext4-ordered")
    assert set(synced) == {0} and len(points) > 20, synced


def test_git_never_syncs_a_directory(repo):
    """Under posix even core.fsync=all loses the commit at the end: git
    fsyncs files, never the directories their names are in, so no new object
    or ref name is durable.  It is never corrupt: the old state comes back."""
    counts, points = crash_git(repo, "all", "posix")
    assert set(counts) == {0, 4} and points[-1]["check_status"] == 4, counts
    assert "renamed .git/refs/heads/master.lock -> .git/refs/heads/master" in \
        points[-1]["undone"], points[-1]


def test_batch_relies_on_ext4s_journal(repo):
    """core.fsyncMethod=batch writes objects back with sync_file_range and
    makes them durable with one fsync of a dummy file: on ext4 the journal
    commit of that fsync flushes the disk's cache, so it holds at every
    point; POSIX promises nothing of the kind, and the end loses the commit."""
    ext4, _ = crash_git(repo, "batch", "ext4-ordered")
    assert set(ext4) == {0}, ext4
    posix, points = crash_git(repo, "batch", "posix")
    assert set(posix) == {0, 4} and points[-1]["check_status"] == 4, posix


WRITEOUT = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True)\n"
            "fd = os.open('data', os.O_WRONLY | os.O_TRUNC); os.write(fd, b'new\\n')\n"
            "assert libc.sync_file_range(fd, 0, 0, {flags}) == 0\n"
            "os.fsync(os.open('other', os.O_WRONLY | os.O_CREAT, 0o644))\n")


@pytest.mark.parametrize("flags, kept", [(7, True), (2, False)], ids=["waited", "started"])
def test_writeout_then_any_fsync_is_durable_on_ext4(tmp_path, flags, kept):
    """sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER), then an fsync of
    another file: ext4 keeps the data; with WRITE alone (not waited for) it
    may not have reached the disk when the cache was flushed."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "data").write_text("old\n")
    cmd = [CRASHTEST, "--json", "--model=ext4-ordered", "--check=grep -qx new data", d, "--",
           PYTHON, "-c", WRITEOUT.format(flags=flags)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert json.loads(r.stdout)["points"][0]["verdict"] == ("ok" if kept else "failed"), r
