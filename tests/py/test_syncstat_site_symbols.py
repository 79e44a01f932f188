# SPDX-License-Identifier: MIT
"""The call sites syncstat's supervisor names for static programs, from each
program's own symbol table (seccomp/site.c): read once per module and kept,
so a module must be known again only if it is the same file (two programs
at one inode number on two file systems are not, nor a file rewritten in
place); and read from a file the tree may have crafted, so whatever its
headers claim costs at most a bounded amount of the supervisor's memory and
the site's name, never the supervisor or the program's fsync.

Each run is one tree under one filter (tests/c/fsyncthen.c runs the
programs in turn as its children), so that the same supervisor's workers
serve them all."""
import json
import os
import shutil
import struct
import subprocess
import tempfile
import uuid

import pytest

from conftest import BUILD, TESTS, cmdline, require
from helpers import first_line, supervisor_of

SYNCSTAT = BUILD / "bin" / "syncstat"
DRIVER = TESTS / "fsyncthen-static"
N = 5


def sites(cmd, tmp_path, **kw):
    """cmd under syncstat --json: {site: count}."""
    out = tmp_path / "r.json"
    full = [SYNCSTAT, f"--json={out}", "-o", tmp_path / "r.txt", "--", *cmd]
    r = subprocess.run(full, capture_output=True, text=True, timeout=120, **kw)
    assert r.returncode == 0, cmdline(full) + r.stderr
    return {s["site"]: s["count"] for s in json.loads(out.read_text())["sites"]}, cmdline(full)


def renamed(src, dst, name):
    """src with its function ask_here called `name` (as long), at dst."""
    assert len(name) == len("ask_here")
    subprocess.run([require("objcopy"), f"--redefine-sym=ask_here={name}", src, dst], check=True)


@pytest.fixture
def two_tmpfs():
    """Two fresh tmpfs mounts: each numbers its inodes from the same start."""
    d = tempfile.mkdtemp(prefix="emd-sites.")
    mounts = [os.path.join(d, m) for m in ("a", "b")]
    for m in mounts:
        os.mkdir(m)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0755", "tmpfs", m],
                       check=True)
    yield mounts
    for m in mounts:
        subprocess.run(["umount", m], check=True)
    shutil.rmtree(d)


@pytest.mark.root
def test_same_inode_number_on_two_file_systems(two_tmpfs, scratch, tmp_path):
    """Two programs, the first file of each of two tmpfs mounts (the same
    inode number, size and times), that fsync from functions of different
    names: each call is named by its own program's symbols.  Keyed by inode
    alone, the second program's calls took the first's names."""
    a, b = (os.path.join(m, "prog") for m in two_tmpfs)
    shutil.copy(DRIVER, a)
    renamed(DRIVER, b, "ask_hers")
    os.utime(b, ns=(os.stat(a).st_atime_ns, os.stat(a).st_mtime_ns))
    sa, sb = os.stat(a), os.stat(b)
    assert sa.st_ino == sb.st_ino and sa.st_dev != sb.st_dev, "one inode number, two devices"
    got, cmd = sites([DRIVER, scratch / "f", "0", "run", a, str(N), "run", b, str(N)], tmp_path)
    assert {s.split(" ")[0]: c for s, c in got.items()} == {"ask_here": N, "ask_hers": N}, \
        cmd + json.dumps(got)


def test_file_rewritten_in_place(scratch, tmp_path):
    """A program run, then rewritten in place (the same inode: another
    function's name, a new modification time) and run again: its second
    calls are named from what the file holds now."""
    prog, other = scratch / "prog", scratch / "other"
    shutil.copy(DRIVER, prog)
    renamed(DRIVER, other, "ask_hers")
    ino = prog.stat().st_ino
    got, cmd = sites([DRIVER, scratch / "f", "0", "run", prog, str(N), "cp", other, prog,
                      "run", prog, str(N)], tmp_path)
    assert prog.stat().st_ino == ino, "rewritten in place"
    assert {s.split(" ")[0]: c for s, c in got.items()} == {"ask_here": N, "ask_hers": N}, \
        cmd + json.dumps(got)


