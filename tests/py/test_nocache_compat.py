# SPDX-License-Identifier: MIT
"""nocache as upstream's users know it (Debian's nocache 1.1): its options and
environment, cachestats and cachedel printing and exiting as Debian's do, and
what a command writes leaving the page cache without a durability call.

The page cache is read with fincore (mincore), the durability calls with the
kernel's tracepoints; each "did not happen" sits beside the run where it
does: natively, or under Debian's nocache, which fdatasyncs at close."""
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import BUILD, ROOT, cmdline, require, run
from helpers import DURABLE, NOCACHE, cached_bytes, cached_under, evict, files_under, random_tree, warm

CACHESTATS = BUILD / "bin" / "cachestats"
CACHEDEL = BUILD / "bin" / "cachedel"
UPSTREAM = Path("/usr/bin/nocache")
# What the brief names: no fsync, fdatasync or syncfs, no ext4 sync of a file.
NEVER = ["syscalls:sys_enter_fsync", "syscalls:sys_enter_fdatasync",
         "syscalls:sys_enter_syncfs", "ext4:ext4_sync_file_enter"]


def debian(name):
    """Debian's own cachestats or cachedel (package nocache)."""
    path = Path("/usr/bin") / name
    if not path.exists():
        require(f"debian-{name}")  # fails in CI, skips elsewhere
    return path


# What each writer needs (made once, untimed) and its command; every command
# writes into `out`, which does not exist yet.
def w_cp_small(src, out):
    f = src / "small"
    f.write_bytes(b"hello")
    return [require("cp"), f, out]


def w_cp_r(src, out):
    return [require("cp"), "-r", random_tree(src / "tree", 1000, 16 << 10), out]


def w_cat(src, out):
    f = src / "big"
    f.write_bytes(os.urandom(32 << 20))
    return ["sh", "-c", f'exec cat "{f}" > "{out}"']


def w_dd(src, out):
    return [require("dd"), "if=/dev/zero", f"of={out}", "bs=4k", "count=2048", "status=none"]


def w_tar_x(src, out):
    tree = random_tree(src / "t", 16, 4 << 20)
    archive = src / "a.tar"
    with tarfile.open(archive, "w") as t:
        t.add(tree, arcname="t")
    return ["sh", "-c", f'mkdir "{out}" && exec tar xf "{archive}" -C "{out}"']


def w_rsync(src, out):
    return [require("rsync"), "-a", str(random_tree(src / "r", 200, 128 << 10)) + "/", out]


WRITERS = {"cp-small": w_cp_small, "cp-r": w_cp_r, "cat": w_cat, "dd": w_dd,
           "tar-x": w_tar_x, "rsync": w_rsync}


def written(out):
    return files_under(out) if Path(out).is_dir() else [str(out)]


@pytest.mark.parametrize("writer", WRITERS)
def test_written_data_leaves_the_cache_without_a_sync(tmp_path, writer):
    src = tmp_path / "src"
    src.mkdir()
    cmd = WRITERS[writer](src, tmp_path / "native")
    subprocess.run([str(c) for c in cmd], check=True, timeout=120)
    cached, size = cached_under(written(tmp_path / "native"))
    assert cached >= 0.5 * size, f"natively the copy stays cached ({cached} of {size})"

    out = tmp_path / "out"
    cmd = [str(c).replace(str(tmp_path / "native"), str(out)) for c in cmd]
    r = run([NOCACHE] + cmd, events=DURABLE)
    cached, size = cached_under(written(out))
    assert size > 0 and cached <= 0.01 * size, f"{cached} of {size} bytes cached" + r.why()
    assert all(r.counts[e] == 0 for e in NEVER), r.why()


@pytest.mark.parametrize("writer", ["cp-small", "dd"])
def test_upstream_syncs_where_ours_does_not(tmp_path, writer):
    """The counters see the fdatasync Debian's nocache makes at close: the
    zero above is nocache's, not a blind counter's."""
    if not UPSTREAM.exists():
        require("debian-nocache")
    src = tmp_path / "src"
    src.mkdir()
    cmd = WRITERS[writer](src, tmp_path / "out")
    r = run([UPSTREAM] + cmd, events=DURABLE)
    assert r.counts["syscalls:sys_enter_fdatasync"] > 0, r.why()
    assert r.counts["ext4:ext4_sync_file_enter"] > 0, r.why()


