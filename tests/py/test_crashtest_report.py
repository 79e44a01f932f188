# SPDX-License-Identifier: MIT
"""crashtest's report, read as a new user and a CI log would: a line per
crash point with its verdict, the states that failed with what their checker
printed, each file once with its count, a summary; names that cannot forge a
line or reach the terminal; JSON that is always JSON and follows its schema;
a run with no checker that says so; progress on a terminal only."""
import json
import re
import shlex
import subprocess

import jsonschema
import pytest

from conftest import cmdline, require
from helpers import CRASHTEST, CRASHTEST_SCHEMA, CRASHY, PYTHON, REPLACED, crash_report

SUMMARY = re.compile(r"^\d+ points?, \d+ states? \(\d+ distinct, \d+ checked\): \d+ failed, "
                     r"\d+ unknown, \d+ ok, \d+ unchecked, [\d.]+ s$")


def text(*args, **kw):
    cmd = [CRASHTEST, *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, timeout=300, **kw)
    assert r.returncode in (0, 1, 2, 3), f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    return r


def test_a_line_per_point_and_a_summary(old):
    """Each point on one line, with its verdict; the failed states under it
    with what the checker printed, labelled; a summary last."""
    r = text("--each", "--writes", f"--check={REPLACED} || {{ echo data: $(cat data); exit 1; }}",
             old, "--", CRASHY, "bad", "data", "expected")
    lines = r.stdout.decode().splitlines()
    heads = [line for line in lines if line.startswith(("point ", "end"))]
    assert [h.split(":")[-1].strip() for h in heads] == ["ok", "ok", "FAILED", "FAILED"], lines
    assert SUMMARY.match(lines[-1]), lines[-1]
    assert "    | data: old" in lines, lines
    assert lines[0].startswith("crashtest: posix model"), lines[0]


RENAMES = ("import os\nfor i in range(20):\n"
           "    open('cfg.new', 'w').write(str(i)); os.rename('cfg.new', 'cfg')\n"
           "print('done')")


def test_each_file_once_with_its_changes(old):
    """20 renames over one file: the lost changes are listed per file, once
    each with how many ("cfg, cfg, cfg, ..." said nothing)."""
    r = text("--classes=lost", "--check=false", old, "--", PYTHON, "-c", RENAMES)
    lost = [line for line in r.stdout.decode().splitlines() if "lost:" in line]
    assert lost == ["    lost: cfg.new (40 changes), cfg (20 changes)"], lost


def test_no_check_says_nothing_was_checked(old):
    """Without --check a naive program "passed" (exit 0, every point
    unchecked): now exit 3, and the report says so."""
    r = text("--each", old, "--", CRASHY, "bad", "data", "expected")
    assert r.returncode == 3, r
    assert b"nothing was checked: give --check=CMD" in r.stdout, r.stdout
    status, report = crash_report(old, "--", CRASHY, "bad", "data", "expected")
    assert status == 3 and report["totals"]["unchecked"] == 1, report


HOSTILE = ("import os\n"
           "for name in [b'x\\nend (9 durability calls, 9 changes before): 1 state: ok',\n"
           "             b'\\x1b[31mred\\x1b[0m', b'bad\\xff\\xfeutf8', b'back\\\\slash']:\n"
           "    open(name, 'w').write('x')\n")


def test_names_cannot_forge_a_line_or_reach_the_terminal(old):
    """A name holding a newline and a verdict line forged a line of the
    report; escape sequences reached the terminal; invalid UTF-8 made JSON
    that was not JSON.  Now: no line of the text is the forged one, no
    escape byte in it, the bytes shown as \\xNN; JSON parses and follows
    its schema."""
    r = text("--writes", "--each", "--classes=kept", "--check=ls >&2; false", old, "--",
             PYTHON, "-c", HOSTILE)
    out = r.stdout
    assert b"\x1b" not in out and b"\xff" not in out, out
    assert b"\nend (9 durability calls, 9 changes before): 1 state: ok" not in out, out
    assert b"create x\\nend (9 durability calls" in out and b"bad\\xff\\xfeutf8" in out, out
    assert b"back\\\\slash" in out, out
    status, report = crash_report("--writes", "--each", "--classes=kept",
                                  "--check=ls >&2; false", old, "--", PYTHON, "-c", HOSTILE)
    jsonschema.validate(report, json.loads(CRASHTEST_SCHEMA.read_text()))
    afters = [p["after"] for p in report.points]
    assert "create \\x1b[31mred\\x1b[0m" in afters and "create bad\\xff\\xfeutf8" in afters


def test_json_follows_its_schema_and_says_what_ran(old):
    """--json: a schema id and version, the command, DIR, the model, the
    seed (the same seed draws the same points and states), the bound, the
    totals; every point and state as the schema says."""
    status, report = crash_report("--random=2", "--seed=9", "--writes", "--model=xfs",
                                  "--states=3", f"--check={REPLACED}", old, "--", CRASHY,
                                  "good", "data", "expected")
    jsonschema.validate(report, json.loads(CRASHTEST_SCHEMA.read_text()))
    assert report["schema"] == "eatmydata.crashtest/1" and report["version"] == 1
    assert report["command"][1:] == ["good", "data", "expected"] and report["model"] == "xfs"
    assert report["seed"] == 9 and report["states_bound"] == 3 and report["dir"] == str(old)
    assert report["totals"]["points"] == 3 and report["totals"]["ok"] == 3, report["totals"]


@pytest.mark.root
def test_the_schema_is_installed(tmp_path):
    """make install puts the schema beside the manual."""
    dest = tmp_path / "dest"
    subprocess.run(["make", "-s", "install", f"DESTDIR={dest}", "PREFIX=/usr"],
                   cwd=CRASHTEST_SCHEMA.parents[1], check=True, capture_output=True, timeout=600)
    assert (dest / "usr/share/eatmydata/crashtest.schema.json").read_bytes() == \
        CRASHTEST_SCHEMA.read_bytes()


SLOW = "sleep 0.4"


@pytest.mark.slow
@pytest.mark.parametrize("tty", [True, False])
def test_progress_on_a_terminal_only(old, tty):
    """A long run on a terminal says how far it is on stderr (points done,
    states met, checked and failed, time, an estimate); piped, nothing but
    the report."""
    script = require("script")
    cmd = [str(CRASHTEST), "-j1", "--each", "--writes", f"--check={SLOW}", str(old), "--",
           str(CRASHY), "good", "data", "expected"]
    if tty:
        r = subprocess.run([script, "-qec", shlex.join(cmd) + " 2>&1 >/dev/null", "/dev/null"],
                           capture_output=True, text=True, timeout=120)
        assert re.search(r"crashtest: \d+/\d+ points, \d+ states, \d+ checked, \d+ failed, "
                         r"\d+ s, about \d+ s left", r.stdout), r.stdout
    else:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.stderr == "", r.stderr
