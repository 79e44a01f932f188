# SPDX-License-Identifier: MIT
"""The supervisor acting on a program's behalf, attacked as a hostile local
user would (issue 34): whatever the kernel does for a caller, the
supervisor must do the same way, for the same process, within the same
limits, or leave it to the kernel and say so.  Each case runs
tests/c/behalf.c (static) natively beside the tool and compares what the
program saw, and what the kernel saw (fincore, a FUSE server's log)."""
import json
import os
from pathlib import Path
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import BUILD, SANITIZED, TESTS, cmdline, require, run
from helpers import cached_bytes as cached, crash_report, evict

BEHALF = TESTS / "behalf-static"
NOCACHE = BUILD / "bin" / "nocache"
SYNCSTAT = BUILD / "bin" / "syncstat"
EATMYDATA = BUILD / "bin" / "eatmydata"
CRASHTEST = BUILD / "bin" / "crashtest"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
NO_PROC = "its pid namespace has no /proc of its own"


def runs(cmd, timeout=120, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                       **kw)
    r.line = cmdline(cmd)
    return r


def userns_allowed():
    """May an ordinary user make a user namespace here (and a pid one in it)?"""
    return runs([*NOBODY, "unshare", "-Urpf", "true"]).returncode == 0


@pytest.fixture
def public_dir():
    """A directory every user can reach (pytest's own is root's alone)."""
    d = tempfile.mkdtemp(prefix="emd-behalf-")
    os.chmod(d, 0o755)
    yield Path(d)
    shutil.rmtree(d)


@pytest.fixture
def nobodys_nocache(public_dir):
    """nocache and its libraries, the user nobody's: in a user namespace of
    nobody's, root's files are no one's, and the supervisor is started only
    from a program of root's or the user's own."""
    d = public_dir / "nb"
    for part in ("bin", *(p.name for p in BUILD.iterdir() if p.name.startswith("lib"))):
        shutil.copytree(BUILD / part, d / part, symlinks=True)
    for p in [d, *d.rglob("*")]:
        os.lchown(p, 65534, 65534)
    return d / "bin" / "nocache"


def victim_run(prefix, tool, data, unshare_outer):
    """In a pid namespace with a /proc of its own, whose pid 1 is a victim
    holding behalf's buffer: a pid namespace below it without one, whose
    pid 1 reads data into that very buffer under `tool` (or natively)."""
    return runs([*prefix, "unshare", *unshare_outer, "--mount-proc", BEHALF, "victim",
                 "unshare", "-pf", *tool, BEHALF, "readbuf", data])


@pytest.mark.root
@pytest.mark.parametrize("who", ["root", "user"])
def test_pid_namespace_without_its_own_proc(who, public_dir, nobodys_nocache):
    """/proc/1 in a pid namespace made without a /proc of its own is its
    parent's pid 1.  The supervisor, started in the namespace, got its
    callers' numbers as the namespace numbers them and read and wrote
    /proc/PID/mem by them: nocache wrote what the program read into the
    parent's pid 1 (the program read zeros).  It must refuse to start
    there, and the program runs unobserved, named."""
    if who == "user" and not userns_allowed():
        pytest.skip("no unprivileged user namespaces here")
    data = public_dir / "data"
    data.write_bytes(os.urandom(1 << 16))
    data.chmod(0o644)
    prefix, outer, tool = ([], ["-pf"], [NOCACHE]) if who == "root" else \
        (NOBODY, ["-Urpf"], [nobodys_nocache])
    native = victim_run(prefix, [], data, outer)
    assert native.returncode == 0 and native.stdout.endswith("victim untouched\n"), native
    under = victim_run(prefix, tool, data, outer)
    assert under.stdout == native.stdout, under.line + under.stderr
    assert f"its reads and writes stay cached: {NO_PROC}" in under.stderr, under.line


@pytest.mark.root
def test_pid_namespace_syncstat_names_no_other_process(tmp_path):
    """syncstat named the parent namespace's pid 2 (kthreadd) as the
    program that synced: the program is unobserved, and said so."""
    out = tmp_path / "r.json"
    cmd = ["unshare", "-pf", SYNCSTAT, "--json", "-o", out, "--", TESTS / "fsyncs-static",
           tmp_path / "f", "3", "fsync"]
    r = runs(cmd)
    assert r.returncode == 0, r.line + r.stderr
    report = json.loads(out.read_text())
    assert [u["program"] for u in report["unobserved"]] == ["fsyncs-static"], r.line
    assert NO_PROC in report["unobserved"][0]["why"], r.line
    assert report["processes"] == [], r.line


