# SPDX-License-Identifier: MIT
"""The models checked against the kernel (tests/py/kernel.py): real
programs run on loop-mounted ext4 and xfs, the device copied at every crash
point (some after the program was held stopped while the journal committed),
each copy mounted and checked.  Every verdict the kernel gave at a point is
among the verdicts crashtest's model gave there; the models are honest where
the kernel can show them wrong.  A failing copy is a state the kernel really
left."""
import os
import subprocess

import pytest

from conftest import require
from helpers import CRASH, CRASHY, PYTHON, REPLACED, SQL, SQL_CHECK, git_repository
from kernel import host, kernel_verdicts, model_statuses, run_case, writeback

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="loop devices and mounts need root"),
              pytest.mark.root, pytest.mark.slow]


@pytest.fixture(scope="module")
def hostdir(tmp_path_factory):
    for tool in ("mkfs.xfs", "mkfs.ext4", "xfs_repair", "e2fsck"):
        require(tool)
    with host(tmp_path_factory.mktemp("kernel")) as where:
        yield where


def old_data(d):
    d.mkdir()
    (d / "data").write_text("old\n")


def empty_log(d):
    d.mkdir()
    (d / "log").write_bytes(b"")


def database(d):
    d.mkdir()
    subprocess.run([require("sqlite3"), d / "db", "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"
                    "INSERT INTO t VALUES(0, randomblob(5000));"], check=True)


ATOMIC = "grep -qx -e old -e expected data"
SYNCFS = ("import ctypes, os\n"
          "fd = os.open('data.tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n"
          "os.write(fd, b'expected\\n'); os.close(fd)\n"
          "os.rename('data.tmp', 'data')\n"
          "print('renamed', flush=True)\n"
          "ctypes.CDLL(None).syncfs(os.open('.', os.O_RDONLY))\n")
# A rewrite with O_TRUNC, closed, then a marker made: auto_da_alloc's
# replace-by-truncate rule.
REWRITE = ("import os\n"
           "fd = os.open('data', os.O_WRONLY | os.O_TRUNC)\n"
           "os.write(fd, b'expected\\n'); os.close(fd)\n"
           "os.close(os.open('done', os.O_WRONLY | os.O_CREAT, 0o644))\n")
MARKED = "test ! -e done || grep -qx expected data"
GIT = ("echo b > g && echo c >> f1 && git -c core.fsync=all -c gc.auto=0 add -A && "
       "git -c core.fsync=all -c gc.auto=0 commit -qm two && echo committed")
GIT_CHECK = ('git fsck --no-progress --strict >/dev/null 2>&1 || exit 3; '
             'if grep -q committed "$CRASHTEST_OUTPUT"; then '
             'test "$(git log -1 --format=%s)" = two || exit 4; fi')

CASES = {
    "crashy-bad": (old_data, [CRASHY, "bad", "data", "expected"], REPLACED),
    "crashy-dironly": (old_data, [CRASHY, "dironly", "data", "expected"], REPLACED),
    "crashy-good": (old_data, [CRASHY, "good", "data", "expected"], REPLACED),
    "crashy-truncate": (old_data, [CRASHY, "truncate", "data", "expected"],
                        "grep -qx -e old -e expected data"),
    "sqlite-full": (database, ["sh", "-c", SQL, "sql", "FULL"], SQL_CHECK),
    "sqlite-extra": (database, ["sh", "-c", SQL, "sql", "EXTRA"], SQL_CHECK),
    "sqlite-wal": (database, ["sh", "-c", SQL.replace("DELETE", "WAL"), "sql", "FULL"],
                   SQL_CHECK),
    "git-all": (git_repository, ["sh", "-c", GIT], GIT_CHECK),
    # The rules of the unit of persistence and of auto_da_alloc.
    "appenders": (empty_log, [PYTHON, CRASH / "appenders.py"],
                  f"{PYTHON} {CRASH / 'appenders_check.py'}"),
    "crashy-bad-atomic": (old_data, [CRASHY, "bad", "data", "expected"], ATOMIC),
    "rename-syncfs-atomic": (old_data, [PYTHON, "-c", SYNCFS], ATOMIC),
    "rewrite-then-mark": (old_data, [PYTHON, "-c", REWRITE], MARKED),
    "shell-rewrite-then-mark": (old_data, ["sh", "-c", "echo expected > data; : > done"], MARKED),
}

# The other way: on every case, a verdict the model fails with at a point
# is one the kernel left at some point of the case, or one a rule of
# doc/crashtest.md gives, named here (no false FAILED).
AUTONOMOUS = "a commit comes on its own between any two changes (jbd2, xfs's log: a timer)"
RULES = {
    "crashy-bad": {("ext4", 1): AUTONOMOUS + ": none yet after the rename",
                   ("xfs", 1): AUTONOMOUS + ": none yet after the rename"},
    "crashy-dironly": {("ext4", 1): "ext4: a commit an fsync forces does not wait for "
                                    "auto_da_alloc's flush (Jan Kara, linux-ext4)",
                       ("xfs", 1): "xfs: no rule carries a file's data with a rename"},
    "crashy-truncate": {("ext4", 1): AUTONOMOUS + ": the truncation's, before the release",
                        ("xfs", 1): AUTONOMOUS + ": the truncation's, before the release"},
    "crashy-bad-atomic": {("xfs", 1): "xfs: no rule carries a file's data with a rename"},
    "rename-syncfs-atomic": {("xfs", 1): "xfs: no rule carries a file's data with a rename"},
}


@pytest.mark.parametrize("fs", ["ext4", "xfs"])
@pytest.mark.parametrize("name", CASES)
def test_the_kernels_verdicts_are_the_models(hostdir, tmp_path, fs, name):
    """Each crash point's kernel copy checked; its exit status is one of
    those of the model's states there (none was cut by a bound).  With the
    kernel writing back every 50 ms, unsynced data reaches the disk between
    the program's calls, as it does on a busy machine.  The points copied
    and held are drawn with CRASHTEST_KERNEL_SEED (default 1): other seeds
    explore other moments.  The other way, on every case: each verdict the
    model fails with is one a kernel copy of the case gave, or one a rule
    of doc/crashtest.md gives (named in RULES)."""
    setup, command, check = CASES[name]
    with writeback(5):
        case = run_case(tmp_path, hostdir, fs, setup, command, check,
                        seed=int(os.environ.get("CRASHTEST_KERNEL_SEED", "1")))
    statuses = model_statuses(case.report)
    assert not [p for p in case.report["points"] if p["cut"]], "a bound cut the states"
    kernel = kernel_verdicts(case, tmp_path, check)
    assert 0 < len(kernel) <= len(statuses), (len(kernel), len(statuses))
    wrong = [(point, status, held, sorted(statuses[point])) for point, status, held in kernel
             if status not in statuses[point]]
    assert not wrong, f"the kernel left states the model did not build: {wrong}"
    left = {status for _, status, _ in kernel}
    unshown = {(point, status) for point, got in statuses.items() for status in got
               if status and status not in left and (fs, status) not in RULES.get(name, {})}
    assert not unshown, f"the model failed with what no kernel copy or rule shows: {unshown}"
