# SPDX-License-Identifier: MIT
"""nocache through the seccomp supervisor (issue 28): a static or Go reader
or writer, which the library cannot reach, leaves the page cache as it
found it (the supervisor reads and writes for it with RWF_DONTCACHE),
beside the native control that leaves every page cached."""
import os
import subprocess

import pytest

from conftest import BUILD, EATMYDATA, SIGCHLD_WRAPPER, TESTS, cmdline, tool
from helpers import cached_bytes as cached, evict, evicted_random, settled

NOCACHE = BUILD / "bin" / "nocache"
MIB = 32


@pytest.fixture
def big(scratch):
    yield evicted_random(scratch / "big", MIB)


@pytest.fixture(scope="module")
def go_rw(tmp_path_factory):
    go = tool("go")
    if not go:
        pytest.fail("go is not installed (.ci/run installs it)")
    d = tmp_path_factory.mktemp("gorw")
    exe = d / "rw-go"
    subprocess.run([go, "build", "-o", exe,
                    os.path.join(os.path.dirname(__file__), "..", "go", "rw.go")],
                   check=True, timeout=600,
                   env=dict(os.environ, CGO_ENABLED="0", GOCACHE=str(d / "cache"),
                            GOPATH=str(d / "gopath"), GOFLAGS="-mod=mod"))
    yield exe


# static32: the same program built 32-bit (where gcc -m32 works), whose
# calls are the compat ABI's (the filter's 32-bit block, two-word offsets,
# 32-bit iovecs).
STATIC = ["static", *(["static32"] if (TESTS / "rw32-static").exists() else [])]
GO = pytest.param("go", marks=pytest.mark.go)
READERS = [*(f"{s}{how}" for s in STATIC for how in ("", "-pread", "-readv", "-preadv")), GO]
WRITERS = [*(f"{s}{how}" for s in STATIC for how in ("", "-pwrite", "-writev", "-pwritev")), GO]


def program(request, kind, which):
    if which == "go":
        return [request.getfixturevalue("go_rw"), kind]
    flag = {"pread": "-p", "readv": "-v", "preadv": "-P", "pwrite": "-p", "writev": "-v",
            "pwritev": "-P"}
    extra = [flag[which.split("-")[1]]] if "-" in which else []
    return [TESTS / ("rw32-static" if which.startswith("static32") else "rw-static"), kind,
            *extra]


