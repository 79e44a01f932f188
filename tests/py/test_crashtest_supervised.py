# SPDX-License-Identifier: MIT
"""crashtest through the seccomp supervisor: a static or Go program, which
the preload library cannot enter, is journaled by the supervisor with the
records the library makes, so its report is the one of the same program
built dynamically -- the same points, named alike, the same states and the
same verdicts -- however it is started (as COMMAND, by a shell, by
posix_spawn).  What the supervisor cannot follow (a shared writable
mapping, a 32-bit static program, io_uring, AIO, copy_file_range and
sendfile into the copy) makes the run unknown, saying why; each beside its
control, the dynamic program the library follows.

tests/c/transact.c is the program (modes good, bad, fork, names, mmap,
copy, sendfile), tests/go/replace.go its good and bad in Go."""
import difflib
import os
import re
import subprocess

import pytest

from conftest import TESTS, cmdline, require, tool
from helpers import CRASH, CRASHTEST, PYTHON, crash_report

DYNAMIC = TESTS / "transact"
STATIC = TESTS / "transact-static"
DYNAMIC32 = TESTS / "transact32"
STATIC32 = TESTS / "transact32-static"
FSYNCS = TESTS / "fsyncs-static"

REPLACE_CHECK = f"sh {CRASH / 'replace_check.sh'}"
NAMES_CHECK = f"{PYTHON} {CRASH / 'transact_check.py'}"
# mode: (its arguments, its checker, crashtest's exit status).
MODES = {"good": (["good", "3"], REPLACE_CHECK, 0), "bad": (["bad", "2"], REPLACE_CHECK, 1),
         "fork": (["fork", "2"], REPLACE_CHECK, 0), "names": (["names"], NAMES_CHECK, 0)}
SPAWN = "import os, sys; os.waitpid(os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ), 0)"


