# SPDX-License-Identifier: MIT
"""syncstat report on what a user, a crash or another program may leave in a
record directory: every input is read in linear time, a garbage one gets a
message and 125, never a crash, a hang or invalid JSON; names hold any
byte."""
import json
import os
import subprocess
import time

import jsonschema
import pytest

from conftest import EATMYDATA, cmdline
from helpers import HEADER, REC_VERSION, SCHEMA, SLOT, SYNCSTAT, slot, write_records


def report(d, *args, timeout=60):
    cmd = [SYNCSTAT, "report", *args, d]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    assert r.returncode in (0, 125), cmdline(cmd) + f" died: {r.returncode}"
    return r


def finished(d, command=b"prog\0"):
    (d / "run").write_text("status 0\nwall 0.5\n")
    (d / "command").write_bytes(command)


def test_a_slot_count_that_wraps_is_refused(tmp_path):
    """slots * slot_size wrapped to a small number: the report read past the
    mapping (SIGSEGV)."""
    d = tmp_path / "r"
    write_records(d, [slot(1000)])
    data = bytearray((d / "records").read_bytes())
    HEADER.pack_into(data, 0, b"EMDREC01", REC_VERSION, 512, (1 << 64) // 512 + 1, 1 << 40, 0)
    (d / "records").write_bytes(bytes(data))
    r = report(d)
    assert r.returncode == 125
    assert r.stderr.decode().endswith("records: truncated or corrupt header\n")


@pytest.mark.parametrize("name", ["records", "command", "run"])
@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory"])
def test_an_input_that_is_not_a_regular_file_is_refused(tmp_path, name, kind):
    """A FIFO hung the report forever; a link led it to another file."""
    d = tmp_path / "r"
    write_records(d, [slot(1000)])
    finished(d)
    (d / name).rename(d / "elsewhere")
    if kind == "fifo":
        os.mkfifo(d / name)
    elif kind == "symlink":
        (d / name).symlink_to(d / "elsewhere")
    else:
        (d / name).mkdir()
    r = report(d, timeout=20)
    assert r.returncode == 125
    why = "a symbolic link, not followed" if kind == "symlink" else "not a regular file"
    assert r.stderr.decode() == f"syncstat: {d}/{name}: {why}\n"


@pytest.mark.parametrize("wall", ["nan", "inf", "-1", "1e400"])
def test_a_wall_time_that_is_not_a_number_is_refused(tmp_path, wall):
    """"wall nan" gave a report whose JSON no parser accepts."""
    d = tmp_path / "r"
    write_records(d, [slot(1000)])
    finished(d)
    (d / "run").write_text(f"status 0\nwall {wall}\n")
    for args in ([], ["--json"]):
        r = report(d, *args)
        assert r.returncode == 125 and b"run: expected" in r.stderr, r.stderr


def test_a_command_line_keeps_its_newlines_and_length(tmp_path):
    """An argument with a newline, or longer than 4 KiB, was split into
    several in the report."""
    argv = ["true", "two\nlines", "x" * 10000, "it's", "$HOME"]
    out = tmp_path / "r.json"
    subprocess.run([SYNCSTAT, "--json", "--output", out, "--", *argv], check=True,
                   capture_output=True, timeout=60)
    assert json.loads(out.read_text())["command"] == argv
    r = subprocess.run([SYNCSTAT, "--", *argv], capture_output=True, text=True, timeout=60)
    first = r.stderr.splitlines()[0]
    assert first == "syncstat: true $'two\\x0alines' " + "x" * 10000 + " 'it'\\''s' '$HOME'"


def test_any_file_name_gives_valid_json_and_a_finding(tmp_path):
    """A newline in a name broke the audit's tails file ("corrupt line") and
    lost the report; a name that is not UTF-8 made invalid JSON."""
    names = [b"new\nline", b"latin1-\xe9t\xe9", b"tab\tand\\back"]
    script = ("import os,sys\n"
              "for n in sys.argv[1:]:\n"
              "    p = os.fsencode(n)\n"
              "    fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)\n"
              "    os.write(fd, b'a'); os.fsync(fd); os.write(fd, b'tail'); os.close(fd)\n")
    paths = [os.fsdecode(bytes(tmp_path) + b"/" + n) for n in names]
    out = tmp_path / "audit.json"
    subprocess.run([SYNCSTAT, "--audit", "--json", "--output", out, "--",
                    "python3", "-c", script, *paths], check=True, timeout=60)
    data = json.loads(out.read_bytes().decode("utf-8"))
    jsonschema.validate(data, SCHEMA)
    tails = [f for f in data["findings"] if f["pattern"] == "tail-not-synced"]
    assert len(tails) == 1 and tails[0]["count"] == 3, data["findings"]
    files = {f["path"] for f in data["files"]}
    assert str(tmp_path / "new\nline") in files
    assert str(tmp_path / "latin1-\ufffdt\ufffd") in files


def million_records(d, audit):
    """1,000,000 records over 200,000 files and 1,000 call sites; with the
    audit, each file created, synced and renamed over an existing name."""
    n, files = 1_000_000, 200_000
    data = bytearray(4096 + n * 512)
    HEADER.pack_into(data, 0, b"EMDREC01", REC_VERSION, 512, n, n, 2 if audit else 0)
    kinds = [12, 0, 13, 1, 0] if audit else [0, 1, 0, 1, 0]  # create fsync rename ...
    for i in range(n):
        f = i % files
        kind = kinds[(i // files) % 5]
        SLOT.pack_into(data, 4096 + 512 * i, 2, kind, 100 + f % 50, 1, 1 if kind == 13 else 0,
                       0, 0, i, 1000 + i % 977, 2049, f, 0, i // files, 4096, 0o100644, 0,
                       2049, 7, 100 + f % 50, b"prog", b"/data/f%d" % f, b"prog+0x%x" % (i % 1000))
    d.mkdir()
    (d / "records").write_bytes(bytes(data))
    finished(d)


@pytest.mark.slow
@pytest.mark.parametrize("audit", [False, True], ids=["report", "audit"])
def test_a_million_records_take_linear_time(tmp_path, audit):
    """Grouping and the audit compared every record with every other: 16k
    files took 2.4 s, a million records hours.  Not a benchmark: a bound a
    quadratic pass cannot meet, a linear one meets many times over."""
    assert SLOT.size == 512
    d = tmp_path / "r"
    million_records(d, audit)
    start = time.monotonic()
    r = report(d, "--json", timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    data = json.loads(r.stderr)
    assert data["calls"] == (600_000 if audit else 1_000_000)
    assert len(data["files"]) >= 10 and time.monotonic() - start < 120


def test_the_top_lists_are_sorted_by_what_they_show(tmp_path):
    """eatmydata --stats lists files "by calls", but sorted them by the time
    of the eaten calls, which says nothing."""
    script = ("import os,sys\n"
              "for n, times in (('a', 2), ('b', 5), ('c', 1), ('d', 3)):\n"
              "    fd = os.open(os.path.join(sys.argv[1], n), os.O_WRONLY | os.O_CREAT)\n"
              "    for _ in range(times): os.fsync(fd)\n")
    r = subprocess.run([EATMYDATA, "--stats", "--", "python3", "-c", script, tmp_path],
                       capture_output=True, text=True, timeout=60)
    listed = r.stderr.split("Top files by calls:\n")[1].splitlines()[1:5]
    assert [line.split("/")[-1] for line in listed] == ["b", "d", "a", "c"], r.stderr


def test_a_latency_beyond_reason_is_a_corrupt_record(tmp_path):
    """A latency near 2^64 put the histogram's top row at 1 << 64 (undefined
    behaviour, UBSan's abort) and wrapped the sums."""
    d = tmp_path / "r"
    write_records(d, [slot(1000), slot((1 << 64) - 1)])
    finished(d)
    for args in ([], ["--json"]):
        r = report(d, *args)
        assert r.returncode == 125, r.stderr
        assert r.stderr.decode().endswith("records: corrupt record\n")


def test_names_stay_on_one_line_of_the_text_report(tmp_path):
    """A newline in a file name started a line of its own in "Top files"."""
    script = ("import os,sys\n"
              "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)\n"
              "os.write(fd, b'a'); os.fsync(fd)\n")
    name = tmp_path / "new\nline\\x"
    r = subprocess.run([SYNCSTAT, "--", "python3", "-c", script, name],
                       capture_output=True, text=True, timeout=60)
    top = r.stderr.split("Top files by time in durability calls:\n")[1].splitlines()
    assert top[1].endswith(f"  {tmp_path}/new\\nline\\\\x"), r.stderr
    assert top[2] == "", r.stderr
