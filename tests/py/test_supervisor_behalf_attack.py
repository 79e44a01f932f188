# SPDX-License-Identifier: MIT
"""The supervisor acting on a program's behalf, attacked as a hostile local
user would (issue 34): whatever the kernel does for a caller, the
supervisor must do the same way, for the same process, within the same
limits, or leave it to the kernel and say so.  Each case runs
tests/c/behalf.c (static) natively beside the tool and compares what the
program saw, and what the kernel saw (fincore, a FUSE server's log)."""
import json
import os
from pathlib import Path
import shutil
import subprocess
import tempfile

import pytest

from conftest import BUILD, TESTS, cmdline
BEHALF = TESTS / "behalf-static"
NOCACHE = BUILD / "bin" / "nocache"
SYNCSTAT = BUILD / "bin" / "syncstat"
EATMYDATA = BUILD / "bin" / "eatmydata"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
NO_PROC = "its pid namespace has no /proc of its own"


def runs(cmd, timeout=120, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                       **kw)
    r.line = cmdline(cmd)
    return r


def userns_allowed():
    """May an ordinary user make a user namespace here (and a pid one in it)?"""
    return runs([*NOBODY, "unshare", "-Urpf", "true"]).returncode == 0


@pytest.fixture
def public_dir():
    """A directory every user can reach (pytest's own is root's alone)."""
    d = tempfile.mkdtemp(prefix="emd-behalf-")
    os.chmod(d, 0o755)
    yield Path(d)
    shutil.rmtree(d)


@pytest.fixture
def nobodys_nocache(public_dir):
    """nocache and its libraries, the user nobody's: in a user namespace of
    nobody's, root's files are no one's, and the supervisor is started only
    from a program of root's or the user's own."""
    d = public_dir / "nb"
    for part in ("bin", *(p.name for p in BUILD.iterdir() if p.name.startswith("lib"))):
        shutil.copytree(BUILD / part, d / part, symlinks=True)
    for p in [d, *d.rglob("*")]:
        os.lchown(p, 65534, 65534)
    return d / "bin" / "nocache"


def victim_run(prefix, tool, data, unshare_outer):
    """In a pid namespace with a /proc of its own, whose pid 1 is a victim
    holding behalf's buffer: a pid namespace below it without one, whose
    pid 1 reads data into that very buffer under `tool` (or natively)."""
    return runs([*prefix, "unshare", *unshare_outer, "--mount-proc", BEHALF, "victim",
                 "unshare", "-pf", *tool, BEHALF, "readbuf", data])


@pytest.mark.root
@pytest.mark.parametrize("who", ["root", "user"])
def test_pid_namespace_without_its_own_proc(who, public_dir, nobodys_nocache):
    """/proc/1 in a pid namespace made without a /proc of its own is its
    parent's pid 1.  The supervisor, started in the namespace, got its
    callers' numbers as the namespace numbers them and read and wrote
    /proc/PID/mem by them: nocache wrote what the program read into the
    parent's pid 1 (the program read zeros).  It must refuse to start
    there, and the program runs unobserved, named."""
    if who == "user" and not userns_allowed():
        pytest.skip("no unprivileged user namespaces here")
    data = public_dir / "data"
    data.write_bytes(os.urandom(1 << 16))
    data.chmod(0o644)
    prefix, outer, tool = ([], ["-pf"], [NOCACHE]) if who == "root" else \
        (NOBODY, ["-Urpf"], [nobodys_nocache])
    native = victim_run(prefix, [], data, outer)
    assert native.returncode == 0 and native.stdout.endswith("victim untouched\n"), native
    under = victim_run(prefix, tool, data, outer)
    assert under.stdout == native.stdout, under.line + under.stderr
    assert f"its reads and writes stay cached: {NO_PROC}" in under.stderr, under.line


@pytest.mark.root
def test_pid_namespace_syncstat_names_no_other_process(tmp_path):
    """syncstat named the parent namespace's pid 2 (kthreadd) as the
    program that synced: the program is unobserved, and said so."""
    out = tmp_path / "r.json"
    cmd = ["unshare", "-pf", SYNCSTAT, "--json", "-o", out, "--", TESTS / "fsyncs-static",
           tmp_path / "f", "3", "fsync"]
    r = runs(cmd)
    assert r.returncode == 0, r.line + r.stderr
    report = json.loads(out.read_text())
    assert [u["program"] for u in report["unobserved"]] == ["fsyncs-static"], r.line
    assert NO_PROC in report["unobserved"][0]["why"], r.line
    assert report["processes"] == [], r.line


@pytest.mark.root
def test_pid_namespace_eatmydata_says_not_eaten(tmp_path):
    """eatmydata cleared an openat2's O_SYNC in the memory of whichever
    process had the caller's number: not eaten, and said."""
    r = runs(["unshare", "-pf", EATMYDATA, TESTS / "fsyncs-static", tmp_path / "f", "3",
              "fsync"])
    assert r.returncode == 0 and f"not eaten: {NO_PROC}" in r.stderr, r.line + r.stderr