@pytest.mark.parametrize("which", READERS)
def test_reader_leaves_nothing_cached(which, big, request):
    cmd = [*program(request, "read", which), big]
    native = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
    assert cached(big) == MIB << 20, "native control: the reader caches the file"
    evict(big)
    r = subprocess.run([NOCACHE, *cmd], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == native.stdout, cmdline([NOCACHE, *cmd]) + r.stderr
    assert cached(big) <= 64 << 10, cmdline([NOCACHE, *cmd])


def cache_first_half(path):
    """The first half of path cached, and nothing else: read without
    readahead (POSIX_FADV_RANDOM).  A plain read would also start reading
    ahead past the half (read_ahead_kb, 8 MiB on a virtio disk), and mincore
    counts a page only once its read completes: measured while that window
    was still being read, `before` missed pages that then came in cached,
    before the command ran (under ASan, once: 24 MiB after, 16 before)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        assert len(os.pread(fd, MIB << 19, 0)) == MIB << 19
    finally:
        os.close(fd)


def test_pages_cached_before_stay(big, request):
    """What was cached before the command ran is cached after it, and only
    that; natively (the control), the reader caches the rest."""
    cache_first_half(big)
    before = cached(big)
    assert before == MIB << 19, "the first half cached, no more"
    prog = program(request, "read", "static")
    cmd = [NOCACHE, *prog, big]
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    assert before - (64 << 10) <= cached(big) <= before + (64 << 10), cmdline(cmd)
    subprocess.run([*prog, big], check=True, capture_output=True, timeout=60)
    assert cached(big) == MIB << 20, "native control: the reader caches the rest"


@pytest.mark.parametrize("which", WRITERS)
def test_writer_leaves_nothing_cached(which, scratch, request):
    out = scratch / "out"
    cmd = [*program(request, "write", which), out, MIB]
    subprocess.run([str(c) for c in cmd], check=True, capture_output=True, timeout=60)
    assert cached(out) == MIB << 20, "native control: the writer's pages stay cached"
    out.unlink()
    r = subprocess.run([str(c) for c in [NOCACHE, *cmd]], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and out.stat().st_size == MIB << 20, r.stderr
    assert settled(out, 64 << 10) <= 64 << 10, cmdline([NOCACHE, *cmd])
    assert out.read_bytes() == (b"\0" if which == "go" else b"x") * (MIB << 20)


def test_writer_keeps_its_file_size_limit(scratch, request):
    """The supervisor raised its own limits; a write past the caller's
    RLIMIT_FSIZE is the caller's to make (SIGXFSZ, EFBIG), as natively."""
    out = scratch / "out"
    prog = [str(c) for c in program(request, "write", "static")]
    limited = ["sh", "-c", 'ulimit -f 1024 && exec "$@"', "sh"]
    native = subprocess.run([*limited, *prog, out, str(MIB)], capture_output=True, timeout=60)
    size = out.stat().st_size
    assert native.returncode != 0 and size == 512 << 10, native
    out.unlink()
    cmd = [*limited, str(NOCACHE), *prog, str(out), str(MIB)]
    r = subprocess.run(cmd, capture_output=True, timeout=60)
    assert (r.returncode, out.stat().st_size) == (native.returncode, size), cmdline(cmd)


def test_started_by_a_shell(big, request):
    """A static reader that a shell of the tree starts: the library puts it
    under nocache's filter at its exec."""
    prog = [str(c) for c in program(request, "read", "static")]
    cmd = [str(NOCACHE), "sh", "-c", '"$@"; true', "sh", *prog, str(big)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    assert cached(big) <= 64 << 10, cmdline(cmd)


def test_unobserved_is_said(big, request):
    """With no supervisor to be had, nocache says which program keeps its
    pages cached, and they are cached (the control that the program ran)."""
    prog = [str(c) for c in program(request, "read", "static")]
    cmd = [str(NOCACHE), "env", "EATMYDATA_SECCOMP_EXEC=/nonexistent", *prog, str(big)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and cached(big) == MIB << 20, cmdline(cmd)
    assert f"nocache: {prog[0]}: its reads and writes stay cached: the seccomp supervisor " \
        "could not be started" in r.stderr, cmdline(cmd) + r.stderr


# Where seccomp refuses a filter with a listener (rwedge's nolistener, for
# all it starts), no static program can be served, however it is started:
# by the launcher, by a shell's exec (the library), by posix_spawn (the
# launcher stands in for it), from a 32-bit process (the stand-in too).
# python-spawn-bare: the program's environment without LD_PRELOAD, so
# that no library is in the stand-in either (only the stand-in can say).
UNSERVED = ["command", "command32", "shell",
            *(f"{s}-spawn" for s in ("C", "C32", "python")
              if s != "C32" or (TESTS / "execs32").exists()), "python-spawn-bare"]
SPAWN_BARE_PY = ("import os, sys\n"
                 "env = {k: v for k, v in os.environ.items() if k != 'LD_PRELOAD'}\n"
                 "pid = os.posix_spawn(sys.argv[1], sys.argv[1:], env)\n"
                 "sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")


@pytest.mark.parametrize("outer", ["nolistener", "listener", "eatmydata"])
@pytest.mark.parametrize("route", UNSERVED)
def test_unserved_is_said_once(route, outer, big):
    """A static program that cannot be put under the filter (refused, or
    under another supervisor's: `listener`, an outer eatmydata's) runs as it
    is, its pages cached (the control that it ran), and nocache says so on
    stderr, once, naming it and why: never silently cached.  (Under
    eatmydata's, eatmydata's library says nothing: its syncs are eaten.)"""
    prog = str(TESTS / ("rw32-static" if route == "command32" else "rw-static"))
    run = [prog, "read", str(big)]
    cmd = {"command": run, "command32": run, "shell": ["sh", "-c", '"$@"', "sh", *run],
           "C-spawn": [str(TESTS / "execs"), "spawn", *run],
           "C32-spawn": [str(TESTS / "execs32"), "spawn", *run],
           "python-spawn": ["python3", "-c", SPAWN_PY, "posix_spawn", *run],
           "python-spawn-bare": ["python3", "-c", SPAWN_BARE_PY, *run]}[route]
    cmd = [*([str(EATMYDATA), "--seccomp=on"] if outer == "eatmydata"
             else [str(TESTS / "rwedge-static"), outer]), str(NOCACHE), *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and str(MIB << 20) in r.stdout, cmdline(cmd) + r.stderr
    assert cached(big) == MIB << 20, cmdline(cmd)
    why = {"nolistener": "the kernel refused the seccomp filter"}.get(
        outer, "under another seccomp supervisor's filter already")
    line = f"nocache: {prog}: its reads and writes stay cached: {why}\n"
    assert r.stderr.count(line) == 1 and "not eaten" not in r.stderr, cmdline(cmd) + r.stderr


@pytest.mark.parametrize("route", ["command", "shell"])
def test_under_an_outer_nocache_is_served_unsaid(route, big):
    """A static program started in an inner nocache run (as its COMMAND, or
    by a shell) by a process under an outer nocache's filter (the static
    sigchld wrapper, filtered, execs the inner launcher): the inner filter
    cannot be put on (one listener to a chain), but the outer supervisor
    serves it: nothing cached, and nothing said (the probe tells nocache's
    filter from another's)."""
    run = [str(TESTS / "rw-static"), "read", str(big)]
    if route == "shell":
        run = ["sh", "-c", '"$@"', "sh", *run]
    cmd = [str(NOCACHE), SIGCHLD_WRAPPER, str(NOCACHE), *run]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and str(MIB << 20) in r.stdout, cmdline(cmd) + r.stderr
    assert cached(big) <= 64 << 10, cmdline(cmd)
    assert "stay cached" not in r.stderr, cmdline(cmd) + r.stderr


# A process of the tree that starts the static program by each other way
# than a path given to execve (test_started_by_a_shell): glibc's
# posix_spawn makes its exec past every wrapper, fexecve and execveat name
# the program by a descriptor.  posix_spawnp looks the name up in PATH.
# From a 32-bit process (execs32), which cannot build the filter, the
# launcher stands in for the program.
SPAWN_PY = ("import os, sys\n"
            "pid = getattr(os, sys.argv[1])(sys.argv[2], sys.argv[2:], os.environ)\n"
            "sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")
C_ROUTES = ["posix_spawn", "posix_spawnp", "fexecve", "execveat", "execveat-empty"]
ROUTES = ["python-posix_spawn", "python-posix_spawnp", *(f"C-{r}" for r in C_ROUTES),
          *((f"C32-{r}" for r in C_ROUTES) if (TESTS / "execs32").exists() else ())]


def started(route, args):
    """The command that starts rw-static ARGS by `route`, and its env."""
    prog = str(TESTS / "rw-static")
    env = dict(os.environ, PATH=f"{TESTS}:{os.environ['PATH']}")
    if route.endswith("posix_spawnp"):
        prog = "rw-static"
    starter, how = route.split("-", 1)
    if starter == "python":
        return ["python3", "-c", SPAWN_PY, how, prog, *map(str, args)], env
    how = {"posix_spawn": "spawn", "posix_spawnp": "spawnp"}.get(how, how)
    execs = TESTS / ("execs32" if starter == "C32" else "execs")
    return [str(execs), how, prog, *map(str, args)], env


@pytest.mark.parametrize("route", ROUTES)
def test_reader_started_otherwise_leaves_nothing_cached(route, big):
    cmd, env = started(route, ["read", big])
    native = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert native.returncode == 0 and str(MIB << 20) in native.stdout, cmdline(cmd)
    assert cached(big) == MIB << 20, "native control: the reader caches the file"
    evict(big)
    r = subprocess.run([NOCACHE, *cmd], capture_output=True, text=True, timeout=60, env=env)
    assert (r.returncode, r.stdout) == (0, native.stdout), cmdline([NOCACHE, *cmd]) + r.stderr
    assert cached(big) <= 64 << 10, cmdline([NOCACHE, *cmd], {"PATH": env["PATH"]})


@pytest.mark.parametrize("route", ROUTES)
def test_writer_started_otherwise_leaves_nothing_cached(route, scratch):
    out = scratch / "out"
    cmd, env = started(route, ["write", out, MIB])
    native = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert native.returncode == 0 and out.stat().st_size == MIB << 20, cmdline(cmd)
    assert cached(out) == MIB << 20, "native control: the writer's pages stay cached"
    out.unlink()
    r = subprocess.run([NOCACHE, *cmd], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0 and out.stat().st_size == MIB << 20, cmdline([NOCACHE, *cmd])
    assert settled(out, 64 << 10) <= 64 << 10, cmdline([NOCACHE, *cmd], {"PATH": env["PATH"]})
    assert out.read_bytes() == b"x" * (MIB << 20)


@pytest.mark.parametrize("how", ["spawn-missing", "spawn-noexec", "exec-big"])
def test_a_start_that_fails_answers_as_natively(how, scratch):
    """posix_spawn of a program that is not there or may not run answers the
    kernel's error, and an exec with more arguments than the kernel takes
    fails with E2BIG and leaves the process able to run the next (shared
    with eatmydata: shared/exec_filter.c)."""
    noexec = scratch / "rw-noexec"
    noexec.write_bytes((TESTS / "rw-static").read_bytes())
    noexec.chmod(0o644)
    cmd = {"spawn-missing": [TESTS / "execs", "spawn", scratch / "missing"],
           "spawn-noexec": [TESTS / "execs", "spawn", noexec],
           "exec-big": [TESTS / "execs", "exec-big", TESTS / "rw-static", "/bin/true"]}[how]
    native = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    under = subprocess.run([NOCACHE, *cmd], capture_output=True, text=True, timeout=60)
    assert (under.returncode, under.stdout) == (native.returncode, native.stdout), \
        cmdline([NOCACHE, *cmd]) + under.stderr