@pytest.fixture
def start(tmp_path):
    """DIR: what `transact names` renames new.tmp over (old), unused by
    the others."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "old").write_text("old\n")
    yield d


def go_build(tmp_path_factory, src, name):
    """tests/go/SRC built with CGO_ENABLED=0: a static Go program."""
    go = tool("go")
    if not go:
        pytest.fail("go is not installed (.ci/run installs it)")
    d = tmp_path_factory.mktemp(name)
    exe = d / name
    subprocess.run([go, "build", "-o", exe,
                    os.path.join(os.path.dirname(__file__), "..", "go", src)],
                   check=True, timeout=600,
                   env=dict(os.environ, CGO_ENABLED="0", GOCACHE=str(d / "cache"),
                            GOPATH=str(d / "gopath"), GOFLAGS="-mod=mod"))
    return exe


@pytest.fixture(scope="module")
def go_replace(tmp_path_factory):
    yield go_build(tmp_path_factory, "replace.go", "replace-go")


@pytest.fixture(scope="module")
def go_runner(tmp_path_factory):
    """tests/go/run.go: a Go program starting another (os/exec)."""
    yield go_build(tmp_path_factory, "run.go", "run-go")


def need32():
    """The 32-bit builds exist where gcc -m32 works (the Makefile's LIB32);
    CI has it, so there their absence fails."""
    if not STATIC32.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{STATIC32} was not built: no working gcc -m32")
        pytest.skip("no 32-bit build (gcc -m32 does not work here)")


def crashtest(d, check, *cmd, options=("--each",)):
    """crashtest --json OPTIONS --seed=1 --check=CHECK D -- CMD: (its exit
    status, its report, a command line to rerun it)."""
    args = [*options, "--seed=1", f"--check={check}", d, "--", *cmd]
    code, report = crash_report(*args)
    return code, report, "\nrerun: " + cmdline([CRASHTEST, "--json", *args])


def shape(report):
    """What two journals alike give alike: a line per point (the call it
    followed, its counts, its verdict), one per state and per reason it is
    unknown."""
    lines = []
    for p in report.points:
        lines.append(f"{p['after']}: {p['durability_calls']} calls, {p['changes']} changes, "
                     f"{p['output_bytes']} bytes out, {p['unsynced']} unsynced, "
                     f"{p['states_built']} states ({p['states_distinct']} distinct, "
                     f"{p['states_checked']} checked{', cut' if p['cut'] else ''}): {p['verdict']}")
        lines += [f"  state {s['what']}: {s['verdict']} ({s['check_status']})"
                  + "".join(f"; lost {c}" for c in s["lost_changes"]) for s in p["states"]]
        lines += [f"  unknown: {why}" for why in p["unknown"]]
    return lines


def same(native, supervised):
    """native and supervised, each (status, report, rerun), reported alike."""
    a, b = shape(native[1]), shape(supervised[1])
    diff = "\n".join(difflib.unified_diff(a, b, "library", "supervisor", lineterm=""))
    assert (native[0], a) == (supervised[0], b), \
        f"{native[2]}{supervised[2]}\nexit {native[0]} and {supervised[0]}\n{diff}"


def reasons(report):
    return [why for p in report.points for why in p["unknown"]]


# The supervisor writes the journal, the models only read it: every mode
# under posix, and the one with most kinds of records under each model.
@pytest.mark.parametrize("mode,model", [(m, "posix") for m in MODES] +
                         [("names", "ext4-ordered"), ("names", "xfs")])
def test_a_static_program_is_reported_as_its_dynamic_build(start, mode, model):
    args, check, status = MODES[mode]
    options = ("--each", f"--model={model}")
    native = crashtest(start, check, DYNAMIC, *args, options=options)
    supervised = crashtest(start, check, STATIC, *args, options=options)
    # The control: the library's run is what the mode is.
    verdicts = {p["verdict"] for p in native[1].points}
    assert len(native[1].points) > 1 and not reasons(native[1]), native[2]
    assert native[0] == status, native[2]
    assert verdicts == ({"failed"} if mode == "bad" else {"ok"}), native[2]
    same(native, supervised)


CTCALLS = [line.split()[0] for line in subprocess.run(
    [TESTS / "ctcalls", "--list"], capture_output=True, text=True, check=True).stdout.splitlines()
    if int(line.split()[1]) >= 0]
# The calls the supervisor journals as the library does; what a shared
# writable mapping, copy_file_range and sendfile change it cannot follow.
# Every other row is journaled alike or makes the run unknown, saying why.
FOLLOWED = {"fsync", "fdatasync", "syncfs", "sync", "open", "openat", "creat", "write",
            "writev", "pwrite64", "pwritev", "ftruncate", "rename", "renameat", "unlink",
            "unlinkat", "rmdir", "mkdir", "mkdirat", "link", "linkat", "symlink", "symlinkat",
            "mknod", "mknodat", "bind", "sendto", "sendmsg", "sendmmsg", "vmsplice", "splice",
            "tee"}
NOT_FOLLOWED = {"msync": r"\bmap|mmap|mapping", "copy_file_range": "copy_file_range",
                "sendfile": "sendfile"}
# What the library leaves to the kernel, dynamic or static (test_crashtest.py).
UNROUTED = {"open_by_handle_at", "io_uring_enter", "io_uring_setup", "io_submit"}


@pytest.mark.parametrize("name", [n for n in CTCALLS if n not in UNROUTED])
def test_every_call_by_number_is_journaled_as_the_library_does(tmp_path, name):
    """tests/c/ctcalls.c, a row per call, by number (libc's syscall(),
    which the library routes; the kernel's own in the static build), with
    --writes: every change a point."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "data").write_text("old\n")
    (d / "src").write_text("src\n")
    native = crashtest(d, "true", TESTS / "ctcalls", name, options=("--writes", "--each"))
    supervised = crashtest(d, "true", TESTS / "ctcalls-static", name,
                           options=("--writes", "--each"))
    assert native[0] == 0 and not reasons(native[1]), native[2]
    if name in NOT_FOLLOWED or (name not in FOLLOWED and supervised[0] == 2):
        # Unknown for what the supervisor says it does not follow, never
        # for a journal it wrote wrong.
        why = NOT_FOLLOWED.get(name, "supervisor")
        said = reasons(supervised[1])
        assert supervised[0] == 2 and any(re.search(why, r) for r in said) and \
            not any("corrupt" in r for r in said), supervised[2] + "\n" + "\n".join(said)
    else:
        same(native, supervised)


def test_without_the_supervisor_a_static_program_is_unknown(start):
    """The control of the comparisons: --seccomp=off, the static program's
    changes are past crashtest, and the run says so."""
    args, check, _ = MODES["good"]
    code, report, rerun = crashtest(start, "true", STATIC, *args,
                                    options=("--each", "--seccomp=off"))
    assert code == 2 and {p["verdict"] for p in report.points} == {"unknown"}, rerun
    assert any(f"{STATIC} is a static program" in why for why in reasons(report)), \
        rerun + "\n" + "\n".join(reasons(report))


def test_a_static_program_stops_at_a_point_as_its_dynamic_build(start):
    """--at=N builds point N alone and stops the command there: the
    supervisor holds the program at the same call the library does."""
    args, check, _ = MODES["good"]
    each = crashtest(start, check, DYNAMIC, *args)
    numbered = [p["point"] for p in each[1].points if p["point"]]
    assert len(numbered) == 8, each[2]
    for n in numbered:
        native = crashtest(start, check, DYNAMIC, *args, options=(f"--at={n}",))
        assert [p["point"] for p in native[1].points] == [n], native[2]
        same(native, crashtest(start, check, STATIC, *args, options=(f"--at={n}",)))


@pytest.mark.parametrize("how", ["exec", "child", "pipe", "posix_spawn"])
def test_a_static_program_started_by_a_dynamic_one_is_journaled(start, how):
    """The library puts the program under the filter as it is executed,
    from a shell's exec, a shell's child (one writing its claims to a pipe)
    or posix_spawn."""
    def cmd(prog):
        return {"exec": ["sh", "-c", f"exec {prog} good 2"],
                "child": ["sh", "-c", f"{prog} good 2; echo done"],
                # cat's own output would come at its own pace: none.
                "pipe": ["sh", "-c", f"{prog} good 2 | cat >/dev/null"],
                "posix_spawn": [PYTHON, "-c", SPAWN, prog, "good", "2"]}[how]
    native = crashtest(start, REPLACE_CHECK, *cmd(DYNAMIC))
    supervised = crashtest(start, REPLACE_CHECK, *cmd(STATIC))
    afters = [p["after"] for p in native[1].points]
    assert native[0] == 0 and "fsync(data.tmp)" in afters, native[2]
    assert (afters.count("a write to a pipe or socket") == 2) == (how == "pipe"), native[2]
    assert not reasons(supervised[1]), supervised[2] + "\n" + "\n".join(reasons(supervised[1]))
    same(native, supervised)


@pytest.mark.parametrize("parent", ["static", pytest.param("go", marks=pytest.mark.go)])
@pytest.mark.parametrize("child", ["dynamic", "static"])
def test_a_program_started_by_a_static_one_is_journaled_once(request, start, parent, child):
    """A dynamic program executed under the filter (by a static program's
    exec, by Go's fork and exec) is journaled by the supervisor or by its
    library, never by both; a static one by the supervisor: as the dynamic
    program run alone."""
    if parent == "go":
        start_it = [request.getfixturevalue("go_runner")]
    else:
        start_it = [TESTS / "sigchld-static"]  # unblocks SIGCHLD and execs its arguments
    args, check, _ = MODES["good"]
    alone = crashtest(start, check, DYNAMIC, *args)
    started = crashtest(start, check, *start_it, DYNAMIC if child == "dynamic" else STATIC, *args)
    same(alone, started)


def native_counts(prog, args, tmp_path):
    """The durability calls the kernel saw (strace -c) and the lines the
    program printed, in a native run in a directory of its own."""
    d = tmp_path / "native"
    d.mkdir()
    out = tmp_path / "strace.txt"
    cmd = [require("strace"), "-f", "-c", "-U", "name,calls", "-o", out,
           "-e", "trace=fsync,fdatasync", prog, *args]
    r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"rerun: {cmdline(cmd, cwd=d)}\n{r.stderr}"
    calls = sum(int(n) for name, n in re.findall(r"^(fsync|fdatasync)\s+(\d+)$",
                                                 out.read_text(), re.M))
    return calls, len(r.stdout.splitlines())


def counted(report):
    """Of the report's points: those after a durability call, and the
    claims: output points, and output the end found (the last claim, when
    nothing came after it)."""
    points = report.points
    syncs = sum(1 for p in points if p["after"] not in ("output", "end"))
    claims = sum(1 for p in points if p["after"] == "output")
    before = points[-2]["output_bytes"] if len(points) > 1 else 0
    return syncs, claims + (points[-1]["output_bytes"] > before)


@pytest.mark.go
@pytest.mark.parametrize("mode", ["good", "bad"])
def test_a_go_program_is_reported_as_its_c_counterpart(start, go_replace, mode, tmp_path):
    args, check, status = MODES[mode]
    native = crashtest(start, check, DYNAMIC, *args)
    supervised = crashtest(start, check, go_replace, *args)
    verdicts = [p["verdict"] for p in supervised[1].points]
    if mode == "bad":
        assert supervised[0] == 1 and "failed" in verdicts, supervised[2]
    else:
        assert supervised[0] == 0 and set(verdicts) == {"ok"}, supervised[2]
    same(native, supervised)
    # Each point is a call the kernel saw: Go's own fsyncs, its writes of a line.
    assert counted(supervised[1]) == native_counts(go_replace, args, tmp_path), supervised[2]


def test_a_shared_writable_mapping_is_unknown(start):
    code, report, rerun = crashtest(start, "true", STATIC, "mmap")
    assert code == 2 and report.points[-1]["verdict"] == "unknown", rerun
    assert any(re.search(r"\bmap|mmap|mapping", why, re.I) for why in reasons(report)), \
        rerun + "\n" + "\n".join(reasons(report))


def test_a_shared_writable_mapping_is_pictured_by_the_library(start):
    """The control: the library pictures a mapping's pages at its
    durability calls."""
    code, report, rerun = crashtest(start, "true", DYNAMIC, "mmap")
    assert code == 0 and not reasons(report), rerun


@pytest.mark.parametrize("call", ["copy", "sendfile"])
def test_a_copy_by_the_kernel_is_unknown(start, call):
    code, report, rerun = crashtest(start, "true", STATIC, call)
    name = {"copy": "copy_file_range", "sendfile": "sendfile"}[call]
    assert code == 2 and report.points[-1]["verdict"] == "unknown", rerun
    assert any(name in why for why in reasons(report)), rerun + "\n" + "\n".join(reasons(report))


@pytest.mark.parametrize("call", ["copy", "sendfile"])
def test_a_copy_by_the_kernel_is_seen_by_the_library(start, call):
    code, report, rerun = crashtest(start, "true", DYNAMIC, call)
    assert code == 0 and not reasons(report), rerun


@pytest.mark.parametrize("how", ["uring", "aio"])
def test_asynchronous_io_is_unknown(start, how):
    code, report, rerun = crashtest(start, "true", FSYNCS, "f", "2", how)
    said = {"uring": r"\bio_uring", "aio": r"\b(aio|io_submit)\b"}[how]
    assert code == 2 and report.points[-1]["verdict"] == "unknown", rerun
    assert any(re.search(said, why, re.I) for why in reasons(report)), \
        rerun + "\n" + "\n".join(reasons(report))


def test_a_static_programs_fsyncs_are_journaled(start):
    """The control of the above: the same program with plain fsyncs."""
    code, report, rerun = crashtest(start, "true", FSYNCS, "f", "2", "fsync")
    assert code == 0 and not reasons(report), rerun
    assert [p["after"] for p in report.points] == ["fsync(f)", "fsync(f)", "end"], rerun


def test_a_32bit_static_program_is_unknown(start):
    need32()
    code, report, rerun = crashtest(start, "true", STATIC32, "good", "2")
    assert code == 2 and report.points[-1]["verdict"] == "unknown", rerun
    assert any("32-bit" in why or str(STATIC32) in why for why in reasons(report)), \
        rerun + "\n" + "\n".join(reasons(report))


def test_a_32bit_dynamic_program_is_journaled(start):
    """The control: the 32-bit library follows the same program."""
    need32()
    code, report, rerun = crashtest(start, REPLACE_CHECK, DYNAMIC32, "good", "2")
    assert code == 0 and not reasons(report), rerun
    assert len(report.points) == 6, rerun
