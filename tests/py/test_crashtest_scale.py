# SPDX-License-Identifier: MIT
"""crashtest at scale: states checked by several workers at once (-j), each
checker seeing its own state at the path the command ran in and a loopback
of its own, with the report of one worker; a budget and a signal that end
the run with a whole report of what was done."""
import json
import os
import random
import re
import shutil
import signal
import struct
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
    """crashtest --json ARGS (after the subcommand, if any), its status and
    report, which follows its schema."""
    sub = args[:1] if args and args[0] in ("check", "merge") else ()
    r = run(*sub, "--json", *args[len(sub):], **kw)
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
        if as_user and subprocess.run([*as_user, "unshare", "-U", "-m", "-n", "true"],
                                      capture_output=True).returncode != 0:
            pytest.skip("nobody may not make a user namespace here (a chroot, or the kernel's "
                        "setting): crashtest -j2 then checks one state at a time, saying so")
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


# ---- record once, check anywhere, in shards ----------------------------------

def recorded(tmp_path, case, *options):
    """The bundle of CASES[case], recorded with options."""
    setup, cmd, check = CASES[case]
    d = setup(tmp_path / "rec")
    bundle = tmp_path / "run.ctb"
    r = run("record", f"--bundle={bundle}", "--seed=7", f"--check={check}", *options, d, "--",
            *cmd)
    assert r.returncode == 0 and "crashtest: recorded" in r.stdout, r.stdout
    return bundle


def untimed(text):
    """A text report but for its time."""
    return re.sub(r", [\d.]+ s\n", ", T s\n", text)


def whole(doc):
    """A report as a run of the whole bundle has it: no shard's parts."""
    doc = timeless(doc)
    for key in ("bundle", "shard", "checks"):
        doc.pop(key, None)
    return doc


def shards(tmp_path, bundle, n, *options):
    """Shards 1..n of the bundle, their --json reports."""
    out = []
    for i in range(1, n + 1):
        path = tmp_path / f"shard-{n}-{i}.json"
        run("check", f"--shard={i}/{n}", f"--json={path}", *options, bundle)
        doc = json.loads(path.read_text())
        jsonschema.validate(doc, json.loads(CRASHTEST_SCHEMA.read_text()))
        out.append((path, doc))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", ["replace, no fsync", "sqlite, synchronous=FULL"])
def test_shards_merged_are_the_whole_run(tmp_path, case):
    """Recorded once; checked whole, and in 1, 2, 3, 7 shards, and in more
    shards than it has checks (some have nothing to do).  Each check is in exactly
    one shard, the shards are balanced (their counts differ by one at
    most), and merged they give the report of the whole -- text, JSON and
    exit status."""
    bundle = recorded(tmp_path, case, "--each", "--writes", "--model=all")
    status, doc = report("check", bundle)
    text = run("check", bundle)
    every = {c["check"] for c in doc["checks"]}
    assert every == set(range(len(every))) and len(every) > 5, every
    for n in (1, 2, 3, 7, *([len(every) + 3] if len(every) < 40 else [])):
        parts = shards(tmp_path, bundle, n)
        ids = [[c["check"] for c in d["checks"]] for _, d in parts]
        assert sorted(i for part in ids for i in part) == sorted(every), n
        assert max(map(len, ids)) - min(map(len, ids)) <= 1, (n, list(map(len, ids)))
        paths = [str(p) for p, _ in parts]
        merged = run("merge", "--json", bundle, *paths)
        assert merged.returncode == status and whole(json.loads(merged.stdout)) == whole(doc), n
        merged = run("merge", bundle, *reversed(paths))
        assert untimed(merged.stdout) == untimed(text.stdout), n


def test_a_bundle_is_checked_by_another_user_elsewhere(tmp_path):
    """The directory the run was recorded from is gone; the bundle, copied
    elsewhere, is checked by another user in another TMPDIR: the same
    verdicts as a run of its own."""
    if os.geteuid() != 0:
        pytest.skip("drops from root to nobody")
    bundle = recorded(tmp_path, "replace, no fsync", "--each")
    shutil.rmtree(tmp_path / "rec")
    top = tempfile.mkdtemp(prefix="crashtest-scale.")
    try:
        os.chmod(top, 0o755)
        copy = os.path.join(top, "copy.ctb")
        shutil.copy(bundle, copy)
        shutil.chown(copy, "nobody", "nogroup")
        shutil.chown(top, "nobody", "nogroup")
        status, doc = report("check", copy, user=NOBODY, env=dict(os.environ, TMPDIR=top))
        assert status == 1 and doc.verdicts()[-1] == ("end", "failed"), doc.verdicts()
        assert sorted(os.listdir(top)) == ["copy.ctb"], os.listdir(top)
    finally:
        shutil.rmtree(top)


