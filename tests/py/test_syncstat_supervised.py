# SPDX-License-Identifier: MIT
"""syncstat through the seccomp supervisor (issue 28): every durability call
of a program the library cannot reach (static glibc, 32-bit static, Go,
liburing, AIO, musl-dynamic) is counted, and the count is the kernel's;
a program that could not be observed is named, never counted as zero."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import BUILD, EATMYDATA, TESTS, cmdline, need_perf, require, run, tool
from helpers import HEADER, SLOT

SYNCSTAT = BUILD / "bin" / "syncstat"
N = 40
SYNCS = "ext4:ext4_sync_file_enter"
FDATASYNC = 75  # x86-64's number


def kernel(path):
    """The file system's own count of the syncs of the file at path (made
    now, so that its inode is known): a sync system call and an io_uring or
    AIO sync alike, whichever thread makes it (io_uring's workers, AIO's
    kworker: hence every CPU, filtered to the file)."""
    path.touch()
    return dict(events=[(SYNCS, f"ino == {path.stat().st_ino}")], system_wide=True)


def syncstat_json(cmd, tmp_path, path, **kw):
    """Run cmd under syncstat --json=FILE, counting the kernel's syncs of
    path; (the run, the report)."""
    out = tmp_path / "report.json"
    r = run([SYNCSTAT, f"--json={out}", "-o", tmp_path / "report.txt", "--", *cmd],
            **kernel(path), **kw)
    return r, json.loads(out.read_text())


def counted(report, kinds=("fsync", "fdatasync")):
    return sum(g["count"] for g in report["groups"] if g["kind"] in kinds)


def go_build(tmp_path_factory, src, name, cgo, strip=False):
    go = tool("go")
    if not go:
        pytest.fail("go is not installed (.ci/run installs it)")
    d = tmp_path_factory.mktemp(name)
    exe = d / name
    flags = ["-ldflags=" + " ".join((["-linkmode=external"] if cgo else []) +
                                    (["-s", "-w"] if strip else []))]
    subprocess.run([go, "build", *flags, "-o", exe,
                    os.path.join(os.path.dirname(__file__), "..", "go", src)],
                   check=True, timeout=600,
                   env=dict(os.environ, CGO_ENABLED="1" if cgo else "0", GOCACHE=str(d / "cache"),
                            GOPATH=str(d / "gopath"), GOFLAGS="-mod=mod"))
    return exe


@pytest.fixture(scope="module")
def go_runner(tmp_path_factory):
    """tests/go/run.go, static: a Go program starting another with os/exec."""
    yield go_build(tmp_path_factory, "run.go", "run-go", cgo=False)


@pytest.fixture(scope="module")
def cgo_program(tmp_path_factory):
    """tests/go/fsync.go built with cgo: dynamic, glibc's ld.so, our library
    loaded, the Go runtime's own fsyncs past it."""
    if not shutil.which("gcc"):
        pytest.fail("gcc is needed for cgo")
    yield go_build(tmp_path_factory, "fsync.go", "fsync-cgo", cgo=True)


