# SPDX-License-Identifier: MIT
"""nocache on the first commands a user tries (issue 33): I/O that no read
or write wrapper sees leaves the page cache as it found it too -- libc's
streams on the files a shell's redirections open (stdin, stdout, stderr:
`seq > out`, `sort < in`), one put under stdout (`sort -o`), a file cut
and written again (`sort -o FILE FILE`), files read through a mapping
(git, Python's mmap), a file libuv (Node) closes with syscall(SYS_close),
and what the kernel was still reading ahead when the command closed the
file (`head`).  Each command natively, the control that leaves the files
cached, then under nocache, on the same files cold: not a page of them is
left, and no durability request is made (sync_file_range only)."""
import os
import shlex
import subprocess

import pytest

from conftest import TESTS, require, run
from helpers import DURABLE, NOCACHE, cached_under, evict_all

LINES = 200000  # nums: "1\n" .. "200000\n", 1.2 MiB
PY_MAP = ("import mmap, os; f = open('nums', 'rb'); m = mmap.mmap(f.fileno(), 0, "
          "prot=mmap.PROT_READ); f.close(); print(sum(m[::4096])){end}")
NODE = ("const fs = require('fs'); const fd = fs.openSync('out', 'w'); "
        "for (let i = 0; i < 2000; i++) fs.writeSync(fd, 'line ' + i + '\\n'); fs.closeSync(fd);")
GIT = ("GIT_AUTHOR_DATE='1700000000 +0000' GIT_COMMITTER_DATE='1700000000 +0000' "
       "git -c user.name=u -c user.email=u@example.invalid -c init.defaultBranch=main")

# name: (script, the files to check, the marker its client takes)
COMMANDS = {
    # stdout opened by the shell, written by libc's stdio.
    "seq > out": ("seq 200000 > out", ["out"], None),
    "printf > out": (f"{TESTS}/lines printf 200000 > out", ["out"], None),
    # In a pipeline, the shell's child redirects, then execs: the file is
    # the program's alone (a shell that redirects its own stdout drops the
    # file itself when it puts its stdout back).
    "printf flushed by exit": (f": | {TESTS}/lines exit 200000 > out", ["out"], None),
    "awk > out": ("awk '{ print $1 * 2 }' nums > out", ["nums", "out"], None),  # close(1)
    "sed > out": ("sed s/1/x/ nums > out", ["nums", "out"], None),
    # Redirected in the shell's child for a pipeline, then exec'd.
    "seq | sort > out": ("seq 200000 | sort -rn > out", ["out"], None),
    # stdin opened by the shell, read by libc's stdio.
    "sort < in > out": ("sort -n < nums > out", ["nums", "out"], None),
    "tr < in > out": ("tr 0-9 a-j < nums > out", ["nums", "out"], None),
    # A file put under stdout by the command (dup2).
    "sort -o": ("sort -rn -o out nums", ["nums", "out"], None),
    # What readahead was still reading at close.
    "head | tail": ("head -n 50000 nums | tail -n 100 > out", ["nums", "out"], None),
    "head -c": ("head -c 300000 nums > /dev/null", ["nums"], None),
    # Mappings: munmap, and a process that exits with its mapping.
    "git add": (f"{GIT} init -q g && cd g && cp ../nums . && {GIT} add nums && "
                f"{GIT} commit -qm x", ["g/nums"], None),
    "python mmap": (f"python3 -c {shlex.quote(PY_MAP.format(end='; m.close()'))}",
                    ["nums"], None),
    "python mmap, _exit": (f"python3 -c {shlex.quote(PY_MAP.format(end='; os._exit(0)'))}",
                           ["nums"], None),
    # libuv's close.
    "node": (f"node -e {shlex.quote(NODE)}", ["out"], "node"),
}


def fixture(d):
    d.mkdir()
    (d / "nums").write_text("".join(f"{i}\n" for i in range(1, LINES + 1)))
    evict_all([str(d / "nums")])


def warm(path):
    """All of path read into the page cache."""
    path.read_bytes()
    assert cached_under([str(path)])[0] >= path.stat().st_size


def files_of(d, names):
    return [str(d / n) for n in names if (d / n).exists()]


def params():
    marks = {"node": [pytest.mark.node]}
    return [pytest.param(name, id=name, marks=marks.get(COMMANDS[name][2], []))
            for name in COMMANDS]


@pytest.mark.parametrize("name", params())
def test_command(tmp_path, name):
    script, names, needs = COMMANDS[name]
    if needs:
        require(needs)
    native, under = tmp_path / "native", tmp_path / "nocache"
    for d in (native, under):
        fixture(d)
    subprocess.run(["sh", "-c", script], cwd=native, check=True, timeout=120,
                   capture_output=True)
    control = cached_under(files_of(native, names))[0]
    assert control > 0, f"natively {names} stay cached (else this proves nothing): {script}"
    r = run([NOCACHE, "sh", "-c", script], cwd=under, events=DURABLE)
    left = {n: cached_under(files_of(under, [n]))[0] for n in names}
    assert not any(left.values()), f"left cached: {left} (natively {control})" + r.why()
    assert r.syncs == 0, "nocache made a durability request" + r.why()
    for n in names:
        assert (under / n).read_bytes() == (native / n).read_bytes(), n


def test_file_cut_and_written_again(tmp_path):
    """`sort -o nums nums` cuts nums to nothing (ftruncate), then writes all
    of it again: the pages cached before are gone with the cut, and those
    written after are the command's, to go; natively they stay."""
    for tool in ([], [NOCACHE]):
        d = tmp_path / ("nocache" if tool else "native")
        fixture(d)
        warm(d / "nums")
        r = run([*tool, "sort", "-rn", "-o", "nums", "nums"], cwd=d, events=DURABLE)
        left = cached_under([str(d / "nums")])[0]
        if not tool:
            assert left >= (d / "nums").stat().st_size, "natively the file stays cached"
        else:
            assert left == 0, f"{left} bytes of nums left cached" + r.why()
            assert r.syncs == 0, r.why()
    assert (tmp_path / "native" / "nums").read_bytes() == (tmp_path / "nocache" / "nums").read_bytes()


def test_file_cached_before_stays(tmp_path):
    """The std streams' files are classified at start: what of them was
    cached then stays (the control of the tests above), what the command
    added goes."""
    d = tmp_path / "d"
    fixture(d)
    with open(d / "log", "w") as f:
        f.write("x" * 100000)
    warm(d / "log")
    before = cached_under([str(d / "log")])[0]
    r = run([NOCACHE, "sh", "-c", f"{TESTS}/lines printf 100000 >> log"], cwd=d, events=DURABLE)
    # The page the appended lines began in was cached: it stays, with what
    # they wrote into it.
    assert cached_under([str(d / "log")])[0] == before, r.why()
