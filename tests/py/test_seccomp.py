# SPDX-License-Identifier: MIT
"""eatmydata --seccomp: durability asked for by system calls that no
preloaded library sees (static and Go programs, glibc's aio helper thread),
eaten by a seccomp filter and its supervisor, with the same answers."""
import difflib
import os
import subprocess

import pytest

from conftest import EATMYDATA, REQUESTS, TESTS, cmdline, run, eaten, tool
from helpers import ENTRY_POINTS

# Every request the supervisor answers (the filter notifies no other),
# through its libc wrapper where it has one and through syscall().  Not
# io_uring's, whose rings test_io_uring_* and test_tree.py build.
ANSWERED = [r.name for r in REQUESTS if r.eat not in ("none", "open_handle", "uring", "ring")]
STATIC_REQUESTS = [n for n in ANSWERED if n in ENTRY_POINTS] + [f"syscall-{n}" for n in ANSWERED]
STATIC_PROGRAMS = ["entry-static"] + (["entry32-static"] if (TESTS / "entry32-static").exists() else [])


# The requests whose flags are in registers, which only an open or a write
# made by the supervisor itself can eat (--on-behalf=on).
ON_BEHALF = {r.name for r in REQUESTS if r.eat in ("open", "write") and r.test == "bits"}


@pytest.mark.parametrize("program", STATIC_PROGRAMS)
@pytest.mark.parametrize("call", STATIC_REQUESTS)
def test_static_program(scratch, call, program):
    cmd = [TESTS / program, "-t", "4", "-f", call, scratch]
    # The syscalls:* events do not see a 32-bit program's calls; what
    # sync_file_range writes back in the caller's context, ext4 does.
    events = [("ext4:ext4_sync_file_enter", None), ("ext4:ext4_sync_fs", None),
              ("ext4:ext4_writepages", None)]
    native = run(cmd, events=events)
    assert native.syncs > 0, native.why()
    under = eaten(cmd, events=events)
    behalf = call.removeprefix("syscall-") in ON_BEHALF
    # By default the kernel makes them, as the program: they sync.
    assert (under.syncs == 0) != behalf, under.why()
    if behalf:
        under = run([EATMYDATA, "--on-behalf=on", *cmd], events=events)
        assert under.syncs == 0, under.why()


