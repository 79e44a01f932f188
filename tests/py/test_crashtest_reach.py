# SPDX-License-Identifier: MIT
"""crashtest and the programs its library cannot enter (static, Go): the
seccomp supervisor follows them (seccomp/crash.c), however they were
started -- as COMMAND, by a shell's exec, by posix_spawn -- and the run has
the points and states the same calls from a dynamic program have.  Where
no supervisor follows them (--seccomp=off, a filter that cannot be had),
what they change is past the journal: every point after they start is
unknown -- never ok -- and the report names the program and why."""
import subprocess
import sys

import pytest

from conftest import EATMYDATA, TESTS
from helpers import CRASHTEST, crash_report

STATIC = TESTS / "fsyncs-static"
DYNAMIC = TESTS / "fsyncs"
WHY = f"{STATIC} is a static program: what it changes is past crashtest's library"
SPAWN = ("import os, sys; os.waitpid(os.posix_spawn(sys.argv[1], ['x', 'f', '2', 'fsync'], "
         "os.environ), 0)")


def reasons(report):
    return [set(p.get("unknown", [])) for p in report.points]


def afters(report):
    return [p["after"] for p in report.points]


def command(how, program):
    return {"command": [program, "f", "2", "fsync"],
            "shell": ["sh", "-c", f"echo a > g; sync; {program} f 2 fsync; sync"],
            "posix_spawn": [sys.executable, "-c", SPAWN, program]}[how]


@pytest.mark.parametrize("how", ["command", "shell", "posix_spawn"])
def test_a_static_program_is_followed(tmp_path, how):
    """The points and states of the static program are those of the same
    calls from the dynamic one, and none is unknown."""
    runs = []
    for program in (DYNAMIC, STATIC):
        d = tmp_path / program.name
        d.mkdir()
        code, report = crash_report("--each", "--check=true", d, "--", *command(how, program))
        assert code == 0 and {v for _, v in report.verdicts()} == {"ok"}, reasons(report)
        runs.append([(p["after"], p["changes"], p["durability_calls"], len(p["states"]))
                     for p in report.points])
    assert runs[0] == runs[1] and [p[0] for p in runs[1]].count("fsync(f)") == 2, runs


@pytest.mark.parametrize("how", ["command", "shell", "posix_spawn"])
def test_without_the_supervisor_a_static_program_is_named(tmp_path, how):
    d = tmp_path / "d"
    d.mkdir()
    _, report = crash_report("--seccomp=off", "--each", "--check=true", d, "--",
                             *command(how, STATIC))
    assert report.points and all(v == "unknown" for _, v in report.verdicts()), report
    # Named from the point it starts: the shell's first sync comes before.
    named = [any(WHY in w or f"{STATIC} runs past" in w for w in r) for r in reasons(report)]
    assert named[-1] and named == sorted(named), reasons(report)
    if how == "shell":
        assert not named[0], reasons(report)


def test_a_filter_that_cannot_be_had_is_named(tmp_path):
    """Under another supervisor's filter (eatmydata --seccomp=on), crashtest's
    cannot be installed: the static program runs past the journal, and
    the run says so instead of ok."""
    d = tmp_path / "d"
    d.mkdir()
    r = subprocess.run([EATMYDATA, "--seccomp=on", CRASHTEST, "--json",
                        "--check=true", d, "--", STATIC, "f", "2", "fsync"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "under another seccomp supervisor's filter already" in r.stdout, r.stdout


@pytest.mark.go
def test_a_go_program_is_followed(tmp_path, go_program):
    d = tmp_path / "d"
    d.mkdir()
    code, report = crash_report("--each", "--check=true", d, "--", go_program, "f", "3")
    # fsync.go: 3 + 1 fsyncs, and a write on an O_SYNC file, kept O_SYNC
    assert code == 0 and afters(report) == ["fsync(f)"] * 4 + ["O_SYNC write f.sync [0, +13)", "end"], \
        (afters(report), reasons(report))


@pytest.mark.go
def test_without_the_supervisor_a_go_program_is_named(tmp_path, go_program):
    d = tmp_path / "d"
    d.mkdir()
    _, report = crash_report("--seccomp=off", "--check=true", d, "--", go_program, "f", "3")
    assert f"{go_program} is a Go program: what it changes is past crashtest's library" \
        in reasons(report)[-1], reasons(report)


def test_a_dynamic_program_is_not(tmp_path):
    """The control: the same calls, from a program the library enters."""
    d = tmp_path / "d"
    d.mkdir()
    code, report = crash_report("--each", "--check=true", d, "--", DYNAMIC, "f", "2", "fsync")
    assert code == 0 and {v for _, v in report.verdicts()} == {"ok"}, reasons(report)
