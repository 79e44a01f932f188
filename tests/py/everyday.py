# SPDX-License-Identifier: MIT
"""The everyday matrix: ordinary commands -- coreutils through redirections
and pipes, dd with each flag, tar, cp, rsync, sqlite3, git, Python, Perl,
Node, Go, PostgreSQL, etcd -- each run natively and under every tool meant
for it, each tool's answer set against the kernel's own count of the same
run (perf's tracepoints over the tree), the page cache (fincore) and the
native run's files.  The rows are examples of what users run first; a row
that fails is a tool giving a wrong answer, not a test to mend.

test_everyday.py asserts every cell; `python3 bench/everyday.py` prints the
table of doc/everyday.md from the same rows and judges."""
import hashlib
import json
import os
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from conftest import BUILD, SYNC_EVENTS, TESTS, require, tool

EATMYDATA = BUILD / "bin" / "eatmydata"
SYNCSTAT = BUILD / "bin" / "syncstat"
NOCACHE = BUILD / "bin" / "nocache"
CRASHTEST = BUILD / "bin" / "crashtest"
TOOLS = ("native", "eatmydata", "syncstat", "nocache")
MTIME = 1700000000  # every fixture file's, so that tar and gzip make the same bytes


@dataclass(frozen=True)
class Row:
    name: str
    script: str            # run by sh in a fresh copy of the fixture
    setup: str = ""        # run by sh first, natively, outside the count
    reads: tuple = ()      # files nocache must leave out of the page cache
    check: str = None      # crashtest --check, in each state
    verdict: str = None    # crashtest's verdict under posix: "ok" or "failed"
    volatile: tuple = ()   # globs of files whose bytes differ run to run
    needs: str = None      # the marker its client takes (go, postgres, node)
    gone_ok: tuple = field(default=())  # files that may be missing afterwards


# A commit's name holds its time: pinned, two runs make the same objects.
GIT = ("env GIT_AUTHOR_DATE=@1700000000 GIT_COMMITTER_DATE=@1700000000 git -c user.name=u "
       "-c user.email=u@example.invalid -c init.defaultBranch=main")
PY_FSYNC = ("import os; f = open('p.txt', 'w'); f.write('x' * 5000); f.flush(); "
            "os.fsync(f.fileno()); f.close()")
PY_REPLACE = ("import os\nfor i in range(3):\n    with open('data.tmp', 'w') as f:\n"
              "        f.write(''.join(f'new {k}\\n' for k in range(1, 1001)))\n"
              "        f.flush(); os.fsync(f.fileno())\n    os.replace('data.tmp', 'data')\n"
              "    d = os.open('.', os.O_RDONLY); os.fsync(d); os.close(d)\n")
PY_OSYNC = ("import os; fd = os.open('s.txt', os.O_WRONLY | os.O_CREAT | os.O_SYNC, 0o644)\n"
            "for i in range(20): os.write(fd, b'line %d\\n' % i)\n")
NODE_FSYNC = ("const fs = require('fs'); const fd = fs.openSync('n.txt', 'w'); "
              "for (let i = 0; i < 10; i++) { fs.writeSync(fd, 'line ' + i + '\\n'); "
              "fs.fsyncSync(fd); } fs.closeSync(fd);")
PERL_SYNC = ("use IO::Handle; open(my $f, '>', 'pl.txt') or die; print $f 'x' x 5000; "
             "$f->flush; $f->sync or die;")
PERL_OSYNC = ("use Fcntl; sysopen(my $f, 'ps.txt', O_WRONLY|O_CREAT|O_SYNC) or die; "
              "syswrite($f, \"line $_\\n\") for 1..20;")
WHOLE = "test $(wc -l < data) = 1000"  # data, old or new, never a part
# PostgreSQL runs as its own user, in a directory it can reach.
PG = ("d=$(mktemp -d /tmp/everyday-pg.XXXXXX) && chown postgres: $d && "
      "setpriv --reuid=postgres --regid=postgres --init-groups -- sh -c '{run}' sh $d; "
      "s=$?; rm -rf $d; exit $s")
PG_SERVER = ('initdb -A trust -D $1/pg > /dev/null && pg_ctl -s -w -D $1/pg -l $1/log -o '
             '"-k $1 -c listen_addresses=" start && psql -q -h $1 -d postgres -c '
             '"CREATE TABLE t(x int); INSERT INTO t VALUES (1)" && pg_ctl -s -w -D $1/pg stop')
