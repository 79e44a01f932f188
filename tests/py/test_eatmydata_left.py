# SPDX-License-Identifier: MIT
"""eatmydata says what it left to the disk (issue 33): a static program's
O_SYNC opens and RWF_SYNC writes go on to the kernel under the default
--on-behalf=off, and an open of a program the tree started (a filter of
the tree's own: Landlock's shadow) even with --on-behalf=on.  --stats counts
them apart from those eaten, and without --stats one line says how many, of
which program, and the option that eats them; "all eaten" only when the
kernel synced nothing.  tests/c/leftsyncs.c makes 4 O_SYNC opens (a write
each), 2 RWF_DSYNC writes and 8 fsync-family calls: 14 syncs natively."""
import re

import pytest

from conftest import EATMYDATA, TESTS, run

SYNCS = "ext4:ext4_sync_file_enter"
EVENTS = [(SYNCS, None)]
PROG = TESTS / "leftsyncs-static"


def line_of(r):
    """The one line eatmydata said (none: None)."""
    lines = [x for x in r.stderr.splitlines() if x.startswith("eatmydata: ")]
    assert len(lines) <= 1, r.why()
    return lines[0] if lines else None


def summary(r):
    """--stats' line of counts."""
    found = re.search(r"^  14 durability calls(.*)$", r.stderr, re.M)
    assert found, r.why()
    return found[1]


def test_natively_every_request_syncs(scratch):
    assert run([PROG, scratch], events=EVENTS).counts[SYNCS] == 14


@pytest.mark.parametrize("stats", [False, True], ids=["line", "stats"])
def test_what_the_default_leaves_is_said(scratch, stats):
    """--on-behalf=off: the 4 writes on the O_SYNC files and the 2 RWF_DSYNC
    writes sync: 6 requests went on, --on-behalf=on eats them."""
    r = run([EATMYDATA, *(["--stats"] if stats else []), PROG, scratch], events=EVENTS)
    assert r.counts[SYNCS] == 6, r.why()
    if stats:
        assert summary(r) == ": 8 eaten, 6 left to the disk; --on-behalf=on " \
            "eats them", r.why()
        assert "open(O_SYNC): 4 calls, 4 not eaten" in r.stderr, r.why()
        assert "pwritev2(RWF_DSYNC): 2 calls, 2 not eaten" in r.stderr, r.why()
        assert line_of(r) is None, r.why()
    else:
        assert line_of(r) == (f"eatmydata: {PROG} (pid {line_of(r).split('pid ')[1].split(')')[0]}"
                              "): 6 durability requests left to the disk (4 opens "
                              "with O_SYNC or O_DSYNC, 2 writes with RWF_SYNC or RWF_DSYNC); "
                              "--on-behalf=on eats them"), r.why()


@pytest.mark.parametrize("stats", [False, True], ids=["line", "stats"])
def test_on_behalf_eats_them_all(scratch, stats):
    r = run([EATMYDATA, "--on-behalf=on", *(["--stats"] if stats else []), PROG, scratch],
            events=EVENTS)
    assert r.counts[SYNCS] == 0, r.why()
    assert line_of(r) is None, r.why()
    if stats:
        assert summary(r) == ", all eaten", r.why()


@pytest.mark.parametrize("stats", [False, True], ids=["line", "stats"])
def test_an_open_of_a_program_a_shell_started(scratch, stats):
    """--on-behalf=on, the program started by a shell: its filter is the
    tree's own, which may come after a Landlock domain the supervisor never
    saw, so its opens go on (their writes sync); --seccomp=on eats them."""
    cmd = [EATMYDATA, "--on-behalf=on", *(["--stats"] if stats else []), "sh", "-c",
           f"{PROG} {scratch}; true"]
    r = run(cmd, events=EVENTS)
    assert r.counts[SYNCS] == 4, r.why()
    if stats:
        assert summary(r) == ": 10 eaten, 4 left to the disk; --seccomp=on " \
            "eats them", r.why()
    else:
        assert re.fullmatch(rf"eatmydata: {PROG} \(pid \d+\): 4 durability requests left to "
                            r"the disk \(4 opens with O_SYNC or O_DSYNC\); "
                            r"--seccomp=on eats them", line_of(r) or ""), r.why()
    r = run([EATMYDATA, "--seccomp=on", "--on-behalf=on", *(["--stats"] if stats else []), "sh",
             "-c", f"{PROG} {scratch}; true"], events=EVENTS)
    assert r.counts[SYNCS] == 0 and line_of(r) is None, r.why()


@pytest.mark.parametrize("prog", ["leftsyncs", "leftsyncs-static"])
def test_a_program_only_leaves_alone(scratch, prog):
    """--only leaves the other programs their durability: in --stats, apart
    from what was eaten (the library's count and the supervisor's)."""
    r = run([EATMYDATA, "--stats", "--only=nothing-matches", TESTS / prog, scratch], events=EVENTS)
    assert r.counts[SYNCS] == 14, r.why()
    # The library counts each write on an O_SYNC file too, as syncstat does.
    n = 14 if prog.endswith("static") else 18
    assert re.search(rf"^  {n} durability calls: 0 eaten, {n} left to the disk; "
                     rf"{n} were of programs that do not eat \(--only, EATMYDATA_DISABLE\)$",
                     r.stderr, re.M), r.why()
    assert line_of(r) is None, r.why()