@pytest.mark.parametrize("probe", [p.replace("entry", "probe") for p in STATIC_PROGRAMS])
def test_static_program_gets_the_same_answers(tmp_path, probe):
    outs = []
    for name, prefix in [("native", []), ("eaten", [EATMYDATA])]:
        d = tmp_path / name
        d.mkdir()
        r = subprocess.run(prefix + [TESTS / probe, d], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0 and not r.stderr, cmdline(prefix + [TESTS / probe, d])
        outs.append(r.stdout.splitlines())
    diff = list(difflib.unified_diff(*outs, "native", "eatmydata", lineterm=""))
    assert len(outs[0]) > 250 and not diff, "\n".join(diff)


def test_go_program(go_program, scratch):
    """Its 50 fsyncs, and its O_SYNC open (eaten only on its behalf)."""
    cmd = [go_program, scratch / "f", "50"]
    native = run(cmd)
    assert native.counts["ext4:ext4_sync_file_enter"] >= 51, native.why()
    under = run([EATMYDATA, "--on-behalf=on", *cmd])
    assert under.syncs == 0 and under.stdout == "ok\n", under.why()
    under = eaten(cmd)
    assert 0 < under.syncs < 51 and under.stdout == "ok\n", under.why()


def test_aio_fsync_completes_as_after_a_real_sync(scratch):
    cmd = [TESTS / "aio", scratch / "f"]
    native = run(cmd)
    assert native.counts["ext4:ext4_sync_file_enter"] == 1, native.why()
    under = run([EATMYDATA, "--seccomp=on", *cmd])
    assert under.syncs == 0, under.why()
    assert under.stdout == native.stdout == "error 0 return 0 signal 10 value 0\n"


def test_threads_of_a_static_program(scratch):
    cmd = [TESTS / "entry-static", "-t", "16", "fsync", scratch]
    native = run(cmd)
    assert native.counts["ext4:ext4_sync_file_enter"] >= 16, native.why()
    under = eaten(cmd)
    assert under.syncs == 0, under.why()


def test_only_keeps_its_meaning(scratch):
    cmd = [TESTS / "entry-static", "fsync", scratch]
    other = run([EATMYDATA, "--only=somebody-else", *cmd])
    assert other.counts["ext4:ext4_sync_file_enter"] == 1, other.why()
    named = run([EATMYDATA, "--only=entry-st*", *cmd])
    assert named.syncs == 0, named.why()
    disabled = eaten(cmd, env={"EATMYDATA_DISABLE": "1"})
    assert disabled.counts["ext4:ext4_sync_file_enter"] == 1, disabled.why()


def status_field(field, args, user=None):
    prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] \
        if user else []
    r = subprocess.run(prefix + [*args, "grep", f"^{field}:", "/proc/self/status"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()[1]


def test_when_the_filter_is_on(shared_lib):
    emd = str(shared_lib / "bin" / "eatmydata")
    # auto: a dynamically linked program is reached by the library alone.
    assert status_field("Seccomp", [emd]) == "0"
    assert status_field("Seccomp", [emd, "--seccomp=on"]) == "2"
    assert status_field("Seccomp", [emd, "--seccomp=off"]) == "0"
    # no_new_privs only where it is needed: an unprivileged user.
    assert status_field("NoNewPrivs", [emd, "--seccomp=on"]) == "0"
    assert status_field("NoNewPrivs", [emd, "--seccomp=on"], user=True) == "1"
    assert status_field("NoNewPrivs", [emd], user=True) == "0"


def test_no_io_uring():
    assert subprocess.run([EATMYDATA, "--seccomp=on", TESTS / "uring"], capture_output=True,
                          text=True).stdout == "ok\n"
    assert subprocess.run([EATMYDATA, "--seccomp=on", "--no-io-uring", TESTS / "uring"],
                          capture_output=True, text=True).stdout == "ENOSYS\n"


def test_bad_mode():
    r = subprocess.run([EATMYDATA, "--seccomp=maybe", "true"], capture_output=True, text=True)
    assert r.returncode == 125
    assert r.stderr == "eatmydata: --seccomp takes auto, on or off, not 'maybe'\n"


def test_io_uring(scratch):
    """liburing, plain rings: an RWF_DSYNC write, an fsync linked to a write,
    a sync_file_range and an O_SYNC openat complete as natively, and none
    of them syncs (sync_file_range shows as writeback the caller started)."""
    events = [("ext4:ext4_sync_file_enter", None), ("writeback:writeback_single_inode", None)]
    cmd = [TESTS / "uring-sync", scratch]
    native = run(cmd, events=events)
    assert native.counts["ext4:ext4_sync_file_enter"] == 2, native.why()
    under = run([EATMYDATA, "--seccomp=on", *cmd], events=events)
    assert under.syncs == 0, under.why()
    assert sorted(under.stdout.split()) == sorted(native.stdout.split()) == \
        ["1:1", "2:1", "3:0", "4:1", "5:0", "6:1"]


def test_eatmydata_within_eatmydata(scratch):
    """A tree may hold only one seccomp listener: the inner eatmydata
    (image build scripts call it again) ran nothing and exited 125.  Its
    "auto" now runs the command under the outer supervisor, which eats; an
    explicit --seccomp=on says why it cannot."""
    cmd = [TESTS / "entry-static", "fsync", scratch]
    native = run(cmd)
    assert native.syncs > 0, native.why()
    nested = run([EATMYDATA, "--seccomp=on", EATMYDATA, *cmd])
    assert nested.returncode == 0 and nested.syncs == 0, nested.why()
    r = subprocess.run([EATMYDATA, "--seccomp=on", EATMYDATA, "--seccomp=on", *cmd],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 125
    assert r.stderr == ("eatmydata: cannot install the seccomp filter: the process is under "
                        "one with a supervisor already (an outer eatmydata --seccomp, or a "
                        "container's)\n")
