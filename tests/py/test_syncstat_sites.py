# SPDX-License-Identifier: MIT
"""Call sites named by function and source line, from the debug information
of their module found by the build id recorded at run time: a program built
with -g; a stripped copy, named only once its debug file is installed under
/usr/lib/debug/.build-id (after the run: the report reads the kept
records); a forged module path (a FIFO) is never opened.  And the unwind
tables the supervisor walks a static program's stack with, crafted: the
calls are counted and named or said why not, and the supervisor lives on
(here because this file runs under ASan and UBSan in CI too)."""
import json
import os
import random
import re
import shutil
import struct
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import TESTS, cmdline, require
from helpers import HEADER, REC_VERSION, SYNCSTAT

SOURCE = r'''
#include <fcntl.h>
#include <unistd.h>
__attribute__((noinline)) static void save_it(int fd)
{
	fsync(fd); /* line 6 */
}
__attribute__((used)) static const char salt[] = "%s";
int main(int argc, char **argv)
{
	int fd = open(argc > 1 ? argv[1] : "/dev/null", O_WRONLY | O_CREAT, 0600);

	save_it(fd);
	return 0;
}
'''


def syncstat(*args):
    cmd = [SYNCSTAT, *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{cmdline(cmd)}\n{r.stderr}"
    return r


def build_id(elf):
    notes = subprocess.run(["readelf", "-n", elf], capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)


@pytest.fixture
def program(tmp_path):
    """sites.c built with -g (a build id of its own: the salt)."""
    require("gcc"), require("objcopy")
    src = tmp_path / "sites.c"
    src.write_text(SOURCE % uuid.uuid4().hex)
    prog = tmp_path / "prog"
    subprocess.run(["gcc", "-g", "-O1", "-o", prog, src], check=True)
    return prog


def sites(json_file):
    return json.loads(Path(json_file).read_text())["sites"]


def test_a_program_with_debug_information(program, tmp_path):
    r = syncstat(f"--json={tmp_path}/r.json", program, tmp_path / "f")
    [site] = sites(tmp_path / "r.json")
    assert site["function"] == "save_it", site
    assert site["source"] == f"{tmp_path}/sites.c:6", site
    assert "prog+0x" in r.stderr and f": save_it at {tmp_path}/sites.c:6\n" in r.stderr, r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="installs a debug file in /usr/lib/debug")
def test_a_stripped_program_named_once_its_debug_file_is_installed(program, tmp_path):
    """The run of the stripped program is kept; its report names nothing
    (the control); with the debug file installed where Debian's -dbgsym
    packages put theirs, the same kept run is named."""
    stripped, debug = tmp_path / "stripped", tmp_path / "prog.debug"
    subprocess.run(["objcopy", "--only-keep-debug", program, debug], check=True)
    shutil.copy(program, stripped)
    subprocess.run(["strip", "--strip-all", stripped], check=True)
    bid = build_id(stripped)
    assert bid == build_id(debug)
    keep = tmp_path / "kept"
    syncstat("--keep", keep, stripped, tmp_path / "f")
    syncstat("report", f"--json={tmp_path}/before.json", keep)
    [site] = sites(tmp_path / "before.json")
    assert site["function"] is None and site["source"] is None, site
    installed = Path("/usr/lib/debug/.build-id") / bid[:2] / (bid[2:] + ".debug")
    installed.parent.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copy(debug, installed)
        r = syncstat("report", f"--json={tmp_path}/after.json", keep)
    finally:
        installed.unlink()
    [site] = sites(tmp_path / "after.json")
    assert site["function"] == "save_it" and site["source"] == f"{tmp_path}/sites.c:6", site
    assert ": save_it at " in r.stderr, r.stderr


# record.h's slot, with the site's build id, its length and address.
SLOT = struct.Struct("<IIiiiiqQQ" "QQQQQII" "QQ" "i28s256s80s20sIQ")


def test_a_forged_module_path_is_not_opened(program, tmp_path):
    """A MODULE record naming a FIFO (or a link to the program): the report
    neither blocks on it nor follows the link, and names nothing."""
    bid = bytes.fromhex(build_id(program))
    fifo, link = tmp_path / "fifo", tmp_path / "link"
    os.mkfifo(fifo)
    link.symlink_to(program)
    for path in (fifo, link):
        d = tmp_path / f"dir-{path.name}" / "r"
        d.mkdir(parents=True)
        data = bytearray(4096 + 4 * 512)
        HEADER.pack_into(data, 0, b"EMDREC01", REC_VERSION, 512, 4, 2, 0)
        SLOT.pack_into(data, 4096, 2, 0, 7, 1, 0, 0, 0, 0, 1000, 0, 0, 0, 0, 0, 0o100644,
                       0, 0, 0, 7, b"prog", b"/f", b"prog+0x1139", bid, len(bid), 0x1139)
        SLOT.pack_into(data, 4096 + 512, 2, 15, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                       0, 0, 0, 7, b"prog", str(path).encode(), b"prog", bid, len(bid), 0)
        (d / "records").write_bytes(bytes(data))
        (d / "run").write_text("status 0\nwall 0.5\n")
        syncstat("report", f"--json={tmp_path}/forged.json", d)
        [site] = sites(tmp_path / "forged.json")
        assert site["function"] is None, (path, site)