ETCD_AT = "--endpoints=127.0.0.1:23790"
ETCD = ("etcd --data-dir e --listen-client-urls http://127.0.0.1:23790 --advertise-client-urls "
        "http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 > etcd.log 2>&1 & "
        f"p=$!; for i in $(seq 100); do etcdctl {ETCD_AT} put k v > /dev/null 2>&1 && break; "
        f"sleep 0.1; done; etcdctl {ETCD_AT} put k2 v2 > /dev/null; s=$?; kill $p; wait $p; "
        "exit $s")

ROWS = [
    # The shell and coreutils: redirections, pipes, the replace-by-rename.
    Row("seq >", "seq 100000 > out"),
    Row("seq > tmp; sync; mv; sync", "seq 1000 > data.tmp; sync; mv data.tmp data; sync",
        check=WHOLE, verdict="ok"),
    Row("sort > tmp && mv", "sort -n data > data.tmp && sync && mv data.tmp data && sync",
        reads=("data",), check=WHOLE, verdict="ok"),
    Row("sed > tmp; mv, no sync", "sed s/old/new/ data > data.tmp && mv data.tmp data",
        check=WHOLE, verdict="failed"),
    Row("sed -i", "sed -i s/old/new/ data", check=WHOLE, verdict="failed"),
    Row("tr < in > out", "tr 0-9 a-j < nums > tr.out", reads=("nums",)),
    Row("head | tail", "head -n 5000 nums | tail -n 100 > ht.out", reads=("nums",)),
    Row("cat * > all", "cat src/* > all", reads=("src/f01", "src/f16")),
    Row("pipeline", "cat nums | sort -rn | uniq | head -n 100 > top", reads=("nums",)),
    Row("printf builtin >", "printf '%s\\n' a b c > p.txt"),
    Row("echo >> in a loop", "for i in 1 2 3 4 5; do echo $i >> log; done"),
    Row("tee", "seq 100 | tee teed > /dev/null"),
    Row("cp", "cp nums copy", reads=("nums",)),
    Row("cp -r", "cp -r src dst", reads=("src/f08",)),
    Row("cp; sync", "cp data data.new && sync data.new && mv data.new data && sync .",
        check=WHOLE, verdict="ok"),
    Row("mv", "mv nums moved"),
    Row("ln, ln -s", "ln data hard && ln -s data soft"),
    Row("rm -r", "rm -r src"),
    Row("mkdir -p; touch", "mkdir -p a/b/c && touch a/b/c/x new"),
    Row("truncate", "truncate -s 1M sparse && truncate -s 10 data"),
    Row("fallocate", "fallocate -l 1M fa"),
    Row("split", "split -l 1000 nums part.", reads=("nums",)),
    Row("install", "install -m 644 nums inst", reads=("nums",)),
    Row("sha256sum", "sha256sum src/* > sums", reads=("src/f04", "src/f12")),
    Row("md5sum | wc", "md5sum src/* | wc -l > n"),
    Row("wc, grep, find", "wc -l src/* > wc.out; grep -c 5 nums > g.out; find src -type f | "
        "sort > list", reads=("nums",)),
    Row("awk >", "awk '{ print $1 * 2 }' nums > awk.out", reads=("nums",)),
    Row("sort -o in place", "sort -rn -o nums nums"),
    Row("base64, cut, paste", "base64 nums | cut -c1-20 | paste - - > b.out"),
    Row("gzip -k", "gzip -k nums"),
    Row("gzip -c | gunzip", "gzip -c nums > n.gz && gunzip -c n.gz > n.back"),
    Row("bzip2, xz", "bzip2 -k nums && xz -k data"),
    Row("zip, unzip", "zip -q -r z.zip src && mkdir u && cd u && unzip -q ../z.zip",
        volatile=("z.zip",)),
    Row("shred", "shred -n 1 data", volatile=("data",)),
    Row("sync", "sync"),
    Row("sync -f (syncfs)", "sync -f data"),
    Row("sync FILE (fsync)", "sync data"),
    Row("sync -d (fdatasync)", "sync -d data"),
    # dd: each way of asking for durability, and none.
    Row("dd", "dd if=nums of=d.out bs=4k 2>/dev/null", reads=("nums",)),
    Row("dd bs=1M", "dd if=big of=/dev/null bs=1M 2>/dev/null", reads=("big",),
        setup="head -c 8388608 /dev/zero | tr '\\0' x > big"),
    Row("dd oflag=sync", "dd if=/dev/zero of=d.out bs=4k count=50 oflag=sync 2>/dev/null"),
    Row("dd oflag=dsync", "dd if=/dev/zero of=d.out bs=4k count=50 oflag=dsync 2>/dev/null"),
    Row("dd oflag=direct", "dd if=/dev/zero of=d.out bs=4k count=50 oflag=direct 2>/dev/null"),
    Row("dd conv=fsync", "dd if=/dev/zero of=d.out bs=4k count=50 conv=fsync 2>/dev/null"),
    Row("dd conv=fdatasync",
        "dd if=/dev/zero of=d.out bs=4k count=50 conv=fdatasync 2>/dev/null"),
    Row("dd oflag=dsync, replace", "dd if=data of=data.tmp oflag=dsync 2>/dev/null && "
        "mv data.tmp data && sync .", check=WHOLE, verdict="ok"),
    # Archives and copies.
    Row("tar cf", "tar cf a.tar src", reads=("src/f02", "src/f15")),
    Row("tar czf", "tar czf a.tgz src"),
    Row("tar xf", "mkdir x && tar xf a.tar -C x", setup="tar cf a.tar src", reads=("a.tar",)),
    Row("rsync -a", "rsync -a src/ r/", reads=("src/f03",)),
    Row("rsync -a --fsync", "rsync -a --fsync src/ r/"),
    # Databases, version control, languages.
    Row("sqlite3 rollback", "sqlite3 db 'CREATE TABLE t(x); INSERT INTO t VALUES(1); "
        "INSERT INTO t VALUES(2);'", volatile=("db",)),
    Row("sqlite3 WAL", "sqlite3 db 'PRAGMA journal_mode=WAL; CREATE TABLE t(x); "
        "INSERT INTO t VALUES(1);' > /dev/null", volatile=("db", "db-wal", "db-shm")),
    Row("git commit", f"{GIT} init -q g && cd g && cp ../nums . && {GIT} add nums && "
        f"{GIT} commit -qm x", volatile=("g/.git/*",)),
    Row("git commit, core.fsync=all", f"{GIT} init -q g && cd g && cp ../nums . && "
        f"{GIT} -c core.fsync=all add nums && {GIT} -c core.fsync=all commit -qm x",
        volatile=("g/.git/*",)),
    Row("git clone", f"{GIT} clone -q repo clone", volatile=("clone/.git/*", "repo/.git/*"),
        setup=f"{GIT} init -q repo && cp data repo/ && cd repo && {GIT} add data && "
        f"{GIT} commit -qm x"),
    Row("python3 fsync", f"python3 -c {shlex.quote(PY_FSYNC)}"),
    Row("python3 replace", f"python3 -c {shlex.quote(PY_REPLACE)}", check=WHOLE, verdict="ok"),
    Row("python3 O_SYNC", f"python3 -c {shlex.quote(PY_OSYNC)}"),
    Row("python3 sqlite3", "python3 -c \"import sqlite3; c = sqlite3.connect('py.db'); "
        "c.execute('create table t(x)'); c.execute('insert into t values(1)'); c.commit()\"",
        volatile=("py.db",)),
    Row("perl sync", f"perl -e {shlex.quote(PERL_SYNC)}"),
    Row("perl O_SYNC", f"perl -e {shlex.quote(PERL_OSYNC)}"),
    Row("node fsyncSync", f"node -e {shlex.quote(NODE_FSYNC)}", needs="node"),
    Row("go f.Sync, O_SYNC", "$GO_FSYNC go.out 20 > /dev/null", needs="go"),
    Row("go replace, good", "$GO_REPLACE good 3 > /dev/null", needs="go",
        check="tail -n 1 data | grep -q -e '^end [123]$' -e '^old 1000$'", verdict="ok"),
    Row("initdb", PG.format(run="initdb -A trust -D $1/pg > /dev/null"), needs="postgres"),
    Row("pg_ctl start, insert, stop", PG.format(run=PG_SERVER), needs="postgres"),
    Row("etcd put", ETCD, needs="etcd", volatile=("e/*", "etcd.log")),
]