MUSL_SRC = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char s[4200];
	int n = atoi(argv[2]), fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644), g;

	snprintf(s, sizeof(s), "%s.sync", argv[1]);
	g = open(s, O_CREAT | O_WRONLY | O_SYNC, 0644);
	if (fd < 0 || g < 0)
		return 2;
	for (int i = 0; i < n; i++)
		if (write(fd, "x", 1) != 1 || fsync(fd))
			return 1;
	return 0;
}
"""


@pytest.fixture(scope="module")
def musl_program(tmp_path_factory):
    """A musl-linked dynamic program (interpreter /lib/ld-musl-*.so.1):
    N fsyncs and an O_SYNC open."""
    cc = require("musl-gcc")
    d = tmp_path_factory.mktemp("musl")
    (d / "m.c").write_text(MUSL_SRC)
    subprocess.run([cc, "-O2", "-o", d / "m", d / "m.c"], check=True, timeout=120)
    interp = subprocess.run(["readelf", "-p", ".interp", d / "m"], capture_output=True,
                            text=True).stdout
    assert "ld-musl" in interp, interp
    yield d / "m"


# program, its arguments after FILE, the kinds it makes, extra calls
ROWS = {
    "static-fsync": (TESTS / "fsyncs-static", [N, "fsync"], 0),
    "static-fdatasync": (TESTS / "fsyncs-static", [N, "fdatasync"], 0),
    "static32-fsync": (TESTS / "fsyncs32-static", [N, "fsync"], 0),
    "static-aio": (TESTS / "fsyncs-static", [N, "aio"], 0),
    "static-raw-uring": (TESTS / "fsyncs-static", [N, "uring"], 0),
    "liburing-dynamic": (TESTS / "uring-fsyncs", [N], 0),
    "liburing-dynamic-and-libc": (TESTS / "uring-fsyncs", [N, "libc"], N),
    "liburing-static": (TESTS / "uring-fsyncs-static", [N], 0),
    "dynamic-fsync": (TESTS / "fsyncs", [N, "fsync"], 0),
    "dynamic-aio": (TESTS / "fsyncs", [N, "aio"], 0),
}


@pytest.mark.parametrize("row", ROWS)
@pytest.mark.parametrize("via", ["direct", "shell", pytest.param("go", marks=pytest.mark.go)])
def test_counts_are_the_kernels(row, via, scratch, tmp_path, request):
    """Each row's calls under syncstat: as many as the kernel counts natively
    (the control) and under syncstat; a shell in between (the library's exec
    puts the program under the filter) or a Go program (itself under the
    filter, which its child inherits) changes nothing."""
    prog, args, extra = ROWS[row]
    if not prog.exists():
        pytest.skip(f"{prog.name} was not built (no 32-bit compiler?)")
    f = scratch / "f"
    cmd = [prog, f, *args]
    native = run(cmd, **kernel(f))
    assert native.counts[SYNCS] == N + extra, native.why()
    if via == "shell":
        cmd = ["sh", "-c", 'exec "$@"', "sh", *cmd]
    if via == "go":
        cmd = [request.getfixturevalue("go_runner"), *cmd]
    r, report = syncstat_json(cmd, tmp_path, f)
    assert r.counts[SYNCS] == N + extra, r.why()
    assert counted(report) == N + extra, r.why() + json.dumps(report["groups"])
    assert report["unobserved"] == [], r.why()
    assert str(scratch / "f") in [f["path"] for f in report["files"]], r.why()
    assert [p for p in report["processes"] if p["count"] == N + extra], r.why()
    if prog.name == "fsyncs-static" and args[-1] in ("fsync", "fdatasync"):
        # The program's function that asked, from its symbol table.
        sites = [s["site"] for s in report["sites"]]
        assert len(sites) == 1 and sites[0].startswith("main (fsyncs-static+"), sites


@pytest.mark.parametrize("row", ["static-aio", "static-raw-uring", "static-fsync"])
def test_a_submitted_sync_is_said_untimed(row, scratch, tmp_path):
    """An io_uring or AIO sync is counted when it is submitted, its
    completion not seen: the report says so beside its count, not a time of
    0 (the control: a plain fsync is timed and says nothing of the kind)."""
    prog, args, _ = ROWS[row]
    r, report = syncstat_json([prog, scratch / "f", *args], tmp_path, scratch / "f")
    text = (tmp_path / "report.txt").read_text()
    said = f"fsyncs-static fsync: {N} calls, {N} counted, not timed (left to the kernel"
    untimed = [g["count"] - g["timed"] for g in report["groups"]]
    if row == "static-fsync":
        assert "not timed" not in text and untimed == [0], text
    else:
        assert said in text and untimed == [N], text


def go_row(exe, scratch, tmp_path):
    f = scratch / "f"
    native = run([exe, f, N], **kernel(f))
    r, report = syncstat_json([exe, f, N], tmp_path, f)
    # N syncs and a last one; the O_SYNC open is counted apart.
    assert native.counts[SYNCS] == N + 1, native.why()
    assert r.counts[SYNCS] == N + 1, r.why()
    assert counted(report, ("fsync",)) == N + 1, r.why() + json.dumps(report["groups"])
    assert counted(report, ("open(O_SYNC)",)) == 1, r.why() + json.dumps(report["groups"])
    assert report["unobserved"] == [], r.why()
    # The site is the program's function that asked, not the runtime's
    # system call (its symbol table, or .gopclntab when stripped).
    sites = [s["site"] for s in report["sites"]]
    assert sites and all(s.startswith("main.main (") for s in sites), sites


def worker_calls(perf_script, caller):
    """The supervisor's system calls from perf script: (tid, time ns,
    number) of each entry of a thread other than the caller's."""
    calls = []
    for line in perf_script.splitlines():
        f = line.split()
        if len(f) > 4 and f[2] == "raw_syscalls:sys_enter:" and int(f[0]) != caller:
            calls.append((int(f[0]), int(f[1].rstrip(":").replace(".", "")), int(f[4])))
    return calls


