# SPDX-License-Identifier: MIT
"""The programs no preloaded library sees: durability asked for by system
calls (static and Go programs, glibc's aio helper thread, io_uring rings and
Linux AIO), eaten by the seccomp filter and its supervisor with the same
answers, whoever starts the program (a shell, make, Python's subprocess and
posix_spawn, go test, a 32-bit process)."""
import difflib
import re
import shlex
import shutil
import subprocess
import textwrap

import pytest

from conftest import EATMYDATA, REQUESTS, TESTS, checked, cmdline, require, run, eaten, tool
from helpers import ENTRY_POINTS, FS_SYNCS, STATIC

# Every request the supervisor answers (the filter notifies no other),
# through its libc wrapper where it has one and through syscall().  Not
# io_uring's, whose rings test_io_uring and test_asynchronous_requests build.
ANSWERED = [r.name for r in REQUESTS if r.eat not in ("none", "open_handle", "uring", "ring")]
STATIC_REQUESTS = [n for n in ANSWERED if n in ENTRY_POINTS] + [f"syscall-{n}" for n in ANSWERED]
STATIC_PROGRAMS = ["entry-static"] + (["entry32-static"] if (TESTS / "entry32-static").exists() else [])


# The requests whose flags are in registers, which only an open or a write
# made by the supervisor itself can eat (--on-behalf=on).
ON_BEHALF = {r.name for r in REQUESTS if r.eat in ("open", "write") and r.test == "bits"}


# The syscalls:* events do not see a 32-bit program's calls; what
# sync_file_range writes back in the caller's context, ext4 does.
STATIC_EVENTS = [("ext4:ext4_sync_file_enter", None), ("ext4:ext4_sync_fs", None),
                 ("ext4:ext4_writepages", None)]
LAUNCHED = {"native": [], "eaten": [EATMYDATA, "--"], "on-behalf": [EATMYDATA, "--on-behalf=on"]}


@pytest.mark.parametrize("program", STATIC_PROGRAMS)
@pytest.mark.parametrize("call", STATIC_REQUESTS)
def test_static_program(batch, call, program):
    """Natively, eaten by default, and --on-behalf=on: each request's runs
    made with every other's in one perf run (conftest's batch)."""
    runs = batch("static", [(p, c, how) for p in STATIC_PROGRAMS for c in STATIC_REQUESTS
                            for how in LAUNCHED
                            if how != "on-behalf" or c.removeprefix("syscall-") in ON_BEHALF],
                 lambda row, d, _: [*LAUNCHED[row[2]], TESTS / row[0], "-t", "4", "-f", row[1], d],
                 events=STATIC_EVENTS)
    native = checked(runs[program, call, "native"][0])
    assert native.syncs > 0, native.why()
    under = checked(runs[program, call, "eaten"][0])
    behalf = call.removeprefix("syscall-") in ON_BEHALF
    # By default the kernel makes them, as the program: they sync.
    assert (under.syncs == 0) != behalf, under.why()
    if behalf:
        under = checked(runs[program, call, "on-behalf"][0])
        assert under.syncs == 0, under.why()


@pytest.mark.parametrize("probe", [p.replace("entry", "probe") for p in STATIC_PROGRAMS])
def test_static_program_gets_the_same_answers(tmp_path, probe):
    outs = []
    for name, prefix in [("native", []), ("eaten", [EATMYDATA])]:
        d = tmp_path / name
        d.mkdir()
        r = subprocess.run(prefix + [TESTS / probe, d], capture_output=True,
                           text=True, timeout=120)
        # Its O_SYNC opens and RWF_SYNC writes went on to the kernel
        # (--on-behalf=off), which eatmydata says when it ends.
        said = rf"eatmydata: {re.escape(str(TESTS / probe))} \(pid \d+\): \d+ durability " \
            r"requests left to the disk \(.*\); --on-behalf=on eats them\n"
        assert r.returncode == 0 and re.fullmatch(said if prefix else "", r.stderr), \
            cmdline(prefix + [TESTS / probe, d]) + r.stderr
        outs.append(r.stdout.splitlines())
    diff = list(difflib.unified_diff(*outs, "native", "eatmydata", lineterm=""))
    assert len(outs[0]) > 250 and not diff, "\n".join(diff)


