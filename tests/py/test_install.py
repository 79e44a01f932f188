# SPDX-License-Identifier: MIT
"""make install puts a working eatmydata (both ELF classes, man page,
completion) under DESTDIR; make uninstall takes all of it away again."""
import os
import subprocess

import pytest

from conftest import ROOT, TESTS, run


def make(*args):
    subprocess.run(["make", "-s", "-C", ROOT, *args], check=True, timeout=300,
                   capture_output=True)


def test_install_and_uninstall(tmp_path, scratch):
    dest = tmp_path / "dest"
    make("install", f"DESTDIR={dest}", "PREFIX=/opt/emd")
    prefix = dest / "opt" / "emd"
    installed = sorted(p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file())
    for tool in ["eatmydata", "nocache", "hirestimes", "syncstat"]:
        assert f"bin/{tool}" in installed
        assert f"share/man/man1/{tool}.1" in installed
        assert f"share/bash-completion/completions/{tool}" in installed
    for tool in ["eatmydata", "nocache", "hirestimes"]:
        libs = [p for p in installed if p.endswith(f"lib{tool}.so")]
        # Each ELF class in the directory ld.so names $LIB (Debian's multiarch one).
        assert f"lib/x86_64-linux-gnu/lib{tool}.so" in libs and len(libs) == 2, installed

    for entry in ["entry", "entry32"]:
        native = run([TESTS / entry, "fsync", scratch])
        assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
        r = run([prefix / "bin" / "eatmydata", TESTS / entry, "fsync", scratch])
        assert r.syncs == 0, r.why()
    hz = subprocess.run([prefix / "bin" / "hirestimes", "getconf", "CLK_TCK"],
                        capture_output=True, text=True).stdout
    assert hz == "1000000\n"

    make("uninstall", f"DESTDIR={dest}", "PREFIX=/opt/emd")
    assert [p for p in dest.rglob("*") if not p.is_dir()] == []


@pytest.mark.parametrize("line,expected", [
    ("eatmydata --on", "--only="),
    ("eatmydata --sync", "--sync-on-exit"),
    ("nocache --", "--help --version"),
    ("eatmydata --only=python", "python3"),
    ("hirestimes pytho", "python3"),
    ("syncstat --js", "--json"),
    ("syncstat rep", "report"),
    ("syncstat comp", "compare"),
    ("syncstat compare --max-c", "--max-calls-increase="),
    ("syncstat report --ht", "--html="),
    ("eatmydata --seccomp=o", "on"),
])
def test_bash_completion(line, expected):
    completion = "/usr/share/bash-completion/bash_completion"
    assert os.path.exists(completion), ".ci/run installs bash-completion"
    words = line.split(" ")
    script = (f"source {completion}; source {ROOT}/doc/completion.bash; "
              f"COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
              f"COMP_LINE='{line}'; COMP_POINT={len(line)}; "
              f"_eatmydata_tools {words[0]} 2>/dev/null; echo \"${{COMPREPLY[@]}}\"")
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout
    assert expected in out.split() or out.strip() == expected, out
