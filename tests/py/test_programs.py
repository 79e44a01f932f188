# SPDX-License-Identifier: MIT
"""Real programs: each asks for durability its own way; natively the kernel
sees it, under eatmydata it sees none of it, and the program still works."""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import eaten, require, run, tool

PYTHON = """
import mmap, os, sys
d = sys.argv[1]
with open(f"{d}/a", "w") as f:
    f.write("a"); f.flush(); os.fsync(f.fileno()); os.fdatasync(f.fileno())
fd = os.open(f"{d}/b", os.O_WRONLY | os.O_CREAT | os.O_SYNC, 0o644)
os.write(fd, b"b" * 4096); os.close(fd)
fd = os.open(f"{d}/c", os.O_RDWR | os.O_CREAT | os.O_DSYNC, 0o644)
os.write(fd, b"c" * 4096)
m = mmap.mmap(fd, 4096); m[0:1] = b"C"; m.flush(); m.close(); os.close(fd)
os.sync()
print(open(f"{d}/a").read() + open(f"{d}/c").read(1))
"""

PERL = r"""
use IO::Handle; use Fcntl;
my $d = shift;
open(my $f, '>', "$d/a") or die; print $f "a"; $f->flush; $f->sync or die "sync: $!";
sysopen(my $g, "$d/b", O_WRONLY | O_CREAT | O_SYNC) or die; syswrite($g, "b" x 4096);
close $g; print "ok\n";
"""

NODE = """
const fs = require('fs'); const d = process.argv[process.argv.length - 1];
let fd = fs.openSync(d + '/a', 'w'); fs.writeSync(fd, 'a'); fs.fsyncSync(fd);
fs.fdatasyncSync(fd); fs.closeSync(fd);
fd = fs.openSync(d + '/b', 'as'); fs.writeSync(fd, 'b'.repeat(4096)); fs.closeSync(fd);
fs.open(d + '/c', 'w', (e, fd2) => fs.write(fd2, 'c', () => fs.fsync(fd2, (err) => {
  if (err) throw err; console.log('ok'); })));
"""

JAVA = """
import java.io.*; import java.nio.*; import java.nio.channels.*; import java.nio.file.*;
public class Sync {
  public static void main(String[] a) throws Exception {
    try (FileChannel c = FileChannel.open(Paths.get(a[0], "a"),
        StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap("a".getBytes())); c.force(true); c.force(false);
    }
    try (RandomAccessFile f = new RandomAccessFile(a[0] + "/b", "rws")) { f.write(new byte[4096]); }
    try (RandomAccessFile f = new RandomAccessFile(a[0] + "/c", "rwd")) { f.write(new byte[4096]); }
    try (FileOutputStream o = new FileOutputStream(a[0] + "/d")) { o.write(1); o.getFD().sync(); }
    System.out.println("ok");
  }
}
"""

RUST = """
use std::fs::{File, OpenOptions}; use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
fn main() {
    let d = std::env::args().nth(1).unwrap();
    let mut f = File::create(format!("{}/a", d)).unwrap();
    f.write_all(b"a").unwrap(); f.sync_all().unwrap(); f.sync_data().unwrap();
    let mut g = OpenOptions::new().write(true).create(true).custom_flags(0o4010000)
        .open(format!("{}/b", d)).unwrap();
    g.write_all(&[0u8; 4096]).unwrap();
    println!("ok");
}
"""


def both(cmd, check_output=None, **kw):
    """Run natively and under eatmydata; the durability must be eaten."""
    native = run(cmd, **kw)
    assert native.syncs > 0, "the program made no durability request" + native.why()
    under = eaten(cmd, **kw)
    assert under.syncs == 0, "durability reached the disk" + under.why()
    if check_output:
        assert check_output in under.stdout, under.why()
    return native, under


def fresh(scratch, name):
    d = scratch / name
    d.mkdir()
    return d


def test_python(scratch):
    script = scratch / "s.py"
    script.write_text(PYTHON)
    for mode in ["native", "eaten"]:
        d = fresh(scratch, mode)
        r = (run if mode == "native" else eaten)([require("python3"), script, d])
        assert r.stdout == "aC\n", r.why()
        assert (r.syncs > 0) == (mode == "native"), r.why()


def test_perl(scratch):
    both([require("perl"), "-e", PERL, scratch], check_output="ok")


@pytest.mark.node
def test_node(scratch):
    both([require("node"), "-e", NODE, scratch], check_output="ok")


@pytest.mark.java
def test_java(scratch):
    src = scratch / "Sync.java"
    src.write_text(JAVA)
    both([require("java"), src, scratch], check_output="ok")


