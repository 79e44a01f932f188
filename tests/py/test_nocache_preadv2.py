# SPDX-License-Identifier: MIT
"""nocache's supervisor serves preadv2 and pwritev2 (64- and 32-bit, their
offset of -1 being the file position, their flags beside it) for a static
program, tests/c/rwflags.c: what it reads and writes is the native run's,
its file position moves as the kernel's rule says, and the pages it brought
in are dropped while those cached before stay, beside the native control
that caches them.  A flag the supervisor cannot honour as the kernel would
(RWF_NOWAIT, RWF_NOSIGNAL, RWF_ATOMIC, an unknown bit) goes on to the
kernel unchanged: the same answers as natively, and the kernel's tracepoint
sees the program's own call."""
import os
import subprocess

import pytest

from conftest import BUILD, TESTS, cmdline, run
from helpers import cached_bytes as cached, evict, evicted_random, settled

NOCACHE = BUILD / "bin" / "nocache"
MIB = 16
# What a native control must leave cached: nearly all of it (this machine's
# DAMON reclaims cold pages on its own, a page now and then).
MOSTLY = (MIB << 20) * 9 // 10
BITS = ["64", *(["32"] if (TESTS / "rwflags32-static").exists() else [])]


def prog(bits):
    return TESTS / ("rwflags32-static" if bits == "32" else "rwflags-static")


