# SPDX-License-Identifier: MIT
"""The seccomp supervisor attacked a second time, by a hostile program and
an unlucky environment: long status lines, the vsyscall page, files swapped
under an open, worker threads that cannot start, registered io_uring rings.
Each case runs natively too, and the program must see what it sees there."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import EATMYDATA, cmdline
from test_supervisor import HOSTILE, same_as_native

# Supplementary groups whose list in /proc/PID/status is longer than a
# line buffer; the last one is the one dropped.
MANY_GROUPS = list(range(100000, 100200))


def test_vsyscall_page_is_not_mapped():
    """msync of [vsyscall]: ENOMEM, as the kernel says, not 0."""
    same_as_native(["vsyscall"], "ENOMEM\n")


@pytest.fixture
def public_dir():
    """A directory every user can reach (pytest's own is root's alone)."""
    d = tempfile.mkdtemp(prefix="emd-attack-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d)


@pytest.mark.parametrize("dropped,expected", [
    (MANY_GROUPS[0], "plain ok\nsync ok\n"),  # control: the file's group is kept
    (MANY_GROUPS[-1], "plain EACCES\nsync EACCES\n"),
], ids=["kept", "dropped"])
def test_groups_past_a_long_line(public_dir, dropped, expected):
    """A caller that dropped a supplementary group at the end of a long
    Groups: line cannot have the supervisor open what only that group may
    read (a CAP_SETGID user, as the launcher's user and the program's)."""
    secret = os.path.join(public_dir, "secret")
    with open(secret, "w") as f:
        f.write("secret")
    os.chown(secret, 0, MANY_GROUPS[-1])
    os.chmod(secret, 0o040)
    who = ["setpriv", "--reuid=nobody", "--regid=nogroup",
           "--groups=" + ",".join(map(str, MANY_GROUPS)),
           "--inh-caps=+setgid", "--ambient-caps=+setgid", "--"]
    for prefix in [[], [EATMYDATA, "--seccomp=on"]]:
        cmd = [*who, *prefix, HOSTILE, "drop-group", str(dropped), secret]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.stdout == expected, cmdline(cmd) + r.stderr
