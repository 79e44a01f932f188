# SPDX-License-Identifier: MIT
"""The record files of syncstat and eatmydata --stats: private to the user
who ran the tool and its tree, never written through a link, and never the
cause of the traced program's death (a full file, a small /dev/shm, a
corrupted header); a format this syncstat does not read is refused."""
import json
import subprocess

import jsonschema

from conftest import TESTS, cmdline
from test_syncstat import SCHEMA, SYNCSTAT, slot, write_records


def test_events_after_the_record_file_is_full(tmp_path):
    """An audited create and rename once every slot is taken: lost and
    counted, and the program is not hurt (it wrote through an uninitialised
    slot pointer)."""
    work = tmp_path / "w"
    work.mkdir()
    out = tmp_path / "report.json"
    cmd = [SYNCSTAT, "--audit", "--json", "--output", out, "--",
           TESTS / "mistakes", "rename-unsynced", work]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                       env={"EATMYDATA_RECORD_SLOTS": "2", "PATH": "/usr/bin:/bin"})
    rerun = "EATMYDATA_RECORD_SLOTS=2 " + cmdline(cmd)
    assert r.returncode == 0, rerun + "\n" + r.stderr
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    # create target, fsync it, fsync the directory, create target.tmp,
    # rename it, fsync the directory: two recorded, four lost.
    assert data["lost"] == 4 and data["calls"] == 1, rerun
    assert (work / "target").read_text() == "new contents\n"


def test_another_format_version_is_refused(tmp_path):
    """A version 1 directory (two slot layouts were both version 1) is
    refused by name, never misread."""
    d = tmp_path / "old"
    write_records(d, [slot(1000)], version=1)
    (d / "run").write_text("status 0\nwall 0.1\n")
    (d / "command").write_text("prog\n")
    for args in ([], ["--json"]):
        r = subprocess.run([SYNCSTAT, "report", *args, d], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 125, cmdline([SYNCSTAT, "report", *args, d])
        assert r.stderr == (f"syncstat: {d}/records: format version 1, "
                            "this syncstat reads version 2\n")
    write_records(d, [slot(1000)])
    r = subprocess.run([SYNCSTAT, "report", d], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "prog fsync: 1 calls" in r.stderr, r.stderr