def row_named(name):
    return next(r for r in ROWS if r.name == name)


def fixture(d, row, env, cold=False):
    """The directory every row starts from: src/ (16 files, 4 to 64 KiB),
    nums (1..20000), data (1000 lines), all of fixed bytes and times; then
    the row's setup; the files it reads written back and out of the cache,
    and when `cold` (nocache's run and its native control) every file: a
    page nocache finds cached is to stay, so a file the command rewrites in
    place (shred, truncate, sort -o) judges nocache only if it starts out
    of the cache."""
    (d / "src").mkdir(parents=True)
    for i in range(1, 17):
        block = hashlib.sha256(b"%d" % i).hexdigest().encode() + b"\n"
        (d / "src" / f"f{i:02d}").write_bytes(block * (i * 4096 // len(block)))
    (d / "nums").write_text("".join(f"{i}\n" for i in range(1, 20001)))
    (d / "data").write_text("".join(f"old {i}\n" for i in range(1, 1001)))
    if row.setup:
        subprocess.run(["sh", "-c", row.setup], cwd=d, env=env, check=True, timeout=120,
                       capture_output=True)
    for p in d.rglob("*"):
        os.utime(p, (MTIME, MTIME), follow_symlinks=False)
    files = [p for p in d.rglob("*") if p.is_file() and not p.is_symlink()] if cold else \
        [d / r for r in row.reads]
    for r in files:
        fd = os.open(r, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def environment(go_programs=None):
    """What every row's shell is given: PATH with PostgreSQL's programs, and
    the Go programs' paths."""
    pg = tool("initdb")
    path = os.environ["PATH"] + (os.pathsep + str(Path(pg).parent) if pg else "")
    env = dict(os.environ, PATH=path, LC_ALL="C")
    for k, v in (go_programs or {}).items():
        env[k] = str(v)
    return env


def command(row, tool_name, d, tmp):
    """The row's command line under one tool (native: none)."""
    sh = ["sh", "-c", f"cd {shlex.quote(str(d))} && {row.script}"]
    if tool_name == "eatmydata":
        return [EATMYDATA, "--", *sh]
    if tool_name == "syncstat":
        return [SYNCSTAT, "--json", "--output", tmp / "syncstat.json", "--", *sh]
    if tool_name == "nocache":
        return [NOCACHE, "--", *sh]
    return sh


def tree(d, volatile=()):
    """What a directory holds: each path under it with its type and bytes
    (a link's target), but the volatile ones (their names too)."""
    out = {}
    for p in sorted(Path(d).rglob("*")):
        rel = str(p.relative_to(d))
        if any(fnmatch(rel, g) for g in volatile):
            continue
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def cached(d, paths):
    """Bytes of paths under d in the page cache."""
    if not paths:
        return 0
    out = subprocess.run([require("fincore"), "--bytes", "--noheadings", "--output", "RES",
                          *[d / p for p in paths]], capture_output=True, text=True,
                         check=True).stdout
    return sum(int(x) for x in out.split())


# What the kernel counts of each kind syncstat reports (the same run's tree).
KIND_EVENTS = {
    "fsync": ["syscalls:sys_enter_fsync"], "fdatasync": ["syscalls:sys_enter_fdatasync"],
    "syncfs": ["syscalls:sys_enter_syncfs"], "sync": ["syscalls:sys_enter_sync"],
    "sync_file_range": ["syscalls:sys_enter_sync_file_range"],
    "msync": ["syscalls:sys_enter_msync"],
    "open(O_SYNC)+open(O_DSYNC)": ["syscalls:sys_enter_open", "syscalls:sys_enter_openat",
                                   "syscalls:sys_enter_open_by_handle_at"],
    "pwritev2(RWF_SYNC)+pwritev2(RWF_DSYNC)": ["syscalls:sys_enter_pwritev2"],
}
# The kinds that make the file system sync a file: none may be fewer than
# the kernel's ext4_sync_file_enter (a write on an O_DSYNC descriptor is one).
FILE_SYNCS = ["fsync", "fdatasync", "msync", "pwritev2(RWF_SYNC)", "pwritev2(RWF_DSYNC)",
              "write(O_SYNC)", "write(O_DSYNC)"]


def judge_syncstat(run, report_file):
    """'' when syncstat's report gives the kernel's counts, else why not."""
    if run.returncode != 0:
        return f"exit {run.returncode}: {run.stderr[-300:]}"
    report = json.loads(Path(report_file).read_text())
    kinds = {}
    for g in report["groups"]:
        kinds[g["kind"]] = kinds.get(g["kind"], 0) + g["count"]
    wrong = []
    for names, events in KIND_EVENTS.items():
        said = sum(kinds.get(k, 0) for k in names.split("+"))
        truth = sum(run.counts.get(e, 0) for e in events)
        if said != truth:
            wrong.append(f"{names}: {said}, the kernel {truth}")
    files = sum(kinds.get(k, 0) for k in FILE_SYNCS)
    if files < run.counts["ext4:ext4_sync_file_enter"]:
        wrong.append(f"{files} file syncs, the kernel's ext4 synced files "
                     f"{run.counts['ext4:ext4_sync_file_enter']} times")
    if report["unobserved"] or report["lost"]:
        wrong.append(f"unobserved {report['unobserved']}, lost {report['lost']}")
    return "; ".join(wrong)


def judge_eatmydata(native, eaten, native_dir, eaten_dir, row):
    """'' when eatmydata's run did what the native one did, with no sync
    reaching the disk (or each one it left named), else why not."""
    if eaten.returncode != native.returncode or eaten.stdout != native.stdout:
        return f"exit {eaten.returncode} (native {native.returncode}): {eaten.stderr[-300:]}"
    if tree(eaten_dir, row.volatile) != tree(native_dir, row.volatile):
        return "its files differ from the native run's"
    if eaten.syncs and "left to the disk" not in eaten.stderr:
        return f"{eaten.syncs} syncs reached the disk, unsaid: {eaten.counts}"
    return ""


def touched(d, row):
    """The files the row reads, and those it wrote (a time not the
    fixture's)."""
    wrote = [str(p.relative_to(d)) for p in Path(d).rglob("*")
             if p.is_file() and not p.is_symlink() and p.stat().st_mtime != MTIME]
    return sorted(set(row.reads) | set(wrote))


def settled(d, paths, timeout=5):
    """Bytes of paths cached once none are (a write's pages go as their
    writeback completes), or as they are at the timeout."""
    deadline = time.monotonic() + timeout
    while (n := cached(d, paths)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return n


def judge_nocache(native, run, native_dir, run_dir, row):
    """'' when nocache left the files the row read or wrote out of the cache
    (natively they stay: the control), with the native run's files."""
    # The cache first: reading the files to compare them caches them.
    paths = touched(run_dir, row)
    left, control = settled(run_dir, paths), cached(native_dir, touched(native_dir, row))
    if run.returncode != native.returncode or run.stdout != native.stdout:
        return f"exit {run.returncode} (native {native.returncode}): {run.stderr[-300:]}"
    if not control and not left:
        return ""  # nothing of it cached, natively either: nothing to drop
    if left:
        each = [f"{p} {cached(run_dir, [p])}" for p in paths if cached(run_dir, [p])]
        return f"{left} bytes left cached (natively {control}): {', '.join(each)[:300]}"
    if tree(run_dir, row.volatile) != tree(native_dir, row.volatile):
        return "its files differ from the native run's"
    return ""


def crashtest(row, d, env):
    """crashtest --each of the row, its check in each state: its JSON report
    and status."""
    cmd = [CRASHTEST, "--each", "--json", f"--check={row.check}", d, "--", "sh", "-c",
           row.script]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    return r, json.loads(r.stdout) if r.stdout.startswith("{") else None


def judge_crashtest(row, r, report):
    """'' when crashtest's verdict is the one the row's syncs deserve, with
    no point unknown, else why not."""
    if report is None:
        return f"no report (exit {r.returncode}): {r.stderr[-300:]}"
    t = report["totals"]
    unknown = sorted({w for p in report["points"] for w in p["unknown"]})
    if t["unknown"] or unknown:
        return f"{t['unknown']} unknown: {'; '.join(unknown)[:300]}"
    verdict = "failed" if t["failed"] else "ok"
    if verdict != row.verdict:
        return f"{verdict} ({t['failed']} failed of {t['states']} states), not {row.verdict}"
    return ""
