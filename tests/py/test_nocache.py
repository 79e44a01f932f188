# SPDX-License-Identifier: MIT
"""nocache: what a command reads leaves the page cache as it found it, as
fincore (mincore) sees it; nothing is ever synced; the calls answer as they
would without it."""
import contextlib
import difflib
import mmap
import os
import resource
import subprocess
from pathlib import Path

import pytest

from conftest import TESTS, cmdline, require, run
from helpers import DURABLE, NOCACHE, cached_bytes, evict, warm

SIZE = 64 << 20
# Every path: RWF_DONTCACHE where ext4 takes it, and the posix_fadvise
# fallback that other file systems get.
PATHS = {"dontcache": {}, "fadvise": {"NOCACHE_NO_DONTCACHE": "1"}}


@contextlib.contextmanager
def pinned(path):
    """The file's pages locked in the page cache for the block.  This
    machine's DAMON pages out cold pages on its own; a page it took between
    warm() and the command's start was not cached when nocache looked, and
    nocache rightly dropped it again after reading."""
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | 0x2000 | 0x8000,  # LOCKED, POPULATE
                      prot=mmap.PROT_READ)
    try:
        assert cached_bytes(path) == os.path.getsize(path)
        yield
    finally:
        m.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("nocache")
    f = d / "data"
    f.write_bytes(os.urandom(SIZE))
    db = d / "db.sqlite"
    subprocess.run([require("sqlite3"), db,
                    "CREATE TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT "
                    "i + 1 FROM c WHERE i < 8000) INSERT INTO t SELECT randomblob(4000) FROM c;"],
                   check=True, timeout=120)
    yield f, db


def readers(f, db, out):
    return {
        "cat": ["sh", "-c", f"cat {f} > /dev/null"],
        "cp": [require("cp"), f, out / "copy"],
        "tar": [require("tar"), "cf", out / "t.tar", "-C", f.parent, f.name],
        "rsync": [require("rsync"), f, out / "rsynced"],
        "sqlite3": [require("sqlite3"), db, "SELECT sum(length(x)) FROM t"],
    }


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("reader", ["cat", "cp", "tar", "rsync", "sqlite3"])
def test_uncached_file_stays_uncached(data, tmp_path, reader, path):
    f, db = data
    target = db if reader == "sqlite3" else f
    cmd = readers(f, db, tmp_path)[reader]
    evict(target)
    subprocess.run(cmd, check=True, timeout=120, capture_output=True)
    assert cached_bytes(target) > 0.5 * os.path.getsize(target), \
        "natively the read fills the cache (else this test proves nothing)"
    evict(target)
    r = run([NOCACHE] + cmd, env=PATHS[path], events=DURABLE)
    assert cached_bytes(target) <= 0.01 * os.path.getsize(target), r.why()
    assert r.syncs == 0 or reader == "sqlite3", "nocache synced" + r.why()


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("reader", ["cat", "cp", "tar", "rsync", "sqlite3"])
def test_cached_file_stays_cached(data, tmp_path, reader, path):
    """nocache never drops a page of a file that was all cached: it makes no
    posix_fadvise and no RWF_DONTCACHE read on it (strace -y names the file
    behind each descriptor).  This machine's DAMON reclaims cold pages on
    its own, so fincore can only show that nearly all of it stayed."""
    f, db = data
    target = db if reader == "sqlite3" else f
    warm(target)
    trace = tmp_path / "strace.txt"
    cmd = [require("strace"), "-f", "-y", "-s", "0", "-e", "signal=none",
           "-e", "trace=fadvise64,preadv2,pwritev2", "-o", trace, NOCACHE]
    with pinned(target):
        run(cmd + readers(f, db, tmp_path)[reader], env=PATHS[path])
    on_target = [line for line in trace.read_text().splitlines() if f"<{target}>" in line]
    assert on_target, f"strace saw no read of {target}"
    drops = [line for line in on_target if "FADV_DONTNEED" in line or
             ("preadv2" in line and ("0x80" in line or "DONTCACHE" in line))]
    assert not drops, "\n".join(drops[:5])
    assert cached_bytes(target) >= 0.9 * os.path.getsize(target)


RESIDENCY = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
fd = os.open(sys.argv[1], os.O_RDONLY)
while os.lseek(fd, 0, os.SEEK_CUR) < int(sys.argv[2]):
    os.read(fd, 1 << 20)
