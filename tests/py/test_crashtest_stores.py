# SPDX-License-Identifier: MIT
"""crashtest on the stores of ALICE's study (Pillai et al., OSDI 2014) that
run here: LMDB, GDBM and LevelDB through Debian's Python bindings, and
Mercurial.  Each finding sits beside its control: another model, or a store
that survives."""
import collections
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import require
from helpers import CRASH, crash_report

pytestmark = [pytest.mark.slow]

DEBIAN_PYTHON = "/usr/bin/python3"


def store_dir(tmp_path, store):
    for module in {"lmdb": "lmdb", "gdbm": "dbm.gnu", "leveldb": "plyvel"}[store].split():
        if subprocess.run([DEBIAN_PYTHON, "-c", f"import {module}"]).returncode:
            require(f"python3-{store}")  # fails in CI, skips elsewhere
    d = Path(tempfile.mkdtemp(prefix=store, dir=tmp_path))
    subprocess.run([DEBIAN_PYTHON, CRASH / "stores.py", store, "create"], cwd=d, check=True)
    return d


def crash_store(tmp_path, store, *args):
    d = store_dir(tmp_path, store)
    return crash_report("--each", *args,
                        f"--check={DEBIAN_PYTHON} {CRASH / 'stores.py'} {store} check", d, "--",
                        DEBIAN_PYTHON, CRASH / "stores.py", store, "write")


@pytest.mark.parametrize("store", ["lmdb", "gdbm"])
def test_lmdb_and_gdbm_survive_every_state(tmp_path, store):
    """LMDB (a data write, then its meta page with O_DSYNC) and GDBM (a
    shared mapping, msync at each sync: states of its pages in any part,
    while the msync runs) keep every transaction that returned, in every
    state.  ALICE's LMDB finding tears a 120-byte write of a meta page,
    which no disk does; its GDBM findings are of GDBM 1.8.3."""
    status, report = crash_store(tmp_path, store)
    assert status == 0 and len(report.points) >= 7, report.verdicts()
    if store == "gdbm":
        assert "during msync" in [a for a, _ in report.verdicts()], report.verdicts()


def test_leveldb_orders_its_manifest_only_on_a_journal(tmp_path):
    """LevelDB renames CURRENT to its new manifest and unlinks the old one
    with no fsync of the directory between: a state keeping the unlink and
    not the rename cannot open the database (ALICE's LevelDB finding).
    ext4's journal keeps names in order: ok in every state there."""
    status, posix = crash_store(tmp_path, "leveldb", "--states=16")
    assert status == 1 and 3 in posix.statuses(), posix.verdicts()
    assert any("CURRENT points to a non-existent file" in s["check_output"]
               for _, s in posix.failed()), posix.failed()
    status, ext4 = crash_store(tmp_path, "leveldb", "--states=16", "--model=ext4-ordered")
    assert status == 0, ext4.failed()


def test_leveldb_reads_its_log_past_a_gap(tmp_path):
    """LevelDB appends each put to its log, one write, no fsync without
    sync=True.  Under posix two of those writes may persist with the ones
    between lost (LazyFS's "torn-seq": LevelDB 1.23's log with its writes 1
    and 5 kept, 2..4 lost), and LevelDB reads its log past the gap: it opens
    holding k1 and k5 without k2..k4, not the first puts it was given.  The
    pair class builds that very state.  Control: with every write kept, the
    same check passes."""
    d = store_dir(tmp_path, "leveldb")
    check = f"--check={DEBIAN_PYTHON} {CRASH / 'stores.py'} leveldb prefix"
    run = [d, "--", DEBIAN_PYTHON, CRASH / "stores.py", "leveldb", "log"]
    status, pairs = crash_report("--classes=pair", "--states=4096", check, *run)
    lazyfs = [s["what"] for _, s in pairs.failed()
              if s["check_output"].strip() == "not a prefix: [1, 5]"]
    assert status == 1 and lazyfs, pairs.verdicts()
    assert any(w.split(": ", 1)[1].startswith("write db/") and ".log [0, +" in w and
               w.count(".log [") == 2 for w in lazyfs), lazyfs
    status, kept = crash_report("--classes=kept", check, *run)
    assert status == 0, kept.failed()


HG = 'for k in 1 2 3; do echo $k >> f && hg -q commit -m c$k -u t && echo $k; done'
HG_CHECK = ('hg verify -q >/dev/null 2>&1 || exit 3; n=$(wc -l < "$CRASHTEST_OUTPUT"); '
            'test "$(hg log -q | wc -l)" -ge $((n + 1)) || exit 4')


@pytest.mark.parametrize("model", ["posix", "ext4-ordered"])
def test_mercurial_never_syncs(tmp_path, model):
    """hg commit makes no durability call: a crash after it said "committed"
    loses commits, and leaves states `hg verify` rejects (ALICE found
    Mercurial's protocol corrupt after crashes)."""
    hg = require("hg")
    d = tmp_path / "repo"
    d.mkdir()
    subprocess.run([hg, "init", "-q"], cwd=d, check=True)
    (d / "f").write_text("a\n")
    subprocess.run([hg, "-q", "commit", "-A", "-m", "one", "-u", "t"], cwd=d, check=True)
    status, report = crash_report("--states=24", "--seed=3", f"--model={model}",
                                  f"--check={HG_CHECK}", d, "--", "sh", "-c", HG)
    counts = collections.Counter(s["check_status"] for p in report.points for s in p["states"])
    assert counts[3] and counts[4] and report.points[-1]["durability_calls"] == 0, counts