def test_a_served_call_is_timed_alone(tmp_path):
    """The time the supervisor records of a durability call it makes is
    the call's own: between its two clock reads the worker makes that one
    system call, not the looks at the caller's stack and file that the
    record needs (they came before the second read: a tmpfs fdatasync of
    0.2 us was recorded as 5.8 us).  The kernel's view: perf's timestamps
    of the worker's system calls, on the records' clock (CLOCK_MONOTONIC)."""
    need_perf()
    shm = Path(tempfile.mkdtemp(prefix="timed-alone-", dir="/dev/shm"))
    keep, data = tmp_path / "kept", tmp_path / "perf.data"
    cmd = ["perf", "record", "-q", "-k", "mono", "-e", "raw_syscalls:sys_enter", "-o", data,
           "--", SYNCSTAT, "--keep", keep, "-o", "/dev/null", "--",
           TESTS / "fsyncs-static", shm / "f", "20", "fdatasync"]
    try:
        r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(shm)
    assert r.returncode == 0, cmdline(cmd) + r.stderr
    records = (keep / "records").read_bytes()
    slots = [SLOT.unpack_from(records, 4096 + 512 * i)
             for i in range(HEADER.unpack_from(records)[4])]
    timed = [(s[7], s[7] + s[8], s[18]) for s in slots if not s[4] & 2]
    assert len(timed) == 20, cmdline(cmd)
    script = subprocess.run(["perf", "script", "-i", data, "-F", "tid,time,event,trace", "--ns"],
                            capture_output=True, text=True, check=True).stdout
    calls = worker_calls(script, timed[0][2])
    for start, end, _ in timed:
        made = [tid for tid, t, nr in calls if start <= t <= end and nr == FDATASYNC]
        assert len(made) == 1, f"between {start} and {end}: {made}\n" + cmdline(cmd)
        inside = [nr for tid, t, nr in calls if start <= t <= end and tid == made[0]]
        assert inside == [FDATASYNC], f"between {start} and {end}: {inside}\n" + cmdline(cmd)


def test_go_static(go_program, scratch, tmp_path):
    go_row(go_program, scratch, tmp_path)


@pytest.mark.go
def test_go_stripped(tmp_path_factory, scratch, tmp_path):
    go_row(go_build(tmp_path_factory, "fsync.go", "fsync-stripped", cgo=False, strip=True),
           scratch, tmp_path)


def test_go_cgo(cgo_program, scratch, tmp_path):
    """cgo: our library is loaded too, and leaves the calls to the
    supervisor (the probe), so none is counted twice."""
    go_row(cgo_program, scratch, tmp_path)


def test_musl_dynamic(musl_program, scratch, tmp_path):
    """musl's loader does not load our library: the program is put under the
    filter like a static one; eatmydata eats its syncs, syncstat counts
    them, each beside the native count."""
    f = scratch / "f"
    cmd = [musl_program, f, N]
    native = run(cmd, **kernel(f))
    assert native.counts[SYNCS] == N, native.why()
    eaten = run([EATMYDATA, "--", *cmd], **kernel(f))
    assert eaten.counts[SYNCS] == 0, eaten.why()
    r, report = syncstat_json(cmd, tmp_path, f)
    assert r.counts[SYNCS] == N, r.why()
    assert counted(report, ("fsync",)) == N, r.why() + json.dumps(report["groups"])
    assert counted(report, ("open(O_SYNC)",)) == 1, r.why() + json.dumps(report["groups"])


