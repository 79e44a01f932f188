# SPDX-License-Identifier: MIT
"""nocache reading (make bench; alone: bench.py nocache).  A cold tree: tar,
dd (bs=4k and bs=1M), cp, rsync, cat and sha256sum of a 71 MiB tree none of
which is cached, natively, under nocache and under Debian's nocache, in
interleaved rounds (a new random order each).  For each: the medians of the
times and of the per-round ratios, what the run read from the disk (the
kernel's count, ru_inblock of its whole tree) and what of the tree it left
cached (fincore).  Then the library's cost per 64 KiB read of a cached
file, and the system calls it adds."""
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOCACHE = ROOT / "build" / "bin" / "nocache"
DEBIAN = Path("/usr/bin/nocache")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "9"))


def cold_tree(top):
    """src/: 400 files of 1 KiB to 1 MiB (as many of each power of two) in
    8 directories, and two of 8 MiB (big0, big1)."""
    rng = random.Random(33)
    src = top / "src"
    for i in range(400):
        d = src / f"d{i % 8}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:03d}").write_bytes(os.urandom(int(2 ** rng.uniform(10, 20))))
    for i in range(2):
        (src / f"big{i}").write_bytes(os.urandom(8 << 20))
    return src


def readers(src, out):
    big = src / "big0"
    find = f'find "{src}" -type f -exec'
    return {
        "tar cf": ["tar", "cf", out / "b.tar", "-C", src.parent, src.name],
        "dd bs=4k (8 MiB)": ["dd", f"if={big}", "of=/dev/null", "bs=4k", "status=none"],
        "dd bs=1M (8 MiB)": ["dd", f"if={big}", "of=/dev/null", "bs=1M", "status=none"],
        "cp -r": ["cp", "-r", src, out / "cp"],
        "rsync -a": ["rsync", "-a", f"{src}/", out / "rsync"],
        "cat": ["sh", "-c", f"{find} cat {{}} + > /dev/null"],
        "sha256sum": ["sh", "-c", f"{find} sha256sum {{}} + > /dev/null"],
    }


def files_of(src):
    return [str(p) for p in src.rglob("*") if p.is_file()]


def evict(paths):
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def cached_mib(paths):
    total = 0
    for i in range(0, len(paths), 500):
        out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES",
                              *paths[i:i + 500]], capture_output=True, text=True, check=True)
        total += sum(int(x) for x in out.stdout.split())
    return total / (1 << 20)


def timed(cmd):
    """(seconds, MiB read from the disk, CPU seconds) of cmd and all it
    started and waited for."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.execvp(cmd[0], [str(c) for c in cmd])
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - t0
    assert os.waitstatus_to_exitcode(status) == 0, cmd
    return elapsed, usage.ru_inblock * 512 / (1 << 20), usage.ru_utime + usage.ru_stime


def one_reader(name, src, top, modes):
    """ROUNDS interleaved rounds of one reader: per mode, times, and the
    MiB read and left cached in the last round."""
    paths = files_of(src)
    t = {m: [] for m in modes}
    read, left = {}, {}
    for r in range(ROUNDS):
        for mode in random.sample(list(modes), len(modes)):
            out = top / "out"
            out.mkdir()
            subprocess.run(["sync"], check=True)
            evict(paths)
            elapsed, read[mode], _ = timed(modes[mode] + readers(src, out)[name])
            t[mode].append(elapsed)
            left[mode] = cached_mib(paths)
            shutil.rmtree(out)
    return t, read, left


def ratio(t, a, b):
    return statistics.median(x / y for x, y in zip(t[a], t[b]))


def nocache_read_bench(top):
    """The table: each reader natively, under nocache and Debian's."""
    src = cold_tree(top)
    modes = {"native": [], "nocache": [str(NOCACHE)]}
    if DEBIAN.exists():
        modes["debian"] = [str(DEBIAN)]
    names = list(modes)
    size = sum(os.path.getsize(p) for p in files_of(src)) / (1 << 20)
    print(f"\nnocache: reading a cold {size:.0f} MiB tree; median of {ROUNDS} interleaved "
          "rounds (the ratios: of per-round ratios); MiB read from the disk by the whole run "
          "(ru_inblock) and MiB of the tree left cached, in the last round:\n")
    print("| reader | native s | nocache s | debian s | nocache / native | nocache / debian | "
          "MiB read " + " / ".join(names) + " | MiB cached " + " / ".join(names) + " |\n"
          "|---|---:|---:|---:|---:|---:|---|---|")
    for name in readers(src, top):
        t, read, left = one_reader(name, src, top, modes)
        deb = "debian" in modes
        print(f"| {name} | {statistics.median(t['native']):.3f} | "
              f"{statistics.median(t['nocache']):.3f} | "
              + (f"{statistics.median(t['debian']):.3f}" if deb else "—")
              + f" | {ratio(t, 'nocache', 'native'):.2f} | "
              + (f"{ratio(t, 'nocache', 'debian'):.2f}" if deb else "—")
              + " | " + " / ".join(f"{read[m]:.1f}" for m in names)
              + " | " + " / ".join(f"{left[m]:.1f}" for m in names) + " |", flush=True)
    shutil.rmtree(src)
    library_per_read(top)


def syscalls(cmd):
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["perf", "stat", "-x,", "-o", out.name, "-e", "raw_syscalls:sys_enter",
                        "--", *map(str, cmd)], check=True, stdout=subprocess.DEVNULL)
        return next(int(l.split(",")[0]) for l in out.read().splitlines() if "raw_syscalls" in l)


def library_per_read(top, runs=15):
    """What the library adds to a dynamic program's 64 KiB read of a cached
    file (dd): 4096 reads less 2048, so that start-up cancels; the CPU time
    of the run (user and system: wall time moves more with the machine's
    load than this), medians over interleaved runs, and the tree's system
    calls."""
    f = top / "cached"
    f.write_bytes(os.urandom(256 << 20))
    subprocess.run(["cat", f], check=True, stdout=subprocess.DEVNULL)
    dd = lambda n: ["dd", f"if={f}", "of=/dev/null", "bs=64k", f"count={n}", "status=none"]
    modes = {"native": [], "nocache": [str(NOCACHE)]}
    t = {(m, n): [] for m in modes for n in (2048, 4096)}
    for _ in range(runs):
        for m, n in random.sample(list(t), len(t)):
            t[m, n].append(timed(modes[m] + dd(n))[2])
    med = {k: statistics.median(v) for k, v in t.items()}
    us = ((med["nocache", 4096] - med["native", 4096]) -
          (med["nocache", 2048] - med["native", 2048])) / 2048 * 1e6
    calls = {n: syscalls(modes["nocache"] + dd(n)) - syscalls(dd(n)) for n in (2048, 4096)}
    print(f"\nnocache's library per 64 KiB read of a cached file (dd, 4096 reads less 2048, "
          f"CPU time, median of {runs} interleaved runs): {us:.2f} us, "
          f"{(calls[4096] - calls[2048]) / 2048:.2f} system calls.", flush=True)
    f.unlink()
