# SPDX-License-Identifier: MIT
"""The newcomer's commands: plain `make` builds everything, `make -j2 tests`
works from a fresh clone and leaves an up-to-date tree, a new PREFIX reaches
the launchers; the libraries load under valgrind; build-aux/deps names what
the tests need."""
import os
import py_compile
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import BUILD, EATMYDATA, ROOT, TESTS, cmdline, no_sanitizer, require, run, tool

pytestmark = [pytest.mark.slow]

LAUNCHERS = ["eatmydata", "nocache", "hirestimes", "crashtest", "syncstat", "cachestats",
             "cachedel"]
TOOLS = ["eatmydata", "nocache", "hirestimes", "crashtest"]


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
    yield [require("valgrind"), "--quiet", "--error-exitcode=99"]


@no_sanitizer
@pytest.mark.parametrize("how", ["itself", "child traced"])
def test_loaded_under_valgrind(scratch, valgrind, how):
    """valgrind leaves $PLATFORM unset: the library's path in LD_PRELOAD must
    not depend on it, or ld.so refuses it and every sync reaches the disk.
    Test suites (mtr --valgrind) also trace the children of a script."""
    cmd = [TESTS / "entry", "fsync", scratch]
    if how == "child traced":
        cmd = ["--trace-children=yes", "sh", "-c", " ".join(map(str, cmd))]
    native = run(valgrind + cmd)
    assert native.syncs > 0, native.why()
    under = run([EATMYDATA] + valgrind + cmd)
    assert under.syncs == 0, under.why()


@no_sanitizer
def test_both_elf_classes_quiet_under_valgrind(scratch, valgrind):
    """A 64-bit shell under valgrind starting a 64-bit and a 32-bit program:
    each loads its own class, and ld.so says nothing about the other."""
    script = f"{TESTS / 'entry'} fsync {scratch} && {TESTS / 'entry32'} fsync {scratch}"
    native = run(valgrind + ["sh", "-c", script])
    assert native.counts["ext4:ext4_sync_file_enter"] == 2, native.why()
    under = run([EATMYDATA] + valgrind + ["sh", "-c", script])
    assert under.syncs == 0, under.why()


DEPS = ROOT / "build-aux" / "deps"
FAKE_DPKG_QUERY = """#!/bin/sh
echo called >> "${0%/*}/dpkg-query.log"
/usr/bin/dpkg-query "$@" | sed 's/^ii *libfaketime$/un libfaketime/'
"""
FAKE_APT_GET = """#!/bin/sh
echo "$@" >> "${0%/*}/apt-get.log"
"""


@pytest.fixture
def fake_apt():
    """dpkg-query that sees libfaketime as removed, apt-get that only notes
    its arguments; in a directory every user can read."""
    require("dpkg")
    d = Path(tempfile.mkdtemp(prefix="deps-", dir="/tmp"))
    d.chmod(0o777)
    for name, text in [("dpkg-query", FAKE_DPKG_QUERY), ("apt-get", FAKE_APT_GET)]:
        (d / name).write_text(text)
        (d / name).chmod(0o755)
    shutil.copy2(DEPS, d / "deps")
    yield d
    shutil.rmtree(d)