# The supervisor made unavailable: the launcher's binary, which the first
# process that needs the supervisor starts it from, is one that cannot run
# (set by env, which the library serves: a shell's own assignment would be
# in the exec's environment only, not in the one the library reads).
UNAVAILABLE = ["env", "EATMYDATA_SECCOMP_EXEC=/nonexistent"]


def test_unobserved_is_named_never_zero(scratch, tmp_path):
    """With no supervisor to be had, the static program runs unobserved:
    the report and its JSON name it and why, compare refuses the run, and
    the kernel shows its syncs did happen (the control)."""
    prog, f = TESTS / "fsyncs-static", scratch / "f"
    r, report = syncstat_json([*UNAVAILABLE, prog, f, N, "fsync"], tmp_path, f)
    assert r.counts[SYNCS] == N, r.why()
    assert [u["path"] for u in report["unobserved"]] == [str(prog)], r.why()
    assert "supervisor" in report["unobserved"][0]["why"], r.why()
    text = (tmp_path / "report.txt").read_text()
    assert f"NOT OBSERVED: {prog}" in text, text
    good = tmp_path / "good.json"
    subprocess.run([SYNCSTAT, f"--json={good}", "-o", "/dev/null", "--", prog,
                    scratch / "g", str(N), "fsync"], check=True, timeout=60)
    for old, new in [(good, tmp_path / "report.json"), (tmp_path / "report.json", good)]:
        c = subprocess.run([SYNCSTAT, "compare", old, new], capture_output=True, text=True,
                           timeout=60)
        assert c.returncode == 125 and "unobserved" in c.stderr, \
            cmdline([SYNCSTAT, "compare", old, new]) + c.stderr
    c = subprocess.run([SYNCSTAT, "compare", good, good], capture_output=True, timeout=60)
    assert c.returncode == 0


def test_eatmydata_says_unobserved(scratch):
    """eatmydata, with no supervisor to be had: the static program's syncs
    reach the disk, and stderr says which program and why."""
    prog, f = TESTS / "fsyncs-static", scratch / "f"
    r = run([EATMYDATA, "--", *UNAVAILABLE, prog, f, N, "fsync"], **kernel(f))
    assert r.counts[SYNCS] == N, r.why()
    assert f"eatmydata: {prog}: not eaten: the seccomp supervisor could not be started" \
        in r.stderr, r.why()
    ok = run([EATMYDATA, "--", "env", prog, f, N, "fsync"], **kernel(f))
    assert ok.counts[SYNCS] == 0 and "not eaten" not in ok.stderr, ok.why()


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


@pytest.mark.slow
def test_etcd_wal_fdatasyncs(tmp_path):
    """etcd (Debian's etcd-server, cgo Go) under syncstat, 100 etcdctl puts:
    the report's fdatasyncs are the kernel's count for the run, and the WAL
    file is named among its files."""
    etcd, etcdctl = require("etcd"), require("etcdctl")
    client, peer = free_ports(2)
    data, stats, out = tmp_path / "data", tmp_path / "perf.csv", tmp_path / "report.json"
    cmd = ["perf", "stat", "-x", "\x1f", "-o", stats, "-e", "syscalls:sys_enter_fdatasync",
           "-e", "syscalls:sys_enter_fsync", "--", SYNCSTAT, f"--json={out}", "-o", "/dev/null",
           "--", etcd, "--name", "t", "--data-dir", data,
           "--listen-client-urls", f"http://127.0.0.1:{client}",
           "--advertise-client-urls", f"http://127.0.0.1:{client}",
           "--listen-peer-urls", f"http://127.0.0.1:{peer}",
           "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
           "--initial-cluster", f"t=http://127.0.0.1:{peer}"]
    perf = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        ctl = [etcdctl, f"--endpoints=127.0.0.1:{client}"]
        deadline = time.monotonic() + 15
        while subprocess.run([*ctl, "endpoint", "health"], capture_output=True,
                             timeout=10).returncode != 0:
            assert time.monotonic() < deadline and perf.poll() is None, "etcd did not start"
            time.sleep(0.1)
        for i in range(100):
            subprocess.run([*ctl, "put", f"k{i}", "v"], check=True, capture_output=True,
                           timeout=10)
        os.kill(children(perf.pid)[0], signal.SIGTERM)  # syncstat passes it on
        err = perf.communicate(timeout=30)[1]
    finally:
        perf.kill()
    counts = {f[2]: int(f[0]) for f in (line.split("\x1f") for line in stats.read_text().splitlines())
              if len(f) > 2 and f[0].isdigit()}
    report = json.loads(out.read_text())
    why = f"\nrerun: {cmdline(cmd)}\ncounts {counts}\n{err[-2000:]}"
    assert counts["syscalls:sys_enter_fdatasync"] >= 100, why
    assert counted(report, ("fdatasync",)) == counts["syscalls:sys_enter_fdatasync"], \
        why + json.dumps(report["groups"])
    assert counted(report, ("fsync",)) == counts["syscalls:sys_enter_fsync"], why
    assert report["unobserved"] == [], why
    wal = [f for f in report["files"] if f["path"].endswith(".wal")]
    assert wal and wal[0]["path"].startswith(str(data / "member" / "wal")), why
    # The site is the function of etcd's that asked (its file utilities,
    # from the symbol table), not the Go runtime's system call.
    sites = [s["site"] for s in report["sites"]]
    assert any("fileutil" in s or "wal" in s for s in sites), why + json.dumps(sites)


