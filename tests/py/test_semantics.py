# SPDX-License-Identifier: MIT
"""The library skips the I/O, never changes an answer: the probe's matrix of
(call x kind of descriptor or argument) prints the same lines natively and
under eatmydata, and the calls stay cancellation points."""
import difflib
import os
import subprocess

import pytest

from conftest import EATMYDATA, TESTS, cmdline

PROBES = ["probe", "probe-fortify", "probe32"]


def probe_output(cmd, tmp_path, name):
    d = tmp_path / name
    d.mkdir()
    r = subprocess.run([str(c) for c in cmd] + [d], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, cmdline(cmd + [d]) + r.stderr
    return r.stdout.splitlines()


@pytest.mark.parametrize("probe", PROBES)
def test_same_answers_as_the_kernel(tmp_path, probe):
    exe = TESTS / probe
    native = probe_output([exe], tmp_path, "native")
    under = probe_output([EATMYDATA, exe], tmp_path, "eaten")
    assert len(native) > 250, "the probe ran too few cases"
    diff = list(difflib.unified_diff(native, under, "native", "eatmydata", lineterm=""))
    assert not diff, f"rerun: {EATMYDATA} {exe} DIR\n" + "\n".join(diff)


def test_probe_covers_the_failures_that_matter(tmp_path):
    out = "\n".join(probe_output([TESTS / "probe"], tmp_path, "n"))
    for line in ["fsync pipe-r: -1 EINVAL", "fsync socket: -1 EINVAL",
                 "fsync o-path: -1 EBADF", "fsync closed: -1 EBADF",
                 "fsync negative: -1 EBADF", "fsync dev-null: -1 EINVAL",
                 "sfr-write pipe-w: -1 ESPIPE", "sfr-badflag file-rw: -1 EINVAL",
                 "sfr-negoff file-rw: -1 EINVAL", "msync unaligned: -1 EINVAL",
                 "msync both-flags: -1 EINVAL", "msync unmapped: -1 ENOMEM",
                 "open dir-write: -1 EISDIR", "open missing: -1 ENOENT",
                 "sys-openat2 bad-pointer: -1 EFAULT", "syncfs pipe-r: 0",
                 "pwritev2-dsync eventfd: -1 EOPNOTSUPP", "open create: mode 100644"]:
        assert line in out


@pytest.mark.parametrize("call", ["fsync", "fdatasync", "msync"])
def test_still_a_cancellation_point(tmp_path, call):
    cmd = [EATMYDATA, TESTS / "cancel", call, tmp_path / "f"]
    native = subprocess.run(cmd[1:], capture_output=True, text=True, timeout=60)
    under = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert native.stdout == "cancelled\n"
    assert under.stdout == "cancelled\n", cmdline(cmd)


def test_errno_untouched_on_success_and_mode_kept(tmp_path):
    out = probe_output([EATMYDATA, TESTS / "probe"], tmp_path, "e")
    assert not [l for l in out if "errno-changed" in l]
    assert "openat create: mode 100604" in out
    assert os.path.exists(tmp_path / "e" / "o")
