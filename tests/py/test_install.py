# SPDX-License-Identifier: MIT
"""make install puts a working eatmydata (both ELF classes, man page,
completion) under DESTDIR; make uninstall takes all of it away again."""
import subprocess

from conftest import ROOT, TESTS, run


def make(*args):
    subprocess.run(["make", "-s", "-C", ROOT, *args], check=True, timeout=300,
                   capture_output=True)


def test_install_and_uninstall(tmp_path, scratch):
    dest = tmp_path / "dest"
    make("install", f"DESTDIR={dest}", "PREFIX=/opt/emd")
    prefix = dest / "opt" / "emd"
    installed = sorted(p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file())
    assert "bin/eatmydata" in installed
    assert "share/man/man1/eatmydata.1" in installed
    assert "share/bash-completion/completions/eatmydata" in installed
    libs = [p for p in installed if p.endswith("libeatmydata.so")]
    assert "lib/eatmydata/x86_64/libeatmydata.so" in libs and len(libs) == 2, installed

    for entry in ["entry", "entry32"]:
        r = run([prefix / "bin" / "eatmydata", TESTS / entry, "fsync", scratch])
        assert r.syncs == 0, r.why()

    make("uninstall", f"DESTDIR={dest}", "PREFIX=/opt/emd")
    assert [p for p in dest.rglob("*") if not p.is_dir()] == []