# Descriptors the command never closes: exit runs the destructor, _exit the
# wrapper; and a descriptor written through a dup of it.  Writes of 16 KiB,
# below what goes with RWF_DONTCACHE (which the kernel drops itself).
WRITE = "for i in range(0, len(data), 16384): os.write({fd}, data[i:i + 16384])\n"
EXITS = {
    "exit": WRITE.format(fd="fd") + "sys.exit(0)",
    "_exit": WRITE.format(fd="fd") + "os._exit(0)",
    "dup": "os.dup2(fd, 9)\n" + WRITE.format(fd=9) + "os.close(fd)\nos.close(9)",
    "dup-exit": "os.dup2(fd, 9)\nos.close(fd)\n" + WRITE.format(fd=9) + "os._exit(0)",
}


@pytest.mark.parametrize("how", EXITS)
def test_written_and_never_closed(tmp_path, how):
    script = ("import os, sys\n"
              "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)\n"
              "data = b'x' * (24 << 20)\n" + EXITS[how])
    native = tmp_path / "native"
    subprocess.run(["python3", "-c", script, native], check=True, timeout=60)
    assert cached_bytes(native) >= 0.5 * (24 << 20), "natively it stays cached"
    out = tmp_path / "out"
    r = run([NOCACHE, "python3", "-c", script, out], events=DURABLE)
    assert out.stat().st_size == 24 << 20
    assert cached_bytes(out) <= 0.01 * (24 << 20), r.why()
    assert r.syncs == 0, r.why()


# ---- streams: libc's own reads and writes ------------------------------

@pytest.fixture
def lines(tmp_path):
    """8 MiB of text, not cached, a whole number of pages."""
    f = tmp_path / "lines"
    with open(f, "w") as out:
        for i in range(400000):
            out.write(f"{(i * 7919) % 100000000:08d} line of text\n")
        out.write(" " * (-out.tell() % 4096))
    evict(f)
    yield f


def test_stdio_writes_leave_the_cache(lines, tmp_path):
    """awk's print > "file" goes through stdio (fopen, fwrite, fclose)."""
    awk = require("awk")
    subprocess.run([awk, f'{{print > "{tmp_path}/native"}}', lines], check=True, timeout=60)
    assert cached_bytes(tmp_path / "native") >= 0.9 * os.path.getsize(lines), "natively cached"
    r = run([NOCACHE, awk, f'{{print > "{tmp_path}/out"}}', lines], events=DURABLE)
    assert cached_bytes(tmp_path / "out") <= 0.01 * os.path.getsize(lines), r.why()
    assert all(r.counts[e] == 0 for e in NEVER), r.why()


def test_stdio_reads_leave_the_cache_as_it_was(lines):
    """sort reads its input with fread: an uncached input stays uncached, a
    cached one stays cached."""
    sort = [require("sort"), "-o", "/dev/null", lines]
    subprocess.run(sort, check=True, timeout=60)
    assert cached_bytes(lines) >= 0.9 * os.path.getsize(lines), "natively the read fills the cache"
    evict(lines)
    r = run([NOCACHE] + sort, events=DURABLE)
    assert cached_bytes(lines) <= 0.01 * os.path.getsize(lines), r.why()
    warm(lines)
    run([NOCACHE] + sort, events=DURABLE)
    assert cached_bytes(lines) >= 0.9 * os.path.getsize(lines)


# ---- upstream's options and environment -----------------------------------

def fadvise_calls(trace, name):
    return sum(1 for line in trace.read_text().splitlines()
               if "fadvise64" in line and f"<{name}>" in line and "DONTNEED" in line)


@pytest.mark.parametrize("how", ["-n", "NOCACHE_NR_FADVISE"])
def test_n_repeats_the_drop(tmp_path, how):
    """-n N (or upstream's variable): N posix_fadvise calls where one is made
    without it (strace)."""
    f = tmp_path / "f"
    f.write_bytes(os.urandom(1 << 20))
    counts = []
    for n in (None, 3):
        opts = ["-n", str(n)] if n and how == "-n" else []
        env = {"NOCACHE_NR_FADVISE": str(n)} if n and how != "-n" else {}
        trace, copy = tmp_path / f"trace{n}", tmp_path / f"copy{n}"
        run([require("strace"), "-f", "-y", "-e", "trace=fadvise64", "-o", trace,
             NOCACHE, *opts, "cp", f, copy], env=dict(env, NOCACHE_NO_DONTCACHE="1"))
        counts.append(fadvise_calls(trace, copy))
    assert counts[0] > 0 and counts[1] == 3 * counts[0], counts


def cat(f):
    return ["sh", "-c", f'exec cat "{f}" > /dev/null']


