# SPDX-License-Identifier: MIT
"""syncstat --audit: each mistake found once in a program written to make
it, nothing in the same program written correctly, and what real programs
do."""
import json
import subprocess

import pytest

from conftest import TESTS, require, run
from helpers import SYNCSTAT, audit


@pytest.mark.parametrize("mode,pattern,name", [
    ("rename-unsynced", "rename-unsynced", "target"),
    ("rename-changed", "rename-unsynced", "target"),
    ("rename-changed-by-another", "rename-unsynced", "target"),
    ("rename-dir-not-synced", "dir-not-synced", "target"),
    ("create-dir-not-synced", "dir-not-synced", "new"),
    ("tail", "tail-not-synced", "new"),
    ("tail-mmap", "tail-not-synced", "new"),
    ("correct", None, None),
    ("correct-syncfs", None, None),
    # syncfs of another file system (/proc) covers nothing here.
    ("syncfs-elsewhere", "rename-unsynced", "target"),
])
def test_each_mistake_once(scratch, tmp_path, mode, pattern, name):
    _, findings = audit([TESTS / "mistakes", mode, scratch], tmp_path)
    expected = [(pattern, "mistakes", f"{scratch}/{name}")] if pattern else []
    assert findings == expected


@pytest.mark.parametrize("prog", ["entry", "entry32"])
@pytest.mark.parametrize("call", ["open", "open64", "openat64", "syscall-openat",
                                  "syscall-openat2"])
def test_every_way_to_create_is_audited(scratch, tmp_path, prog, call):
    """A file created and never followed by a sync of its directory, whether
    through the libc names, their 32-bit *64 forms or syscall()."""
    _, findings = audit([TESTS / prog, call, scratch], tmp_path)
    assert [f[0] for f in findings] == ["dir-not-synced"], findings


def test_report_of_kept_records_repeats_the_findings(scratch, tmp_path):
    keep = tmp_path / "kept"
    subprocess.run([SYNCSTAT, "--audit", "--keep", keep, "--output", "/dev/null", "--",
                    TESTS / "mistakes", "tail", scratch], check=True, timeout=60)
    r = subprocess.run([SYNCSTAT, "report", keep], capture_output=True, text=True, timeout=60)
    assert "Audit: 1 finding\n  [tail-not-synced] mistakes at mistakes+0x" in r.stderr


@pytest.mark.parametrize("journal", ["DELETE", "WAL"])
def test_sqlite_makes_no_mistake(tmp_path, journal):
    sql = (f"PRAGMA journal_mode={journal}; PRAGMA synchronous=FULL; CREATE TABLE t(x);"
           + "INSERT INTO t VALUES(1);" * 5)
    _, findings = audit([require("sqlite3"), tmp_path / "t.db", sql], tmp_path)
    assert findings == []


def test_git_hardens_files_not_directories_nor_config(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "f").write_text("x\n")
    script = ("git init -q . && git -c core.fsync=all add f && "
              "git -c core.fsync=all -c user.name=t -c user.email=t@t commit -qm m")
    _, findings = audit(["sh", "-c", script], tmp_path, cwd=repo)
    kinds = {(p, e.rsplit("/.git/", 1)[-1].split("/")[0]) for p, _, e in findings}
    assert ("rename-unsynced", "config") in kinds, findings
    assert ("dir-not-synced", "objects") in kinds, findings
    assert ("dir-not-synced", "index") in kinds, findings
    assert {p for p, _, _ in findings} <= {"rename-unsynced", "dir-not-synced"}


def test_dpkg_syncs_files_not_their_directories(tmp_path):
    """dpkg writes each file as NAME.dpkg-new, fsyncs it and renames it over
    NAME, and never fsyncs a directory: the renames are not durable by
    POSIX's rule (ext4's auto_da_alloc orders the data, not the entry).
    --no-force-unsafe-io: a machine configured for image builds (Docker's
    docker-apt-speedup) has dpkg make no sync at all, and then nothing is
    found, as this test found on such a machine."""
    from test_programs import dpkg_root, make_deb
    deb = make_deb(tmp_path)
    root = dpkg_root(tmp_path / "d")
    _, findings = audit([require("dpkg"), f"--root={root}", "--force-not-root",
                         "--force-script-chrootless", "--force-depends", "--no-force-unsafe-io",
                         "-i", deb], tmp_path)
    assert [(p, prog) for p, prog, _ in findings] == [("dir-not-synced", "dpkg")], findings
    assert f"{root}/usr/share/emd-test/f" in findings[0][2], findings


@pytest.mark.postgres
@pytest.mark.root
def test_initdb_bootstrap_renames_without_fsync(shared_lib):
    """initdb's bootstrap backend runs with fsync off (durable_rename does
    not sync) and initdb syncs the whole data directory before it exits."""
    import os
    from pathlib import Path
    pgdata = Path("/tmp") / f"audit-initdb-{os.getpid()}"
    out = Path("/tmp") / f"audit-initdb-{os.getpid()}.json"
    try:
        run([require("setpriv"), "--reuid=postgres", "--regid=postgres", "--init-groups", "--",
             shared_lib / "bin" / "syncstat", "--audit", "--json", "--output", out, "--",
             require("initdb"), "-A", "trust", "-D", pgdata], cwd="/tmp")
        findings = json.loads(out.read_text())["findings"]
        assert [(f["pattern"], f["program"]) for f in findings] == \
            [("rename-unsynced", "postgres")], findings
        assert "durable_rename" in findings[0]["site"]
    finally:
        subprocess.run(["rm", "-rf", pgdata, out])