def both(cmd, before=None):
    """cmd natively, then under nocache, `before` run ahead of each:
    (stdout, command line) of each."""
    out = []
    for pre in ([], [NOCACHE]):
        if before:
            before()
        r = subprocess.run([str(c) for c in [*pre, *cmd]], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0 and not r.stderr, cmdline([*pre, *cmd]) + r.stderr
        out.append((r.stdout, cmdline([*pre, *cmd])))
    return out


@pytest.fixture
def big(scratch):
    yield evicted_random(scratch / "big", MIB)


@pytest.mark.parametrize("bits", BITS)
def test_reader_reads_as_natively_and_leaves_nothing_cached(bits, big):
    """preadv2 by turns at -1 and at an offset (a 64-bit caller's pos_h
    garbage, which the kernel ignores): the same bytes (their sum) and
    positions as natively, where the file ends cached; under nocache none
    of it is."""
    cmd = [prog(bits), "read", big]
    native = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
    assert native.stdout.startswith(f"read {MIB << 20} sum ") and \
        native.stdout.endswith(" wrong-pos 0\n"), "native control: " + cmdline(cmd)
    assert cached(big) >= MOSTLY, "native control: the reader caches the file"
    evict(big)
    r = subprocess.run([NOCACHE, *cmd], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, native.stdout), cmdline([NOCACHE, *cmd]) + r.stderr
    assert cached(big) <= 64 << 10, cmdline([NOCACHE, *cmd])


def cache_first_half(path):
    """The first half of path cached and nothing else (no readahead)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        assert len(os.pread(fd, MIB << 19, 0)) == MIB << 19
    finally:
        os.close(fd)


@pytest.mark.parametrize("bits", BITS)
def test_pages_cached_before_stay(bits, big):
    cache_first_half(big)
    before = cached(big)
    assert (MIB << 19) - (64 << 10) <= before <= MIB << 19, "the first half cached, no more"
    cmd = [NOCACHE, prog(bits), "read", big]
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    assert before - (64 << 10) <= cached(big) <= before + (64 << 10), cmdline(cmd)
    subprocess.run(cmd[1:], check=True, capture_output=True, timeout=60)
    assert cached(big) >= MOSTLY, "native control: the reader caches the rest"


@pytest.mark.parametrize("bits", BITS)
def test_writer_writes_as_natively_and_leaves_nothing_cached(bits, scratch):
    out = scratch / "out"
    cmd = [prog(bits), "write", out, MIB]
    expected = b"".join(bytes([97 + k % 26]) * 65536 for k in range(MIB * 16))
    native = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                            timeout=60, check=True)
    assert native.stdout == f"write {MIB << 20} wrong-pos 0\n", "native control"
    assert cached(out) >= MOSTLY, "native control: the writer's pages stay cached"
    assert out.read_bytes() == expected, "native control"
    out.unlink()
    r = subprocess.run([str(c) for c in [NOCACHE, *cmd]], capture_output=True, text=True,
                       timeout=60)
    assert (r.returncode, r.stdout) == (0, native.stdout), cmdline([NOCACHE, *cmd]) + r.stderr
    assert settled(out, 64 << 10) <= 64 << 10, cmdline([NOCACHE, *cmd])
    assert out.read_bytes() == expected, cmdline([NOCACHE, *cmd])


@pytest.mark.parametrize("bits", BITS)
def test_append_stops_at_the_file_size_limit(bits, scratch):
    """RWF_APPEND writes at the file's end whatever the offset (0 here): a
    write there that crosses the caller's RLIMIT_FSIZE is short, as
    natively.  The supervisor, whose own limit is raised, must judge it at
    the end, not at the offset given, and leave it to the kernel."""
    f = scratch / "f"
    outs = []
    for pre in ([], [NOCACHE]):
        f.write_bytes(b"x" * (60 << 10))
        cmd = ["sh", "-c", 'ulimit -S -f 128 && exec "$@"', "sh", *pre, prog(bits), "append", f]
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=60)
        outs.append((r.returncode, r.stdout, f.stat().st_size, cmdline(cmd)))
    assert outs[0][0] == 0 and outs[0][1].startswith("append-to-limit 4096 ok pos 0 ") and \
        outs[0][2] == 64 << 10, "native control: a short write up to the limit"
    assert outs[1][:3] == outs[0][:3], outs[1][3]


@pytest.fixture
def flag_files(scratch):
    """rwflags flags' FILE (1 MiB) and KERNEL (2 MiB): each made anew, not
    cached, before each run (FILE.w is the program's)."""
    f, k = scratch / "f", scratch / "k"
    data = os.urandom(3 << 20)

    def fresh():
        f.write_bytes(data[:1 << 20])
        k.write_bytes(data[1 << 20:])
        evict(f)
        evict(k)
    yield f, k, fresh


@pytest.mark.parametrize("bits", BITS)
def test_flags_answer_as_the_kernel(bits, flag_files):
    """Each flag served (the same data, position and file as natively) or
    left to the kernel (RWF_NOWAIT's EAGAIN on pages not cached, an unknown
    bit's EOPNOTSUPP, RWF_APPEND with RWF_NOAPPEND's EINVAL), offsets of -2
    (EINVAL) and of the low word -1 alone (a 32-bit caller's 4 GiB - 1),
    a pipe's ESPIPE: line for line the native run's."""
    f, k, fresh = flag_files
    native, nocache = both([prog(bits), "flags", f, k], fresh)
    lines = native[0].splitlines()
    assert len(lines) == 28 and "kernel-read-nowait -1 EAGAIN pos 0" in lines[0] and \
        "read-unknown -1 EOPNOTSUPP" in native[0], "native control: " + native[1]
    assert nocache[0] == native[0], nocache[1]


# Tracepoint filters on preadv2's and pwritev2's flags, and how many calls
# of rwflags flags each counts natively, then under nocache.  The syscall
# tracepoints see a call the program made itself (a 64-bit one): gone on to
# the kernel, it is counted as natively; served, the program's is never
# made, and the supervisor's own is not counted: a write has RWF_DONTCACHE
# added, a read is made by a thread of the supervisor (comm "eatmydata").
KERNELS = {
    "nowait": ("flags == 8", "flags == 8", 1, 1),
    "unknown": ("flags == 0x100000", "flags == 0x100 || flags == 0x100000", 1, 2),
    "served": ('flags == 1 && comm != "eatmydata"', "flags == 2", 1, 1),
}


@pytest.mark.parametrize("which", KERNELS)
def test_what_goes_on_to_the_kernel(which, flag_files):
    f, k, fresh = flag_files
    rd, wr, reads, writes = KERNELS[which]
    events = [("syscalls:sys_enter_preadv2", rd), ("syscalls:sys_enter_pwritev2", wr)]
    counts = []
    for pre in ([], [NOCACHE]):
        fresh()
        counts.append(run([*pre, prog("64"), "flags", f, k], events=events).counts)
    assert counts[0] == {"syscalls:sys_enter_preadv2": reads,
                         "syscalls:sys_enter_pwritev2": writes}, "native control"
    expected = counts[0] if which != "served" else {e: 0 for e, _ in events}
    assert counts[1] == expected, cmdline([NOCACHE, prog("64"), "flags", f, k])
