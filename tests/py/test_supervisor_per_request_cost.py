# SPDX-License-Identifier: MIT
"""What one request costs the tree when the supervisor serves it, in the
kernel's counts (perf: raw_syscalls:sys_enter and task:task_newtask over the
whole tree, supervisor included): syncstat's per-call system calls (issue
28's speed goal) and no worker started per request.  Counted over two runs
of different lengths, so that the start-up (the launcher, the supervisor,
the record file) cancels out."""
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import BUILD, TESTS, run

SYNCSTAT = BUILD / "bin" / "syncstat"
EVENTS = [("raw_syscalls:sys_enter", None), ("task:task_newtask", None)]
SHORT, LONG = 500, 2500

# Per fdatasync served, beyond the native run's (the caller's own call is
# answered before the kernel counts it): RECV and SEND; for syncstat, a
# statx of the caller's file in its /proc/TID/fd (fds.c: is a duplicate's
# close quiet there, not a flush a FUSE server hears?), its descriptor
# fetched (pidfd_getfd) and closed, the call itself, the caller's stack
# pointer, and its stack (site.c) with its image's stamp (timed.c) in one
# process_vm_readv (two before); for eatmydata, the stamp of the image
# whose environment said it eats (supervisor.c: read once per image, was
# an open, two reads and a close per request), a statx of its file and one
# of its link, whose mode is its access mode: no duplicate of it (it was
# fetched, checked with sync_file_range(fd, 0, 0, 0) and closed: 6).  Under syncstat the write
# before each fdatasync is served too (does its open file sync it?): RECV,
# SEND and one read of its fdinfo, kept open (timed.c), 3 more (6 when its
# descriptor was looked at in /proc, fetched, asked with F_GETFL and
# closed).  One more is a regression.
PER_CALL = {"syncstat": 7 + 3, "eatmydata": 4}
TOOLS = {"syncstat": [SYNCSTAT, "-o", "/dev/null", "--"], "eatmydata": [BUILD / "bin" / "eatmydata"]}


@pytest.fixture
def shm():
    """A directory on tmpfs: the runs are short, and the supervisor's main
    thread, which looks at its pools every 100 ms, adds next to nothing."""
    d = Path(tempfile.mkdtemp(prefix="per-request-", dir="/dev/shm"))
    yield d
    shutil.rmtree(d)


def per_call(cmd, d):
    """The difference per request between a LONG and a SHORT run of cmd:
    (system calls, tasks started)."""
    counts = []
    for n in (SHORT, LONG):
        f = d / f"f{n}"
        r = run([*cmd, TESTS / "fsyncs-static", f, n, "fdatasync"], events=EVENTS)
        counts.append(r)
    calls = LONG - SHORT
    return tuple((counts[1].counts[e] - counts[0].counts[e]) / calls for e, _ in EVENTS), counts


@pytest.mark.parametrize("tool", PER_CALL)
def test_system_calls_per_request(tool, shm):
    """Natively each request is one system call; under syncstat the tree
    makes PER_CALL more (12 before the supervisor was made cheaper: a poll
    and a futex per receive, the main thread woken by each request, the
    record written with pwrite after a sigsetjmp that saved the signal
    mask), eatmydata its own."""
    native, _ = per_call([], shm)
    assert native[0] == pytest.approx(2, abs=0.01)  # the write and the fdatasync
    (syscalls, tasks), runs = per_call(TOOLS[tool], shm)
    why = "".join(r.why() for r in runs)
    assert syscalls - native[0] <= PER_CALL[tool] + 0.1, f"{syscalls - native[0]:.2f} per call" + why
    # No worker started per request: the counts of tasks do not grow.
    assert tasks * (LONG - SHORT) <= 2, f"{tasks * (LONG - SHORT):.0f} more tasks" + why