@pytest.mark.parametrize("prog", ["probe-static", "probe32-static", "aio-submit-static"])
def test_results_are_the_kernels(prog, tmp_path):
    """Every call of the semantics matrix (each durability call against each
    kind of descriptor and argument), made by the supervisor for a static
    program, answers what it answers natively: result and errno."""
    exe = TESTS / prog
    if not exe.exists():
        pytest.skip(f"{prog} was not built (no 32-bit compiler?)")
    (tmp_path / "n").mkdir()
    (tmp_path / "s").mkdir()
    native = subprocess.run([exe, tmp_path / "n"], capture_output=True, text=True, timeout=60)
    cmd = [SYNCSTAT, "-o", "/dev/null", "--", exe, tmp_path / "s"]
    ours = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert native.stdout.count("\n") >= 5
    assert ours.stdout == native.stdout and ours.returncode == native.returncode, \
        cmdline(cmd) + ours.stderr


def test_eatmydata_stats_counts_what_the_supervisor_ate(scratch):
    """eatmydata --stats on a static program: none of its syncs reaches the
    file system, and the report counts each one the supervisor ate (not
    0), with its file."""
    prog, f = TESTS / "fsyncs-static", scratch / "f"
    r = run([EATMYDATA, "--stats", "--", prog, f, N, "fsync"], **kernel(f))
    assert r.counts[SYNCS] == 0, r.why()
    assert f"{N} durability calls, all eaten" in r.stderr, r.why()
    assert str(f) in r.stderr, r.why()


NEGATIVE_SRC = r"""
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	for (int i = 0; i < 5; i++)
		if (fsync(-1) == 0 || errno != EBADF)
			return 1;
	puts("ok");
	return 0;
}
"""


def test_negative_descriptor_counted_with_its_error(tmp_path):
    """fsync(-1) of a static program: counted with the kernel's EBADF, as
    the library counts a dynamic program's (5 calls, as the kernel's
    syscall tracepoint counts natively)."""
    (tmp_path / "n.c").write_text(NEGATIVE_SRC)
    exe = tmp_path / "n"
    subprocess.run(["gcc", "-static", "-o", exe, tmp_path / "n.c"], check=True, timeout=120)
    native = run([exe], events=[("syscalls:sys_enter_fsync", None)])
    assert native.counts["syscalls:sys_enter_fsync"] == 5, native.why()
    out = tmp_path / "r.json"
    r = run([SYNCSTAT, f"--json={out}", "-o", "/dev/null", "--", exe],
            events=[("syscalls:sys_enter_fsync", None)])
    groups = json.loads(out.read_text())["groups"]
    assert [(g["kind"], g["count"], g["errors"]) for g in groups] == [("fsync", 5, 5)], \
        r.why() + json.dumps(groups)
