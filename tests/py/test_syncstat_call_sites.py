# SPDX-License-Identifier: MIT
"""syncstat's call sites against the kernel's own view: strace -f -k, which
stops each durability call and unwinds its stack (libdw, the module's
.eh_frame) from the registers, run on the same tree as syncstat so that
both see the same calls.  A site is the first frame outside the C library,
the Go runtime and its system call packages (and the preload library, whose
wrapper strace sees in between): its function, its module named by its
file, and its address there (the return address, as linked).

The supervisor (static and Go programs) unwinds from outside with the
module's own tables; where they cannot say (a frame found from a register
it does not know), the site says so.  An ordinary user's run names its
sites as root's does."""
import collections
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import cmdline, go_build, require
from helpers import SYNCSTAT

STRACE_FRAME = re.compile(r"^ > (\S+?)\((\S*?)\) \[0x([0-9a-f]+)\]$")
PLUMBING = ("libc.so.6", "libeatmydata.so")


def strace_stacks(path, lines=None):
    """[(call, [(module's file name, function, address)])] from strace -k's
    output at path: each call with its stack, printed when it returns (a
    call's line, or its "<... call resumed>"); a signal's stack has no
    call (None).  With `lines`, a list, each call's line is put there."""
    stacks = []
    for line in Path(path).read_text().splitlines():
        frame = STRACE_FRAME.match(line)
        if frame:
            stacks[-1][1].append((os.path.basename(frame[1]), frame[2], int(frame[3], 16)))
        elif "<unfinished ...>" not in line:
            m = re.match(r"^\d+ +(?:<\.\.\. )?(\w+)(?:\(| resumed>)", line)
            stacks.append((m[1] if m else None, []))
            if lines is not None:
                lines.append(line)
    return stacks


def strace_sites(path, calls):
    """{(module, address): count}: each of the calls' first frame outside
    the C library and the preload library, as strace -k saw it."""
    sites = collections.Counter()
    for call, frames in strace_stacks(path):
        if call in calls:
            outside = [f for f in frames if f[0] not in PLUMBING]
            sites[(outside[0][0], outside[0][2]) if outside else None] += 1
    return sites


def linked(elf, offset):
    """The address as linked of a file offset of elf (strace -k gives
    offsets), from its loaded segments."""
    out = subprocess.run(["readelf", "-lW", elf], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and int(f[1], 16) <= offset < int(f[1], 16) + int(f[4], 16):
            return offset - int(f[1], 16) + int(f[2], 16)
    raise AssertionError(f"{elf}: no segment holds offset {offset:#x}")


def syncstat_sites(json_file):
    """{(module, address): count} of syncstat's JSON report, from each
    site's "module+0xaddress symbol"."""
    sites = collections.Counter()
    for s in json.loads(Path(json_file).read_text())["sites"]:
        m = re.match(r"^(.+)\+0x([0-9a-f]+)( |$)", s["site"])
        sites[(m[1], int(m[2], 16)) if m else s["site"]] += s["count"]
    return sites


PG_RUN = """set -e
"$2/pg_ctl" -D "$1/data" -o "-k $1 -c listen_addresses=''" -w -l "$1/log" start >/dev/null
for i in 1 2 3 4 5; do
  "$2/psql" -h "$1" -U postgres -d postgres -qc "create table if not exists t(x int);
    insert into t values ($i);"
done
"$2/pg_ctl" -D "$1/data" -w stop >/dev/null
"""


@pytest.fixture
def pg_dir():
    """A directory of postgres's in /tmp (postgres cannot reach the test's
    own) and PostgreSQL's programs' directory; a server left running is
    stopped."""
    d = Path("/tmp") / f"syncstat-sites-{os.getpid()}"
    d.mkdir(mode=0o700)
    bin_dir = Path(require("pg_ctl")).resolve().parent
    as_postgres = [require("setpriv"), "--reuid=postgres", "--regid=postgres", "--init-groups",
                   "--"]
    subprocess.run(["chown", "postgres:postgres", d], check=True)
    subprocess.run([*as_postgres, bin_dir / "initdb", "-A", "trust", "-U", "postgres", "-D",
                    d / "data"], check=True, capture_output=True, timeout=120, cwd="/tmp")
    yield d, bin_dir, as_postgres
    subprocess.run([*as_postgres, bin_dir / "pg_ctl", "-D", d / "data", "-m", "immediate",
                    "stop"], capture_output=True, timeout=60, cwd="/tmp")
    subprocess.run(["rm", "-rf", d], check=True)


@pytest.mark.postgres
@pytest.mark.root
def test_postgres_sites_are_its_own_file_and_addresses(shared_lib, pg_dir):
    """PostgreSQL (dynamic: the library names its sites) sets its process
    title over argv[0], which dladdr gives as the program's file name: each
    site is named by the file, postgres, one row per address, and the rows
    are strace -k's, call for call.  Named by dladdr, the WAL's fdatasync
    at one address came out as a row per backend's title ("postgres:
    checkpointer", "postgres: postgres postgres [local] INSERT")."""
    d, bin_dir, as_postgres = pg_dir
    cmd = [*as_postgres, require("strace"), "-f", "-k", "-o", d / "strace",
           "-e", "trace=fsync,fdatasync,sync_file_range",
           shared_lib / "bin" / "syncstat", f"--json={d}/r.json", "-o", d / "r.txt", "--",
           "sh", "-c", PG_RUN, "sh", d, bin_dir]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd="/tmp")
    assert r.returncode == 0, cmdline(cmd) + r.stderr
    ours = syncstat_sites(d / "r.json")
    kernel = collections.Counter({(m, linked(bin_dir / m, a)): n for (m, a), n in strace_sites(
        d / "strace", ("fsync", "fdatasync", "sync_file_range")).items()})
    assert {m for m, _ in ours} == {"postgres"}, ours
    assert ours == kernel and sum(ours.values()) > 20, (ours, kernel)


