# SPDX-License-Identifier: MIT
"""The records side tried as a hostile local user, and as a hostile or
buggy traced program would: the launcher's own limits and signals, a
setuid program given a forged record environment, a --keep directory
under a parent another user controls."""
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import EATMYDATA, TESTS, cmdline
from test_syncstat import SYNCSTAT

TOOLS = {"syncstat": [SYNCSTAT], "eatmydata --stats": [EATMYDATA, "--stats"]}


@pytest.fixture
def shm():
    """A directory on tmpfs, where an fsync costs little."""
    d = Path(tempfile.mkdtemp(prefix="records-attack-", dir="/dev/shm"))
    yield d
    shutil.rmtree(d)


def under_limit(tmp_path, tool, limit, program):
    """Run `program` (shell) under tool in a bash that set `limit`; the
    result, the record file the command was given, what the program printed
    and a command line to rerun it."""
    script = 'echo "$EATMYDATA_RECORD"; ' + program
    inner = cmdline([*TOOLS[tool], "--", "sh", "-c", script])
    cmd = ["bash", "-c", f"{limit}; exec {inner}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    records, _, out = r.stdout.partition("\n")
    return r, Path(records) if records else None, out, \
        cmdline(cmd) + f"\nexit {r.returncode}\n{r.stderr}"


def status_of(text, field):
    return re.search(rf"^{field}:\s*(.*)$", text, re.M)[1]


@pytest.mark.parametrize("tool", TOOLS)
def test_a_file_size_limit_is_the_commands_not_the_launchers(tmp_path, shm, tool):
    """`ulimit -S -f 100` for the command: the launcher's own 512 MiB record
    file made it die of SIGXFSZ (153) and leave its directory in /dev/shm.
    Now it runs, and the command still sees the user's limit and SIGXFSZ
    disposition."""
    native = subprocess.run(["bash", "-c", "ulimit -S -f 100; exec sh -c 'ulimit -f; "
                             "cat /proc/self/status'"], capture_output=True, text=True,
                            timeout=60)
    r, records, out, why = under_limit(
        tmp_path, tool, "ulimit -S -f 100",
        f"ulimit -f; cat /proc/self/status; {TESTS / 'storm'} threads 1 3 {shm}; exit 7")
    assert r.returncode == 7, why
    assert out.splitlines()[0] == native.stdout.splitlines()[0] != "unlimited", why
    assert status_of(out, "SigIgn") == status_of(native.stdout, "SigIgn"), why
    assert "3 durability calls" in r.stderr, why
    assert records and not records.parent.exists(), why


@pytest.mark.parametrize("tool", TOOLS)
def test_few_descriptors_are_the_commands_not_the_launchers(tmp_path, shm, tool):
    """`ulimit -S -n 5`: the command needs none beyond its standard streams
    and runs natively; the launcher's directory, record file and run file
    made it exit 125.  Now the command runs, with the user's limit, and
    records."""
    r, records, out, why = under_limit(
        tmp_path, tool, "ulimit -S -n 5",
        f"ulimit -n; {TESTS / 'storm'} threads 1 3 {shm}; exit 7")
    assert r.returncode == 7, why
    assert out == "5\n", why
    assert "3 durability calls" in r.stderr, why
    assert records and not records.parent.exists(), why


@pytest.mark.parametrize("tool", TOOLS)
def test_a_report_to_a_closed_pipe_leaves_no_directory(tool):
    """`syncstat cmd 2>&1 | head -1`: the reader is gone when the report is
    written and the launcher dies of SIGPIPE, as any writer would; its
    temporary directory went with it (it stayed in /dev/shm)."""
    cmd = [*TOOLS[tool], "--", "sh", "-c", 'echo "$EATMYDATA_RECORD"; read x']
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        records = Path(proc.stdout.readline().strip())
        proc.stderr.close()
        proc.communicate("\n", timeout=60)
    finally:
        proc.kill()
    assert records.name == "records", cmdline(cmd)
    assert proc.returncode == -13, cmdline(cmd) + " 2>&1 | head -c 0"
    assert not records.parent.exists(), cmdline(cmd) + " 2>&1 | head -c 0"
