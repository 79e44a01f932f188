# SPDX-License-Identifier: MIT
"""The musl build (make CC=musl-gcc, into build-musl/; make tests makes it
where musl-gcc is installed): a musl-dynamic program's durability requests
are eaten by the musl build of the library, with no supervisor and no
filter on it, as a glibc program's are by glibc's; in a tree holding both
builds each program takes its own C library's, and where a tree has none
for a program's loader (or the program is static) the supervisor serves
it, and no loader says a word on its stderr.  The kernel's counters are the
truth, each beside its native run; the probes answer as natively."""
import difflib
import os
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD, ROOT, TESTS, checked, cmdline, run
from helpers import REQUESTS, evict, report, settled

MUSL = Path(os.environ.get("EATMYDATA_MUSL_BUILD", ROOT / "build-musl"))
MUSL_TESTS = MUSL / "tests"
SYNCS = [("ext4:ext4_sync_file_enter", None)]


@pytest.fixture(scope="module", autouse=True)
def musl_build():
    """build-musl/, which make tests makes where musl-gcc is installed."""
    if not (MUSL / "bin" / "eatmydata").exists() or not (MUSL_TESTS / "loaded").exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"no musl build in {MUSL} (make tests makes it: install musl-tools)")
        pytest.skip(f"no musl build in {MUSL}: install musl-tools and run make tests")
    return MUSL