def test_go_program(go_program, scratch):
    """Its 50 fsyncs, and its O_SYNC open (eaten only on its behalf)."""
    cmd = [go_program, scratch / "f", "50"]
    native = run(cmd)
    assert native.counts["ext4:ext4_sync_file_enter"] >= 51, native.why()
    under = run([EATMYDATA, "--on-behalf=on", *cmd])
    assert under.syncs == 0 and under.stdout == "ok\n", under.why()
    under = eaten(cmd)
    assert 0 < under.syncs < 51 and under.stdout == "ok\n", under.why()


def test_aio_fsync_completes_as_after_a_real_sync(scratch):
    cmd = [TESTS / "aio", scratch / "f"]
    native = run(cmd)
    assert native.counts["ext4:ext4_sync_file_enter"] == 1, native.why()
    under = run([EATMYDATA, "--seccomp=on", *cmd])
    assert under.syncs == 0, under.why()
    assert under.stdout == native.stdout == "error 0 return 0 signal 10 value 0\n"


def test_threads_of_a_static_program(scratch):
    cmd = [TESTS / "entry-static", "-t", "16", "fsync", scratch]
    native = run(cmd)
    assert native.counts["ext4:ext4_sync_file_enter"] >= 16, native.why()
    under = eaten(cmd)
    assert under.syncs == 0, under.why()


def test_only_keeps_its_meaning(scratch):
    cmd = [TESTS / "entry-static", "fsync", scratch]
    other = run([EATMYDATA, "--only=somebody-else", *cmd])
    assert other.counts["ext4:ext4_sync_file_enter"] == 1, other.why()
    named = run([EATMYDATA, "--only=entry-st*", *cmd])
    assert named.syncs == 0, named.why()
    disabled = eaten(cmd, env={"EATMYDATA_DISABLE": "1"})
    assert disabled.counts["ext4:ext4_sync_file_enter"] == 1, disabled.why()


def test_io_uring(scratch):
    """liburing, plain rings: an RWF_DSYNC write, an fsync linked to a write,
    a sync_file_range and an O_SYNC openat complete as natively, and none
    of them syncs (sync_file_range shows as writeback the caller started)."""
    events = [("ext4:ext4_sync_file_enter", None), ("writeback:writeback_single_inode", None)]
    cmd = [TESTS / "uring-sync", scratch]
    native = run(cmd, events=events)
    assert native.counts["ext4:ext4_sync_file_enter"] == 2, native.why()
    under = run([EATMYDATA, "--seccomp=on", *cmd], events=events)
    assert under.syncs == 0, under.why()
    assert sorted(under.stdout.split()) == sorted(native.stdout.split()) == \
        ["1:1", "2:1", "3:0", "4:1", "5:0", "6:1"]


def starters(prog, d, args=None):
    """The ways a process of the tree starts `prog fsync d` (or prog with
    `args`)."""
    args = [str(prog), *(args or ["fsync", str(d)])]
    py = ("import os, subprocess, sys\n"
          "a = sys.argv[2:]\n"
          "if sys.argv[1] == 'spawn':\n"
          "    os.waitpid(os.posix_spawn(a[0], a, os.environ), 0)\n"
          "else:\n"
          "    subprocess.run(a, check=True)\n")
    makefile = d / "Makefile"
    makefile.write_text(f"all:\n\t{' '.join(args)}\n")
    return {
        "sh": ["sh", "-c", " ".join(args) + "; true"],
        "bash": ["bash", "-c", " ".join(args) + "; true"],
        "make": ["make", "-s", "-f", str(makefile)],
        "python-subprocess": ["python3", "-c", py, "run", *args],
        "python-posix_spawn": ["python3", "-c", py, "spawn", *args],
        "32-bit parent": [TESTS / "entry32", "exec-execv", d],
    }