def test_a_module_others_can_write_is_not_read(program, tmp_path):
    """The kept run names the site (the control) until the program becomes
    writable by others: then whoever could write it chooses what the report
    reads, and it is left alone."""
    keep = tmp_path / "kept"
    syncstat("--keep", keep, "--output", "/dev/null", program, tmp_path / "f")
    syncstat("report", f"--json={tmp_path}/ok.json", keep)
    assert sites(tmp_path / "ok.json")[0]["function"] == "save_it"
    program.chmod(0o777)
    syncstat("report", f"--json={tmp_path}/open.json", keep)
    assert sites(tmp_path / "open.json")[0]["function"] is None


# The supervisor's unwind tables, crafted: a static program's .eh_frame with
# bytes changed at random (lengths, CIE pointers, encodings, instructions:
# an advance past the table, remembered states past its bound), and a
# .gopclntab of random function records added to it, which makes it a Go
# module to the supervisor (frame sizes, flags, tables of values past the
# section).
DRIVER = TESTS / "fsyncthen-static"
N = 3


def section(elf, name):
    """(file offset, size) of section `name` of elf."""
    for line in subprocess.run(["readelf", "-SW", elf], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == name:
            return int(f[4], 16), int(f[5], 16)
    raise AssertionError(f"{elf}: no {name}")


def hostile_unwind(how, seed, tmp_path):
    """DRIVER with its unwind tables made hostile, at tmp_path/hostile: 4,
    8, 16 or 32 bytes of its .eh_frame changed (more, and the first length
    changed ends the table); or a .gopclntab added whose function table
    covers the program's text in order, each record, frame size table and
    flag random."""
    rng = random.Random(seed)
    out = tmp_path / "hostile"
    if how == "eh_frame":
        data = bytearray(DRIVER.read_bytes())
        off, size = section(DRIVER, ".eh_frame")
        for _ in range(4 << seed):
            data[off + rng.randrange(size)] = rng.choice([0, 0x0a, 0x0b, 0x0f, 0x40, 0x7f, 0xff,
                                                          rng.randrange(256)])
        out.write_bytes(bytes(data))
    else:
        nfunc, size = 512, 1 << 16
        entries = sorted(rng.sample(range(0x80000), nfunc + 1))
        head = struct.pack("<IBBBB8Q", 0xFFFFFFF1, 0, 0, 1, 8, nfunc, 0, 0x401000, 72, 0, 0, 72,
                           72)
        table = b"".join(struct.pack("<II", e, rng.randrange(size)) for e in entries)
        table += bytes(rng.randrange(256) for _ in range(size))
        (tmp_path / "pcln").write_bytes(head + table)
        subprocess.run([require("objcopy"), "--add-section",
                        f".gopclntab={tmp_path / 'pcln'}", DRIVER, out], check=True)
    out.chmod(0o755)
    return out


@pytest.mark.parametrize("how", ["eh_frame", "gopclntab"])
@pytest.mark.parametrize("seed", range(4))
def test_hostile_unwind_tables(how, seed, tmp_path):
    """Each crafted program fsyncs as natively under syncstat, its sites
    named or said why not; a sound program after it in the same tree (the
    same supervisor) is named: the supervisor read the tables within their
    bounds and lives on."""
    prog = hostile_unwind(how, seed, tmp_path)
    native = subprocess.run([prog, tmp_path / "f", str(N)], capture_output=True, timeout=60)
    assert native.returncode == 0, "native control: the crafted program runs"
    out = tmp_path / "r.json"
    cmd = [SYNCSTAT, f"--json={out}", "-o", "/dev/null", "--", DRIVER, tmp_path / "f", "0",
           "run", prog, str(N), "run", DRIVER, str(N)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, cmdline(cmd) + r.stderr
    got = {s["site"]: s["count"] for s in json.loads(out.read_text())["sites"]}
    assert sum(got.values()) == 2 * N, cmdline(cmd) + json.dumps(got)
    assert got.get(next((s for s in got if s.startswith("ask_here (")), ""), 0) >= N, got
