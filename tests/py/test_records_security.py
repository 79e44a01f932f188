# SPDX-License-Identifier: MIT
"""The record files of syncstat and eatmydata --stats: private to the user
who ran the tool and its tree, never written through a link, and never the
cause of the traced program's death (a full file, a small /dev/shm, a
corrupted header); a format this syncstat does not read is refused."""
import json
import mmap
import os
import pwd
import random
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import EATMYDATA, TESTS, cmdline, require
from helpers import REC_VERSION, SCHEMA, SYNCSTAT, recorded, slot, write_records


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
                       env=dict(os.environ, EATMYDATA_RECORD_SLOTS="2"))
    rerun = "EATMYDATA_RECORD_SLOTS=2 " + cmdline(cmd)
    assert r.returncode == 0, rerun + "\n" + r.stderr
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    # create target, fsync it, fsync the directory, create target.tmp,
    # rename it, fsync the directory: the create and the module record of
    # its site (record.h) recorded, five lost.
    assert data["lost"] == 5 and data["calls"] == 0, rerun
    assert (work / "target").read_text() == "new contents\n"


@pytest.mark.parametrize("version", [1, 3])
def test_another_format_version_is_refused(tmp_path, version):
    """A version 1 directory (two slot layouts were both version 1), or a
    version 3 one (no thread, a longer program name) is refused by name,
    never misread."""
    d = tmp_path / "old"
    write_records(d, [slot(1000)], version=version)
    (d / "run").write_text("status 0\nwall 0.1\n")
    (d / "command").write_bytes(b"prog\0")
    for args in ([], ["--json"]):
        r = subprocess.run([SYNCSTAT, "report", *args, d], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 125, cmdline([SYNCSTAT, "report", *args, d])
        assert r.stderr == (f"syncstat: {d}/records: format version {version}, "
                            f"this syncstat reads version {REC_VERSION}\n")
    write_records(d, [slot(1000)])
    r = subprocess.run([SYNCSTAT, "report", d], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "prog fsync: 1 call," in r.stderr, r.stderr


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
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                (keep / "records").exists() and (keep / "records").stat().st_size > 4096):
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


def as_user(user, cmd, **kw):
    return subprocess.run([require("setpriv"), f"--reuid={user}", f"--regid={user}",
                           "--clear-groups", "--", *cmd], capture_output=True, text=True,
                          timeout=60, **kw)


TOOLS = {"syncstat": [SYNCSTAT], "eatmydata --stats": [EATMYDATA, "--stats"]}


@pytest.mark.parametrize("tool", TOOLS)
def test_another_user_cannot_reach_the_records(other_user, tool):
    """While the run goes on, another local user can neither read nor
    write its records (they were 0666 in a 01777 directory)."""
    cmd = [*TOOLS[tool], "--", "sh", "-c", 'echo "$EATMYDATA_RECORD"; read x']
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            stderr=subprocess.DEVNULL)
    try:
        records = Path(proc.stdout.readline().strip())
        assert records.name == "records", cmdline(cmd)
        mode = {p: os.stat(p).st_mode & 0o7777 for p in (records.parent, records)}
        tries = {what: as_user(other_user, ["sh", "-c", f"{what} {records}"])
                 for what in ("cat", ": >>", "ls")}
        tries["dir"] = as_user(other_user, ["ls", records.parent])
        proc.communicate("\n", timeout=60)
    finally:
        proc.kill()
    assert mode == {records.parent: 0o700, records: 0o600}, cmdline(cmd)
    for what, r in tries.items():
        assert r.returncode != 0 and "Permission denied" in r.stderr, (what, r.stderr)
    assert not records.parent.exists()


def test_a_tree_that_changes_user_still_records(other_user, shm_scratch, tmp_path):
    """Like initdb under `setpriv`: the process that dropped root keeps the
    inherited descriptor and records, although it cannot open the file."""
    shm_scratch.chmod(0o777)
    cmd = [require("setpriv"), f"--reuid={other_user}", f"--regid={other_user}",
           "--clear-groups", "--", TESTS / "storm", "fork", "3", "4", shm_scratch]
    r, data = recorded(cmd, tmp_path)
    assert data["calls"] == r.counts["syscalls:sys_enter_fsync"] == 12, r.why()
    assert data["lost"] == 0 and {g["program"] for g in data["groups"]} == {"storm"}