# Crafted section headers: (name, how to change the program's .symtab,
# .strtab and ELF header, the site's reason when the module is not named).
SHT_SYMTAB = 2


def elf_headers(data):
    """(e_shoff, e_shnum, e_shstrndx, [section header fields])."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3c)
    return shoff, shnum, shstrndx, [list(struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i))
                                    for i in range(shnum)]


def set_section(data, i, fields):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<IIQQQQIIQQ", data, shoff + 64 * i, *fields)


def crafted(data, how):
    """The program's bytes, its symbol table made hostile as `how` says."""
    data = bytearray(data)
    _, shnum, _, sh = elf_headers(data)
    i = next(k for k, s in enumerate(sh) if s[1] == SHT_SYMTAB)
    sym, strtab = sh[i], sh[sh[i][6]]
    if how == "symtab_past_file":  # sh_size far past the file
        sym[5] = 1 << 40
    elif how == "symtab_offset_wraps":  # offset + size past 2^64
        sym[4] = (1 << 64) - 16
    elif how == "symtab_after_end":  # a table the file does not hold
        sym[4] = len(data) + 4096
    elif how == "link_out_of_range":
        sym[6] = 0xFFFF
    elif how == "symtab_over_strtab":  # overlapping: names read as symbols
        sym[4] = strtab[4]
    elif how == "strtab_without_nul":  # its last name runs to its end
        strtab[5] -= 1
        set_section(data, sym[6], strtab)
    elif how == "strtab_huge":
        strtab[5] = 1 << 40
        set_section(data, sym[6], strtab)
    elif how == "headers_past_file":
        struct.pack_into("<Q", data, 0x28, len(data) + 1)
    elif how == "many_sections":
        struct.pack_into("<H", data, 0x3c, 0xFFFF)
    elif how == "two_symtabs":  # .comment a table past the file, before .symtab
        k = next(k for k, s in enumerate(sh) if s[1] == 1 and s[4] and not s[3] and k < i)
        set_section(data, k, [sh[k][0], SHT_SYMTAB, 0, 0, len(data) + 4096, 4096, sym[6], 0, 8,
                              24])
    elif how == "millions_of_functions":  # 2^21 functions, each named
        entry = struct.pack("<IBBHQQ", 1, 0x12, 0, 1, 0x401000, 16)
        sym[4], sym[5] = len(data), len(entry) << 21
        data += entry * (1 << 21)
    if how not in ("strtab_without_nul", "strtab_huge", "headers_past_file", "many_sections"):
        set_section(data, i, sym)
    return bytes(data)


HOSTILE = {"symtab_past_file": "too many symbols", "symtab_offset_wraps": "no symbols",
           "symtab_after_end": "no symbols", "link_out_of_range": "no symbols",
           "symtab_over_strtab": None, "strtab_without_nul": None,
           "strtab_huge": "too many symbols", "headers_past_file": "no symbols",
           "many_sections": "no symbols", "millions_of_functions": "too many symbols"}


def with_gopclntab(prog, tmp_path):
    """prog with a .gopclntab of one function, ask.here, at 0x401000."""
    head = struct.pack("<IBBBB8Q", 0xFFFFFFF1, 0, 0, 1, 8, 1, 0, 0x401000, 96, 0, 0, 0, 72)
    table = struct.pack("<IIIIII", 0, 16, 0x100, 0, 0, 0) + b"ask.here\0"
    (tmp_path / "pcln").write_bytes(head + table)
    out = tmp_path / "with-pcln"
    subprocess.run([require("objcopy"), "--add-section", f".gopclntab={tmp_path / 'pcln'}",
                    prog, out], check=True)
    return out.read_bytes()


