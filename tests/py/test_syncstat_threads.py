# SPDX-License-Identifier: MIT
"""syncstat per thread: each record names the thread that made the call
(the library learns it once per thread and again after a fork,
libeatmydata/record.c; the supervisor takes it from the notification,
seccomp/timed.c), and the report counts each thread apart (its JSON's
`threads`, its text's "Top threads").  tests/c/threadsyncs.c says which
thread made how many calls, as the kernel names them (getpid, gettid);
strace, which sees each thread's system calls as it enters them (before
the seccomp filter), counts them again."""
import collections
import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import TESTS, require, run
from helpers import SCHEMA, SYNCSTAT

import jsonschema

DATASYNC = [("syscalls:sys_enter_fdatasync", None)]
COUNTS = [3, 5, 7, 9]
# The library's path (a dynamic program) and the supervisor's (static).
PATHS = {"library": TESTS / "threadsyncs", "supervisor": TESTS / "threadsyncs-static"}


def said(stdout):
    """The program's own lines: {name: [(pid, tid, count)]}."""
    lines = collections.defaultdict(list)
    for line in stdout.splitlines():
        name, pid, tid, n = line.split()
        lines[name].append((int(pid), int(tid), int(n)))
    return lines


def under_syncstat(cmd, tmp_path):
    """cmd under strace -f, under syncstat --json=FILE with the text report
    and the page too, under perf: (the run, the JSON report, the text report
    and the page, strace's fdatasyncs per thread)."""
    out, text, trace = tmp_path / "report.json", tmp_path / "report.txt", tmp_path / "strace"
    page = tmp_path / "report.html"
    strace = [require("strace"), "-f", "-qq", "-e", "trace=fdatasync", "-e", "signal=none",
              "-o", trace]
    r = run([SYNCSTAT, f"--json={out}", f"--html={page}", "--output", text, "--", *strace,
             *cmd], events=DATASYNC)
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    entered = collections.Counter(
        int(m[1]) for m in re.finditer(r"^(\d+) +fdatasync\(", trace.read_text(), re.M))
    return r, data, text.read_text() + page.read_text(), entered


def threads_of(data):
    return {(t["pid"], t["tid"]): t["count"] for t in data["threads"]}


@pytest.mark.parametrize("path", PATHS)
def test_each_thread_is_counted_as_itself(tmp_path, path):
    """4 threads making 3, 5, 7 and 9 fdatasyncs: the report gives each
    count to its own thread, the one that said it made them and that
    strace saw make them; the tree's total is the kernel's."""
    r, data, text, entered = under_syncstat([PATHS[path], tmp_path, *COUNTS], tmp_path)
    lines = [line for name in sorted(said(r.stdout)) for line in said(r.stdout)[name]]
    assert sorted(n for _, _, n in lines) == COUNTS, r.why()
    want = {(pid, tid): n for pid, tid, n in lines}
    assert len({tid for _, tid in want}) == len(COUNTS), want
    assert threads_of(data) == want, (data["threads"], want, r.why())
    assert {tid: entered[tid] for _, tid in want} == {tid: n for (_, tid), n in want.items()}, \
        (entered, want)
    assert data["calls"] == sum(COUNTS) == r.counts["syscalls:sys_enter_fdatasync"], r.why()
    for (pid, tid), n in want.items():
        name = rf"{tid} of threadsyncs\S* \(pid {pid}\)"
        assert re.search(rf"^ +[0-9.]+ [nmu]?s +{n}  {name}$", text, re.M), text
        assert re.search(rf"<td class=\"n\">{n}</td><td>{name}</td>", text), text


@pytest.mark.parametrize("path", PATHS)
def test_a_forked_child_is_its_own_thread(tmp_path, path):
    """tests/c/threadsyncs.c fork: a thread that learnt its number forks;
    its child's calls are the child's own thread's (its tid its pid), never
    the parent's thread it was copied from, and a thread the child starts
    is counted apart.  The main thread's calls before and after are one
    thread's."""
    r, data, _, entered = under_syncstat([PATHS[path], tmp_path, "fork"], tmp_path)
    lines = said(r.stdout)
    (pid, _, _), = set(lines["main"])
    (_, before, _), = lines["before"]
    (child, child_tid, _), = lines["child"]
    (_, after, _), = lines["after"]
    assert child_tid == child != pid and before != pid, lines
    want = {(pid, pid): 2, (pid, before): 2, (child, child): 3, (child, after): 4}
    assert threads_of(data) == want, (data["threads"], lines, r.why())
    assert {tid: entered[tid] for _, tid in want} == {tid: n for (_, tid), n in want.items()}, \
        (entered, want)
    assert {p["pid"]: p["count"] for p in data["processes"]} == {pid: 4, child: 7}, data


def test_a_thread_is_learnt_once_not_per_call(tmp_path):
    """A thread's number costs its first record two system calls (gettid,
    and getpid to tell a vfork child), none after: 8 threads making 250
    fdatasyncs each and 8 making 750 each add the same gettids and getpids
    to native's.  (The tree's whole count is test_syncstat_identity.py's;
    threads racing over a chunk of the record file each reserve it, which
    is no call of this.)  On tmpfs."""
    ids = [("syscalls:sys_enter_gettid", None), ("syscalls:sys_enter_getpid", None)]
    shm = Path(tempfile.mkdtemp(dir="/dev/shm"))
    extra = {}
    try:
        for n in (250, 750):
            cmd = [TESTS / "threadsyncs", shm, *[n] * 8]
            native = run(cmd, events=[*ids, *DATASYNC])
            ours = run([SYNCSTAT, "--output=/dev/null", "--", *cmd], events=[*ids, *DATASYNC])
            assert ours.counts["syscalls:sys_enter_fdatasync"] == 8 * n, ours.why()
            extra[n] = {e: ours.counts[e] - native.counts[e] for e, _ in ids}
    finally:
        shutil.rmtree(shm)
    assert extra[250] == extra[750] and extra[750]["syscalls:sys_enter_gettid"] <= 8, extra