@pytest.mark.parametrize("env, shard", [
    ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"}, (2, 3)),             # GitLab, from 1
    ({"CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "3"}, (3, 3)),     # CircleCI, from 0
    ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, (1, 2)),
    ({"JOB_COMPLETION_INDEX": "1", "--shards": "4"}, (2, 4)),         # Kubernetes
    ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3", "--shard": "1/5"}, (1, 5)),
])
def test_the_ci_says_which_shard(tmp_path, env, shard):
    """A CI's parallel job names the shard in its variables: GitLab's
    counted from 1, CircleCI's and Buildkite's from 0, Kubernetes' index
    with --shards=N; --shard wins over them."""
    bundle = recorded(tmp_path, "replace, no fsync", "--each")
    options = [f"{k}={v}" for k, v in env.items() if k.startswith("--")]
    variables = {k: v for k, v in env.items() if not k.startswith("--")}
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CI_", "CIRCLE", "BUILDKITE",
                                                                      "JOB_COMPLETION"))}
    _, doc = report("check", *options, bundle, env=dict(clean, **variables))
    assert (doc["shard"]["index"], doc["shard"]["count"]) == shard, doc["shard"]


def test_merge_refuses_what_is_not_one_partition(tmp_path):
    """A shard missing, one given twice, a report of another bundle, a check
    in two reports: each refused (125) with what is wrong, never a report."""
    bundle = recorded(tmp_path, "replace, no fsync", "--each", "--writes")
    parts = [str(p) for p, _ in shards(tmp_path, bundle, 3)]
    cases = {"shard 3 of 3 has no report": parts[:2],
             "shard 2's report a second time": [*parts, parts[1]]}
    other = recorded(tmp_path / "other" if (tmp_path / "other").mkdir() is None else None,
                     "replace, no fsync", "--each", "--writes")
    other_part = shards(tmp_path / "other", other, 3)[2][0]
    cases["not of this one"] = [*parts[:2], str(other_part)]
    doc = json.loads(open(parts[0]).read())
    doc["checks"].append(json.loads(open(parts[1]).read())["checks"][0])
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps(doc))
    cases["shard 2's, not shard 1's"] = [str(twice), *parts[1:]]
    for words, reports in cases.items():
        r = subprocess.run([CRASHTEST, "merge", bundle, *reports], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 125 and words in r.stderr and not r.stdout, (words, r.stderr)


def renamed(bundle, old, new):
    """The bundle with the base's entry `old` named `new` (as long): its
    items are a tag (4 bytes), a length (8), the bytes; an entry (tag 9)
    is 32 bytes, then its name."""
    at = bundle.index(b"\n", bundle.index(b"\n") + 1) + 1
    while at < len(bundle):
        tag, n = struct.unpack_from("<IQ", bundle, at)
        if tag == 9 and bundle[at + 12 + 32:at + 12 + 32 + len(old)] == old:
            name = at + 12 + 32
            return bundle[:name] + new + bundle[name + len(new):]
        at += 12 + n
    raise AssertionError("no such entry")


def test_a_bundle_cut_short_or_doctored_is_refused(tmp_path):
    """A bundle cut short (an upload that stopped), one whose base names a
    file ../x, one of another kind: refused (125), nothing made outside
    the run directory."""
    bundle = recorded(tmp_path, "replace, no fsync", "--each")
    data = bundle.read_bytes()
    short = tmp_path / "short.ctb"
    short.write_bytes(data[:len(data) - 20])
    evil = tmp_path / "evil.ctb"
    evil.write_bytes(renamed(data, b"data", b"../x"))
    alien = tmp_path / "alien.ctb"
    alien.write_bytes(data.replace(b"little-endian", b"big-endian!!!", 1))
    for path, words in [(short, "cut short"), (evil, "out of place"),
                        (alien, "a machine of another kind")]:
        r = subprocess.run([CRASHTEST, "check", path], capture_output=True, text=True, timeout=60)
        assert r.returncode == 125 and words in r.stderr, (path.name, r.stderr)
    assert not (tmp_path / "x").exists()


# ---- JUnit --------------------------------------------------------------------

def junit_valid(path):
    """The file follows the JUnit schema CI tools read (tests/data), and its
    counts are those of its cases."""
    lxml = pytest.importorskip("lxml.etree")
    schema = lxml.XMLSchema(lxml.parse(str(CRASH.parents[1] / "data" / "junit.xsd")))
    doc = lxml.parse(str(path))
    schema.assertValid(doc)
    suite = doc.getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases)
    assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases)
    assert int(suite.get("errors")) == sum(c.find("failure") is None and
                                           c.find("error") is not None for c in cases)
    return cases


