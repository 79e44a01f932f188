# SPDX-License-Identifier: MIT
"""syncstat compare OLD NEW as a CI gate: the same SQLite program with
synchronous=FULL makes more syncs than with NORMAL (the kernel's count is
the control), so the gate fails one way and passes the other; bad input is
exit 125 with a message, never a pass."""
import json
import subprocess

import pytest

from conftest import cmdline, require, run
from helpers import ROOT, SYNCSTAT

JUNIT_XSD = ROOT / "tests" / "data" / "junit.xsd"

EVENTS = [("syscalls:sys_enter_fsync", None), ("syscalls:sys_enter_fdatasync", None)]
ROWS = "".join(f"INSERT INTO t VALUES({i});" for i in range(40))


def sqlite_run(tmp_path, sync):
    """The same command, database and script path (as a CI job runs its
    tests before and after a change), synchronous=FULL or NORMAL."""
    db, script = tmp_path / "db", tmp_path / "script.sql"
    for f in tmp_path.glob("db*"):
        f.unlink()
    keep, report = tmp_path / sync, tmp_path / f"{sync}.json"
    script.write_text(f"PRAGMA journal_mode=WAL; PRAGMA synchronous={sync}; CREATE TABLE t(x); "
                      f"{ROWS}\n")
    r = run([SYNCSTAT, "--keep", keep, "--json", "--output", report, "--",
             require("sqlite3"), db, f".read {script}"], events=EVENTS)
    return keep, report, r.syncs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    full = sqlite_run(tmp, "FULL")
    normal = sqlite_run(tmp, "NORMAL")
    assert full[2] > normal[2] * 1.1, "FULL made no more syncs than NORMAL"
    return {"FULL": full, "NORMAL": normal, "tmp": tmp}