@pytest.mark.parametrize("fd_becomes", ["closed", "another record file"])
def test_a_program_that_closes_the_descriptor(scratch, tmp_path, fd_becomes):
    """A program closed the inherited descriptor (or opened a copy of the
    record file on its number) before exec: its records go to the file by
    name, never into the other file."""
    other = tmp_path / "other"
    redirect = ">&-" if fd_becomes == "closed" else f"<>{other}"
    script = (f'cp "$EATMYDATA_RECORD" {other}; fd=${{EATMYDATA_RECORD_FD%%:*}}; '
              f'eval "exec $fd{redirect}"; exec {TESTS / "storm"} threads 2 3 {scratch}')
    r, data = recorded(["sh", "-c", script], tmp_path, env={"EATMYDATA_RECORD_SLOTS": "64"})
    assert data["calls"] == r.counts["syscalls:sys_enter_fsync"] == 6, r.why()
    assert struct.unpack_from("<Q", other.read_bytes(), 24)[0] == 0


def keep_run(keep, *args):
    cmd = [SYNCSTAT, "--keep", keep, "--output", "/dev/null", "--", "true", *args]
    return cmd, subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_keep_makes_a_private_directory(tmp_path):
    keep = tmp_path / "new"
    cmd, r = keep_run(keep)
    assert r.returncode == 0, cmdline(cmd) + "\n" + r.stderr
    assert {p.name: p.stat().st_mode & 0o7777 for p in [keep, *keep.iterdir()]} == \
        {"new": 0o700, "records": 0o600, "command": 0o600, "run": 0o600, "devices": 0o600}