C_SOURCE = r"""
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#define KEEP __asm__ volatile("" ::: "memory") /* no tail call: the function stays on the stack */

__attribute__((noinline)) int open_it(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_SYNC, 0600);

	KEEP;
	return fd;
}

__attribute__((noinline)) int save_it(int fd)
{
	int r = fsync(fd);

	KEEP;
	return r;
}

/* A name C reserves (plumbing to syncstat) and a frame found from its
 * frame pointer, whose value at the system call no table gives. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) int __framed(int fd, int n)
{
	char *pad = __builtin_alloca(n);
	int r;

	pad[0] = 0;
	r = fsync(fd + pad[0]);
	KEEP;
	return r;
}

int main(int argc, char **argv)
{
	int fd;

	printf("%s\n", argv[1]); /* stdio's frames, left below main's */
	fd = open_it(argv[1]);
	if (fd < 0 || write(fd, "x", 1) != 1 || save_it(fd) != 0)
		return 1;
	if (argc > 2 && __framed(fd, argc * 16) != 0)
		return 1;
	return 0;
}
"""


@pytest.fixture(scope="module")
def c_programs(tmp_path_factory):
    """The C program above, static: {"static-pie": path, "static": path}."""
    d = tmp_path_factory.mktemp("sites-c")
    (d / "sites.c").write_text(C_SOURCE)
    progs = {}
    for how in ("static-pie", "static"):
        progs[how] = d / f"sites-{how}"
        subprocess.run([require("gcc"), "-O2", "-g", f"-{how}", "-o", progs[how], d / "sites.c"],
                       check=True)
    d.chmod(0o755)
    return progs


@pytest.fixture(scope="module")
def go_commit(tmp_path_factory):
    """tests/go/commit.go, static."""
    return go_build(tmp_path_factory, "commit.go", "commit")


