# SPDX-License-Identifier: MIT
"""The newcomer's commands: plain `make` builds everything, `make -j2 tests`
works from a fresh clone and leaves an up-to-date tree, a new PREFIX reaches
the launchers; the libraries load under valgrind; build-aux/deps names what
the tests need."""
import os
import shutil
import subprocess

import pytest

from conftest import BUILD, EATMYDATA, ROOT, TESTS, cmdline, require, run

LAUNCHERS = ["eatmydata", "nocache", "hirestimes", "syncstat"]
TOOLS = ["eatmydata", "nocache", "hirestimes"]


def make(tree, *args, check=True):
    cmd = ["make", "-C", str(tree), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                       env={k: v for k, v in os.environ.items()
                            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "SANITIZE")})
    if check:
        assert r.returncode == 0, f"\nrerun: {cmdline(cmd)}\n{r.stdout[-2000:]}{r.stderr[-3000:]}"
    return r


@pytest.fixture
def clone(tmp_path):
    """The sources as a fresh clone of this tree would have them (tracked and
    new files, nothing built), so that uncommitted changes are tested too."""
    dest = tmp_path / "src"
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    yield dest


def built_libraries(tree):
    return sorted(p.relative_to(tree / "build").as_posix()
                  for p in (tree / "build").glob("**/lib*.so") if "tests" not in p.parts)


def test_plain_make_builds_everything(clone):
    make(clone, "-j2")
    for name in LAUNCHERS:
        assert (clone / "build" / "bin" / name).is_file(), f"plain make did not build {name}"
    libs = built_libraries(clone)
    for t in TOOLS:
        assert len([p for p in libs if p.endswith(f"/lib{t}.so")]) == 2, libs
    assert make(clone, "-q", "all", check=False).returncode == 0, "make -q: not up to date"


@pytest.mark.parametrize("target", ["probe-fortify", "probe-static", "probe32"])
def test_each_kind_of_test_program_builds_alone(clone, target):
    make(clone, f"build/tests/{target}")
    assert (clone / "build" / "tests" / target).is_file()


def test_parallel_tests_from_clean_then_up_to_date(clone):
    make(clone, "-j2", "tests")
    r = make(clone, "-q", "tests", check=False)
    assert r.returncode == 0, f"a second make has work to do:\n{make(clone, '-n', 'tests').stdout}"


def test_prefix_change_rebuilds_the_launchers(clone):
    make(clone, "-j2", "PREFIX=/opt/x")
    for name in LAUNCHERS:
        assert "/opt/x" in strings(clone / "build" / "bin" / name), name
    make(clone, "-j2", "PREFIX=/usr/local")
    for name in LAUNCHERS:
        text = strings(clone / "build" / "bin" / name)
        assert "/opt/x" not in text and "/usr/local" in text, name


def strings(path):
    return subprocess.run(["strings", path], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def valgrind():
    yield [require("valgrind"), "--quiet"]


def test_loaded_under_valgrind(scratch, valgrind):
    """valgrind leaves $PLATFORM unset: the library's path in LD_PRELOAD must
    not depend on it, or ld.so refuses it and every sync reaches the disk."""
    native = run(valgrind + [TESTS / "entry", "fsync", scratch])
    assert native.syncs > 0, native.why()
    under = run([EATMYDATA] + valgrind + [TESTS / "entry", "fsync", scratch])
    assert under.syncs == 0, under.why()


def test_both_elf_classes_quiet_under_valgrind(scratch, valgrind):
    """A 64-bit shell under valgrind starting a 64-bit and a 32-bit program:
    each loads its own class, and ld.so says nothing about the other."""
    script = f"{TESTS / 'entry'} fsync {scratch} && {TESTS / 'entry32'} fsync {scratch}"
    native = run(valgrind + ["sh", "-c", script])
    assert native.counts["ext4:ext4_sync_file_enter"] == 2, native.why()
    under = run([EATMYDATA] + valgrind + ["sh", "-c", script])
    assert under.syncs == 0, under.why()
