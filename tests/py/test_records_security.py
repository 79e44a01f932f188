# SPDX-License-Identifier: MIT
"""The record files of syncstat and eatmydata --stats: private to the user
who ran the tool and its tree, never written through a link, and never the
cause of the traced program's death (a full file, a small /dev/shm, a
corrupted header); a format this syncstat does not read is refused."""
import json
import mmap
import os
import random
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import jsonschema
import pytest

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


@pytest.fixture
def shm_scratch():
    """A directory on tmpfs, where an fsync costs little."""
    d = Path(tempfile.mkdtemp(prefix="records-test-", dir="/dev/shm"))
    yield d
    shutil.rmtree(d)


def test_a_scribbled_header_does_not_hurt_the_program(tmp_path, shm_scratch):
    """Another process of the same user rewrites the header's capacity and
    next slot while the tree records: records are lost, the program lives
    (it used to store wherever the header pointed: SIGSEGV)."""
    keep = tmp_path / "kept"
    cmd = [SYNCSTAT, "--keep", keep, "--output", tmp_path / "report", "--", "sh", "-c",
           f'{TESTS / "storm"} threads 4 100000 {shm_scratch}; echo "storm $?"; read x']
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, EATMYDATA_RECORD_SLOTS="1000"))
    rerun = "EATMYDATA_RECORD_SLOTS=1000 " + cmdline(cmd)
    try:
        while not (keep / "records").exists():
            time.sleep(0.001)
        with open(keep / "records", "r+b") as f, mmap.mmap(f.fileno(), 4096) as m:
            # Scribble until storm has ended, then leave a header the report
            # reads: every record claimed since counts as lost.
            stdout = Scribbler(m, proc).run(random.Random(9))
            m[16:32] = struct.pack("<QQ", 1000, 1 << 30)
        out, _ = proc.communicate("\n", timeout=60)
    finally:
        proc.kill()
    assert stdout + out == "storm 0\n", rerun
    assert proc.returncode == 0, rerun
    assert "calls were not recorded" in (tmp_path / "report").read_text(), rerun


class Scribbler:
    """Writes garbage over a record file's capacity and next slot until the
    command prints its line."""

    def __init__(self, header, proc):
        self.header, self.proc, self.line = header, proc, []
        self.done = threading.Event()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        self.line.append(self.proc.stdout.readline())
        self.done.set()

    def run(self, rnd):
        deadline = time.monotonic() + 120
        # From the first record on: the traced program has mapped the file.
        while struct.unpack_from("<Q", self.header, 24)[0] == 0 and \
                time.monotonic() < deadline:
            time.sleep(0.0001)
        while not self.done.is_set() and time.monotonic() < deadline:
            self.header[16:32] = struct.pack("<QQ", rnd.getrandbits(64),
                                             rnd.randrange(1 << 30))
        self.done.wait(60)
        return self.line[0] if self.line else ""
