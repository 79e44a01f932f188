# SPDX-License-Identifier: MIT
"""crashtest on everyday commands: coreutils writing through stdio to a
standard output a shell redirected into the copy (glibc's writes pass the
preload: the library holds the file from the program's start and pictures
it), with the verdicts a write(2) program and the static build get; an
unknown point, never failed; the command's own exit status in the report
and in crashtest's; --at past the last point; a run interrupted by a
signal; --first-failure."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import jsonschema
import pytest

from conftest import TESTS, run
from helpers import CRASHTEST, CRASHTEST_SCHEMA, PYTHON, crash_report

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


def crashtest_text(*args, env=None):
    cmd = [CRASHTEST, *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    return r.returncode, r.stdout, r.stderr


# What the command does, and how it ends: its exit status or its signal.
FAILING = {"typo": ([PYTHON, "typo.py"], {"exit": 2, "signal": None}, "exit status 2"),
           "exit 3": (["sh", "-c", "echo x > data; exit 3"], {"exit": 3, "signal": None},
                      "exit status 3"),
           "segv": (["sh", "-c", "kill -SEGV $$"], {"exit": None, "signal": "SIGSEGV"},
                    "killed by SIGSEGV")}


@pytest.mark.parametrize("case", FAILING)
def test_a_command_that_failed_on_its_own_is_not_ok(tmp_path, case):
    """python3 on a script that is not there, sh -c 'exit 3', a shell that
    kills itself with SIGSEGV: the command failed (natively too), and a
    checker that passes every state made it "1 ok", exit 0.  Now its status
    is in the text and the JSON, and crashtest exits 4, even where a check
    failed too.  Control: the same command succeeding is ok, exit 0."""
    cmd, status, words = FAILING[case]
    d = tmp_path / "d"
    d.mkdir()
    native = subprocess.run(cmd, cwd=d, capture_output=True, timeout=60)
    assert native.returncode == (status["exit"] if status["exit"] else -11), native
    code, report = crash_report("--check=true", d, "--", *cmd)
    assert code == 4 and report.verdicts() == [("end", "ok")], (code, report.verdicts())
    assert report["command_status"] == dict(status, stopped_at_point=None, failed=True)
    jsonschema.validate(report, json.loads(CRASHTEST_SCHEMA.read_text()))
    code, out, _ = crashtest_text("--check=false", d, "--", *cmd)
    assert code == 4 and f"command: {words}: it failed on its own (crashtest exits 4)\n" in out, out
    code, report = crash_report("--check=true", d, "--", "sh", "-c", "echo x > data; exit 0")
    assert code == 0 and report["command_status"] == {"exit": 0, "signal": None,
                                                      "stopped_at_point": None, "failed": False}


TWENTY = "for i in $(seq 20); do echo $i > f; sync; done"


def test_at_past_the_last_point_is_an_error(tmp_path):
    """--at=500 on a run of 20 points checked the end alone and said ok.
    Now an error (125) that says how many points there were, no report,
    nothing left in TMPDIR.  Control: --at=20 stops the command there, ok,
    its status "stopped", not failed."""
    d, tmp = tmp_path / "d", tmp_path / "tmp"
    d.mkdir()
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    code, out, err = crashtest_text("--at=500", "--check=true", d, "--", "sh", "-c", TWENTY,
                                    env=env)
    assert code == 125 and out == "", (code, out)
    assert "crashtest: --at=500: the command passed 20 crash points, then exited with " \
           "status 0" in err, err
    assert not list(tmp.iterdir()), list(tmp.iterdir())
    code, report = crash_report("--at=20", "--check=true", d, "--", "sh", "-c", TWENTY)
    assert code == 0 and report.verdicts() == [("sync", "ok")], report.verdicts()
    assert report["command_status"] == {"exit": None, "signal": None, "stopped_at_point": 20,
                                        "failed": False}, report["command_status"]
    code, out, _ = crashtest_text("--at=20", "--check=true", d, "--", "sh", "-c", TWENTY)
    assert "command: stopped at point 20 (--at)\n" in out, out


def started(marker, lines, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker.exists() and len(marker.read_text().splitlines()) >= lines:
            return
        time.sleep(0.02)
    raise AssertionError(f"{marker} never had {lines} lines")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_an_interrupted_run_ends_with_its_summary(tmp_path, sig, json_out):
    """A signal while the states of the third point are checked (the CI's
    timeout, a ^C): the report printed half a state (text) or nothing
    (JSON), and no summary.  Now it is whole: the points done, the command's
    status, the totals and what interrupted it; crashtest still dies of the
    signal, its directory removed."""
    d, tmp, marker = tmp_path / "d", tmp_path / "tmp", tmp_path / "checked"
    d.mkdir()
    tmp.mkdir()
    cmd = [CRASHTEST, *(["--json"] if json_out else []), "--each",
           f"--check=echo $CRASHTEST_POINT >> {marker}; sleep 0.2", d, "--", "sh", "-c", TWENTY]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, TMPDIR=str(tmp)))
    try:
        started(marker, 3)
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == -sig and not list(tmp.iterdir()), (p.returncode, err)
    name = signal.Signals(sig).name
    if json_out:
        report = json.loads(out)
        jsonschema.validate(report, json.loads(CRASHTEST_SCHEMA.read_text()))
        assert report["interrupted"] == name and report["command_status"]["exit"] == 0, report
        assert 2 <= report["totals"]["points"] == len(report["points"]) < 21, report["totals"]
        assert report["totals"]["ok"] == report["totals"]["points"], report["totals"]
        return
    lines = out.splitlines()
    points = [line for line in lines if line.startswith("point ")]
    assert 2 <= len(points) < 21 and all(line.endswith(": ok") for line in points), lines
    assert lines[-3:] == ["command: exit status 0", lines[-2],
                          f"interrupted by {name} after {len(points)} of 21 points: the others "
                          "were not built"], lines
    assert lines[-2].startswith(f"{len(points)} points, {len(points)} states"), lines


def test_interrupted_while_the_command_runs(tmp_path):
    """SIGINT before the command ended: the report says no point was built,
    in JSON too."""
    d, marker = tmp_path / "d", tmp_path / "ran"
    d.mkdir()
    cmd = [CRASHTEST, "--json", "--check=true", d, "--", "sh", "-c", f"echo >> {marker}; sleep 60"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started(marker, 1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    report = json.loads(out)
    assert p.returncode == -signal.SIGINT and report["interrupted"] == "SIGINT", (out, err)
    assert report["points"] == [] and report["command_status"] == {
        "exit": None, "signal": None, "stopped_at_point": None, "failed": False}, report


APPEND = "for i in $(seq 8); do echo $i >> log; echo $i; done"
# Every line the program printed is in the log.
LOGGED = 'test "$(cat log 2>/dev/null | wc -l)" -ge "$(wc -l < "$CRASHTEST_OUTPUT")"'


def test_first_failure_prints_one_failed_state_a_point(tmp_path):
    """An append loop that prints each line it logged, with no sync: every
    point fails in many states, each printed with its lost changes and the
    checker's status.  --first-failure prints the first of each point and
    how many more failed; the verdicts and totals are the same."""
    d = tmp_path / "d"
    d.mkdir()
    args = ["--each", "--seed=1", "--states=8", f"--check={LOGGED}", d, "--", "sh", "-c", APPEND]
    code, full, _ = crashtest_text(*args)
    code1, first, _ = crashtest_text("--first-failure", *args)
    assert code == code1 == 1, (code, code1)
    heads = [line for line in full.splitlines() if line.startswith(("point", "end"))]
    assert len(heads) == 8 and all(h.endswith("FAILED") for h in heads), heads
    assert [line for line in first.splitlines() if line.startswith(("point", "end"))] == heads
    summary = [re.sub(r", [\d.]+ s$", "", text.splitlines()[-1]) for text in (full, first)]
    assert summary[0] == summary[1], summary
    states = [full.count("\n  state: "), first.count("\n  state: ")]
    assert states[0] > 3 * len(heads) and states[1] == len(heads), states
    more = re.findall(r"\n  and (\d+) more states? failed \(not shown: --first-failure\)\n", first)
    assert sum(map(int, more)) + len(heads) == states[0], (more, states)


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
