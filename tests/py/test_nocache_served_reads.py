# SPDX-License-Identifier: MIT
"""Reads nocache's supervisor makes for a static program keep read(2)'s own
guarantees: readers of one open file (two threads, a parent and its child)
each get a range of their own under the file's shared position, and the data
goes into the caller's memory as the kernel's copy would put it (never
through a read-only page).  Each case runs tests/c/servedread.c natively
(the control) and under nocache; the page cache, left empty by the served
reads and full by the native ones, shows they were served."""
import os
import subprocess
from array import array

import pytest

from conftest import BUILD, TESTS, cmdline
from helpers import cached_bytes, evict

NOCACHE = BUILD / "bin" / "nocache"
READER = TESTS / "servedread-static"
WORDS = 2 << 20  # 16 MiB: a few thousand reads each way


@pytest.fixture
def words(scratch):
    """A file of 8-byte words, word i being i, not cached."""
    f = scratch / "words"
    f.write_bytes(array("Q", range(WORDS)).tobytes())
    evict(f)
    yield f


def served(case, f):
    """servedread CASE f natively, then under nocache (the file evicted
    before each): (stdout, bytes cached after) of each."""
    out = []
    for pre in ([], [NOCACHE]):
        evict(f)
        cmd = [*pre, READER, case, f]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, cmdline(cmd) + r.stderr
        out.append((r.stdout, cached_bytes(f), cmdline(cmd)))
    return out


@pytest.mark.parametrize("case", ["threads", "hole", "fork"])
def test_readers_of_one_file_read_each_byte_once(case, words):
    """Two readers of one open file read it to its end concurrently: each
    word is read exactly once, each read a run of words.  In `hole`, one
    reader's buffer ends at an unmapped page: the kernel reads what fits and
    moves the position by that; a supervisor that read more and moved the
    position back afterwards gave the other reader's bytes twice."""
    native, nocache = served(case, words)
    assert native[0] == "each word once\n", "native control: " + native[2]
    assert native[1] == WORDS * 8, "native control: the file read is cached"
    assert nocache[0] == native[0], nocache[2]
    assert nocache[1] == 0, "the reads were not served: " + nocache[2]


def test_read_into_read_only_memory_is_efault(words):
    """A read into a read-only page: the kernel's copy faults (EFAULT, the
    position unmoved).  The supervisor writes the caller's memory through
    /proc/PID/mem, which writes read-only pages too (FOLL_FORCE): it must
    write only where the kernel would."""
    native, nocache = served("rdonly", words)
    assert native[0] == "read-rdonly -1 EFAULT first 0 pos 0\n", "native control"
    assert nocache[0] == native[0], nocache[2]


def test_read_into_memory_that_faults_moves_the_position_by_what_it_gave(words):
    """A read into two pages, the second a writable shared mapping past its
    file's end: /proc/PID/maps calls it writable, but the kernel's copy
    faults there, and read(2) gives the first page and moves the position
    by that.  A supervisor that read both pages from the file and delivered
    one lost the second page's bytes from the reader's stream."""
    native, nocache = served("pastend", words)
    assert native[0] == "read-pastend 4096 ok pos 4096\n", "native control"
    assert nocache[0] == native[0], nocache[2]