@pytest.mark.root
def test_pid_namespace_eatmydata_says_not_eaten(tmp_path):
    """eatmydata cleared an openat2's O_SYNC in the memory of whichever
    process had the caller's number: not eaten, and said."""
    r = runs(["unshare", "-pf", EATMYDATA, TESTS / "fsyncs-static", tmp_path / "f", "3",
              "fsync"])
    assert r.returncode == 0 and f"not eaten: {NO_PROC}" in r.stderr, r.line + r.stderr


@pytest.mark.parametrize("tool", ["native", "nocache"])
def test_workers_leave_no_descriptor_behind(tool, scratch):
    """Bursts of threads make the supervisor start workers and let them go:
    each worker kept the pidfds of the threads it served, and left them
    open, until the supervisor was at its descriptor limit and served
    nothing more, silently (the file read last stayed cached)."""
    small, big = scratch / "small", scratch / "big"
    small.write_bytes(os.urandom(4096))
    big.write_bytes(os.urandom(16 << 20))
    evict(big)
    pre = f"{NOCACHE} " if tool == "nocache" else ""
    r = runs(["sh", "-c", f"ulimit -n 128; exec {pre}{BEHALF} burst {small} {big}"])
    assert r.stdout == f"burst {16 << 20}\n" and not r.stderr, r.line + r.stderr
    if tool == "native":
        assert cached(big) == 16 << 20, "native control: the file read stays cached"
    else:
        assert cached(big) == 0, r.line


def test_descriptor_limit_is_said(scratch):
    """100 writes at once, each waiting in the supervisor on the program's
    memory (userfaultfd) under a limit of 64 descriptors: some go on to the
    kernel, and nocache says so on the program's standard error, once."""
    f = scratch / "f"
    native = runs(["sh", "-c", f"ulimit -n 64; exec {BEHALF} stuck {f} 100"])
    assert native.stdout == "stuck 100 written\n", "native control"
    under = runs(["sh", "-c", f"ulimit -n 64; exec {NOCACHE} {BEHALF} stuck {f} 100"])
    assert under.stdout == native.stdout, under.line + under.stderr
    said = [line for line in under.stderr.splitlines()
            if "(its pages stay cached): the supervisor had no descriptor free" in line]
    assert len(said) == 1 and said[0].startswith("nocache: behalf-static["), under.line


def crashtest_run(tmp_path, *args, files=None, limit=None):
    """behalf ARGS under crashtest (its output on standard error, which
    crashtest passes on), in a directory of its own holding `files` (name:
    bytes): (what it printed, the report's unknown reasons, the command
    line)."""
    d = tmp_path / "ct"
    d.mkdir()
    for name, data in (files or {}).items():
        (d / name).write_bytes(data)
    prog = " ".join(str(a) for a in [BEHALF, *args])
    cmd = [CRASHTEST, "--json", "--check=true", d, "--", "sh", "-c", f"exec {prog} >&2"]
    if limit:
        cmd = ["sh", "-c", f"ulimit -n {limit}; exec {cmdline(cmd)}"]
    r = runs(cmd, timeout=300)
    assert r.returncode in (0, 1, 2), r.line + r.stdout + r.stderr
    report = json.loads(r.stdout)
    return r.stderr, {w for p in report["points"] for w in p.get("unknown", [])}, r.line


def test_descriptor_limit_is_unknown_to_crashtest(tmp_path):
    """The same with crashtest, under a limit of 300 (where its supervisor
    needs no more): a change that went on to the kernel was not journaled,
    and the run did not say why; it says so now (unknown)."""
    out, unknown, line = crashtest_run(tmp_path, "stuck", "data", "300", limit=300)
    assert out == "stuck 300 written\n", line + out
    assert any("the supervisor had no descriptor free" in w for w in unknown), (line, unknown)


@pytest.fixture
def fuse(tmp_path):
    """tests/c/fuselog on tmp_path/mnt (backed by tmp_path/back), logging
    each request with the name of the process that made it."""
    fusermount = require("fusermount3")
    back, mnt, log = tmp_path / "back", tmp_path / "mnt", tmp_path / "log"
    back.mkdir()
    mnt.mkdir()
    server = subprocess.Popen([TESTS / "fuselog", back, mnt, log])
    deadline = time.monotonic() + 10
    while not os.path.ismount(mnt):
        assert time.monotonic() < deadline and server.poll() is None, "fuselog did not mount"
        time.sleep(0.05)
    yield mnt, log
    subprocess.run([fusermount, "-u", mnt], timeout=60)
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.send_signal(signal.SIGKILL)
        server.wait()


def requests(log):
    """(op, process name) of each request logged since the last call."""
    lines = log.read_text().splitlines() if log.exists() else []
    log.write_text("")
    return [tuple(line.split(" ", 1)) for line in lines]


