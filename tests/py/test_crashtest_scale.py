# SPDX-License-Identifier: MIT
"""crashtest at scale: states checked by several workers at once (-j), each
checker seeing its own state at the path the command ran in and a loopback
of its own, with the report of one worker; a budget and a signal that end
the run with a whole report of what was done."""
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time

import jsonschema
import pytest

from conftest import cmdline, require
from helpers import (CRASH, CRASHTEST, CRASHTEST_SCHEMA, CRASHY, PYTHON, REPLACED, SQL,
                     SQL_CHECK, Report)

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def run(*args, env=None, timeout=600, user=(), cwd=None):
    """crashtest ARGS, its status, stdout and stderr."""
    cmd = [*user, str(CRASHTEST), *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    assert r.returncode in (0, 1, 2, 3, 4, 5), f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    return r


def report(*args, **kw):
    r = run("--json", *args, **kw)
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, json.loads(CRASHTEST_SCHEMA.read_text()))
    return r.returncode, Report(doc)


def timeless(doc):
    """The report but for its time."""
    doc = json.loads(json.dumps(doc))
    doc["totals"].pop("seconds")
    return doc


def sql_dir(d):
    d.mkdir()
    subprocess.run([require("sqlite3"), d / "db", "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"],
                   check=True)
    return d


def data_dir(d):
    d.mkdir()
    (d / "data").write_text("old\n")
    return d


