# SPDX-License-Identifier: MIT
"""syncstat --html: one self-contained page, opened in a real browser
(headless Chromium): the rendered DOM holds the charts, tables and device
attribution of real runs of SQLite and git; hostile names stay text (no
script runs, the browser's console stays empty); a million calls make a
heat map of bounded size."""
import json
import mmap
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import TESTS, cmdline, require, run
from helpers import HEADER, REC_VERSION, SLOT, SYNCSTAT, browse

pytestmark = [pytest.mark.browser]

EVENTS = [("syscalls:sys_enter_fsync", None), ("syscalls:sys_enter_fdatasync", None)]


def safe(dom):
    """Nothing that runs or fetches: no script, no handler, no source."""
    assert dom.count("script") == 0
    for tag, attrs in dom.tags:
        assert tag not in ("iframe", "object", "embed", "img", "link", "base"), tag
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        assert not any(k in ("src", "href") for k in attrs), (tag, attrs)


def page_of(cmd, tmp_path, **kw):
    page, keep = tmp_path / "page.html", tmp_path / "kept"
    r = run([SYNCSTAT, "--keep", keep, "--html", page, "--", *cmd], events=EVENTS, **kw)
    return page, keep, r


def check_page(page, keep, tmp_path, r):
    dom, console = browse(page, tmp_path, tmp_path / "page.png")
    assert console == [], "\n".join(console) + r.why()
    safe(dom)
    report = subprocess.run([SYNCSTAT, "report", "--json", keep], capture_output=True,
                            text=True)
    drawn = len(json.loads(report.stderr)["groups"])
    assert drawn > 0 and dom.count("section", **{"class": "group"}) == drawn, r.why()
    assert dom.count("svg", **{"class": "hist"}) == drawn
    assert dom.count("svg", **{"class": "time"}) == drawn
    assert dom.count("table", id="files") == dom.count("table", id="sites") == 1
    assert dom.count("div", id="devices") == 1
    return dom


def test_a_sqlite_run(tmp_path):
    sql = "PRAGMA synchronous=FULL; CREATE TABLE t(x);" + "".join(
        f"INSERT INTO t VALUES({i});" for i in range(50))
    page, keep, r = page_of([require("sqlite3"), tmp_path / "db", sql], tmp_path)
    assert r.syncs > 50, r.why()
    dom = check_page(page, keep, tmp_path, r)
    text = dom.all_text()
    assert "sqlite3 fdatasync" in text or "sqlite3 fsync" in text
    assert str(tmp_path / "db-journal") in text
    assert "device's share" in text and "device-wide" in text
    assert dom.count("circle") >= 50  # each call a point


def test_a_git_run(tmp_path):
    git = require("git")
    repo = tmp_path / "repo"
    script = (f"{git} init -q {repo} && cd {repo} && {git} config core.fsync all && "
              f"{git} config core.fsyncMethod fsync && for i in $(seq 20); do "
              f"echo $i > f$i; done && {git} add . && "
              f"{git} -c user.name=t -c user.email=t@t commit -qm one")
    page, keep, r = page_of(["sh", "-c", script], tmp_path)
    assert r.syncs > 20, r.why()
    dom = check_page(page, keep, tmp_path, r)
    assert "git fsync" in dom.all_text()
    assert "/.git/objects/" in dom.all_text()


HOSTILE = ["<script>alert(1)</script>", "\"onmouseover=\"alert(1)", "a'b<b>bold</b>",
           "new\nline", "\t&amp;&lt;", b"\xff\xfe<img src=x onerror=alert(1)>",
           b"\xe2\x80<svg onload=alert(1)>"]


def hostile_program(d):
    """Files with hostile names, each synced, by a program renamed too (a
    name with a slash is a directory and a file in it)."""
    return ["python3", "-c", f"""
import ctypes, os
ctypes.CDLL(None).prctl(15, b"<i>x</i>&", 0, 0, 0)
for n in {HOSTILE!r}:
    n = n.encode() if isinstance(n, str) else n
    path = os.path.join({str(d).encode()!r}, n)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    os.fsync(fd)
""", "<script>alert('argv')</script>"]


def test_hostile_names_stay_text(scratch, tmp_path):
    page, keep, r = page_of(hostile_program(scratch), tmp_path)
    dom, console = browse(page, tmp_path)
    assert console == [], "\n".join(console)
    safe(dom)
    text = dom.all_text()
    for n in HOSTILE:
        if isinstance(n, str):
            assert n.replace("\n", "\\n").replace("\t", "\\t") in text, n
    assert "\ufffd<img src=x onerror=alert(1)>" in text
    assert "<i>x</i>&" in text and "<script>alert('argv')</script>" in text
    # The control: the same page with one name unescaped runs its script,
    # which the checks above see (and the page's policy blocks).
    # (The last one is in the files' table; the first, in <title>, is text.)
    head, name, tail = page.read_text().rpartition("&#60;script&#62;alert(1)&#60;/script&#62;")
    raw = head + "<script>alert(1)</script>" + tail
    (tmp_path / "raw.html").write_text(raw)
    dom, console = browse(tmp_path / "raw.html", tmp_path)
    assert dom.count("script") == 1 and console, "the checks cannot see a script"


def test_a_million_calls_make_a_bounded_heat_map(tmp_path):
    n = 1_000_000
    d = Path(tempfile.mkdtemp(prefix="syncstat-huge-", dir="/dev/shm"))
    try:
        with open(d / "records", "wb") as f:
            f.truncate(4096 + n * 512)
        with open(d / "records", "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
            HEADER.pack_into(m, 0, b"EMDREC01", REC_VERSION, 512, n, n, 0)
            for i in range(n):
                lat = 1000 + (i * 7919) % 5_000_000 if i % 1000 else 50_000_000
                SLOT.pack_into(m, 4096 + 512 * i, 2, i % 2, 7, 1, 0, 0, 0, i * 1000, lat,
                               0, 0, 0, 0, 0, 0, 0, 0, 0, 7, b"prog", b"/data/f%d" % (i % 5000),
                               b"prog+0x10")
        (d / "run").write_text("status 0\nwall 1.0\n")
        (d / "command").write_bytes(b"prog\0")
        page = tmp_path / "page.html"
        cmd = [SYNCSTAT, "report", "--html", page, d]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, cmdline(cmd) + r.stderr
    finally:
        shutil.rmtree(d)
    assert page.stat().st_size < 2 << 20, page.stat().st_size
    dom, console = browse(page, tmp_path, tmp_path / "page.png")
    assert console == []
    assert dom.count("g", **{"class": "heat"}) == 2 and dom.count("circle") == 0
    assert "and 4980 more" in dom.all_text()


def test_the_audits_findings(scratch, tmp_path):
    page = tmp_path / "page.html"
    r = run([SYNCSTAT, "--audit", "--html", page, "--", TESTS / "mistakes", "tail", scratch],
            events=EVENTS)
    dom, console = browse(page, tmp_path)
    assert console == []
    safe(dom)
    assert dom.count("table", id="findings") == 1, r.why()
    assert "tail-not-synced" in dom.all_text()
