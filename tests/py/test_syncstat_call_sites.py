# SPDX-License-Identifier: MIT
"""syncstat's call sites against the kernel's own view: strace -f -k, which
stops each durability call and unwinds its stack (libdw, the module's
.eh_frame) from the registers, run on the same tree as syncstat so that
both see the same calls.  A site is the first frame outside the C library
(and the preload library, whose wrapper strace sees in between): its
module, named by its file, and its address there (the return address, as
linked)."""
import collections
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import cmdline, require

STRACE_FRAME = re.compile(r"^ > (\S+?)\((\S*?)\) \[0x([0-9a-f]+)\]$")
PLUMBING = ("libc.so.6", "libeatmydata.so")


def strace_stacks(path):
    """[(call, [(module's file name, function, address)])] from strace -k's
    output at path: each call with its stack, printed when it returns (a
    call's line, or its "<... call resumed>"); a signal's stack has no
    call (None)."""
    stacks = []
    for line in Path(path).read_text().splitlines():
        frame = STRACE_FRAME.match(line)
        if frame:
            stacks[-1][1].append((os.path.basename(frame[1]), frame[2], int(frame[3], 16)))
        elif "<unfinished ...>" not in line:
            m = re.match(r"^\d+ +(?:<\.\.\. )?(\w+)(?:\(| resumed>)", line)
            stacks.append((m[1] if m else None, []))
    return stacks


def strace_sites(path, calls):
    """{(module, address): count}: each of the calls' first frame outside
    the C library and the preload library, as strace -k saw it."""
    sites = collections.Counter()
    for call, frames in strace_stacks(path):
        if call in calls:
            outside = [f for f in frames if f[0] not in PLUMBING]
            sites[(outside[0][0], outside[0][2]) if outside else None] += 1
    return sites


def syncstat_sites(json_file):
    """{(module, address): count} of syncstat's JSON report, from each
    site's "module+0xaddress symbol"."""
    sites = collections.Counter()
    for s in json.loads(Path(json_file).read_text())["sites"]:
        m = re.match(r"^(.+)\+0x([0-9a-f]+)( |$)", s["site"])
        sites[(m[1], int(m[2], 16)) if m else s["site"]] += s["count"]
    return sites


PG_RUN = """set -e
"$2/pg_ctl" -D "$1/data" -o "-k $1 -c listen_addresses=''" -w -l "$1/log" start >/dev/null
for i in 1 2 3 4 5; do
  "$2/psql" -h "$1" -U postgres -d postgres -qc "create table if not exists t(x int);
    insert into t values ($i);"
done
"$2/pg_ctl" -D "$1/data" -w stop >/dev/null
"""


@pytest.fixture
def pg_dir():
    """A directory of postgres's in /tmp (postgres cannot reach the test's
    own) and PostgreSQL's programs' directory; a server left running is
    stopped."""
    d = Path("/tmp") / f"syncstat-sites-{os.getpid()}"
    d.mkdir(mode=0o700)
    bin_dir = Path(require("pg_ctl")).resolve().parent
    as_postgres = [require("setpriv"), "--reuid=postgres", "--regid=postgres", "--init-groups",
                   "--"]
    subprocess.run(["chown", "postgres:postgres", d], check=True)
    subprocess.run([*as_postgres, bin_dir / "initdb", "-A", "trust", "-U", "postgres", "-D",
                    d / "data"], check=True, capture_output=True, timeout=120, cwd="/tmp")
    yield d, bin_dir, as_postgres
    subprocess.run([*as_postgres, bin_dir / "pg_ctl", "-D", d / "data", "-m", "immediate",
                    "stop"], capture_output=True, timeout=60, cwd="/tmp")
    subprocess.run(["rm", "-rf", d], check=True)


@pytest.mark.postgres
@pytest.mark.root
def test_postgres_sites_are_its_own_file_and_addresses(shared_lib, pg_dir):
    """PostgreSQL (dynamic: the library names its sites) sets its process
    title over argv[0], which dladdr gives as the program's file name: each
    site is named by the file, postgres, one row per address, and the rows
    are strace -k's, call for call.  Named by dladdr, the WAL's fdatasync
    at one address came out as a row per backend's title ("postgres:
    checkpointer", "postgres: postgres postgres [local] INSERT")."""
    d, bin_dir, as_postgres = pg_dir
    cmd = [*as_postgres, require("strace"), "-f", "-k", "-o", d / "strace",
           "-e", "trace=fsync,fdatasync,sync_file_range",
           shared_lib / "bin" / "syncstat", f"--json={d}/r.json", "-o", d / "r.txt", "--",
           "sh", "-c", PG_RUN, "sh", d, bin_dir]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd="/tmp")
    assert r.returncode == 0, cmdline(cmd) + r.stderr
    ours = syncstat_sites(d / "r.json")
    kernel = strace_sites(d / "strace", ("fsync", "fdatasync", "sync_file_range"))
    assert {m for m, _ in ours} == {"postgres"}, ours
    assert ours == kernel and sum(ours.values()) > 20, (ours, kernel)
