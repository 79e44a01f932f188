# SPDX-License-Identifier: MIT
"""What syncstat's reports say, read as a person reads them: plurals, the
device's figures at the resolution of its counters and its share counting
writes and flushes, --audit of a tree that never synced, text and JSON
from one run, compare's grouped and skipped files, errors in syncstat's own
words; the same in the HTML page, in headless Chromium."""
import json
import subprocess

import jsonschema
import pytest

from conftest import TESTS, cmdline, require
from helpers import SCHEMA, SYNCSTAT, browse, slot, write_records

ZERO = b" 0" * 17


def kept(d, slots, devices=None, command=b"prog\0"):
    write_records(d, slots, capacity=max(16, len(slots)))
    (d / "run").write_text("status 0\nwall 0.6\n")
    (d / "command").write_bytes(command)
    if devices is not None:
        (d / "devices").write_bytes(devices)


def syncstat(*args, check=True):
    cmd = [SYNCSTAT, *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    r.why = f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    if check:
        assert r.returncode == 0, r.why
    return r


def test_one_call_is_singular(tmp_path):
    """One fsync: "1 durability call", "1 call", never "1 calls"."""
    r = syncstat("--json=" + str(tmp_path / "r.json"), TESTS / "entry", "fsync", tmp_path)
    assert "\n  1 durability call; the process tree spent" in r.stderr, r.why
    assert "eatmydata would answer it in about" in r.stderr, r.why
    assert "fsync: 1 call, total" in r.stderr, r.why
    assert "1 calls" not in r.stderr and "1 durability calls" not in r.stderr, r.why
    # and two are plural
    r = syncstat(TESTS / "entry", "fsync", tmp_path, TESTS / "entry", check=False)
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["calls"] == 1


def devices_file(end):
    """One disk under 254:0, zero at the start and `end` (17 fields) at the end."""
    return (b"syncstat-devices 1\nmount 254:0 ext4 - vda\n"
            b"sample 0\ndisk vda 254:0 0 1 0 17" + ZERO + b"\n"
            b"sample 600000000\ndisk vda 254:0 0 1 0 17"
            + b"".join(b" %d" % v for v in end) + b"\n")


def fields(writes=0, write_ms=0, busy_ms=0, flushes=0, flush_ms=0):
    v = [0] * 17
    v[4], v[6], v[7], v[9], v[15], v[16] = writes, writes * 8, write_ms, busy_ms, flushes, flush_ms
    return v


def on_disk(latency):
    s = list(slot(latency, kind=1))
    s[9] = 254 << 32
    return tuple(s)


def test_device_figures_at_the_counters_resolution(tmp_path):
    """The flush time counts milliseconds: 1 flush in 0 ms is "under 1 ms",
    never "0 ns each"; the writes' time in ms too."""
    d = tmp_path / "r"
    kept(d, [on_disk(400_000)], devices_file(fields(writes=3, write_ms=2, busy_ms=3, flushes=1)))
    r = syncstat("report", d)
    assert "completed 1 cache flush, under 1 ms in all\n" in r.stderr, r.why
    assert "3 writes (0.0 MiB) taking 2 ms; busy 3 ms of the run" in r.stderr, r.why


def test_device_share_counts_writes_and_flushes(tmp_path):
    """200 fdatasync of 2.5 ms (500 ms), while the disk spent 41 ms writing
    and 2 flushing: 9% in the device, not the flushes' 0%."""
    d = tmp_path / "r"
    kept(d, [on_disk(2_500_000)] * 200,
         devices_file(fields(writes=200, write_ms=41, busy_ms=50, flushes=200, flush_ms=2)))
    r = syncstat("report", d)
    assert "9% in the device (its writes and cache flushes), the rest in the kernel" \
        in r.stderr, r.why
    data = json.loads(syncstat("report", "--json", d).stderr)
    jsonschema.validate(data, SCHEMA)
    assert data["devices"]["disks"][0]["device_share_pct"] == pytest.approx(8.6)


def test_audit_of_a_tree_that_never_syncs_says_what_it_saw(tmp_path):
    """Not "Audit: 0 findings", which reads as a clean bill: the files it
    made, none synced."""
    script = f"echo a > {tmp_path}/a; echo b > {tmp_path}/b; mv {tmp_path}/a {tmp_path}/b"
    r = syncstat("--audit", "sh", "-c", script)
    assert "0 findings" not in r.stderr, r.why
    assert "Audit: no durability call was made: the tree created 2 files, renamed 1 file " \
           "and linked 0 files, and synced none of it" in r.stderr, r.why
    r = syncstat("--audit", "true")
    assert "Audit: no durability call was made, and no file created or renamed: " \
           "nothing to audit" in r.stderr, r.why


def test_text_and_json_from_one_run(tmp_path):
    """--json=FILE: the JSON to FILE, the text on stderr, of the same run."""
    out = tmp_path / "run.json"
    r = syncstat("--json=" + str(out), TESTS / "entry", "fsync", tmp_path)
    assert r.stderr.startswith("syncstat: ") and "1 durability call" in r.stderr, r.why
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["calls"] == 1 and data["groups"][0]["kind"] == "fsync"
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    r = syncstat("--json=" + str(tmp_path / "link"), "true", check=False)
    assert r.returncode == 125 and not (tmp_path / "elsewhere").exists(), r.why


def file_runs(tmp_path):
    """Two runs of a program that fsyncs a temporary file of a random name
    (as mkstemp makes them) and a fixed one."""
    runs = []
    for n, name in enumerate(["tmp.Xa81kq", "tmp.Q0zz3b"]):
        d = tmp_path / f"run{n}"
        kept(d, [slot(1000, path=b"/work/" + name.encode()),
                 slot(1000, path=b"/work/fixed"), slot(1000, path=b"/proc/self/x")])
        runs.append(d)
    return runs


def test_compare_groups_and_skips_files(tmp_path):
    """Without a pattern each random name is a row, new on one side and gone
    on the other; --group-files makes them one unchanged row, --skip-files
    leaves files out."""
    old, new = file_runs(tmp_path)
    plain = syncstat("compare", old, new).stdout
    assert "/work/tmp.Xa81kq" in plain and "/work/tmp.Q0zz3b" in plain, plain
    r = syncstat("compare", "--group-files=/work/tmp.*", "--skip-files=/proc/*", old, new)
    files = r.stdout.split("files (most grown first; not judged)")[1]
    assert "tmp." not in files and "/proc" not in files, r.stdout
    assert files.split("\n")[2:] == ["PASS", ""], r.stdout  # the group is unchanged
    r = syncstat("compare", "--skip-files=", old, new, check=False)
    assert r.returncode == 125 and "--skip-files: expected a pattern" in r.stderr, r.why


@pytest.mark.parametrize("given, says", [
    ("/etc/passwd", "syncstat: /etc/passwd: not a record directory (one kept with "
                    "syncstat --keep): not a directory\n"),
    ("/", "syncstat: /: not a record directory (one kept with syncstat --keep): "
          "it holds no records\n"),
    ("/no/such/dir", "syncstat: /no/such/dir: No such file or directory\n"),
])
def test_report_errors_name_what_was_given(given, says):
    """Not "/etc/passwd/devices: Not a directory": what the user gave, and
    what is wrong with it."""
    r = syncstat("report", given, check=False)
    assert r.returncode == 125 and r.stderr == says, r.why


@pytest.mark.browser
def test_html_says_what_the_text_says(tmp_path):
    """The page holds the text report's sentences: "eatmydata would answer",
    min latency, the audit's explanations, the device's share and figures."""
    require("chromium")
    d = tmp_path / "r"
    kept(d, [on_disk(2_500_000)] * 200,
         devices_file(fields(writes=200, write_ms=41, busy_ms=50, flushes=200, flush_ms=2)))
    text = syncstat("report", d).stderr
    page = tmp_path / "page.html"
    syncstat("report", "--html", page, d)
    dom, console = browse(page, tmp_path)
    shown = " ".join(dom.all_text().split())
    for line in text.splitlines():
        for phrase in ("eatmydata would answer", "in the device (its writes", "min "):
            if phrase in line:
                piece = line.strip().split(": ", 1)[-1] if phrase != "min " else \
                    line[line.index("min "):].split(",")[0]
                assert piece in shown, (piece, shown[:3000])
    assert "completed 200 cache flushes, 2 ms in all" in shown, shown[:3000]
    # The audit's explanations, in words, beside each finding.
    a = tmp_path / "audited"
    syncstat("--keep", a, "--audit", TESTS / "mistakes", "rename-unsynced", tmp_path,
             check=False)
    syncstat("report", "--html", tmp_path / "audit.html", a)
    dom, _ = browse(tmp_path / "audit.html", tmp_path)
    shown = " ".join(dom.all_text().split())
    assert "a crash can leave the name empty or with neither version" in shown, shown[-2000:]
    assert console == []