@pytest.mark.parametrize("mode", [0o755, 0o700, 0o1700])
def test_keep_uses_an_empty_directory_as_it_is(tmp_path, mode):
    """Never chmod what the user made (it became 01777)."""
    keep = tmp_path / "mine"
    keep.mkdir()
    keep.chmod(mode)
    cmd, r = keep_run(keep)
    assert r.returncode == 0, cmdline(cmd) + "\n" + r.stderr
    assert keep.stat().st_mode & 0o7777 == mode
    r = subprocess.run([SYNCSTAT, "report", keep], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "syncstat: true\n  exit status 0" in r.stderr, r.stderr


@pytest.mark.parametrize("mode", [0o755, 0o700])
def test_keep_refuses_a_directory_that_holds_anything(tmp_path, mode):
    """A directory of the user's own with files in it (`syncstat --keep=/etc`
    as root): refused, nothing written there (the records went into /etc)."""
    keep = tmp_path / "etc"
    keep.mkdir()
    (keep / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    keep.chmod(mode)
    before = sorted(p.name for p in keep.iterdir())
    cmd, r = keep_run(keep)
    assert r.returncode == 125, cmdline(cmd)
    assert r.stderr == (f"syncstat: cannot keep the records in {keep}: it is not empty; "
                        "choose a new or empty directory\n"), r.stderr
    assert sorted(p.name for p in keep.iterdir()) == before


def test_keep_refuses_a_directory_with_an_earlier_run(tmp_path):
    keep = tmp_path / "kept"
    keep_run(keep)
    before = {p.name: p.read_bytes() for p in keep.iterdir()}
    cmd, r = keep_run(keep, "again")
    assert r.returncode == 125, cmdline(cmd)
    assert r.stderr == (f"syncstat: cannot keep the records in {keep}: it holds an "
                        "earlier run (records); remove it or choose another directory\n")
    assert {p.name: p.read_bytes() for p in keep.iterdir()} == before


@pytest.mark.parametrize("whose,mode,why", [
    ("other", 0o755, "it belongs to another user"),
    ("root", 0o775, "others can write in it"),
    ("root", 0o1777, "others can write in it"),
])
def test_keep_refuses_a_directory_others_can_write(tmp_path, other_user, whose, mode, why):
    keep = tmp_path / "d"
    keep.mkdir()
    if whose == "other":
        shutil.chown(keep, other_user, other_user)
    keep.chmod(mode)
    cmd, r = keep_run(keep)
    assert r.returncode == 125, cmdline(cmd)
    assert r.stderr == f"syncstat: cannot keep the records in {keep}: {why}\n"
    assert list(keep.iterdir()) == [] and keep.stat().st_mode & 0o7777 == mode


def test_keep_refused_leaves_no_directory_it_made(tmp_path, other_user):
    """A new DIR under a directory others can write in (or another user's):
    refused, and the directory --keep had made is gone again (it was left
    behind), while one that was there before stays."""
    for mode, owner, why in [(0o777, "root", "others can write in a directory above it"),
                             (0o755, other_user, "a directory above it belongs to another user")]:
        up = tmp_path / f"up{mode:o}"
        up.mkdir()
        up.chmod(mode)
        shutil.chown(up, owner, owner)
        cmd, r = keep_run(up / "new")
        assert r.returncode == 125, cmdline(cmd)
        assert r.stderr == f"syncstat: cannot keep the records in {up / 'new'}: {why}\n"
        assert list(up.iterdir()) == [], cmdline(cmd)
    (up / "there").mkdir()
    cmd, r = keep_run(up / "there")
    assert r.returncode == 125 and (up / "there").is_dir(), cmdline(cmd)


@pytest.mark.parametrize("whose", ["other", "root"])
@pytest.mark.parametrize("link", ["records", "run", "command", "tails", "devices"])
def test_keep_never_follows_a_planted_link(tmp_path, other_user, whose, link):
    """A user who could write in DIR planted `link` to a file of root's, or
    to a name where root would create one: root's `syncstat --keep DIR`
    refuses and the target is untouched (it was truncated to 512 MiB and
    made 0666, or created)."""
    tmp_path.chmod(0o755)
    keep, target, absent = tmp_path / "d", tmp_path / "precious", tmp_path / "absent"
    keep.mkdir()
    target.write_text("root's\n")
    target.chmod(0o600)
    (keep / link).symlink_to(target if link == "records" else absent)
    if whose == "other":
        shutil.chown(keep, other_user, other_user)
        os.chown(keep / link, pwd.getpwnam(other_user).pw_uid, -1, follow_symlinks=False)
    cmd, r = keep_run(keep)
    assert r.returncode == 125, cmdline(cmd) + "\n" + r.stderr
    assert r.stderr.startswith(f"syncstat: cannot keep the records in {keep}: ")
    assert target.read_text() == "root's\n" and target.stat().st_mode & 0o777 == 0o600
    assert not absent.exists() and [p.name for p in keep.iterdir()] == [link]


def test_keep_refuses_a_symbolic_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    cmd, r = keep_run(tmp_path / "link")
    assert r.returncode == 125, cmdline(cmd)
    assert r.stderr.endswith(": it is a symbolic link\n") and list(real.iterdir()) == []


def small_dev_shm(tmp_path, tool, program):
    """Run `program` (shell) under tool on a /dev/shm of 16 MiB, in a mount
    namespace of its own; the report's count of calls, of lost ones."""
    report = tmp_path / "report"
    script = ('mount -t tmpfs -o size=16m tmpfs /dev/shm && mkdir /dev/shm/w && exec '
              + cmdline([*TOOLS[tool], "--", "sh", "-c", program]) + ' 2>"$0"')
    cmd = [require("unshare"), "--mount", "sh", "-c", script, report]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    rerun = cmdline(cmd)
    assert r.returncode == 0, f"{rerun}\nexit {r.returncode}\n{r.stderr}"
    text = report.read_text()
    lost = re.search(r"\n  (\d+) calls were not recorded", text)
    calls = re.search(r"\n  (\d+) durability calls", text)
    assert lost and calls and "exit status 0" in text, rerun + "\n" + text
    return int(calls[1]), int(lost[1]), rerun + "\n" + text


@pytest.mark.root
@pytest.mark.parametrize("tool", TOOLS)
def test_a_small_dev_shm_costs_records_not_the_program(tmp_path, tool):
    """/dev/shm of 16 MiB (a container's; the 512 MiB sparse file could
    not be backed) and 200k fsyncs: the program ends well (it died of
    SIGBUS), the record file took half the space, the calls that did not
    fit are counted as lost and the report says so."""
    calls, lost, why = small_dev_shm(tmp_path, tool,
                                     f"{TESTS / 'storm'} threads 1 200000 /dev/shm/w")
    assert calls + lost == 200000 and 10000 < calls <= 8 << 20 >> 9, why


@pytest.mark.root
@pytest.mark.parametrize("tool", TOOLS)
def test_a_program_that_fills_dev_shm_costs_records(tmp_path, tool):
    """The program itself fills /dev/shm after 5000 fsyncs, then makes 20000
    more: the records stop where the memory ran out (counted as lost), the
    program is not hurt, and the run's status is still saved."""
    storm = TESTS / "storm"
    calls, lost, why = small_dev_shm(
        tmp_path, tool, f"{storm} threads 1 5000 /dev/shm/w && "
        "{ cat /dev/zero > /dev/shm/w/fill 2>/dev/null; "
        f"rm -f /dev/shm/w/storm-*; }}; {storm} threads 1 20000 /dev/shm/w")
    assert calls + lost == 25000 and 5000 <= calls < 6000, why


@pytest.mark.parametrize("tool", TOOLS)
def test_a_failed_report_leaves_no_directory_behind(tool):
    """A process of the tree spoils the header: the report fails (125)
    and the temporary directory is removed all the same (it stayed in
    /dev/shm, its memory with it)."""
    spoil = ('echo "$EATMYDATA_RECORD"; '
             'printf "\\377" | dd of="$EATMYDATA_RECORD" bs=1 seek=12 conv=notrunc 2>/dev/null')
    cmd = [*TOOLS[tool], "--", "sh", "-c", spoil]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    records = Path(r.stdout.strip())
    assert r.returncode == 125 and f"{records}: " in r.stderr, cmdline(cmd) + "\n" + r.stderr
    assert records.name == "records" and not records.parent.exists(), cmdline(cmd)
