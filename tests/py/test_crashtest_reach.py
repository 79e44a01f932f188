# SPDX-License-Identifier: MIT
"""crashtest and the programs its library cannot enter (static, Go): what
they change is past the journal, so every point after they start is
unknown -- never ok -- and the report names the program and why, however
it was started: as COMMAND, by a shell's exec, by posix_spawn."""
import sys

import pytest

from conftest import TESTS
from helpers import crash_report

STATIC = TESTS / "fsyncs-static"
WHY = f"{STATIC} is a static program: what it changes is past crashtest's library"
SPAWN = ("import os, sys; os.waitpid(os.posix_spawn(sys.argv[1], ['x', 'f', '2', 'fsync'], "
         "os.environ), 0)")


def reasons(report):
    return [set(p.get("unknown", [])) for p in report.points]


@pytest.mark.parametrize("how", ["command", "shell", "posix_spawn"])
def test_a_static_program_is_named(tmp_path, how):
    cmd = {"command": [STATIC, "f", "2", "fsync"],
           "shell": ["sh", "-c", f"echo a > g; sync; {STATIC} f 2 fsync; sync"],
           "posix_spawn": [sys.executable, "-c", SPAWN, STATIC]}[how]
    d = tmp_path / "d"
    d.mkdir()
    _, report = crash_report("--each", "--check=true", d, "--", *cmd)
    assert report.points and all(v == "unknown" for _, v in report.verdicts()), report
    # Named from the point it starts: the shell's first sync comes before.
    named = [WHY in r for r in reasons(report)]
    assert named[-1] and named == sorted(named), reasons(report)
    if how == "shell":
        assert not named[0], reasons(report)


@pytest.mark.go
def test_a_go_program_is_named(tmp_path, go_program):
    d = tmp_path / "d"
    d.mkdir()
    _, report = crash_report("--check=true", d, "--", go_program, d / "f", "3")
    assert f"{go_program} is a Go program: what it changes is past crashtest's library" \
        in reasons(report)[-1], reasons(report)


def test_a_dynamic_program_is_not(tmp_path):
    """The control: the same calls, from a program the library enters."""
    d = tmp_path / "d"
    d.mkdir()
    code, report = crash_report("--each", "--check=true", d, "--", TESTS / "fsyncs", "f", "2", "fsync")
    assert code == 0 and {v for _, v in report.verdicts()} == {"ok"}, reasons(report)