# A program, where it starts and its checker: the crash test programs.
CASES = {
    "replace, no fsync": (data_dir, [CRASHY, "bad", "data", "expected"], REPLACED),
    "replace, fsyncs": (data_dir, [CRASHY, "good", "data", "expected"], REPLACED),
    "rewrite with O_TRUNC": (data_dir, [CRASHY, "truncate", "data", "expected"], REPLACED),
    "sqlite, synchronous=FULL": (sql_dir, ["sh", "-c", SQL, "sql", "FULL"], SQL_CHECK),
    "every kind of state": (lambda d: [d.mkdir(), *[(d / n).write_text("0") for n in "abcdexy"],
                                       (d / "t").write_text("0" * 8192)] and d,
                            [PYTHON, CRASH / "classes.py", "torn"],
                            f"{PYTHON} {CRASH / 'classes_check.py'} torn"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_workers_give_the_report_of_one(tmp_path, case):
    """-j1, -j2 and -j3 give the same report, to the byte but for the time:
    the points in order, each state's verdict, checker status and output,
    which states were seen before and where, the totals -- under all three
    models at once, every change a point."""
    setup, cmd, check = CASES[case]
    reports = {}
    for jobs in (1, 2, 3):
        d = setup(tmp_path / f"d{jobs}")
        status, doc = report(f"-j{jobs}", "--each", "--writes", "--model=all", "--seed=7",
                             f"--check={check}", d, "--", *cmd)
        doc["dir"] = "DIR"
        reports[jobs] = (status, timeless(doc))
    assert reports[1][1]["totals"]["checked"] > 3, reports[1][1]["totals"]
    assert reports[2] == reports[1], case
    assert reports[3] == reports[1], case


# Each checker: its state holds what crashtest built, nothing another
# checker wrote; it is at the path the command ran in; a server on a fixed
# port is its own; when it ran, for the overlap.
ALONE = r"""
import os, socket, sys, time
log, state = sys.argv[1], os.environ["CRASHTEST_STATE"]
start = time.monotonic()
assert os.getcwd() == os.path.dirname(os.environ["CRASHTEST_OUTPUT"]) + "/work", os.getcwd()
assert not os.path.exists("mine"), "another checker's file"
open("mine", "w").write(state)
s = socket.socket()
s.bind(("127.0.0.1", 23456))
s.listen()
time.sleep(0.3)
assert open("mine").read() == state
os.unlink("mine")
with open(log, "a") as f:
    f.write(f"{start} {time.monotonic()}\n")
"""


def overlapping(log):
    spans = sorted(tuple(map(float, line.split())) for line in log.read_text().splitlines())
    return sum(b[0] < a[1] for a, b in zip(spans, spans[1:]))


@pytest.mark.slow
@pytest.mark.parametrize("user", ["root", "nobody"])
def test_each_checker_has_its_state_and_loopback(tmp_path, user):
    """Two checkers at once, each writing a file into its state and
    listening on one fixed port: each finds only its own file, at the path
    the command ran in, and its own port free (a mount and a network
    namespace each; as an ordinary user, in a user namespace).  The
    checkers did run at the same time."""
    if user == "nobody" and os.geteuid() != 0:
        pytest.skip("drops from root to nobody")
    top = tempfile.mkdtemp(prefix="crashtest-scale.")
    try:
        os.chmod(top, 0o755)
        d = data_dir(tmp_path / "d") if user == "root" else data_dir(type(tmp_path)(top) / "d")
        log, script = os.path.join(top, "log"), os.path.join(top, "alone.py")
        open(script, "w").write(ALONE)
        as_user = NOBODY if user == "nobody" else []
        python = "/usr/bin/python3" if as_user else PYTHON  # not root's own
        if as_user:
            shutil.chown(d, "nobody", "nogroup")
            shutil.chown(top, "nobody", "nogroup")
        status, doc = report("-j2", "--each", "--writes", f"--check={python} {script} {log}", d,
                             "--", CRASHY, "good", "data", "expected", user=as_user,
                             env=dict(os.environ, TMPDIR=top))
        assert status == 0, [s["check_output"] for p in doc.points for s in p["states"]]
        assert doc["totals"]["checked"] >= 5, doc["totals"]
        assert overlapping(type(tmp_path)(log)) >= 2, open(log).read()
    finally:
        subprocess.run(["rm", "-rf", top])


LEAVES = "setsid sleep 300 & echo $! >> {pids}; (sleep 300 &); sleep 300 & true"


def test_what_a_checker_left_is_killed(tmp_path, old):
    """A checker that leaves processes running -- one in a session of its
    own, one orphaned, one in the background -- ends with them killed, by
    the worker that ran it; and nothing is left of the run directory."""
    pids = tmp_path / "pids"
    status, doc = report("-j2", "--each", f"--check={LEAVES.format(pids=pids)}", old, "--",
                         CRASHY, "good", "data", "expected")
    assert status == 0 and doc["totals"]["checked"] >= 2, doc["totals"]
    left = subprocess.run(["pgrep", "-f", "^sleep 300$"], capture_output=True, text=True)
    assert not {int(p) for p in pids.read_text().split()} & {int(p) for p in left.stdout.split()}


TWENTY = "for i in $(seq 20); do echo $i > f$i; sync; done"


def test_a_budget_ends_with_what_was_done(tmp_path):
    """--budget=1s with checkers of 0.3 s, 21 points: no state is started
    after the second; the report has the points done, whole, says it was
    cut short, and crashtest exits 5 (never 0: not everything was
    checked), in JSON too."""
    d = tmp_path / "d"
    d.mkdir()
    t0 = time.monotonic()
    r = run("-j2", "--budget=1s", "--each", "--check=sleep 0.3", d, "--", "sh", "-c", TWENTY)
    assert time.monotonic() - t0 < 8, "the budget did not stop it"
    lines = r.stdout.splitlines()
    points = [line for line in lines if line.startswith("point ")]
    assert r.returncode == 5 and 1 <= len(points) < 21, (r.returncode, lines)
    assert all(line.endswith(": ok") for line in points), lines
    assert lines[-1] == (f"stopped by --budget=1s after {len(points)} of 21 points: the others "
                         "were not built"), lines
    d2 = tmp_path / "d2"
    d2.mkdir()
    status, doc = report("-j2", "--budget=1s", "--each", "--check=sleep 0.3", d2, "--", "sh", "-c",
                         TWENTY)
    assert status == 5 and doc["interrupted"] == "budget", doc["interrupted"]
    assert 1 <= doc["totals"]["points"] == len(doc.points) < 21, doc["totals"]


@pytest.mark.slow
def test_sigterm_at_any_moment_leaves_a_whole_report(tmp_path):
    """SIGTERM at 12 random moments of a -j2 run (while the command runs,
    as states are built, as checkers run): each time, a JSON report that
    follows its schema, marked interrupted, its totals those of its points;
    crashtest dies of the signal and leaves nothing in TMPDIR."""
    schema = json.loads(CRASHTEST_SCHEMA.read_text())
    rng = random.Random(37)
    for i in range(12):
        d, tmp = tmp_path / f"d{i}", tmp_path / f"tmp{i}"
        d.mkdir()
        tmp.mkdir()
        cmd = [str(CRASHTEST), "--json", "-j2", "--each", "--writes", "--check=sleep 0.15", d,
               "--", "sh", "-c", "sleep 0.2; " + TWENTY]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, TMPDIR=str(tmp)))
        time.sleep(rng.uniform(0, 2.5))
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        assert p.returncode == -signal.SIGTERM, (i, p.returncode, err)
        doc = json.loads(out)
        jsonschema.validate(doc, schema)
        assert doc["interrupted"] == "SIGTERM", (i, doc["interrupted"])
        assert doc["totals"]["points"] == len(doc["points"]), i
        assert doc["totals"]["states"] == sum(p["states_built"] for p in doc["points"]), i
        assert not list(tmp.iterdir()), (i, list(tmp.iterdir()))