def make(*args):
    r = subprocess.run(["make", "-s", "-C", ROOT, *args], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"make {' '.join(args)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"


# The installs of both builds into one PREFIX: with glibc's launchers (make
# install, then make CC=musl-gcc install-libs), and with musl's (the other
# way round).
INSTALLS = {"both": [[], ["CC=musl-gcc"]], "musl-launched": [["CC=musl-gcc"], []]}


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """trees[name]: the tree a launcher runs from, by what it holds: the
    glibc build's (build/), the musl build's (build-musl/), or an install
    of INSTALLS, made the first time a test asks for it."""
    made = {"glibc": BUILD, "musl": MUSL}

    class Trees:
        def __getitem__(self, name):
            if name not in made:
                dest = tmp_path_factory.mktemp(name)
                dest.chmod(0o755)
                for target, cc in zip(["install", "install-libs"], INSTALLS[name]):
                    make(*cc, target, f"DESTDIR={dest}", "PREFIX=/opt/emd")
                made[name] = dest / "opt" / "emd"
            return made[name]
    return Trees()


def installs(*names):
    """The trees of names, those of INSTALLS marked slow (make installs)."""
    return [pytest.param(n, marks=pytest.mark.slow) if n in INSTALLS else n for n in names]


def loaded(out):
    """loaded's lines ("musl seccomp=0 lib=PATH"): [(libc, seccomp, libs)]."""
    rows = []
    for line in out.splitlines():
        libc, seccomp, *libs = line.split(" ")
        rows.append((libc, seccomp.split("=")[1], [lib.split("=", 1)[1] for lib in libs]))
    return rows


PROGRAM = {"glibc": TESTS / "loaded", "musl": MUSL_TESTS / "loaded"}


def chain(libcs, d):
    """A chain of loaded programs, each fsyncing a file of d and exec'ing
    the next."""
    cmd = []
    for i, libc in enumerate(libcs):
        cmd += [PROGRAM[libc], d / f"f{i}"]
    return cmd


def quiet(r):
    """No loader spoke: glibc's "cannot be preloaded", musl's "Error
    relocating" or "Error loading"."""
    assert not r.stderr, "a loader or the library spoke" + r.why()
    return r


# Each tool's library, as a musl program takes it: the file, and what the
# tool's launcher adds before the command.
TOOLS = {"eatmydata": ("libeatmydata", []), "syncstat": ("libeatmydata", ["-o", "/dev/null"]),
         "nocache": ("libnocache", []), "hirestimes": ("libhirestimes", [])}


@pytest.mark.parametrize("tree", installs("musl", "both", "musl-launched"))
@pytest.mark.parametrize("tool", TOOLS)
def test_musl_program_takes_the_musl_library_with_no_filter(trees, scratch, tree, tool):
    """The fsync is eaten (eatmydata) or made (the others) through the
    library, which its loader took from the musl build, with no seccomp
    filter on the process (/proc/self/status)."""
    lib, args = TOOLS[tool]
    cmd = chain(["musl"], scratch)
    native = run(cmd, events=SYNCS)
    assert native.syncs == 1, native.why()
    r = quiet(run([trees[tree] / "bin" / tool, *args, "--", *cmd], events=SYNCS))
    assert r.syncs == (0 if tool == "eatmydata" else 1), r.why()
    (libc, seccomp, libs), = loaded(r.stdout)
    assert (libc, seccomp) == ("musl", "0"), r.why()
    assert [Path(p).name.split(".")[0] for p in libs] == [lib], r.why()
    assert "-linux-gnu/" not in libs[0] and libs[0].startswith(str(trees[tree])), r.why()


# What each program of a chain of glibc and musl programs takes, by tree:
# its own C library's build where the tree holds it; else, from that
# program on, the supervisor (a filter, inherited by all that follow).
# Where glibc's ld.so would say it cannot preload our entry (the musl
# build's tree), the entry is left out of the glibc program's environment,
# and so of all that follow it.
CHAINS = {"musl-first": ["musl", "glibc", "musl", "glibc"], "glibc-first": ["glibc", "musl"]}
HOLDS = {"both": {"glibc", "musl"}, "musl-launched": {"glibc", "musl"}, "musl": {"musl"},
         "glibc": {"glibc"}}


def expected(tree, libcs):
    rows, filtered, stripped = [], False, False
    for libc in libcs:
        filtered = filtered or libc not in HOLDS[tree]
        stripped = stripped or (libc == "glibc" and libc not in HOLDS[tree])
        rows.append((libc, "2" if filtered else "0",
                     None if stripped or libc not in HOLDS[tree] else libc))
    return rows


@pytest.mark.parametrize("how", ["exec", "posix_spawn"])
@pytest.mark.parametrize("chained", CHAINS)
@pytest.mark.parametrize("tree", installs(*HOLDS))
def test_each_program_takes_its_own_build_or_the_supervisor(trees, scratch, tree, chained, how):
    cmd = chain(CHAINS[chained], scratch)
    env = {"LOADED_SPAWN": "1"} if how == "posix_spawn" else {}
    native = run(cmd, events=SYNCS, env=env)
    assert native.syncs == len(CHAINS[chained]), native.why()
    r = quiet(run([trees[tree] / "bin" / "eatmydata", *cmd], events=SYNCS, env=env))
    assert r.syncs == 0, r.why()
    got = [(libc, seccomp, None if not libs else "glibc" if "-linux-gnu/" in libs[0] else "musl")
           for libc, seccomp, libs in loaded(r.stdout)]
    assert got == expected(tree, CHAINS[chained]), r.why()


@pytest.mark.parametrize("how", ["exec", "posix_spawn"])
def test_no_loader_speaks_without_a_supervisor(trees, scratch, how):
    """--seccomp=off in the musl build's tree: the glibc program runs with
    our entry left out, unobserved as a static one would, and its loader
    says nothing."""
    cmd = chain(CHAINS["musl-first"], scratch)
    env = {"LOADED_SPAWN": "1"} if how == "posix_spawn" else {}
    r = quiet(run([MUSL / "bin" / "eatmydata", "--seccomp=off", *cmd], events=SYNCS, env=env))
    assert r.syncs == 3, r.why()
    assert [libs for _, _, libs in loaded(r.stdout)] == [[str(MUSL / "lib" / "libeatmydata.so")],
                                                         [], [], []], r.why()


@pytest.mark.parametrize("tree", installs("musl", "both"))
@pytest.mark.parametrize("static", ["fsyncs-static (musl)", "fsyncs-static (glibc)"])
def test_a_static_program_goes_to_the_supervisor(trees, scratch, tree, static):
    prog = (MUSL_TESTS if "musl" in static else TESTS) / "fsyncs-static"
    cmd = [prog, scratch / "f", "10", "fsync"]
    native = run(cmd, events=SYNCS)
    assert native.syncs == 10, native.why()
    r = quiet(run([trees[tree] / "bin" / "eatmydata", *cmd], events=SYNCS))
    assert r.syncs == 0, r.why()


# Every request of the entry-point table a musl program makes (musl has no
# fortified opens, and its open64 is open), eaten by the musl build as
# test_entry_points.py checks glibc's: exec-* start the musl static program
# beside it, which the supervisor serves.  Not execveat, which musl has not:
# a program asks syscall() for it, and an exec by number is the kernel's,
# unfollowed, in any program (doc/eatmydata.md).
MUSL_REQUESTS = [(sym, call) for sym, prog, call in REQUESTS
                 if prog == "entry" and call != "exec-execveat"]


@pytest.mark.parametrize("sym,call", MUSL_REQUESTS)
def test_every_request_is_eaten(batch, sym, call):
    runs = batch("musl-eaten", [(c, how) for _, c in MUSL_REQUESTS for how in ("native", "eaten")],
                 lambda row, d, _: ([] if row[1] == "native" else [MUSL / "bin" / "eatmydata"]) +
                 [MUSL_TESTS / "entry", row[0], d])
    native, _ = runs[call, "native"]
    assert checked(native).syncs > 0, f"{sym}: never reached the disk natively" + native.why()
    under, _ = runs[call, "eaten"]
    assert checked(under).syncs == 0, f"{sym} let durability through" + under.why()
    assert not under.stderr, under.why()


def probe_output(cmd, d):
    d.mkdir()
    r = subprocess.run([str(c) for c in cmd] + [d], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, cmdline(cmd + [d]) + r.stderr
    return r.stdout.splitlines()


@pytest.mark.parametrize("tool,probe,least", [("eatmydata", "probe", 250),
                                              ("nocache", "ioprobe", 150)])
def test_same_answers_as_natively(tmp_path, tool, probe, least):
    """The semantics probes, built with musl-gcc: each line (result and
    errno of a call on a kind of descriptor) as a native musl run gives."""
    exe = MUSL_TESTS / probe
    native = probe_output([exe], tmp_path / "native")
    under = probe_output([MUSL / "bin" / tool, exe], tmp_path / "under")
    assert len(native) > least, "the probe ran too few cases"
    diff = list(difflib.unified_diff(native, under, "native", tool, lineterm=""))
    assert not diff, f"rerun: {MUSL / 'bin' / tool} {exe} DIR\n" + "\n".join(diff)


@pytest.mark.parametrize("call", ["fsync", "fdatasync", "msync"])
def test_still_a_cancellation_point(tmp_path, call):
    cmd = [MUSL / "bin" / "eatmydata", MUSL_TESTS / "cancel", call, tmp_path / "f"]
    native = subprocess.run(cmd[1:], capture_output=True, text=True, timeout=60)
    under = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert native.stdout == "cancelled\n"
    assert under.stdout == "cancelled\n" and not under.stderr, cmdline(cmd)


def test_syncstat_counts_what_the_kernel_syncs(tmp_path, scratch):
    out = tmp_path / "report.json"
    cmd = [MUSL / "bin" / "syncstat", "--json", "--output", out, "--",
           MUSL_TESTS / "fsyncs", scratch / "f", "20", "fsync"]
    r = quiet(run(cmd, events=SYNCS))
    assert r.syncs == 20, r.why()
    data = report(out)
    assert sum(g["count"] for g in data["groups"]) == 20, data


@pytest.mark.parametrize("how", ["read", "write"])
def test_nocache_leaves_a_musl_program_s_file_uncached(tmp_path, how):
    """rw, built with musl-gcc, reads or writes 8 MiB: all of it stays
    cached natively, none under the musl build of nocache (whose reads and
    writes end in preadv2 and pwritev2: the system call, where musl has
    none)."""
    f = tmp_path / "f"
    for prefix, cached in [([], 8 << 20), ([MUSL / "bin" / "nocache"], 0)]:
        if how == "read":
            f.write_bytes(os.urandom(8 << 20))
            evict(f)
        elif f.exists():
            f.unlink()
        cmd = [*prefix, MUSL_TESTS / "rw", how, f, "8"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and not r.stderr, cmdline(cmd) + r.stderr
        got = settled(f, cached)
        assert got == cached if cached == 0 else got >= cached - (64 << 10), \
            f"{cmdline(cmd)}: {got} bytes cached"


def test_crashtest_journals_a_musl_program_as_its_supervisor_does(tmp_path):
    """The musl build's libcrashtest, with no supervisor to fall back on
    (--seccomp=off), and the glibc build's supervisor (its tree has no musl
    library) find the same crash points in the same program."""
    (tmp_path / "dir").mkdir()
    outs = []
    for tree, seccomp in ((MUSL, "off"), (BUILD, "auto")):
        cmd = [tree / "bin" / "crashtest", "--each", "--seed=1", f"--seccomp={seccomp}",
               tmp_path / "dir", "--", MUSL_TESTS / "loaded", "f"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 3 and not r.stderr, cmdline(cmd) + r.stdout + r.stderr
        outs.append([line for line in r.stdout.splitlines() if line.startswith(("point", "end"))])
    assert outs[0] == outs[1], outs
    assert "point 2 after fsync(f) (1 durability call, 2 changes before)" in outs[0][1], outs
