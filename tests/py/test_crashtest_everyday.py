# SPDX-License-Identifier: MIT
"""crashtest on everyday commands: coreutils writing through stdio to a
standard output a shell redirected into the copy (glibc's writes pass the
preload: the library holds the file from the program's start and pictures
it), with the verdicts a write(2) program and the static build get; an
unknown point, never failed."""
import shutil
import subprocess

import pytest

from conftest import TESTS, run
from helpers import PYTHON, crash_report

LINES = TESTS / "lines"
LINES_STATIC = TESTS / "lines-static"
# d holds the numbers 1 to 1000; each program writes them again.
COUNT = 'test "$(wc -l < d)" = 1000'
COREUTILS = {"seq": "seq 1000", "sort": "sort -n d", "sed": "sed -n p d",
             "tr": "tr x y < d", "head": "head -n 1000 d"}
# Replaced with a sync before and after the rename, or with none.
SYNCED = "{} > d.tmp; sync; mv d.tmp d; sync"
UNSYNCED = "{} > d.tmp && mv d.tmp d"


@pytest.fixture
def numbers(tmp_path):
    d = tmp_path / "numbers"
    d.mkdir()
    (d / "d").write_text("".join(f"{i}\n" for i in range(1, 1001)))
    return d


def outcome(d, script, check=COUNT):
    """crashtest --each of sh -c script: its status, each point's call and
    verdict, the reasons for unknown, and what the failed states lost."""
    status, report = crash_report("--each", f"--check={check}", d, "--", "sh", "-c", script)
    lost = sorted(tuple(c.split(" ")[0] for c in s["lost_changes"]) for _, s in report.failed())
    return status, report.verdicts(), [p["unknown"] for p in report.points if p["unknown"]], lost


def native(d, tmp_path, script):
    """script run natively in a copy of d: the sync calls the kernel saw,
    and the copy's d."""
    copy = tmp_path / "native"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(d, copy)
    r = run(["sh", "-c", script], cwd=copy, events=[("syscalls:sys_enter_sync", None)])
    return r.counts["syscalls:sys_enter_sync"], (copy / "d").read_text()


@pytest.mark.parametrize("program", COREUTILS)
def test_coreutils_to_a_redirected_stdout_get_the_verdict_of_their_syncs(numbers, tmp_path,
                                                                        program):
    """seq, sort, sed, tr, head print through stdio into d.tmp, which then
    replaces d.  With a sync before the rename every point is ok (the
    points are the kernel's two syncs); with none, the end fails in the
    state that kept the rename and lost the contents.  Each as cat, whose
    write(2) the library sees, gets it; none is unknown.  Native control:
    the program does write the 1000 lines."""
    syncs, text = native(numbers, tmp_path, SYNCED.format(COREUTILS[program]))
    assert syncs == 2 and text == (numbers / "d").read_text(), (syncs, text[:50])
    synced = outcome(numbers, SYNCED.format(COREUTILS[program]))
    assert synced == (0, [("sync", "ok"), ("sync", "ok"), ("end", "ok")], [], []), synced
    assert synced == outcome(numbers, SYNCED.format("cat d"))
    unsynced = outcome(numbers, UNSYNCED.format(COREUTILS[program]))
    assert unsynced == (1, [("end", "failed")], [], [("contents",)]), unsynced
    control = outcome(numbers, UNSYNCED.format("cat d"))
    assert control == (1, [("end", "failed")], [], [("write",)]), control


@pytest.mark.parametrize("script", [SYNCED, UNSYNCED], ids=["synced", "unsynced"])
def test_printf_from_c_matches_write_and_the_static_build(numbers, script):
    """A C program's printf into the redirected standard output gets the
    verdicts of the same lines each written by write(2), and of its static
    build (followed by the supervisor): ok at every point after a sync,
    failed at the end without one, never unknown."""
    runs = [outcome(numbers, script.format(f"{program} {how} 1000"))
            for program, how in [(LINES, "printf"), (LINES, "write"), (LINES_STATIC, "printf")]]
    verdicts = [(status, points, unknown) for status, points, unknown, _ in runs]
    want = (0, [("sync", "ok"), ("sync", "ok"), ("end", "ok")], []) if script == SYNCED else \
        (1, [("end", "failed")], [])
    assert verdicts == [want] * 3, runs


# After the sync (point 2 on), the three lines printed before it.
FIRST_THREE = ('case $CRASHTEST_POINT in 1) ;; '
               '*) test "$(head -n 3 d | tr "\\n" " ")" = "1 2 3 " ;; esac')
SYNC_BY_A_CHILD = {
    # bash's echo prints through stdio; sync(1) inherits the same d.
    "bash": 'bash -c "exec > d; echo 1; echo 2; echo 3; sync; echo 4"',
    # subprocess closes every other descriptor, the library's own too,
    # before it execs sync(1).
    "python": f"{PYTHON} -c 'import subprocess; print(1); print(2); print(3, flush=True); "
              "subprocess.run([\"sync\"]); print(4)' > d"}


@pytest.mark.parametrize("shell", SYNC_BY_A_CHILD)
def test_a_sync_by_a_child_with_the_same_stdout_pictures_it(tmp_path, shell):
    """The program prints into d, then its child sync(1), whose standard
    output is d too, makes it durable: the child pictures d as it syncs,
    so every state after has the three lines.  Controls: the same sync with
    its standard output elsewhere cannot picture d (unknown, never ok);
    with no sync the same checker fails."""
    d = tmp_path / "d"
    d.mkdir()
    got = outcome(d, SYNC_BY_A_CHILD[shell], FIRST_THREE)
    assert got == (0, [("during sync", "ok"), ("sync", "ok"), ("end", "ok")], [], []), got
    status, points, unknown, _ = outcome(d, SYNC_BY_A_CHILD[shell].replace(
        "sync;" if shell == "bash" else '["sync"]', "sync >/dev/null;" if shell == "bash" else
        '["sync"], stdout=subprocess.DEVNULL'), FIRST_THREE)
    assert status == 2 and {v for _, v in points} == {"unknown"}, (points, unknown)
    status, points, _, _ = outcome(d, SYNC_BY_A_CHILD[shell].replace("sync", "true"),
                                   FIRST_THREE)
    assert status == 1 and points[-1] == ("end", "failed"), points


def test_an_unknown_point_is_never_failed(numbers):
    """The static printf with no supervisor (--seccomp=off): its writes are
    past the journal, and the states were built without them and checked
    -- the checker failed in them, and the point counted as failed.  Now no
    checker runs in a state that is not what a crash would leave: the
    point is unknown, its states unchecked (exit 2).  Control: followed by
    the supervisor, the same checker fails the states it should."""
    script = f"{LINES_STATIC} printf 1000 > d.tmp && mv d.tmp d"
    code, report = crash_report("--seccomp=off", f"--check={COUNT}", numbers, "--", "sh", "-c",
                                script)
    assert code == 2 and report.verdicts() == [("end", "unknown")], report.verdicts()
    assert {(s["verdict"], s["check_status"]) for s in report.points[0]["states"]} == \
        {("unknown", None)}, report.points[0]["states"]
    assert report["totals"]["checked"] == 0 and report["totals"]["failed"] == 0, report["totals"]
    code, report = crash_report(f"--check={COUNT}", numbers, "--", "sh", "-c", script)
    assert code == 1 and report.verdicts() == [("end", "failed")], report.verdicts()