@pytest.mark.parametrize("kind,starter", [
    (kind, starter) for kind in STATIC
    for starter in ["sh", "bash", "make", "python-subprocess", "python-posix_spawn"]
] + [("static", "32-bit parent")])  # entry32 starts the 64-bit entry-static
def test_static_program_started_by(scratch, kind, starter):
    cmd = starters(STATIC[kind], scratch)[starter]
    native = run(cmd, events=FS_SYNCS)
    assert native.syncs > 0, native.why()
    under = eaten(cmd, events=FS_SYNCS)
    assert under.returncode == 0 and under.syncs == 0, under.why()


@pytest.mark.parametrize("starter", ["sh", "python-posix_spawn"])
def test_static_program_started_under_the_filter_already(scratch, starter):
    """busybox (static: under the run's filter) runs a shell, whose Python
    starts entry-static: through posix_spawn the launcher stands in for it,
    finds the run's own filter on (EBUSY) and says nothing, as an exec
    does (it said "not eaten: under another seccomp supervisor's filter
    already", though the run's supervisor served it)."""
    cmd = [require("busybox"), "sh", "-c",
           shlex.join(map(str, starters(STATIC["static"], scratch)[starter]))]
    native = run(cmd, events=FS_SYNCS)
    assert native.syncs > 0, native.why()
    under = eaten(cmd, events=FS_SYNCS)
    assert under.syncs == 0 and not under.stderr, under.why()


@pytest.mark.parametrize("starter", ["sh", "make", "python-posix_spawn"])
def test_go_program_started_by(go_program, scratch, starter):
    """Its 21 fsyncs of f (its O_SYNC open of f.sync: below)."""
    cmd = starters(go_program, scratch, [str(scratch / "f"), "20"])[starter]
    events = syncs_of(scratch / "f")
    native = run(cmd, events=events, system_wide=True)
    assert native.syncs >= 21, native.why()
    under = eaten(cmd, events=events, system_wide=True)
    assert under.syncs == 0 and under.stdout == "ok\n", under.why()


def landlock_enabled():
    import ctypes
    return ctypes.CDLL(None).syscall(444, None, 0, 1) > 0


@pytest.mark.xfail(landlock_enabled(), strict=True,
                   reason="with Landlock in the kernel, nothing is opened for a filter a process "
                          "of the tree installed (a domain may predate it): its O_SYNC open syncs "
                          "(doc/eatmydata.md, What it cannot reach)")
def test_o_sync_open_of_a_program_started_by_the_tree(go_program, scratch):
    cmd = ["sh", "-c", f"{go_program} {scratch / 'f'} 0"]
    events = syncs_of(scratch / "f.sync")
    native = run(cmd, events=events, system_wide=True)
    assert native.syncs >= 1, native.why()
    under = eaten(cmd, events=events, system_wide=True)
    assert under.syncs == 0, under.why()


@pytest.mark.slow
@pytest.mark.go
def test_go_test_of_a_package_that_fsyncs(tmp_path, scratch):
    """`go test`: the go command, the compiler and the test binary are Go
    programs, started by each other."""
    go = tool("go")
    assert go, "go is not installed (.ci/run installs it)"
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "go.mod").write_text("module example.com/pkg\n\ngo 1.19\n")
    (pkg / "sync_test.go").write_text(textwrap.dedent(f"""\
        package pkg

        import ("os"; "testing")

        func TestSync(t *testing.T) {{
        \tf, err := os.Create("{scratch}/go-test")
        \tif err != nil {{ t.Fatal(err) }}
        \tfor i := 0; i < 20; i++ {{
        \t\tf.Write([]byte("x"))
        \t\tif err := f.Sync(); err != nil {{ t.Fatal(err) }}
        \t}}
        }}
        """))
    env = {"GOCACHE": str(tmp_path / "cache"), "GOPATH": str(tmp_path / "gopath"),
           "GOFLAGS": "-count=1", "CGO_ENABLED": "0", "HOME": str(tmp_path)}
    native = run([go, "test", "./..."], cwd=pkg, env=env, events=FS_SYNCS)
    assert native.counts["ext4:ext4_sync_file_enter"] >= 20, native.why()
    under = eaten([go, "test", "./..."], cwd=pkg, env=env, events=FS_SYNCS)
    assert under.returncode == 0 and under.counts["ext4:ext4_sync_file_enter"] == 0, under.why()


