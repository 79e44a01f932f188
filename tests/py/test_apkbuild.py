# SPDX-License-Identifier: MIT
"""alpine/APKBUILD, as far as a Debian machine can take it: its build(),
check() and package() run as abuild runs them (in a copy of the tree, with
the compiler of musl-tools for Alpine's gcc), each subpackage's split
function with abuild's amove and its default -doc and -bash-completion
splits; every file installed lands in exactly one package, and the
packages unpacked into one root eat a musl program's syncs through the
library from /usr/$LIB (perf: 0 against 10 natively), with no filter."""
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, require, run

pytestmark = [pytest.mark.slow]

# abuild's amove and its default splits, the parts of them the APKBUILD
# uses: each path (a glob, relative to $pkgdir) moved to $subpkgdir.
ABUILD = r"""
set -eu
amove() {
	for p in "$@"; do
		(cd "$pkgdir" && for f in $p; do
			mkdir -p "$subpkgdir/$(dirname "$f")" && mv "$f" "$subpkgdir/$f"; done)
	done
}
default_doc() { amove usr/share/man; }
default_bashcomp() { amove usr/share/bash-completion; }
. "$startdir/APKBUILD"
"""


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    """{package: directory} of what the APKBUILD made, from a copy of the
    tree (its by-products stay out of the checkout)."""
    require("musl-gcc")
    require("strace")
    top = tmp_path_factory.mktemp("apk")
    top.chmod(0o755)
    tree = top / "eatmydata"
    tree.mkdir()
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    subprocess.run(["tar", "-c", "-C", ROOT, "-T", "-"], input="\n".join(f for f in files if f),
                   stdout=open(top / "tree.tar", "wb"), check=True, text=True)
    subprocess.run(["tar", "-x", "-C", tree, "-f", top / "tree.tar"], check=True)
    env = dict(os.environ, CC="musl-gcc", startdir=str(tree / "alpine"),
               srcdir=str(top / "src"), pkgdir=str(top / "pkg" / "eatmydata"), MAKEFLAGS="-j2")

    def step(script, **extra):
        r = subprocess.run(["sh", "-c", ABUILD + script], env=dict(env, **extra), text=True,
                           capture_output=True, timeout=900)
        assert r.returncode == 0, f"{script}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r.stdout

    step('cd "$builddir" && build')
    out = step('cd "$builddir" && check')
    assert "fsyncs eaten by the library" in out, out
    step('mkdir -p "$pkgdir" && cd "$builddir" && package')
    subpackages = step('echo $subpackages').split()
    made = {"eatmydata": top / "pkg" / "eatmydata"}
    for sub in subpackages:
        name, _, fn = sub.partition(":")
        fn = fn or {"-doc": "default_doc", "-bash-completion": "default_bashcomp"}[
            name[len("eatmydata"):]]
        made[name] = top / "pkg" / name
        step(f'mkdir -p "$subpkgdir" && {fn} && echo "$depends"', subpkgdir=str(made[name]))
    return made


def files(top):
    return sorted(p.relative_to(top).as_posix() for p in top.rglob("*")
                  if p.is_symlink() or not p.is_dir())


def test_each_file_in_one_package(packaged):
    """As Debian's split (debian/*.install): the launcher alone in
    eatmydata, the libraries and their /usr/$LIB links in libeatmydata."""
    got = {name: files(d) for name, d in packaged.items()}
    assert got["eatmydata"] == ["usr/bin/eatmydata"], got["eatmydata"]
    assert set(got["eatmydata-tools"]) == {
        "usr/bin/syncstat", "usr/bin/hirestimes", "usr/bin/crashtest",
        "usr/share/eatmydata/syncstat.schema.json", "usr/share/eatmydata/crashtest.schema.json"}
    assert set(got["nocache"]) == {"usr/bin/nocache", "usr/bin/cachestats", "usr/bin/cachedel"}
    libs = packaged["libeatmydata"] / "usr"
    for tool in ["eatmydata", "nocache", "hirestimes", "crashtest"]:
        link = libs / "$LIB" / f"lib{tool}.so"
        assert link.is_symlink() and not os.readlink(link).startswith("/"), link
        assert link.resolve().name == f"lib{tool}.so.1" and not link.resolve().is_symlink()
    assert all(f.startswith("usr/share/man/man1/") for f in got["eatmydata-doc"])
    assert len(got["eatmydata-doc"]) == 7
    assert all(f.startswith("usr/share/bash-completion/") for f in got["eatmydata-bash-completion"])
    everything = [f for fs in got.values() for f in fs]
    assert len(everything) == len(set(everything)), "a file in two packages"


def test_installed_packages_eat_a_musl_program(packaged, tmp_path):
    """The packages unpacked into one root: its launcher (found at
    root/usr/bin, the tree moved) preloads /usr/$LIB/libeatmydata.so, which
    musl's loader reads as written."""
    root = tmp_path / "root"
    for d in packaged.values():
        subprocess.run(["cp", "-a", f"{d}/.", root], check=True)
    prog = Path(ROOT, "build-musl", "tests", "loaded")
    if not prog.exists():
        pytest.skip("no musl build: make tests makes it where musl-gcc is installed")
    native = run([prog, tmp_path / "f"], events=[("ext4:ext4_sync_file_enter", None)])
    assert native.syncs == 1, native.why()
    r = run([root / "usr" / "bin" / "eatmydata", prog, tmp_path / "f"],
            events=[("ext4:ext4_sync_file_enter", None)])
    assert r.syncs == 0 and not r.stderr, r.why()
    libc, seccomp, lib = r.stdout.split()
    assert (libc, seccomp) == ("musl", "seccomp=0"), r.why()
    assert lib.startswith(f"lib={root}/usr/lib/") and lib.endswith("/libeatmydata.so.1"), \
        shlex.join(r.cmd) + "\n" + r.stdout
