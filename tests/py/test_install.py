# SPDX-License-Identifier: MIT
"""make install puts a working eatmydata (both ELF classes, man page,
completion) under DESTDIR; make uninstall takes all of it away again."""
import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, TESTS, run

pytestmark = [pytest.mark.slow]


def make(*args, wrap=()):
    subprocess.run([*wrap, "make", "-s", "-C", ROOT, *args], check=True, timeout=300,
                   capture_output=True)


def files(top):
    """Every file and link under top (not directories), relative."""
    return sorted(p.relative_to(top).as_posix() for p in Path(top).rglob("*")
                  if p.is_symlink() or not p.is_dir())


ENTRIES = ["entry"] + (["entry32"] if (TESTS / "entry32").exists() else [])


@pytest.mark.parametrize("dest", ["dest", "de st"])
def test_install_and_uninstall(tmp_path, scratch, dest):
    dest = tmp_path / dest
    make("install", f"DESTDIR={dest}", "PREFIX=/opt/emd")
    prefix = dest / "opt" / "emd"
    installed = files(prefix)
    for tool in ["eatmydata", "nocache", "hirestimes", "crashtest", "syncstat"]:
        assert f"bin/{tool}" in installed
        assert f"share/man/man1/{tool}.1" in installed
        assert f"share/bash-completion/completions/{tool}" in installed
    for tool in ["eatmydata", "nocache", "hirestimes", "crashtest"]:
        # As Debian's libeatmydata1: the soname, and the name LD_PRELOAD gives
        # a link to it, in each class's multiarch directory; $LIB's name for
        # the 32-bit one (lib32) a link to it.
        lib = prefix / "lib/x86_64-linux-gnu" / f"lib{tool}.so"
        assert os.readlink(lib) == f"lib{tool}.so.1" and not lib.with_suffix(".so.1").is_symlink()
        if "entry32" in ENTRIES:
            lib32 = prefix / "lib/i386-linux-gnu" / f"lib{tool}.so"
            assert os.readlink(lib32) == f"lib{tool}.so.1"
            assert os.readlink(prefix / "lib32" / f"lib{tool}.so") == \
                f"../lib/i386-linux-gnu/lib{tool}.so.1"

    for entry in ENTRIES:
        native = run([TESTS / entry, "fsync", scratch])
        assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
        # LD_LIBRARY_PATH users, each class finding its own (no ld.so
        # message: run() fails on one); spaces are fine there.
        r = run([TESTS / entry, "fsync", scratch],
                env={"LD_LIBRARY_PATH": f"{prefix}/$LIB", "LD_PRELOAD": "libeatmydata.so"})
        assert r.syncs == 0, r.why()
        if " " in str(dest):
            continue
        r = run([prefix / "bin" / "eatmydata", TESTS / entry, "fsync", scratch])
        assert r.syncs == 0, r.why()
    if " " in str(dest):
        # LD_PRELOAD cannot hold a space: the launcher says so.
        r = subprocess.run([prefix / "bin" / "eatmydata", "true"], capture_output=True, text=True)
        assert r.returncode == 125 and "space or colon" in r.stderr, r.stderr
    else:
        hz = subprocess.run([prefix / "bin" / "hirestimes", "getconf", "CLK_TCK"],
                            capture_output=True, text=True).stdout
        assert hz == "1000000\n"

    make("install", f"DESTDIR={dest}", "PREFIX=/opt/emd")
    assert files(prefix) == installed, "a second install changed the tree"
    make("uninstall", f"DESTDIR={dest}", "PREFIX=/opt/emd")
    assert files(dest) == []


# The live system, as make install PREFIX=/usr leaves it, in a mount
# namespace where /usr, /etc and /var are overlays whose upper layers live in
# the test's directory: the host's /etc/ld.so.preload and dpkg database never
# change for other processes, and the state persists from one call to the
# next (each mounts the same upper layers).
OVERLAY = """set -e
for d in usr etc var; do
    mkdir -p "$0/$d.u" "$0/$d.w"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$0/$d.u,workdir=$0/$d.w" "/$d"
done
exec "$@"
"""


@pytest.fixture
def system(tmp_path):
    layers = tmp_path / "layers"
    layers.mkdir()
    yield ["unshare", "-m", "--propagation", "private", "sh", "-c", OVERLAY, layers]


def in_system(system, script):
    return subprocess.run([*system, "sh", "-c", script], capture_output=True, text=True,
                          timeout=300)


def debian_eatmydata_installed():
    r = subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}", "libeatmydata1"],
                       capture_output=True, text=True)
    return r.stdout.startswith("ii")


def test_install_refuses_debian_files(system, scratch):
    """make install PREFIX=/usr over Debian's eatmydata would replace its
    files behind dpkg (and make uninstall delete them): refused, Debian's
    left working."""
    if not debian_eatmydata_installed():
        pytest.fail("build-aux/deps installs Debian's eatmydata")
    r = in_system(system, f"make -s -C {ROOT} install PREFIX=/usr")
    assert r.returncode != 0, r.stdout
    assert "/usr/lib/x86_64-linux-gnu/libeatmydata.so belongs to package libeatmydata1" in r.stderr
    r = in_system(system, f"make -s -C {ROOT} uninstall PREFIX=/usr")
    assert r.returncode != 0 and "belongs to package eatmydata" in r.stderr, r.stderr
    r = run([*system, TESTS / "entry", "fsync", scratch], env={"LD_PRELOAD": "libeatmydata.so"})
    assert r.syncs == 0, r.why()