@pytest.mark.root
@pytest.mark.parametrize("tool", ["nocache", "eatmydata", "syncstat"])
def test_fuse_sees_no_request_of_the_supervisor(tool, fuse):
    """A static program writes, fsyncs and reads a file on FUSE.  The
    supervisor's duplicate of its descriptor, and the duplicate's close,
    sent FLUSH (and GETATTR, FSYNC) for every call it looked at (21 under
    nocache, 1 natively): s3fs uploads the file at each.  The supervisor
    now looks without a duplicate, and leaves what it would have to make on
    such a file system to the kernel: the server sees the program's own
    requests, as natively, and none of the supervisor's."""
    mnt, log = fuse
    seen = []
    for under in (False, True):
        for prog in (["fsyncs-static", mnt / "f", "3", "fsync"], ["rw-static", "read", mnt / "f"]):
            pre = {"nocache": [NOCACHE], "eatmydata": [EATMYDATA],
                   "syncstat": [SYNCSTAT, "-o", mnt.parent / f"{prog[0]}.txt", "--"]}[tool]
            r = runs([*(pre if under else []), TESTS / prog[0], *prog[1:]])
            assert r.returncode == 0, r.line + r.stderr
        seen.append(requests(log))
    native, under = seen
    flushes = [who for op, who in native if op == "flush"]
    assert flushes == ["fsyncs-static", "rw-static"], ("native control", native)
    assert [who for op, who in under if op == "flush"] == flushes, under
    assert not [r for r in under if r[1] == "eatmydata"], under
    if tool == "syncstat":  # its fsyncs the kernel's, counted, said untimed
        assert "3 calls, 3 counted, not timed" in (mnt.parent / "fsyncs-static.txt").read_text()


@pytest.mark.root
def test_a_number_reused_on_fuse_is_looked_at_again(fuse):
    """A static program fdatasyncs a file on ext4, closes it and opens one on
    FUSE, which takes the same descriptor number, and fdatasyncs that too.
    syncstat's supervisor made the first file's calls (timed) and looks at
    the number again at each request, so the second file's are the
    kernel's (counted, not timed): the server hears the program's requests
    alone, as natively.  What the supervisor knew of the number kept from
    one call to the next would have made a duplicate of the FUSE file, and
    its close a FLUSH the server sees."""
    mnt, log = fuse
    prog = [TESTS / "fsyncs-static", mnt.parent / "a", "3", "fdatasync", mnt / "b"]
    native = runs(prog)
    assert native.returncode == 0, native.line + native.stderr
    seen = requests(log)
    assert [who for op, who in seen if op == "flush"] == ["fsyncs-static"], ("native control", seen)
    out = mnt.parent / "report.json"
    r = runs([SYNCSTAT, "--json", "-o", out, "--", *prog])
    assert r.returncode == 0, r.line + r.stderr
    under = requests(log)
    assert [who for op, who in under if op == "flush"] == ["fsyncs-static"], under
    assert not [r for r in under if r[1] == "eatmydata"], under
    files = {f["path"]: (f["count"], f["timed"]) for f in json.loads(out.read_text())["files"]}
    assert files == {str(mnt.parent / "a"): (3, 3), str(mnt / "b"): (3, 0)}, r.line + str(files)


@pytest.mark.parametrize("tool", ["nocache", "crashtest"])
def test_file_size_limit_where_the_write_lands(tool, scratch, tmp_path):
    """1-byte writes at the file position under a 64 KiB limit, while
    another thread moves the position between 0 and 1 MiB: natively each
    write at 1 MiB fails (EFBIG).  The supervisor judged the limit at the
    position it saw, then wrote with its own, raised limit: writes landed
    at 1 MiB.  The limit is now the kernel's, at the write itself."""
    native = runs([BEHALF, "fsize", scratch / "f"])
    size = int(native.stdout.split()[1])
    assert native.stdout.startswith("size ") and size <= 64 << 10, "native control"
    if tool == "nocache":
        r = runs([NOCACHE, BEHALF, "fsize", scratch / "g"])
        out, line = r.stdout, r.line
    else:
        out, _, line = crashtest_run(tmp_path, "fsize", "f")
    assert out.startswith("size ") and int(out.split()[1]) <= 64 << 10, line + out