def test_symbols_read_within_bounds_and_freed(scratch, tmp_path):
    """Each crafted module read by a thread that then leaves, as a worker
    does (tests/c/symbols.c, site.c's allocations counted): no more than
    the bound at once (2^19 functions, 12 MiB, and 32 MiB of names: 48 MiB
    with a growing array's copy), and nothing left once the thread left.
    A table that could not be read, followed by a .gopclntab, left its
    names behind; so did each worker's modules when it left."""
    files = [DRIVER]
    for how in [*HOSTILE, "two_symtabs"]:
        files.append(scratch / how)
        files[-1].write_bytes(crafted(DRIVER.read_bytes(), how))
    files.append(scratch / "gopclntab_after_bad_symtab")
    files[-1].write_bytes(crafted(with_gopclntab(DRIVER, tmp_path), "symtab_after_end"))
    cmd = [TESTS / "symbols", *files]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, cmdline(cmd) + r.stderr
    lines = dict(line.rsplit(": ", 1) for line in r.stdout.splitlines()[:-1])
    assert r.stdout.splitlines()[-1] == "live 0", cmdline(cmd) + r.stdout
    for f, what in lines.items():
        assert int(what.split("peak ")[1]) < 48 << 20, cmdline(cmd) + r.stdout
    assert lines[str(DRIVER)].startswith(("1", "2", "3")), r.stdout  # a thousand and more
    assert lines[str(scratch / "millions_of_functions")].startswith("0 functions, too many 1")
    assert lines[str(scratch / "gopclntab_after_bad_symtab")].startswith("1 functions,"), \
        r.stdout


@pytest.mark.parametrize("how", list(HOSTILE))
def test_hostile_symbol_table(how, scratch, tmp_path):
    """A program whose section headers lie (sizes past the file, an offset
    that wraps, a link to no section, overlapping sections, names without
    their NUL, 2 million functions) fsyncs as natively, its site named or
    said why not; a sound program after it in the same tree is named (the
    supervisor lives on)."""
    prog = scratch / "hostile"
    prog.write_bytes(crafted(DRIVER.read_bytes(), how))
    prog.chmod(0o755)
    native = subprocess.run([prog, scratch / "f", str(N)], capture_output=True, timeout=60)
    assert native.returncode == 0, "native control: the crafted program runs"
    got, cmd = sites([DRIVER, scratch / "f", "0", "run", prog, str(N), "run", DRIVER, str(N)],
                     tmp_path)
    assert sum(got.values()) == 2 * N, cmd + json.dumps(got)
    assert got.get(next(s for s in got if s.startswith("ask_here")), 0) >= N, cmd + json.dumps(got)
    if HOSTILE[how]:
        assert [c for s, c in got.items() if f"(system call: {HOSTILE[how]})" in s] == [N], \
            cmd + json.dumps(got)


def supervisor_peak(cmd, scratch):
    """The peak resident memory (VmHWM, kB) of the supervisor serving cmd
    (fsyncthen ... pause), read while the tree waits."""
    tag = uuid.uuid4().hex
    full = [SYNCSTAT, "-o", scratch / "r.txt", "--", *cmd, "pause"]
    # A sanitized build's freed memory would stay resident in ASan's quarantine.
    asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "quarantine_size_mb=0"]))
    p = subprocess.Popen(full, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ, EMD_TEST_TAG=tag, ASAN_OPTIONS=asan))
    try:
        assert first_line(p) == "paused\n", cmdline(full)
        sup = supervisor_of(p, f"EMD_TEST_TAG={tag}")
        status = open(f"/proc/{sup}/status").read()
        p.communicate("\n", timeout=30)
    finally:
        p.kill()
    assert p.returncode == 0, cmdline(full)
    return int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith("VmHWM:")))


@pytest.mark.root
def test_millions_of_functions_cost_bounded_memory(scratch):
    """2 million functions in a 48 MiB symbol table: the supervisor reads
    it a piece at a time and stops at its bound (2^19 functions, 12 MiB),
    its peak within 40 MiB of what a sound program costs it (the control).
    All of it was read and kept, twice over: 100 MiB and more."""
    prog = scratch / "hostile"
    prog.write_bytes(crafted(DRIVER.read_bytes(), "millions_of_functions"))
    prog.chmod(0o755)
    sound = supervisor_peak([DRIVER, scratch / "f", "0", "run", DRIVER, str(N)], scratch)
    hostile = supervisor_peak([DRIVER, scratch / "f", "0", "run", prog, str(N)], scratch)
    assert hostile - sound < 40 << 10, f"{hostile} kB against {sound} kB"