def syncs_of(path):
    """The file's own syncs, wherever the kernel makes them (AIO's fsync
    runs in a kernel worker, io_uring's in the ring's threads)."""
    path.touch()
    return [("ext4:ext4_sync_file_enter", f"ino == {path.stat().st_ino}")]


@pytest.mark.parametrize("prog,args,target", [
    ("uring-sync", [], "data"),
    ("uring-sync", ["-s"], "data"),  # SQPOLL: a ring the kernel polls
    ("aio-submit", [], "aio"),
    ("aio-submit-static", [], "aio"),
], ids=["io_uring", "io_uring SQPOLL", "Linux AIO", "Linux AIO, static"])
def test_asynchronous_requests(scratch, prog, args, target):
    """Rings and AIO contexts of dynamically linked programs too: the same
    completions as natively, none of the syncs."""
    cmd = [TESTS / prog, *args, scratch]
    events = syncs_of(scratch / target)
    native = run(cmd, events=events, system_wide=True)
    assert native.syncs > 0, native.why()
    under = eaten(cmd, events=events, system_wide=True)
    assert under.syncs == 0, under.why()
    assert under.stdout == native.stdout, under.why()


def test_posix_aio_fsync(scratch):
    """glibc's aio_fsync, whose helper thread calls fsync inside libc."""
    cmd = [TESTS / "aio", scratch / "f"]
    native = run(cmd, events=syncs_of(scratch / "f"), system_wide=True)
    assert native.syncs == 1, native.why()
    under = eaten(cmd, events=syncs_of(scratch / "f"), system_wide=True)
    assert under.syncs == 0 and under.stdout == native.stdout, under.why()


@pytest.mark.parametrize("before", [True, False], ids=["supervisor running", "none running"])
def test_static_program_in_a_chroot_without_proc(tmp_path, scratch, before):
    """A chroot with no /proc yet (a debootstrap's first stage): the program
    is looked at by name, and eaten by the run's supervisor if one runs (a
    static program before it started it); none can be started in there
    (no launcher, no /proc): then it runs unfiltered, and syncs."""
    jail = tmp_path / "jail"
    (jail / "w").mkdir(parents=True)
    shutil.copy(STATIC["static"], jail / "static")
    first = f"{STATIC['static']} fsync {scratch} && " if before else ""
    cmd = ["sh", "-c", f"{first}chroot {jail} /static fsync /w && echo ran"]
    native = run(cmd, events=FS_SYNCS)
    assert native.syncs > 0, native.why()
    under = eaten(cmd, events=FS_SYNCS)
    assert under.stdout == "ran\n" and (under.syncs == 0) == before, under.why()


def test_static_program_with_arguments_near_the_limit(scratch):
    """Arguments that the kernel copies, within 8 pages of its limit (a
    quarter of the stack limit, here): the program is eaten all the same."""
    script = ("import os, resource, subprocess, sys\n"
              "limit = min(6 << 20, resource.getrlimit(resource.RLIMIT_STACK)[0] // 4)\n"
              "env = sum(len(k) + len(v) + 2 + 8 for k, v in os.environ.items())\n"
              "room = limit - env - 8 * 4096\n"
              "args = ['x' * 4000] * (room // 4009)\n"
              "subprocess.run([sys.argv[1], 'fsync-twice', sys.argv[2], *args], check=True,\n"
              "               input=b'\\n')\n")
    cmd = ["python3", "-c", script, TESTS / "hostile-static", scratch / "f"]
    native = run(cmd, events=FS_SYNCS)
    assert native.syncs > 0, native.why()
    under = eaten(cmd, events=FS_SYNCS)
    assert under.syncs == 0, under.why()