@pytest.mark.parametrize("tool", ["nocache", "crashtest"])
def test_memory_only_the_program_reaches(tool, scratch, tmp_path):
    """A read into, and a write from, memfd_secret's memory and perf's ring
    buffer: the kernel copies them for the program, but no other process
    reaches them (the supervisor's copy failed: EFAULT).  Such a call is the
    kernel's, and the run says it was not served."""
    data = os.urandom(16384)
    (scratch / "f").write_bytes(data)
    native = runs([BEHALF, "unreachable", scratch / "f"])
    assert "secret read 4096" in native.stdout or "secret none" in native.stdout, native
    assert "ring read 4096" in native.stdout, native
    want = (scratch / "f").read_bytes()
    if tool == "nocache":
        (scratch / "f").write_bytes(data)
        r = runs([NOCACHE, BEHALF, "unreachable", scratch / "f"])
        assert r.stdout == native.stdout and (scratch / "f").read_bytes() == want, r.line
        assert "(its pages stay cached): a buffer of memory only the program reaches" in r.stderr, \
            r.line + r.stderr
    else:
        out, unknown, line = crashtest_run(tmp_path, "unreachable", "f", files={"f": data})
        assert out == native.stdout, line + out
        assert any("memory only the program reaches" in w for w in unknown), (line, unknown)


def test_many_buffers_among_many_mappings(scratch):
    """One preadv of 256 buffers in a process of 20,000 mappings: the
    supervisor read the caller's maps once per buffer (2 s a call, and 30,000
    reads); once now.  The answer is the kernel's."""
    data = os.urandom(1 << 16)
    (scratch / "f").write_bytes(data)
    cmd = [BEHALF, "maps", scratch / "f", "20000", "256"]
    native = runs(cmd)
    assert native.stdout.startswith("maps 4096 "), native
    under = run([NOCACHE, *cmd], events=[("syscalls:sys_enter_read", None)])
    assert under.stdout == native.stdout, under.why()
    assert under.counts["syscalls:sys_enter_read"] < 3000, under.why()


DYNAMIC = TESTS / "behalf"


def points(d, *args, check="true"):
    """crashtest --json --each --seed=1 D -- behalf ARGS, dynamic (the
    library's) then static (the supervisor's): each (exit status, a line
    per point: the call it followed and its verdict, the command line).
    Under ASan the static build's alone, twice: a sanitized dynamic
    program cannot have crashtest's library before ASan's."""
    runs_ = []
    for prog in (BEHALF if SANITIZED else DYNAMIC, BEHALF):
        opts = ["--each", "--seed=1", f"--check={check}", d, "--", prog, *args]
        code, report = crash_report(*opts)
        runs_.append((code, [f"{p['after']}: {p['verdict']}" for p in report.points],
                      cmdline([CRASHTEST, "--json", *opts])))
    return runs_


@pytest.mark.parametrize("via", ["sendmsg", "sendmmsg", "vmsplice", "splice", "tee"])
@pytest.mark.parametrize("case", ["tell", "untold"])
def test_a_claim_once_it_went(case, via, tmp_path):
    """A program writes "committed" over its data, tells its peer so, then
    syncs: the telling is a claim, a crash point where the data may be lost
    (FAILED).  sendmmsg and vmsplice were never claims (a dynamic or static
    program's lie went unseen: ok), and under the supervisor a failed send
    was one (untold: the peer gone, EPIPE), where the library's run is ok:
    the static build's points and verdicts must be the dynamic build's, a
    claim only once the call succeeded."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "data").write_text("old data here\n")
    dynamic, static = points(d, case, via, check="grep -q committed data")
    assert dynamic[:2] == static[:2], dynamic[2] + "\n" + static[2]
    told = [line for line in dynamic[1] if line.startswith("a write to a pipe or socket")]
    if case == "tell" or via == "tee":  # tee's own pipe was filled by a splice, a claim
        assert told and dynamic[0] == 1, dynamic
    else:
        assert not told and dynamic[0] == 0, dynamic


@pytest.mark.root
@pytest.mark.parametrize("owner,answer", [(65534, "ok"), (12345, "Permission denied")],
                         ids=["the directory's owner's", "another user's"])
def test_create_over_a_file_in_a_sticky_directory(owner, answer, tmp_path, protected_regular):
    """open(O_CREAT | O_TRUNC) by root of a file in a sticky directory that
    anyone may write (nobody's): where the file is another user's, the
    kernel refuses it (EACCES) before it opens anything, and the library's
    run is ok; the supervisor left it to the kernel and the run was
    unknown.  It answers as the kernel, and truncates as it, where the file
    is the directory owner's."""
    d = tmp_path / "d"
    (d / "s").mkdir(parents=True)
    os.chown(d / "s", 65534, 65534)
    (d / "s").chmod(0o1777)
    (d / "s" / "f").write_text("x\n")
    os.chown(d / "s" / "f", owner, owner)
    dynamic, static = points(d, "creat", "s/f")
    assert dynamic[:2] == static[:2], dynamic[2] + "\n" + static[2]
    assert dynamic[0] == 0, dynamic
    r = runs([BEHALF, "creat", d / "s" / "f"])
    assert r.stdout == f"creat {answer}\n", "native control"
