# SPDX-License-Identifier: MIT
"""Every entry point, from a C program: the request reaches the disk when run
natively and never under eatmydata, from one thread, many, a forked child,
a fortified build and a 32-bit build."""
import subprocess

import pytest

from conftest import BUILD, EATMYDATA, LIB_DIRS, SYNC_EVENTS, TESTS, eaten, run
from entries import ENTRY_POINTS, RECORDED_ONLY, REQUESTS

VARIANTS = {
    "plain": [],
    "threads": ["-t", "16"],
    "fork": ["-f"],
}


@pytest.mark.parametrize("sym,prog,call", REQUESTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_request_is_eaten(scratch, sym, prog, call, variant):
    cmd = [TESTS / prog] + VARIANTS[variant] + [call, scratch]
    native = run(cmd)
    assert native.syncs > 0, "the request never reached the disk natively" + native.why()
    under = eaten(cmd)
    assert under.syncs == 0, f"{sym} let durability through" + under.why()


@pytest.mark.parametrize("sym,prog,call",
                         [r for r in REQUESTS if r[1] == "entry"])
def test_32bit_request_is_eaten(scratch, sym, prog, call):
    # The syscalls: tracepoints do not see a 32-bit process's system calls;
    # sync_file_range shows as writeback the process started itself.
    events = SYNC_EVENTS + [("ext4:ext4_writepages", None)]
    entry32 = TESTS / "entry32"
    assert entry32.exists(), "no 32-bit build: install gcc-multilib"
    native = run([entry32, call, scratch], events=events)
    assert native.syncs > 0, native.why()
    under = eaten([entry32, "-f", call, scratch], events=events)
    assert under.syncs == 0, under.why()


def test_fortified_build_calls_the_fortified_entry_points():
    syms = subprocess.run(["nm", "-D", TESTS / "entry-fortify"], text=True,
                          capture_output=True, check=True).stdout
    for sym, rows in ENTRY_POINTS.items():
        if any(prog == "entry-fortify" for prog, _ in rows):
            assert f" {sym}@" in syms, f"entry-fortify does not call {sym}"


NOCACHE_EXPORTS = {
    "read", "readv", "pread", "pread64", "preadv", "preadv64", "preadv2", "preadv64v2",
    "write", "writev", "pwrite", "pwrite64", "pwritev", "pwritev64", "pwritev2",
    "pwritev64v2", "copy_file_range", "sendfile", "sendfile64", "close", "fclose",
    "dup2", "dup3"}
EXPORTS = {"eatmydata": set(ENTRY_POINTS) | RECORDED_ONLY, "nocache": NOCACHE_EXPORTS,
           "hirestimes": {"times", "sysconf", "__sysconf"}}


# Every library of both ELF classes; an empty list must fail, not skip.
LIBS = sorted(p for d in LIB_DIRS for p in (BUILD / d).glob("lib*.so"))


@pytest.mark.parametrize("lib", LIBS or [None], ids=lambda p: f"{p.parent.name}/{p.name}" if p else "none")
def test_exports_only_the_intercepted_functions(lib):
    assert lib and len(LIBS) == 6, f"expected 3 libraries in each of 2 classes, found {LIBS}"
    out = subprocess.run(["nm", "-D", "--defined-only", lib], text=True,
                         capture_output=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    assert exported == EXPORTS[lib.stem[3:]], f"nm -D --defined-only {lib}"


def test_disable_passes_everything_through(scratch):
    under = eaten([TESTS / "entry", "-t", "4", "fsync", scratch],
                  env={"EATMYDATA_DISABLE": "1"})
    assert under.syncs > 0, under.why()
    assert EATMYDATA.exists()
