# SPDX-License-Identifier: MIT
"""nocache costs no more disk reads than the command makes natively (issue
33): a cold tree made here is read by tar, dd (bs=4k and bs=1M), cp, rsync,
cat and sha256sum, natively and then under nocache.  What the kernel counts
as read from the disk by the whole process tree (ru_inblock of each
process, the supervisor's too) is the native run's, small reads included
(RWF_DONTCACHE, which drops the part of a folio a read leaves, made tar read
the tree 1.7 times), and what the command brought in is gone (fincore),
where the native run leaves it all cached.  The same for static programs,
whose reads the supervisor makes (busybox, tests/c/rw.c), and as another
user for root's 0644 files, of which it can learn nothing (cachestat:
EPERM; mincore: all cached)."""
import os
import pwd
import random
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import BUILD, TESTS, cmdline, require
from helpers import cached_under, disk_reads, evict_all

NOCACHE = BUILD / "bin" / "nocache"
# What a run under nocache may read beyond the native run's: a program or
# library page the other run found cached.  The bugs this catches read
# megabytes more.
SLACK = 512 << 10


@pytest.fixture(scope="module")
def tree():
    """src/: 24 files of 1 KiB to 1.5 MiB and one of 8 MiB (big), root's,
    0644, in a directory any user may enter."""
    top = Path(tempfile.mkdtemp(prefix="emd-nocache-reads-", dir="/tmp"))
    top.chmod(0o755)
    src = top / "src"
    src.mkdir()
    rng = random.Random(33)
    for i in range(24):
        (src / f"f{i:02d}").write_bytes(os.urandom(rng.randrange(1 << 10, 3 << 19)))
    (src / "big").write_bytes(os.urandom(8 << 20))
    for p in src.iterdir():
        p.chmod(0o644)
    yield src
    shutil.rmtree(top)


def files(src):
    return sorted(str(p) for p in src.iterdir())


def commands(src, out=None):
    """Each reader of the tree, by name; cp and rsync write into `out`, a
    directory they make (rsync would find a copy there up to date)."""
    big = src / "big"
    return {
        "tar": ["sh", "-c", 'tar cf - -C "$1" src | wc -c', "sh", src.parent],
        "dd-4k": [require("dd"), f"if={big}", "of=/dev/null", "bs=4k"],
        "dd-1M": [require("dd"), f"if={big}", "of=/dev/null", "bs=1M"],
        **({"cp": [require("cp"), "-r", src, out],
            "rsync": [require("rsync"), "-a", f"{src}/", out]} if out else {}),
        "cat": ["sh", "-c", 'cat "$@" > /dev/null', "sh", *files(src)],
        "sha256sum": [require("sha256sum"), *files(src)],
    }


def static_commands(src):
    """Static programs, whose reads the supervisor makes: busybox's dd and
    sha256sum (4 KiB reads), rw.c (64 KiB).  busybox's tar, cp and cat
    copy with sendfile, which stays the kernel's (doc/nocache.md)."""
    busybox, big = require("busybox"), src / "big"
    return {
        "busybox-dd-4k": [busybox, "dd", f"if={big}", "of=/dev/null", "bs=4k"],
        "busybox-dd-1M": [busybox, "dd", f"if={big}", "of=/dev/null", "bs=1M"],
        "busybox-sha256sum": [busybox, "sha256sum", *files(src)],
        "rw": [TESTS / "rw-static", "read", big],
    }


def read_of(name, src):
    """The files a reader reads."""
    return [str(src / "big")] if "dd" in name or name == "rw" else files(src)


def compare(cmd, paths, prefix=()):
    """cmd natively, then under nocache (prefix before each: another
    user), each on the files cold: (bytes read, bytes left cached) of each,
    and the size of the files.  cmd is a command, or a function that makes
    one for "native" and for "nocache"."""
    out = []
    for pre in ([], [NOCACHE]):
        evict_all(paths)
        run = cmd(pre and "nocache" or "native") if callable(cmd) else cmd
        reads, r = disk_reads([*prefix, *pre, *run])
        out.append((reads, cached_under(paths)[0], cmdline([*prefix, *pre, *run]) + r.stderr))
    return out, cached_under(paths)[1]


def check(native, nocache, size):
    assert native[0] >= size * 0.95, "native control: the files were cold: " + native[2]
    assert native[1] >= size * 0.9, "native control: the reader caches them: " + native[2]
    assert nocache[0] <= native[0] + SLACK, \
        f"{nocache[0] >> 10} KiB read, natively {native[0] >> 10}: " + nocache[2]
    assert nocache[1] <= size // 100, f"{nocache[1] >> 10} KiB left cached: " + nocache[2]


@pytest.mark.parametrize("name", ["tar", "dd-4k", "dd-1M", "cp", "rsync", "cat", "sha256sum"])
def test_reads_no_more_than_natively(name, tree, tmp_path):
    (native, nocache), size = compare(lambda run: commands(tree, tmp_path / run)[name],
                                      read_of(name, tree))
    check(native, nocache, size)


@pytest.mark.parametrize("name", ["busybox-dd-4k", "busybox-dd-1M", "busybox-sha256sum", "rw"])
def test_static_reads_no_more_than_natively(name, tree):
    paths = read_of(name, tree)
    (native, nocache), size = compare(static_commands(tree)[name], paths)
    check(native, nocache, size)


@pytest.mark.parametrize("name", ["tar", "dd-4k", "cat", "sha256sum", "busybox-dd-4k",
                                  "busybox-sha256sum"])
def test_a_file_its_user_may_only_read(name, tree, other_user):
    """Another user reads root's 0644 files: cachestat refuses it (EPERM),
    mincore says every page is cached, yet what it read goes, and no more
    is read than natively (the same user's run, the control, leaves them
    cached)."""
    user = pwd.getpwnam(other_user)
    as_user = [require("setpriv"), f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
               "--clear-groups"]
    cmd = {**commands(tree), **static_commands(tree)}[name]
    (native, nocache), size = compare(cmd, read_of(name, tree), as_user)
    check(native, nocache, size)
