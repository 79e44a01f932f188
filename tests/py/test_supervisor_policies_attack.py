# SPDX-License-Identifier: MIT
"""The supervisor's policies at the kernel's edges: what nocache's policy
makes for a static program (a read or a write with RWF_DONTCACHE, the data
copied to and from the caller's memory) must be what the kernel makes of
the same call natively, to the errno, the count, the file position and the
file's mode, or be left to the kernel.  Each case runs tests/c/rwedge.c
natively and under nocache and compares."""
import json
import os
import shutil
import struct
import subprocess
import tempfile

import pytest

from conftest import BUILD, TESTS, cmdline, require
from helpers import cached_bytes as cached

NOCACHE = BUILD / "bin" / "nocache"
EDGE = TESTS / "rwedge-static"
# The same built 32-bit (where gcc -m32 works): its calls are the compat
# ABI's, their arguments, iovecs and offsets 32 bits wide.
EDGE32 = TESTS / "rwedge32-static"
BITS = ["64", *(["32"] if EDGE32.exists() else [])]


def both(case, scratch, size=1 << 20, mode=None, bits="64"):
    """rwedge CASE on a file of `size` random bytes, natively then under
    nocache: (output, file bytes, file mode) of each."""
    data = os.urandom(size)
    out = []
    for pre in ([], [NOCACHE]):
        f = scratch / "f"
        f.write_bytes(data)
        if mode is not None:
            f.chmod(mode)
        cmd = [*pre, EDGE32 if bits == "32" else EDGE, case, f]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, cmdline(cmd) + r.stderr
        out.append((r.stdout, f.read_bytes(), f.stat().st_mode, cmdline(cmd)))
        f.unlink()
    return out


@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("case", ["partread", "partwrite"])
def test_buffer_partly_unmapped(case, bits, scratch):
    """A buffer whose second page is unmapped: natively the kernel reads or
    writes the first page and says so (a short count; EFAULT only when
    nothing moved), and the file position moves by what was copied."""
    native, served = both(case, scratch, bits=bits)
    assert "4096 ok" in native[0], "native control: a short count"
    assert served[0] == native[0], served[3]
    assert served[1] == native[1], served[3]


@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("case", ["big", "badlen"])
def test_counts_as_the_kernel_takes_them(case, bits, scratch):
    """A read or write of 20 MiB in one call on a regular file is whole, as
    natively; a count past the address space is EFAULT and an iov_len past
    SSIZE_MAX (a 32-bit caller's: past INT32_MAX) is EINVAL, with nothing
    read nor written into the caller."""
    native, served = both(case, scratch, size=24 << 20, bits=bits)
    assert served[0] == native[0], served[3]
    assert served[1] == native[1], served[3]


def sparse_runs(case, scratch, bits):
    """rwedge CASE on an empty file, natively then under nocache: (output,
    file size, cached bytes, command) of each (the file may be sparse and
    huge: it is not read)."""
    runs = []
    for pre in ([], [NOCACHE]):
        f = scratch / "f"
        f.write_bytes(b"")
        cmd = [*pre, EDGE32 if bits == "32" else EDGE, case, f]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, cmdline(cmd) + r.stderr
        fd = os.open(f, os.O_RDONLY)
        os.fsync(fd)  # written back: RWF_DONTCACHE's pages then dropped
        os.close(fd)
        runs.append((r.stdout, f.stat().st_size, cached(f), cmdline(cmd)))
        f.unlink()
    return runs


@pytest.mark.parametrize("bits", BITS)
def test_offsets_past_4gib(bits, scratch):
    """pread64, pwrite64, preadv and pwritev at 5 and 6 GiB (a 32-bit
    caller's offset is two arguments: the high word must be taken, and the
    low one, its top bit set, not as a sign) and at a negative offset
    (EINVAL): the same counts, data and file size as natively; and the
    pages written were the supervisor's to write (dropped; natively
    cached)."""
    native, served = sparse_runs("far", scratch, bits)
    assert f"size {6 * (1 << 30) + 12288}" in native[0], "native control: written at 6 GiB"
    assert native[2] >= 4 << 12, "native control: the pages written stay cached"
    assert served[:2] == native[:2], served[3]
    assert served[2] == 0, served[3]


@pytest.mark.skipif("32" not in BITS, reason="no 32-bit build (gcc -m32)")
def test_32bit_write_past_2gib_without_largefile(scratch):
    """A 32-bit program's file opened without O_LARGEFILE takes no byte
    past 2 GiB - 1: a write across is short, one past is EFBIG, at an
    offset or the file position, by each call.  The supervisor writes on
    the caller's own open file, whose flags the kernel checks, so it gets
    the same; and it did write (the 16 whole pages written are dropped,
    natively they stay cached)."""
    native, served = sparse_runs("efbig", scratch, "32")
    assert "pwrite-past -1 File too large" in native[0] and native[1] == (1 << 31) - 1, \
        "native control: EFBIG past 2 GiB - 1"
    assert native[2] == 17 << 12, "native control: the pages written stay cached"
    assert served[:2] == native[:2], served[3]
    assert served[2] <= 2 << 12, served[3]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a caller without CAP_FSETID)")