def deps(fake, prefix=(), **env):
    cmd = [*prefix, fake / "deps"]
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", **env)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    r.why = f"\nrerun: PATH={fake}:$PATH {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    return r


def logged(fake, name):
    log = fake / f"{name}.log"
    return log.read_text().splitlines() if log.exists() else []


def test_deps_names_what_is_missing_and_how_to_install_it(fake_apt):
    r = deps(fake_apt, ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"])
    assert r.returncode == 1, r.why
    lines = r.stderr.splitlines()
    missing = lines[0].rsplit(":", 1)[1].split()
    assert lines[0].startswith("deps: the tests need these missing packages:"), r.why
    assert "libfaketime" in missing and "bash-completion" not in missing, r.why
    assert lines[1] == "deps: install them with: sudo apt-get install " + " ".join(missing), r.why
    assert logged(fake_apt, "apt-get") == [], r.why


def test_deps_installs_what_is_missing_as_root(fake_apt):
    r = deps(fake_apt)
    assert r.returncode == 0, r.why
    assert logged(fake_apt, "apt-get") == ["update -qq", "install -y -qq libfaketime"], r.why


def test_deps_asks_dpkg_once_when_nothing_is_missing(fake_apt):
    (fake_apt / "dpkg-query").write_text(FAKE_DPKG_QUERY.replace("libfaketime", "nothing-here"))
    r = deps(fake_apt)
    assert r.returncode == 0 and r.stdout + r.stderr == "", r.why
    assert len(logged(fake_apt, "dpkg-query")) == 1 and logged(fake_apt, "apt-get") == [], r.why


def test_make_check_starts_with_deps_and_ci_uses_it():
    first = make(ROOT, "-n", "--no-print-directory", "check").stdout.splitlines()[0]
    assert first == "build-aux/deps", "make -n check"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "build-aux/deps" in ci and "apt-get" not in ci, "one list of packages, in build-aux/deps"


def clients_the_tests_name():
    """Programs the tests look up by name, and files of other packages they load."""
    text = "\n".join(p.read_text() for p in (ROOT / "tests" / "py").glob("*.py"))
    text = text.replace("{MULTIARCH}", "/usr/lib/x86_64-linux-gnu")
    names = set(re.findall(r'(?:require|tool)\("([^"]+)"\)', text)) - {"name"}
    paths = {p for p in re.findall(r'"(/usr/(?:lib|share)/[^"{}]+)"', text) if Path(p).is_file()}
    return sorted(names), sorted(paths)


def every_debian_has(packages):
    """Of these packages, those every Debian has: the essential and required
    ones (passwd, perl-base), and those providing what a required one
    provides (gawk, as mawk, provides awk: whichever /usr/bin/awk is)."""
    fields = "-f=${Package}\x1f${Essential}\x1f${Priority}\x1f${Provides}\n"
    rows = [line.split("\x1f") for line in subprocess.run(
        ["dpkg-query", "-W", fields], capture_output=True, text=True).stdout.splitlines()]

    def provides(row):
        return set(re.findall(r"(?:^|,) *([a-z0-9][a-z0-9.+-]*)", row[3]))

    basic = [r for r in rows if r[1] == "yes" or r[2] == "required"]
    virtual = set().union(*map(provides, basic))
    return {r[0] for r in rows if r[0] in packages
            and (r in basic or provides(r) & virtual)}


def test_deps_lists_every_client_the_tests_name():
    listed = set(subprocess.run([DEPS, "--list"], capture_output=True, text=True,
                                check=True).stdout.split())
    # What a listed package brings with it (postgresql, postgresql-15; python3,
    # python3.11, python3.11-minimal: /usr/bin/python3's) counts too.
    new = set(listed)
    while new:
        depends = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}\n", *new],
                                 capture_output=True, text=True).stdout
        new = set(re.findall(r"(?:^|[,|]) *([a-z0-9][a-z0-9.+-]+)", depends, re.M)) - listed
        listed |= new
    names, paths = clients_the_tests_name()
    assert len(names) > 15 and len(paths) >= 3, (names, paths)
    unlisted = []
    for what in [tool(n) for n in names if tool(n)] + paths:
        owner = subprocess.run(["dpkg", "-S", os.path.realpath(what)], capture_output=True,
                               text=True)
        if owner.returncode != 0:
            continue  # installed another way (rustup, go.dev): deps knows them by command
        packages = {p.strip().split(":")[0] for p in owner.stdout.split(":", 1)[0].split(",")}
        if not packages & listed and not packages & every_debian_has(packages):
            unlisted.append(f"{what} ({', '.join(sorted(packages))})")
    assert unlisted == [], f"build-aux/deps does not list {unlisted}"


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.*)\]", out)


def test_sanitize_builds_apart(clone):
    """make SANITIZE=1: launchers and test programs with ASan and UBSan in
    build-san/, the preload libraries with no sanitizer runtime to load."""
    make(clone, "-j2", "SANITIZE=1", "all", "build-san/tests/entry", "build-san/tests/entry32",
         "build-san/tests/unit")
    san = clone / "build-san"
    assert not (clone / "build" / "bin").exists(), "SANITIZE=1 wrote into build/"
    for exe in [san / "bin" / name for name in LAUNCHERS] + [
            san / "tests" / t for t in ["entry", "unit"]]:
        libs = needed(exe)
        assert any("libasan" in n for n in libs) and any("libubsan" in n for n in libs), exe
    # 32-bit ASan will not start behind a preloaded library: trapping UBSan,
    # which needs no runtime, like the libraries.
    for lib in [*san.glob("**/lib*.so"), san / "tests" / "entry32"]:
        assert not [n for n in needed(lib) if "san" in n], lib
    assert len(list(san.glob("**/lib*.so"))) == 2 * len(TOOLS)


@pytest.mark.parametrize("launcher", ["eatmydata", "syncstat", "crashtest", "nocache"])
def test_launchers_start_without_the_symbolizer(launcher):
    """libdw and the four libraries it needs cost every launch 0.3 ms, as much
    as Debian's whole eatmydata: the report loads it when it names a site."""
    out = subprocess.run(["readelf", "-d", BUILD / "bin" / launcher], text=True, capture_output=True,
                         check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*?)\]", out)
    assert needed and not [n for n in needed if re.match(r"lib(dw|elf|z|lzma|bz2)\.", n)], needed


def test_bench_and_demo_scripts_compile():
    """make bench and make demo run no test: their scripts are compiled here
    (a misplaced line in bench.py once made `make bench` a SyntaxError)."""
    for script in sorted((ROOT / "bench").glob("*.py")):
        py_compile.compile(str(script), doraise=True)