@pytest.mark.parametrize("target", ["install", "uninstall"])
def test_prefix_of_another_spelling_refuses_debian_files(system, tmp_path, target):
    """PREFIX=/ on a merged-/usr system: //bin/eatmydata is Debian's
    /usr/bin/eatmydata, which dpkg knows by that name only: refused, and
    Debian's launchers left as they were (install overwrote them,
    uninstall deleted them)."""
    if not debian_eatmydata_installed():
        pytest.fail("build-aux/deps installs Debian's eatmydata")
    # The manual and completions out of the way (//share is on the host's
    # root, where no overlay is): the launchers and libraries are the case.
    dirs = f"MANDIR={tmp_path}/man BASHCOMPDIR={tmp_path}/completions"
    r = in_system(system, f"sha256sum /usr/bin/eatmydata /usr/bin/nocache; "
                          f"make -s -C {ROOT} {target} PREFIX=/ {dirs} >&2; echo $?; "
                          f"sha256sum /usr/bin/eatmydata /usr/bin/nocache")
    lines = r.stdout.splitlines()
    assert lines[2] != "0", r.stderr
    assert lines[:2] == lines[3:5], r.stdout + r.stderr
    assert "/usr/bin/eatmydata belongs to package eatmydata" in r.stderr, r.stderr


def test_system_install(system, scratch):
    """PREFIX=/usr without Debian's packages: the library by bare name,
    from its multiarch directory, from /etc/ld.so.preload (bare, or with
    $LIB) and through LD_LIBRARY_PATH, in each class with no ld.so message;
    the launcher finds its own; installed twice, then nothing left."""
    r = in_system(system, "dpkg --purge eatmydata libeatmydata1 nocache >/dev/null 2>&1; "
                          "rm -f /etc/ld.so.preload; ldconfig")
    upper = lambda: [f for f in files(system[-1]) if f.split("/")[0].endswith(".u")]
    before = upper()
    r = in_system(system, f"make -s -C {ROOT} install PREFIX=/usr && "
                          f"make -s -C {ROOT} install PREFIX=/usr")
    assert r.returncode == 0, r.stderr
    multiarch = {"entry": "/usr/lib/x86_64-linux-gnu", "entry32": "/usr/lib/i386-linux-gnu"}
    ways = [({"LD_PRELOAD": "libeatmydata.so"}, None),
            ({"LD_PRELOAD": "{multiarch}/libeatmydata.so"}, None),
            ({"LD_PRELOAD": "libeatmydata.so",
              "LD_LIBRARY_PATH": ":".join(multiarch.values())}, None),
            ({}, "libeatmydata.so"),
            ({}, "/usr/$LIB/libeatmydata.so")]
    for entry in ENTRIES:
        native = run([*system, TESTS / entry, "fsync", scratch])
        assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
        r = run([*system, "/usr/bin/eatmydata", TESTS / entry, "fsync", scratch])
        assert r.syncs == 0, r.why()
        for env, preload in ways:
            env = {k: v.format(multiarch=multiarch[entry]) for k, v in env.items()}
            line = f"echo '{preload}' >/etc/ld.so.preload; " if preload else ""
            # The variables for the program alone: the namespace's own
            # tools are 64-bit and start before the overlays.
            r = run([*system, "sh", "-c", f'{line}exec "$@"', "sh", "env",
                     *(f"{k}={v}" for k, v in env.items()), TESTS / entry, "fsync", scratch])
            in_system(system, "rm -f /etc/ld.so.preload")
            assert r.syncs == 0, (env, preload, r.why())
    r = in_system(system, f"make -s -C {ROOT} uninstall PREFIX=/usr")
    assert r.returncode == 0, r.stderr
    assert upper() == before, "make uninstall left files behind"


def test_prefix_symlink(system, tmp_path, scratch):
    """A PREFIX that is a link to the real directory: the launcher, the
    lib32 links and uninstall go through it."""
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    r = in_system(system, f"make -s -C {ROOT} install PREFIX={link}")
    assert r.returncode == 0, r.stderr
    for entry in ENTRIES:
        r = run([link / "bin" / "eatmydata", TESTS / entry, "fsync", scratch])
        assert r.syncs == 0, r.why()
    r = in_system(system, f"make -s -C {ROOT} uninstall PREFIX={link}")
    assert r.returncode == 0, r.stderr
    assert files(real) == []


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
    ("crashtest --model=ext", "ext4-ordered"),
    ("crashtest --model=x", "xfs"),
    ("crashtest rec", "record"),
    ("crashtest check --sh", "--shard="),
    ("crashtest --rand", "--random="),
    ("crashtest --writes /tm", "/tmp"),
    ("crashtest --each /tmp pytho", "python3"),
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
