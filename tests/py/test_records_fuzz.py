# SPDX-License-Identifier: MIT
"""A fuzz of the record directory: a real run's files, damaged a few bytes
at a time (seeded, so a failure reruns the same), handed to syncstat report.
It must answer 0 with valid JSON or 125 with a message: never a signal, a
hang or output no parser takes."""
import json
import os
import random
import shutil
import subprocess

import pytest

from conftest import TESTS, cmdline
from helpers import SYNCSTAT

pytestmark = [pytest.mark.slow]

CASES = 300


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    work = base / "work"
    work.mkdir()
    # A small record file, copied for each case.
    env = dict(os.environ, EATMYDATA_RECORD_SLOTS="64")
    subprocess.run([SYNCSTAT, "--audit", "--keep", base / "kept", "--output", "/dev/null",
                    "--", TESTS / "mistakes", "tail", work], check=True, timeout=60, env=env)
    assert sorted(p.name for p in (base / "kept").iterdir()) == \
        ["command", "devices", "records", "run", "tails"]
    return base / "kept"


def damage(data, rng):
    """A few random edits where they matter most: the header, the first
    slots, the end."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        what = rng.random()
        if what < 0.1 and data:
            del data[rng.randrange(len(data)):]
        elif what < 0.2:
            data += rng.randbytes(rng.randint(1, 600))
        elif data:
            zone = min(len(data), rng.choice([64, 4096 + 3 * 512, len(data)]))
            at = rng.randrange(zone)
            data[at:at + 1] = bytes([rng.choice([0, 0xff, 0x80, 10, rng.randrange(256)])])
    return bytes(data)


def test_damaged_record_directories_get_an_answer(kept, tmp_path):
    rng = random.Random(20261123)
    names = ["records", "records", "records", "command", "run", "tails", "devices"]
    for case in range(CASES):
        d = tmp_path / f"case{case}"
        shutil.copytree(kept, d)
        for name in rng.sample(names, rng.randint(1, 2)):
            (d / name).write_bytes(damage((d / name).read_bytes(), rng))
        for args in ([], ["--json"], ["--html", tmp_path / "page.html"]):
            cmd = [SYNCSTAT, "report", *args, d]
            r = subprocess.run(cmd, capture_output=True, timeout=20)
            why = f"case {case}: {cmdline(cmd)} exit {r.returncode}\n{r.stderr[-300:]!r}"
            assert r.returncode in (0, 125), why
            if r.returncode == 125:
                assert r.stderr.startswith(b"syncstat: ") and r.stderr.endswith(b"\n"), why
            elif args == ["--json"]:
                json.loads(r.stderr.decode("utf-8"))
        shutil.rmtree(d)


def test_damaged_json_reports_get_an_answer(kept, tmp_path):
    """syncstat compare reads reports back: a damaged one is compared (0 or
    1) or refused (125 with a message), never a crash."""
    good = tmp_path / "good.json"
    subprocess.run([SYNCSTAT, "report", "--json", "--output", good, kept], check=True)
    rng = random.Random(20261124)
    text = good.read_bytes()
    for case in range(CASES):
        data = bytearray(text)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            what = rng.random()
            if what < 0.3:
                data[at:at + 1] = rng.choice([b"", b"{", b"[", b'"', b"\\", b"\\u", b"-",
                                              b"1e999", b"\x00", b"\xff", b",", b"null"])
            elif what < 0.4:
                del data[at:]
            else:
                data[at] = rng.randrange(256)
        (tmp_path / "bad.json").write_bytes(bytes(data))
        cmd = [SYNCSTAT, "compare", "--max-calls-increase=0%", good, tmp_path / "bad.json"]
        r = subprocess.run(cmd, capture_output=True, timeout=20)
        why = f"case {case}: {cmdline(cmd)} exit {r.returncode}\n{r.stderr[-300:]!r}"
        assert r.returncode in (0, 1, 125), why
        if r.returncode == 125:
            assert r.stderr.startswith(b"syncstat: ") and r.stderr.endswith(b"\n"), why