def traced(cmd, d):
    """cmd under strace -f -k and syncstat at once: (syncstat's sites by
    text, strace's stacks)."""
    full = [require("strace"), "-f", "-k", "-o", d / "strace", "-e", "trace=openat,write,fsync",
            SYNCSTAT, f"--json={d}/r.json", "-o", d / "r.txt", "--", *cmd]
    r = subprocess.run(full, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, cmdline(full) + r.stderr
    sites = {s["site"]: s["count"] for s in json.loads((d / "r.json").read_text())["sites"]}
    return sites, strace_stacks(d / "strace"), cmdline(full)


def program_frames(stacks, prog, calls):
    """{(call, the first function of strace's stack that is one of
    `calls`' callers named there, its address as linked)}: the calls that
    the program (its own module holds the system call) made."""
    found = collections.Counter()
    for call, frames in stacks:
        if frames and frames[0][0] == prog.name and call in calls:
            name, off = next((f[1], f[2]) for f in frames if re.match(calls[call], f[1]))
            found[(call, re.sub(r"\+0x[0-9a-f]+$", "", name), linked(prog, off))] += 1
    return found


def test_static_c_sites_are_the_kernels(c_programs, tmp_path):
    """A static C program (position-independent: strace -k cannot unwind
    an ET_EXEC one) prints, then opens a file O_SYNC from open_it, writes it
    from main (a write the file syncs) and fsyncs it from save_it: each site
    is the function and return address strace -k finds first above the C
    library's.  Taken from the words of the stack, the open's site was the
    C library's _IO_file_xsputn, left there by printf."""
    prog = c_programs["static-pie"]
    sites, stacks, cmd = traced([prog, tmp_path / "f"], tmp_path)
    # printf's write to standard output (through stdio's _IO_ functions)
    # syncs nothing: not a call.
    stacks = [s for s in stacks if s[0] != "write" or
              not any(f[1].startswith("_IO") for f in s[1])]
    kernel = program_frames(stacks, prog, {"openat": "open_it", "write": "main",
                                           "fsync": "save_it"})
    assert sorted(n for _, n, _ in kernel) == ["main", "open_it", "save_it"], kernel
    assert {f"{n} ({prog.name}+{a:#x})" for _, n, a in kernel} == set(sites), (cmd, sites, kernel)


@pytest.mark.parametrize("pie", ["-pie", "-no-pie"])
def test_dynamic_c_sites_are_the_kernels(pie, tmp_path):
    """The same program, dynamic (the library names its sites): the O_SYNC
    open, the write on it and the fsync each at the function and address
    as linked that strace -k finds first above the C library (and the
    library's wrapper) -- for a program not built position-independent
    too, whose addresses dladdr counted from its first mapping."""
    (tmp_path / "sites.c").write_text(C_SOURCE)
    prog = tmp_path / "sites"
    subprocess.run([require("gcc"), "-O2", "-g", pie, "-o", prog, tmp_path / "sites.c"],
                   check=True)
    full = [require("strace"), "-f", "-k", "-o", tmp_path / "strace", "-e",
            "trace=openat,write,fsync", SYNCSTAT, f"--json={tmp_path}/r.json", "-o",
            tmp_path / "r.txt", "--", prog, tmp_path / "f"]
    r = subprocess.run(full, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, cmdline(full) + r.stderr
    lines = []
    stacks = strace_stacks(tmp_path / "strace", lines)
    kernel = collections.Counter()
    for line, (call, frames) in zip(lines, stacks):
        mine = [f for f in frames if f[0] not in PLUMBING]
        if call and mine and mine[0][0] == prog.name and (
                "O_SYNC" in line or re.search(r"^\d+ +(write|fsync)\(3\b", line)):
            kernel[(call, mine[0][1].split("+")[0], linked(prog, mine[0][2]))] += 1
    assert sorted(n for _, n, _ in kernel) == ["main", "open_it", "save_it"], kernel
    ours = syncstat_sites(tmp_path / "r.json")
    assert ours == collections.Counter({(prog.name, a): 1 for _, _, a in kernel}), \
        (cmdline(full), ours, kernel)


@pytest.mark.go
def test_go_site_is_the_kernels(go_commit, tmp_path):
    """A Go program fsyncs from main.commit right after a deeper call left
    its return addresses on the stack: the site is main.commit at the
    return address strace -k finds, for each of the 20 calls.  Taken from
    the words of the stack, it was main.stamp."""
    sites, stacks, cmd = traced([go_commit, tmp_path / "f", "20"], tmp_path)
    kernel = program_frames(stacks, go_commit, {"fsync": r"main\."})
    assert [(n, c) for (_, n, _), c in kernel.items()] == [("main.commit", 20)], kernel
    [(_, _, addr)] = kernel
    assert sites == {f"main.commit ({go_commit.name}+{addr:#x})": 20}, (cmd, sites)


def test_a_frame_not_unwound_says_so(c_programs, scratch, tmp_path):
    """A frame the walk must pass (a name reserved to the implementation)
    whose caller is found from its frame pointer, which no table gives at
    the system call: the site is the system call's address, and says why,
    not a guess; the program's other sites are named."""
    prog = c_programs["static"]
    r = subprocess.run([SYNCSTAT, f"--json={tmp_path}/r.json", "-o", tmp_path / "r.txt", "--",
                        prog, scratch / "f", "framed"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    sites = {s["site"]: s["count"] for s in json.loads((tmp_path / "r.json").read_text())["sites"]}
    unwound = [s for s in sites if s.startswith(("open_it (", "main (", "save_it ("))]
    said = [s for s in sites if s not in unwound]
    assert len(unwound) == 3 and len(said) == 1, sites
    assert re.fullmatch(rf"{prog.name}\+0x4[0-9a-f]+ \(system call: not unwound: "
                        r"frame pointer unknown\)", said[0]), sites


def return_address(prog, caller, callee):
    """The address just past caller's call of callee in prog (objdump)."""
    out = subprocess.run([require("objdump"), "-d", "--no-show-raw-insn", prog],
                         capture_output=True, text=True, check=True).stdout
    block = out.split(f"<{caller}>:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    at = next(i for i, line in enumerate(block) if re.search(rf"call .*<{callee}(@plt)?>", line))
    return int(block[at + 1].split(":")[0], 16)


MUSL_SOURCE = r"""
#include <fcntl.h>
#include <unistd.h>

__attribute__((noinline)) int save_it(int fd)
{
	int r = fsync(fd);

	__asm__ volatile("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	return argc > 1 ? save_it(open(argv[1], O_WRONLY | O_CREAT, 0600)) : 2;
}
"""


@pytest.mark.parametrize("how", ["static", "dynamic"])
def test_a_guess_says_it_is_one(how, tmp_path):
    """musl's C library is built without unwind tables (strace -k stops at
    its fsync too): what is left is a guess, the first word of the stack
    that is an address in a function of the program's, said to be one
    ("save_it? (...: a guess: no unwind table)"); here it is save_it's
    return address."""
    (tmp_path / "m.c").write_text(MUSL_SOURCE)
    prog = tmp_path / "m"
    subprocess.run([require("musl-gcc"), "-O2", "-g", *(["-static"] if how == "static" else []),
                    "-o", prog, tmp_path / "m.c"], check=True)
    cmd = [SYNCSTAT, f"--json={tmp_path}/r.json", "-o", "/dev/null", "--", prog, tmp_path / "f"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, cmdline(cmd) + r.stderr
    sites = [s["site"] for s in json.loads((tmp_path / "r.json").read_text())["sites"]]
    ret = return_address(prog, "save_it", "fsync")
    assert len(sites) == 1 and re.fullmatch(
        rf"save_it\? \(m\+{ret:#x}, a guess: no unwind (table|entry)\)", sites[0]), (cmd, sites)


@pytest.mark.go
def test_an_ordinary_user_names_sites_as_root_does(c_programs, go_commit, other_user, tmp_path):
    """A static C program and a Go one, with their symbols, run by an
    ordinary user (who may not follow /proc/PID/map_files' links): the
    same sites as root's run, named, at the same addresses; a stripped
    copy's sites the same system call addresses as root's."""
    d = Path("/tmp") / f"syncstat-sites-user-{os.getpid()}"
    d.mkdir(mode=0o755)
    try:
        c_prog, go_prog, stripped = d / "sites-static", d / go_commit.name, d / "stripped"
        shutil.copy(c_programs["static"], c_prog)
        shutil.copy(go_commit, go_prog)
        subprocess.run(["strip", "-o", stripped, c_prog], check=True)
        shutil.chown(d, other_user)
        runs = {}
        for who in ("root", other_user):
            for prog, args in ((c_prog, []), (go_prog, ["3"]), (stripped, [])):
                as_who = [] if who == "root" else [require("setpriv"), f"--reuid={other_user}",
                                                   f"--regid={other_user}", "--clear-groups", "--"]
                out = d / f"{who}-{prog.name}.json"
                cmd = [*as_who, SYNCSTAT, f"--json={out}", "-o", "/dev/null", "--", prog,
                       d / f"{who}.f", *args]
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd="/tmp")
                assert r.returncode == 0, cmdline(cmd) + r.stderr
                runs[who, prog.name] = {s["site"]: s["count"] for s in json.loads(
                    out.read_text())["sites"]}
    finally:
        shutil.rmtree(d)
        # The run's supervisor has ended with the tree, but may not have been
        # reaped yet (by init: its parent left first); userdel refuses then.
        deadline = time.monotonic() + 10
        while subprocess.run(["pgrep", "-u", other_user], capture_output=True).returncode == 0 \
                and time.monotonic() < deadline:
            time.sleep(0.05)
    for prog in ("sites-static", go_commit.name, "stripped"):
        assert runs[other_user, prog] == runs["root", prog], (prog, runs)
    # Addresses as linked: an ET_EXEC program's are its own (0x4...), not
    # offsets from where it is mapped.
    assert all(re.fullmatch(r"stripped\+0x4[0-9a-f]{5} \(system call: no symbols\)", s)
               for s in runs["root", "stripped"]), runs
    assert all(s.startswith("main.commit (") for s in runs["root", go_commit.name]), runs
    assert sorted(s.split(" ")[0] for s in runs["root", "sites-static"]) == \
        ["main", "open_it", "save_it"], runs