def test_write_clears_set_user_id_as_the_caller(scratch):
    """A write by a caller without CAP_FSETID clears the file's set-user-ID
    bit; made by a supervisor that has it, the bit would stay: such a write
    is the kernel's to make."""
    native, served = both("nofsetid", scratch, size=0, mode=0o4755)
    assert native[2] & 0o7777 == 0o755, "native control: the bit is cleared"
    assert served[2] & 0o7777 == native[2] & 0o7777, served[3]
    assert served[0] == native[0], served[3]


SYNCSTAT = BUILD / "bin" / "syncstat"


def test_hostile_gopclntab_costs_only_its_site(scratch, tmp_path):
    """syncstat names a call's site from the program's file, which the tree
    may craft: a .gopclntab (read without a .symtab) whose function count
    runs past its end must cost the record's site, not the supervisor
    (which died reading past its buffer: every later sync of the tree
    failed with ENOSYS)."""
    head = struct.pack("<IBBBB8Q", 0xFFFFFFF1, 0, 0, 1, 8, 50_000_000, 0, 0x401000, 0, 0, 0, 0,
                       72)
    (tmp_path / "pcln").write_bytes(head + b"\0" * 4)
    prog = tmp_path / "hostile"
    subprocess.run([require("objcopy"), "--strip-all", "--add-section",
                    f".gopclntab={tmp_path / 'pcln'}", TESTS / "fsyncs-static", prog], check=True)
    data = scratch / "data"
    native = subprocess.run([prog, data, "5", "fsync"], capture_output=True, timeout=60)
    assert native.returncode == 0, "native control: the program syncs"
    cmd = [SYNCSTAT, "-o", tmp_path / "report.txt", "--", prog, data, "5", "fsync"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, cmdline(cmd) + r.stderr


def test_thread_with_its_own_descriptor_table_before_pidfd_thread(scratch):
    """Before Linux 6.9 (emulated: pidfd_open refuses PIDFD_THREAD), a
    thread's descriptors are fetched through its process's pidfd only while
    the thread shares its process's table.  A thread that left it
    (unshare(CLONE_FILES)) and put another file at the same number must read
    its own file, not the process's (through a pidfd kept from before)."""
    f = scratch / "f"
    f.write_bytes(os.urandom(4096))
    native = subprocess.run([EDGE, "unshare", f], capture_output=True, text=True, timeout=60)
    assert native.stdout == "unshared 4 7f454c46\n", "native control: its own program"
    cmd = [EDGE, "oldpidfd", NOCACHE, EDGE, "unshare", f]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.stdout == native.stdout, cmdline(cmd) + r.stderr


@pytest.mark.parametrize("kernel", ["now", "before-5.19"])
def test_signalled_append_made_once(kernel, scratch):
    """Appends of 8 MiB while the writer is signalled all along (SA_RESTART):
    natively each is made once.  Without SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
    (before Linux 5.19, emulated: seccomp refuses the flag) a signal while the
    supervisor writes makes the caller ask again: the policy must leave such
    calls to the kernel."""
    f = scratch / "f"
    f.write_bytes(b"")
    native = subprocess.run([EDGE, "sigwrite", f], capture_output=True, text=True, timeout=60)
    assert native.stdout == f"sigwrite size {64 << 20}\n", "native control: 64 MiB"
    f.write_bytes(b"")
    cmd = [*([EDGE, "nokillable"] if kernel != "now" else []), NOCACHE, EDGE, "sigwrite", f]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.stdout == native.stdout, cmdline(cmd) + r.stderr


@pytest.mark.parametrize("field", ["unobserved", "schema"])
def test_compare_reads_a_hostile_report(field, tmp_path):
    """syncstat compare reads reports that anyone may have written (a CI
    artifact): an unobserved program's path (or a schema name) of 300000
    control characters is said, cut, as an error, not written past the
    buffer that puts it on one line (a segfault)."""
    long = "\x01" * 300000
    old = {"schema": "eatmydata.syncstat/4", "unobserved": [{"path": long, "why": "x"}]}
    if field == "schema":
        old = {"schema": long}
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps({"schema": "eatmydata.syncstat/4",
                                                   "unobserved": []}))
    cmd = [SYNCSTAT, "compare", tmp_path / "old.json", tmp_path / "new.json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 125 and "\\x01..." in r.stderr, cmdline(cmd)
    assert len(r.stderr) < 4096, cmdline(cmd)


@pytest.fixture
def setuid_root_euid():
    """rwedge-static as a set-user-ID root program, where any user may run
    it; it prints its effective user id."""
    d = tempfile.mkdtemp(prefix="emd-suid.")
    os.chmod(d, 0o755)
    prog = os.path.join(d, "euid")
    shutil.copy(EDGE, prog)
    os.chmod(prog, 0o4755)
    yield prog
    shutil.rmtree(d)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a set-user-ID root program)")
def test_failed_exec_leaves_setuid_privilege(setuid_root_euid):
    """A dynamic program under nocache, as another user, execs a static one
    with an argument past the kernel's 128 KiB (E2BIG), then a set-user-ID
    root program: that one runs as root, as natively.  The library put
    itself under the filter before the exec, with no_new_privs, which took
    the next program's privilege."""
    drop = [require("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups"]
    prog = [TESTS / "rwedge", "e2big", EDGE, setuid_root_euid]
    native = subprocess.run([*drop, *prog], capture_output=True, text=True, timeout=60)
    assert native.stdout == "exec Argument list too long\neuid 0\n", native
    cmd = [*drop, NOCACHE, *prog]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.stdout == native.stdout, cmdline(cmd) + r.stderr