def test_junit_has_a_case_per_point(tmp_path, old):
    """--junit=FILE: a case per point and model, passed where ok; a failure
    per failed state, with what it lost and the checker's output; beside
    the text report, which is unchanged."""
    out = tmp_path / "report.xml"
    check = REPLACED + " || { echo 'data: <'$(cat data)'> & more'; exit 1; }"
    r = run("--junit", out, "--model=all", "--each", "--writes", f"--check={check}", old, "--",
            CRASHY, "bad", "data", "expected")
    assert r.returncode == 1 and r.stdout.splitlines()[-2].startswith("4 points"), r.stdout
    cases = junit_valid(out)
    assert len(cases) == 4 * 3, len(cases)
    assert {c.get("classname") for c in cases} == {"crashtest.posix", "crashtest.ext4-ordered",
                                                   "crashtest.xfs"}
    failed = [c for c in cases if c.find("failure") is not None]
    assert failed and all(c.get("name") in ("end", "point 3 after rename data.tmp -> data")
                          for c in failed), [c.get("name") for c in failed]
    text = failed[0].find("failure").text
    assert "lost: " in text and "check exit 1" in text and "data: <" in text, text


def test_junit_of_what_is_unknown_unchecked_or_cut_short(tmp_path, old):
    """No checker: each case skipped.  A run stopped by its budget: a case
    of the run in error, saying so.  Both follow the schema."""
    out = tmp_path / "a.xml"
    run("--junit", out, "--each", old, "--", CRASHY, "bad", "data", "expected")
    assert all(c.find("skipped") is not None for c in junit_valid(out))
    d = tmp_path / "d"
    d.mkdir()
    out = tmp_path / "b.xml"
    r = run("--junit", out, "-j1", "--budget=1s", "--each", "--check=sleep 0.3", d, "--", "sh",
            "-c", TWENTY)
    assert r.returncode == 5, r.stdout
    cases = junit_valid(out)
    errors = [c.find("error").get("message") for c in cases if c.find("error") is not None]
    assert len(errors) == 1 and errors[0].startswith("stopped by --budget=1s after "), errors


def test_merge_writes_junit_too(tmp_path):
    """The merged report's JUnit: the cases of the whole run."""
    bundle = recorded(tmp_path, "replace, no fsync", "--each", "--writes")
    parts = [str(p) for p, _ in shards(tmp_path, bundle, 2)]
    whole_xml, merged_xml = tmp_path / "whole.xml", tmp_path / "merged.xml"
    run("check", "--junit", whole_xml, bundle)
    run("merge", "--junit", merged_xml, bundle, *parts)
    names = [(c.get("name"), c.find("failure") is not None) for c in junit_valid(whole_xml)]
    assert [(c.get("name"), c.find("failure") is not None)
            for c in junit_valid(merged_xml)] == names


def tree(pid):
    """pid and every process below it."""
    children = {}
    for stat in filter(str.isdigit, os.listdir("/proc")):
        try:
            text = open(f"/proc/{stat}/stat").read()
        except (OSError, ValueError):
            continue
        children.setdefault(int(text[text.rindex(")") + 2:].split()[1]), []).append(int(stat))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return sorted(out)


@pytest.mark.parametrize("order", ["pids", "leaves first"])
def test_a_signal_to_the_whole_tree_ends_the_run_whole(tmp_path, order):
    """SIGTERM to every process of crashtest's tree, as pkill sends it (in
    the order of the pids) or a CI that kills a job's processes (here the
    workers and checkers 0.3 s before crashtest): the workers outlive it
    (they ignore it; crashtest kills them), a checker it killed is no
    failed check but the run's end, and the report is whole, marked
    interrupted."""
    d = tmp_path / "d"
    d.mkdir()
    cmd = [str(CRASHTEST), "--json", "-j2", "--each", "--check=sleep 0.3", d, "--", "sh", "-c",
           TWENTY]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    below = [pid for pid in tree(p.pid) if pid != p.pid]
    pids = tree(p.pid) if order == "pids" else [*reversed(below), "sleep", p.pid]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM) if pid != "sleep" else time.sleep(0.3)
        except ProcessLookupError:
            pass
    out, err = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGTERM, (p.returncode, err)
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads(CRASHTEST_SCHEMA.read_text()))
    assert doc["interrupted"] == "SIGTERM" and doc["totals"]["failed"] == 0, doc["totals"]