@pytest.mark.rust
@pytest.mark.slow
def test_rust(scratch, tmp_path):
    src = tmp_path / "sync.rs"
    src.write_text(RUST)
    exe = tmp_path / "sync-rs"
    subprocess.run([require("rustc"), "-O", "-o", exe, src], check=True, timeout=300,
                   env=dict(os.environ, PATH=os.path.dirname(tool("rustc")) + ":" + os.environ["PATH"]))
    both([exe, scratch], check_output="ok")


@pytest.mark.parametrize("journal", ["DELETE", "WAL"])
def test_sqlite(scratch, journal):
    sql = (f"PRAGMA journal_mode={journal}; PRAGMA synchronous=FULL;"
           "CREATE TABLE t(x);" + "INSERT INTO t VALUES(randomblob(100));" * 50 +
           "SELECT count(*) FROM t;")
    for mode in ["native", "eaten"]:
        db = scratch / f"{mode}.db"
        r = (run if mode == "native" else eaten)([require("sqlite3"), db, sql])
        assert r.stdout.split()[-1] == "50", r.why()
        assert (r.syncs > 0) == (mode == "native"), r.why()
        assert (r.counts["ext4:ext4_sync_file_enter"] >= 50) == (mode == "native")


@pytest.mark.parametrize("method", ["fsync", "batch"])
def test_git(scratch, method):
    git = require("git")
    for mode in ["native", "eaten"]:
        repo = fresh(scratch, mode)
        for i in range(20):
            (repo / f"file{i}").write_text(f"content {i}\n")
        cfg = ["-c", "core.fsync=all", "-c", f"core.fsyncMethod={method}",
               "-c", "user.name=t", "-c", "user.email=t@t"]
        script = (f"{git} init -q . && {git} {' '.join(cfg)} add . && "
                  f"{git} {' '.join(cfg)} commit -qm m && {git} log --oneline | wc -l")
        r = (run if mode == "native" else eaten)(["sh", "-c", script], cwd=repo)
        assert r.stdout.strip() == "1", r.why()
        assert (r.syncs > 0) == (mode == "native"), r.why()


def make_deb(where, files=20):
    pkg = where / "pkg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        "Package: emd-test\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: t <t@t>\nDescription: eatmydata test package\n")
    data = pkg / "usr" / "share" / "emd-test"
    data.mkdir(parents=True)
    for i in range(files):
        (data / f"f{i}").write_text(f"{i}\n" * 100)
    deb = where / "emd-test.deb"
    subprocess.run([require("dpkg-deb"), "--root-owner-group", "-b", pkg, deb],
                   check=True, capture_output=True, timeout=120)
    return deb


def dpkg_root(where):
    root = where / "root"
    where.mkdir(exist_ok=True)
    admin = root / "var" / "lib" / "dpkg"
    for sub in ["info", "updates", "triggers"]:
        (admin / sub).mkdir(parents=True)
    (admin / "status").write_text("")
    (admin / "available").write_text("")
    return root


def test_dpkg(scratch):
    deb = make_deb(scratch)
    for mode in ["native", "eaten"]:
        root = dpkg_root(fresh(scratch, mode))
        cmd = [require("dpkg"), f"--root={root}", "--force-not-root",
               "--force-script-chrootless", "--force-depends", "-i", deb]
        r = (run if mode == "native" else eaten)(cmd)
        assert (root / "usr/share/emd-test/f19").read_text().startswith("19")
        assert "Status: install ok installed" in (root / "var/lib/dpkg/status").read_text()
        assert (r.syncs > 0) == (mode == "native"), r.why()


@pytest.fixture
def pg_dir(shared_lib):
    d = Path(tempfile.mkdtemp(prefix="emd-initdb-", dir="/tmp"))
    d.chmod(0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.postgres
@pytest.mark.root
def test_initdb(pg_dir, shared_lib):
    initdb = require("initdb")
    as_postgres = [require("setpriv"), "--reuid=postgres", "--regid=postgres",
                   "--init-groups", "--"]
    for mode in ["native", "eaten"]:
        data = pg_dir / mode
        cmd = as_postgres + ([shared_lib / "bin" / "eatmydata"] if mode == "eaten" else [])
        r = run(cmd + [initdb, "-A", "trust", "-U", "postgres", "-D", data],
                cwd="/tmp")
        assert (data / "PG_VERSION").exists(), r.why()
        assert (r.syncs > 0) == (mode == "native"), r.why()
        if mode == "native":
            assert r.counts["ext4:ext4_sync_file_enter"] > 100, r.why()