size = os.fstat(fd).st_size
pages = (size + 4095) // 4096
vec = (ctypes.c_ubyte * pages)()
addr = libc.mmap(None, size, 1, 1, fd, 0)
assert libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) == 0
behind = int(sys.argv[2]) // 4096
print(sum(v & 1 for v in vec[:behind]) * 4096, sum(v & 1 for v in vec) * 4096)
"""


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
def test_drops_behind_as_it_goes(data, path):
    """Three quarters through one big read, the cache holds at most one drop
    interval (4 MiB) and the read in flight of what is behind the position;
    ahead of it, only the kernel's readahead."""
    f, _ = data
    pos = SIZE * 3 // 4
    evict(f)
    native = run(["python3", "-c", RESIDENCY, f, pos])
    assert int(native.stdout.split()[0]) == pos, "natively all of it stays"
    evict(f)
    r = run([NOCACHE, "python3", "-c", RESIDENCY, f, pos], env=PATHS[path])
    behind, total = map(int, r.stdout.split())
    assert behind <= (5 << 20), r.why()
    assert total <= behind + (SIZE - pos), r.why()


def test_only_the_syncs_the_command_makes(data, tmp_path):
    _, db = data
    cmd = [require("sqlite3"), tmp_path / "w.db",
           "PRAGMA synchronous=FULL; CREATE TABLE t(x); INSERT INTO t VALUES(1);"]
    native = run(cmd, events=DURABLE)
    (tmp_path / "w.db").unlink()
    under = run([NOCACHE] + cmd, events=DURABLE)
    assert under.counts == native.counts, under.why()


def test_tmpfs_refuses_dontcache_and_still_reads():
    d = Path("/dev/shm") / f"nocache-{os.getpid()}"
    d.write_bytes(b"x" * 100000)
    try:
        r = run([NOCACHE, "sh", "-c", f"cat {d} | wc -c"])
        assert r.stdout.strip() == "100000"
    finally:
        d.unlink()


@pytest.mark.parametrize("probe", ["ioprobe", "ioprobe32"])
@pytest.mark.parametrize("path", PATHS)
def test_same_answers_as_the_kernel(tmp_path, path, probe):
    """194 cases, the 64-bit library and the 32-bit one (whose off_t calls
    widen to the 64-bit ones)."""
    exe = TESTS / probe
    outs = []
    for name, prefix in [("native", []), ("nocache", [NOCACHE])]:
        d = tmp_path / name
        d.mkdir()
        r = subprocess.run(prefix + [exe, d], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, **PATHS[path]))
        assert r.returncode == 0 and not r.stderr, cmdline(prefix + [exe, d])
        outs.append(r.stdout.splitlines())
    assert len(outs[0]) > 150
    diff = list(difflib.unified_diff(*outs, "native", "nocache", lineterm=""))
    assert not diff, "\n".join(diff)


def test_start_cost_does_not_grow_with_the_descriptor_limit():
    """The table of descriptors grows on use: the same system calls whatever
    RLIMIT_NOFILE is (nocache #38/#50 scanned every possible descriptor)."""
    counts = []
    for limit in (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1]):
        r = run(["sh", "-c", f"ulimit -n {limit} && exec {NOCACHE} /bin/true"],
                events=[("raw_syscalls:sys_enter", None)])
        counts.append(r.counts["raw_syscalls:sys_enter"])
    assert abs(counts[0] - counts[1]) <= 2, counts


@pytest.mark.parametrize("through", ["pipe", "character device"])
def test_no_system_call_added_without_a_page_cache(through):
    """cachestat answers for a pipe or a character device as for a file of
    which nothing is cached: nocache tells them apart (fstat, once a
    descriptor) and adds no system call to their reads and writes (it added
    an lseek to each), beside the native count; 1000 more of each read and
    write under nocache cost what they cost natively."""
    def cmd(n):
        dd = f"dd bs=4k count={n} status=none"
        return ["sh", "-c", f"{dd} if=/dev/zero | {dd} of=/dev/null" if through == "pipe"
                else f"{dd} if=/dev/zero of=/dev/null"]
    calls = {}
    for pre in ([], [NOCACHE]):
        n = [run(pre + cmd(k), events=[("raw_syscalls:sys_enter", None)])
             .counts["raw_syscalls:sys_enter"] for k in (1000, 2000)]
        calls[bool(pre)] = n[1] - n[0]
    assert calls[False] >= 2000, "native control: 1000 more reads and writes"
    assert calls[True] <= calls[False] + 20, calls