def compare(*args):
    cmd = [SYNCSTAT, "compare", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    r.why = f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    return r


def test_junit_a_case_per_limit(runs, tmp_path):
    """--junit=FILE: a case for each limit set, of the whole run and of each
    program and kind; the one that grew past its limit fails, with the
    change in its message; the text report is unchanged.  The file follows
    the JUnit schema CI tools read (tests/data/junit.xsd).  The time limit
    is one no run can pass (its case is there, passing): the durations of
    two runs' syncs differ as the disk is busy, 11x under load."""
    lxml = pytest.importorskip("lxml.etree")
    schema = lxml.XMLSchema(lxml.parse(str(JUNIT_XSD)))
    normal, full = runs["NORMAL"][1], runs["FULL"][1]
    out = tmp_path / "compare.xml"
    plain = compare("--max-calls-increase=10%", "--max-time-increase=1000000%", normal, full)
    r = compare("--max-calls-increase=10%", "--max-time-increase=1000000%", f"--junit={out}",
                normal, full)
    assert r.returncode == 1 and r.stdout == plain.stdout, r.why
    doc = lxml.parse(str(out))
    schema.assertValid(doc)
    cases = {c.get("name"): c for c in doc.getroot().iter("testcase")}
    whole = cases["all durability calls: calls"].find("failure")
    assert whole is not None and "calls grew past +10%: +" in whole.get("message"), cases
    assert cases["all durability calls: time"].find("failure") is None
    rows = [name for name in cases if not name.startswith("all durability calls")]
    assert rows and len(cases) == 2 * (1 + len(rows) // 2), list(cases)
    suite = doc.getroot().find("testsuite")
    assert int(suite.get("failures")) == sum(c.find("failure") is not None
                                             for c in cases.values()) >= 1
    assert compare("--max-calls-increase=10%", f"--junit={out}", full, normal).returncode == 0
    doc = lxml.parse(str(out))
    schema.assertValid(doc)
    assert doc.getroot().find("testsuite").get("failures") == "0"


@pytest.mark.parametrize("form", ["dir", "json"])
def test_more_syncs_fail_the_gate_fewer_pass(runs, form):
    pick = 0 if form == "dir" else 1
    full, normal = runs["FULL"][pick], runs["NORMAL"][pick]
    worse = compare("--max-calls-increase=10%", normal, full)
    assert worse.returncode == 1, worse.why
    assert "FAIL: calls" in worse.stdout and worse.stdout.rstrip().endswith(
        "FAIL: grew past a limit")
    better = compare("--max-calls-increase=10%", full, normal)
    assert better.returncode == 0, better.why
    assert better.stdout.rstrip().endswith("PASS") and "FAIL" not in better.stdout
    assert compare(full, full).returncode == 0


def test_rows_per_kind_and_file(runs):
    r = compare(runs["NORMAL"][1], runs["FULL"][1])
    full = json.loads(runs["FULL"][1].read_text())
    normal = json.loads(runs["NORMAL"][1].read_text())
    assert r.returncode == 0, r.why   # no limit given: nothing to fail
    for g in full["groups"]:
        line = next(l for l in r.stdout.splitlines()
                    if l.startswith(f"{g['program']} {g['kind']} "))
        was = sum(n["count"] for n in normal["groups"]
                  if (n["program"], n["kind"]) == (g["program"], g["kind"]))
        assert line.split()[2:4] == [str(was), str(g["count"])], r.why
    assert str(runs["tmp"] / "db-wal") in r.stdout


def test_absolute_limits(runs):
    normal, full = runs["NORMAL"][1], runs["FULL"][1]
    grew = json.loads(full.read_text())["calls"] - json.loads(normal.read_text())["calls"]
    assert compare(f"--max-calls-increase={grew}", normal, full).returncode == 0
    assert compare(f"--max-calls-increase={grew - 1}", normal, full).returncode == 1
    # Time is not deterministic: the same report, 5 ms slower in one group.
    slower = json.loads(normal.read_text())
    slower["total_ns"] += 5_000_000
    slower["groups"][0]["total_ns"] += 5_000_000
    (runs["tmp"] / "slower.json").write_text(json.dumps(slower))
    assert compare("--max-time-increase=6ms", normal, runs["tmp"] / "slower.json").returncode == 0
    assert compare("--max-time-increase=4.5ms", normal, runs["tmp"] / "slower.json").returncode == 1
    assert compare("--max-time-increase=0ns", runs["tmp"] / "slower.json", normal).returncode == 0


def scaled(report, path, factor, extra=0):
    """report with its calls and times multiplied by factor (its first
    group `extra` calls more), written to path."""
    data = json.loads(report.read_text())
    data["calls"] = data["calls"] * factor + extra
    data["total_ns"] *= factor
    for i, g in enumerate(data["groups"]):
        g["count"] = g["count"] * factor + (extra if i == 0 else 0)
        g["timed"] = g["timed"] * factor + (extra if i == 0 else 0)
        g["total_ns"] *= factor
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("what", ["calls", "time"])
def test_a_percentage_is_a_limit_more_than_it_fails(runs, tmp_path, what):
    """+10% exactly is within a 10% limit (the README: "more than 10%
    more" fails); one call or a 9% limit more is past it."""
    normal = runs["NORMAL"][1]
    was, now = scaled(normal, tmp_path / "was.json", 10), scaled(normal, tmp_path / "now.json", 11)
    limit = f"--max-{what}-increase"
    r = compare(f"{limit}=10%", was, now)
    assert r.returncode == 0, r.why
    r = compare(f"{limit}=9%", was, now)
    assert r.returncode == 1, r.why
    if what == "calls":
        r = compare(f"{limit}=10%", was, scaled(normal, tmp_path / "more.json", 11, 1))
        assert r.returncode == 1, r.why


def bad(tmp_path, *args):
    r = compare(*args)
    assert r.returncode == 125, r.why
    assert r.stderr.startswith("syncstat: ") and r.stdout == "", r.why
    return r.stderr


def test_bad_input_is_125_with_a_message(runs, tmp_path):
    good = runs["NORMAL"][1]
    assert "missing: No such file or directory" in bad(tmp_path, good, tmp_path / "missing")
    old = json.loads(good.read_text())
    old["schema"] = "eatmydata.syncstat/1"
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert "a report of schema eatmydata.syncstat/1; this syncstat compares " \
           "eatmydata.syncstat/4" in bad(tmp_path, tmp_path / "old.json", good)
    for garbage in [b"", b"{", b"\xff\xfe", b"[1, 2]", b'{"schema": "eatmydata.syncstat/4"}',
                    good.read_bytes()[:-20], good.read_bytes() + b"x",
                    good.read_bytes().replace(b'"count": ', b'"count": -', 1),
                    good.read_bytes().replace(b'"fdatasync"', b'"fork"', 1),
                    b"[" * 100000, b'"\\ud800"']:
        (tmp_path / "garbage.json").write_bytes(garbage)
        assert "garbage.json: not a" in bad(tmp_path, good, tmp_path / "garbage.json")
    (tmp_path / "empty").mkdir()
    assert "empty: not a record directory" in bad(tmp_path, tmp_path / "empty", good)
    assert "expected a percentage" in bad(tmp_path, "--max-calls-increase=ten", good, good)
    assert "expected a percentage" in bad(tmp_path, "--max-time-increase=5", good, good)
    assert "usage: syncstat compare" in bad(tmp_path, good)


def test_runs_of_different_commands_are_refused(runs, tmp_path):
    """Two runs of different commands (the wrong baseline) passed silently;
    they are refused naming both, unless --any-command asks for them."""
    other = tmp_path / "other.json"
    r = subprocess.run([SYNCSTAT, "--json", "--output", other, "--", "sh", "-c", "sync; true"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for old in runs["NORMAL"][:2]:
        r = compare(old, other)
        assert r.returncode == 125 and r.stdout == "", r.why
        assert r.stderr == ("syncstat: not the same command (--any-command compares them "
                            f"anyway):\n  {old}: {require('sqlite3')} {runs['tmp'] / 'db'} "
                            f"'.read {runs['tmp'] / 'script.sql'}'\n  {other}: sh -c "
                            "'sync; true'\n"), r.why
        r = compare("--any-command", old, other)
        assert r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), r.why