def test_f_drops_a_file_that_was_cached(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(os.urandom(8 << 20))
    warm(f)
    run([NOCACHE] + cat(f), events=DURABLE)
    assert cached_bytes(f) >= 0.9 * (8 << 20), "without -f, a cached file stays cached"
    run([NOCACHE, "-f"] + cat(f), events=DURABLE)
    assert cached_bytes(f) <= 0.01 * (8 << 20)
    warm(f)
    run([NOCACHE] + cat(f), env={"NOCACHE_FLUSHALL": "1"}, events=DURABLE)
    assert cached_bytes(f) <= 0.01 * (8 << 20)


READ_ON_7 = """import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.dup2(fd, 7)
os.close(fd)
while os.read(7, 1 << 20):
    pass
"""


def test_max_fds_leaves_higher_descriptors_alone(tmp_path):
    """The file is read on descriptor 7: NOCACHE_MAX_FDS=7 leaves it alone."""
    f = tmp_path / "f"
    f.write_bytes(os.urandom(8 << 20))
    evict(f)
    run([NOCACHE, "python3", "-c", READ_ON_7, f], env={"NOCACHE_MAX_FDS": "8"})
    assert cached_bytes(f) <= 0.01 * (8 << 20), "below the limit, it is handled"
    evict(f)
    run([NOCACHE, "python3", "-c", READ_ON_7, f], env={"NOCACHE_MAX_FDS": "7"})
    assert cached_bytes(f) >= 0.9 * (8 << 20), "at the limit, it is not"


def test_D_logs_what_is_dropped(tmp_path):
    log = tmp_path / "log"
    run([NOCACHE, "-D", log, "cp", "/etc/passwd", tmp_path / "copy"])
    text = log.read_text()
    assert "running cp /etc/passwd" in text and "DONTNEED" in text, text
    assert log.stat().st_mode & 0o777 == 0o600
    run([NOCACHE, "-D", log, "true"])
    assert log.read_text().startswith(text), "an existing log of the user's is appended to"


def test_D_stderr_as_upstream_suggests():
    r = run([NOCACHE, "-D", "/dev/stderr", "cp", "/etc/passwd", "/dev/null"])
    assert "nocache[" in r.stderr and "running cp" in r.stderr, r.why()


def test_log_stops_when_the_command_closes_its_descriptor(tmp_path):
    """The command may close the log's descriptor and open a file of its
    own there: nothing of nocache's may land in that file."""
    script = ("import os, sys\nfd = int(os.environ['NOCACHE_DEBUGFD'])\n"
              "mine = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)\n"
              "os.dup2(mine, fd)\nos.close(mine)\nos.write(fd, b'mine\\n')\n"
              "other = os.open(sys.argv[1] + '.2', os.O_WRONLY | os.O_CREAT, 0o600)\n"
              "os.write(other, b'x' * 100000)\nos.close(other)\n")
    out = tmp_path / "mine"
    run([NOCACHE, "-D", tmp_path / "log", "python3", "-c", script, out])
    assert out.read_text() == "mine\n"


def test_upstream_script_runs_unchanged(tmp_path):
    """A script in the style of upstream's tests (t/basic.t), with only
    cachedel, cachestats -q and nocache's options, passes with Debian's
    tools and with ours alike."""
    script = """set -e
f=$1/file
head -c 1048576 /dev/urandom > "$f"
cachedel "$f"
cachedel -n 2 "$f"
! cachestats -q "$f"                         # not cached
cat "$f" > /dev/null
cachestats -q "$f"                           # cached by a plain read
cachedel "$f"
nocache cat "$f" > /dev/null
! cachestats -q "$f"                         # nocache left it uncached
nocache -n 2 cp "$f" "$f.copy"
! cachestats -q "$f"
cachedel "$f.copy"; ! cachestats -q "$f.copy"
cat "$f" > /dev/null
nocache -n 2 cat "$f" > /dev/null
cachestats -q "$f"                           # cached before: stays cached
nocache -f -D "$1/log" cat "$f" > /dev/null
cachestats "$f" | grep -q '^pages in cache: [0-9]*/256 '
echo done
"""
    for name, bindir in [("debian", "/usr/bin"), ("ours", BUILD / "bin")]:
        if name == "debian" and not UPSTREAM.exists():
            continue
        d = tmp_path / name
        d.mkdir()
        env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
        r = subprocess.run(["bash", "-c", script, "script", d], capture_output=True, text=True,
                           env=dict(os.environ, **env), timeout=60)
        assert r.returncode == 0 and r.stdout == "done\n", (
            f"{name}: {cmdline(['bash', '-x', '-c', script, 'script', d], env)}\n{r.stderr}")


# ---- cachestats and cachedel against Debian's ----------------------------

def make_file(path, pages, cached):
    """A file of `pages` 4 KiB pages (the last one short), exactly `cached`
    (a set) of them cached: read with readahead off."""
    path.write_bytes(os.urandom(pages * 4096 - (100 if pages else 0)))
    evict(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        for p in cached:
            os.pread(fd, 1, p * 4096)
    finally:
        os.close(fd)


SHAPES = {"empty": (0, set()), "one-cached": (1, {0}), "one": (1, set()),
          "row": (32, set(range(32))), "row-and-one": (33, {1, 32}),
          "partial": (100, set(range(10, 40)))}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("opts", [[], ["-v"], ["-q"]])
def test_cachestats_as_debian(tmp_path, shape, opts):
    f = tmp_path / "f"
    pages, cached = SHAPES[shape]
    results = []
    for exe in (debian("cachestats"), CACHESTATS):
        # The kernel may evict a page at any moment (memory pressure, this
        # VM's DAMON pageout): a run counts only when the file was as asked
        # before it and still is after it.
        for _ in range(10):
            make_file(f, pages, cached)
            if cached_bytes(f) != len(cached) * 4096:
                continue
            r = subprocess.run([exe, *opts, f], capture_output=True, text=True, timeout=30)
            if cached_bytes(f) == len(cached) * 4096:
                break
        else:
            pytest.fail(f"the page cache would not hold {len(cached)} pages of {f} as asked")
        results.append((r.returncode, r.stdout))
    if shape == "empty" and opts == ["-q"]:
        # Debian's prints its line for an empty file even with -q.
        results[0] = (results[0][0], "")
    assert results[0] == results[1], cmdline([CACHESTATS, *opts, f])
    if opts == ["-q"]:
        assert results[1][0] == (0 if len(cached) == pages else 1)


def test_cachestats_q_on_a_cached_file(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(os.urandom(1 << 20))
    warm(f)
    assert subprocess.run([CACHESTATS, "-q", f]).returncode == 0
    evict(f)
    assert subprocess.run([CACHESTATS, "-q", f]).returncode == 1


@pytest.mark.parametrize("dirty", [False, True])
def test_cachedel_as_debian(tmp_path, dirty):
    """A clean file: both drop it all.  A file just written: Debian's leaves
    its dirty pages, ours writes them back first (no fsync) and drops them."""
    f = tmp_path / "f"
    results = {}
    for name, exe in [("debian", debian("cachedel")), ("ours", CACHEDEL)]:
        f.write_bytes(os.urandom(4 << 20))
        if not dirty:
            evict(f)
            warm(f)
        assert cached_bytes(f) == 4 << 20, "the control: all of it cached before"
        r = run([exe, f], events=DURABLE)
        results[name] = cached_bytes(f)
        assert r.returncode == 0 and r.stdout == "" and all(r.counts[e] == 0 for e in NEVER), \
            r.why()
    assert results["ours"] == 0, results
    # Debian's keeps what is still dirty: all of it, unless the kernel (or
    # another process's sync) wrote some back in the meantime.
    assert (results["debian"] > 0) if dirty else (results["debian"] == 0), results


@pytest.mark.parametrize("tool,args,message", [
    ("cachestats", ["/nonexistent"], "cannot open /nonexistent"),
    ("cachestats", ["/dev/null"], "not a regular file"),
    ("cachestats", [], "one FILE"),
    ("cachestats", ["-q", "-v", "/etc/passwd"], "exclude each other"),
    ("cachestats", ["-x", "/etc/passwd"], "unknown or incomplete option '-x'"),
    ("cachedel", ["/nonexistent"], "cannot open /nonexistent"),
    ("cachedel", ["-n", "0", "/etc/passwd"], "-n: '0' is not a number from 1 to 100"),
    ("cachedel", ["-n", "abc", "/etc/passwd"], "-n: 'abc'"),
    ("cachedel", ["/tmp"], "not a regular file"),
])
def test_errors_say_what_and_exit_125(tool, args, message):
    """Debian's print "open: ..." and exit 255 or 1 (or take -n abc); a
    script that tests for non-zero sees the same."""
    r = subprocess.run([BUILD / "bin" / tool, *args], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 125 and r.stderr.startswith(f"{tool}: ") and message in r.stderr, \
        r.stderr
    assert r.stdout == ""


@pytest.mark.root
def test_install_puts_them_with_the_others(tmp_path):
    dest = tmp_path / "dest"
    subprocess.run(["make", "-s", "-C", ROOT, "install", f"DESTDIR={dest}", "PREFIX=/usr"],
                   check=True, capture_output=True, timeout=300)
    for tool in ("cachestats", "cachedel"):
        for p in (f"usr/bin/{tool}", f"usr/share/man/man1/{tool}.1",
                  f"usr/share/bash-completion/completions/{tool}"):
            assert (dest / p).is_file(), p
