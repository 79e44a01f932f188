# SPDX-License-Identifier: MIT
"""Every entry point, from a C program: the request reaches the disk when run
natively and never under eatmydata, from one thread, many, a forked child,
a fortified build and a 32-bit build.

Each test's runs, every entry point's native and eaten alike, are made in
one perf run (conftest's batch) the first time one of its cases asks, each
in a directory of its own; each case then checks its own entry point's
runs, and its message names it and the command to rerun."""
import subprocess

import pytest

from conftest import BUILD, EATMYDATA, LIB_DIRS, SYNC_EVENTS, TESTS, checked, eaten, eating
from helpers import (ENTRY_POINTS, NEW_ENTRIES, RECORDED_ONLY, REQUESTS, SYNC_OPENS, SYNCSTAT,
                     findings, report)

VARIANTS = {
    "plain": [],
    "threads": ["-t", "16"],
    "fork": ["-f"],
}


@pytest.mark.parametrize("sym,prog,call", REQUESTS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_request_is_eaten(batch, sym, prog, call, variant):
    runs = batch("eaten", [(v, p, c, how) for v in VARIANTS for _, p, c in REQUESTS
                           for how in ("native", "eaten")],
                 lambda row, d, _: (eating if row[3] == "eaten" else list)(
                     [TESTS / row[1], *VARIANTS[row[0]], row[2], d]))
    native, _ = runs[variant, prog, call, "native"]
    assert checked(native).syncs > 0, f"{sym}: never reached the disk natively" + native.why()
    under, _ = runs[variant, prog, call, "eaten"]
    assert checked(under).syncs == 0, f"{sym} let durability through" + under.why()


# The syscalls: tracepoints do not see a 32-bit process's system calls;
# sync_file_range shows as writeback the process started itself.
EVENTS_32 = SYNC_EVENTS + [("ext4:ext4_writepages", None)]


@pytest.mark.parametrize("sym,prog,call",
                         [r for r in REQUESTS if r[1] == "entry"])
def test_32bit_request_is_eaten(batch, sym, prog, call):
    entry32 = TESTS / "entry32"
    assert entry32.exists(), "no 32-bit build: install gcc-multilib"
    runs = batch("eaten32", [(c, how) for _, p, c in REQUESTS if p == "entry"
                             for how in ("native", "eaten")],
                 lambda row, d, _: [entry32, row[0], d] if row[1] == "native"
                 else eating([entry32, "-f", row[0], d]), events=EVENTS_32)
    native, _ = runs[call, "native"]
    assert checked(native).syncs > 0, f"{sym}: never reached the disk natively" + native.why()
    under, _ = runs[call, "eaten"]
    assert checked(under).syncs == 0, f"{sym} let durability through" + under.why()


# Each request also from the 32-bit build, whose wrappers are other code.
BOTH_CLASSES = REQUESTS + [(sym, "entry32", call) for sym, prog, call in REQUESTS
                           if prog == "entry"]
# The kernel's own count of the O_SYNC opens; it does not see a 32-bit
# process's system calls.
SYNC_OPEN_EVENTS = [("ext4:ext4_sync_file_enter", None),
                    ("syscalls:sys_enter_open", "flags & 0x101000"),
                    ("syscalls:sys_enter_openat", "flags & 0x101000"),
                    ("syscalls:sys_enter_openat2", None),
                    ("syscalls:sys_enter_open_by_handle_at", "flags & 0x101000")]
SYNC_OPENS_BOTH = SYNC_OPENS + [
    (sym, "entry32", call) for sym, prog, call in SYNC_OPENS if prog == "entry"]


@pytest.mark.parametrize("sym,prog,call", SYNC_OPENS_BOTH)
def test_syncstat_counts_the_writes_the_kernel_syncs(batch, sym, prog, call):
    """Whatever the entry point of the open, syncstat records it and then
    each write on its descriptor: as many as the kernel synced."""
    # The 32-bit program's opens are counted in its 64-bit build.
    runs = batch("syncstat", [(p, c, "syncstat") for _, p, c in SYNC_OPENS_BOTH] + [
        ("entry", c, "alone") for _, p, c in SYNC_OPENS_BOTH if p == "entry32"],
        lambda row, d, tmp: [TESTS / row[0], row[1], d] if row[2] == "alone" else
        [SYNCSTAT, "--json", "--output", tmp / "report.json", "--", TESTS / row[0], row[1], d],
        events=SYNC_OPEN_EVENTS)
    r, tmp = runs[prog, call, "syncstat"]
    data = report(checked(r) and tmp / "report.json")
    # O_DSYNC and O_SYNC are told apart; both sync every write.
    count = {}
    for g in data["groups"]:
        kind = g["kind"].replace("O_DSYNC", "O_SYNC")
        count[kind] = count.get(kind, 0) + g["count"]
    kernel = r.counts["ext4:ext4_sync_file_enter"]
    assert kernel > 0, f"{sym}" + r.why()
    assert count.get("write(O_SYNC)") == kernel, f"{sym}: {count}" + r.why()
    if prog == "entry32":
        r = checked(runs["entry", call, "alone"][0])
    opens = sum(v for k, v in r.counts.items() if k.startswith("syscalls:"))
    assert count.get("open(O_SYNC)") == opens > 0, f"{sym}: {count}" + r.why()


@pytest.mark.parametrize("sym,prog,call", BOTH_CLASSES)
def test_sync_on_exit_after_each_request(batch, sym, prog, call):
    """An eaten request is noted: --sync-on-exit syncs at the end (syncfs of
    the noted file system, or sync), and nothing else does."""
    runs = batch("sync-on-exit", [(p, c) for _, p, c in BOTH_CLASSES],
                 lambda row, d, _: [EATMYDATA, "--sync-on-exit", TESTS / row[0], row[1], d])
    r, _ = runs[prog, call]
    exit_syncs = checked(r).counts["syscalls:sys_enter_syncfs"] + \
        r.counts["syscalls:sys_enter_sync"]
    assert exit_syncs == 1, f"{sym} was not noted" + r.why()


NEW_ENTRY_ROWS = [(sym, prog, call) for sym, calls in NEW_ENTRIES.items() for call in calls
                  for prog in ("entry", "entry32")]


@pytest.mark.parametrize("sym,prog,call", NEW_ENTRY_ROWS)
def test_audit_follows_each_new_entry(batch, sym, prog, call):
    """The file is synced, the directory of its new entry never is: --audit
    says so, whichever call made the entry."""
    runs = batch("audit", [(p, c) for _, p, c in NEW_ENTRY_ROWS],
                 lambda row, d, tmp: [SYNCSTAT, "--audit", "--json", "--output",
                                      tmp / "audit.json", "--", TESTS / row[0], row[1], d])
    r, tmp = runs[prog, call]
    found = findings(checked(r) and tmp / "audit.json")
    assert [(p, n) for p, n, _ in found] == [("dir-not-synced", prog)], \
        f"{sym}: {found}" + r.why()
    assert found[0][2].startswith(f"{tmp}/w/o"), f"{sym}: {found}" + r.why()


def test_fortified_build_calls_the_fortified_entry_points():
    syms = subprocess.run(["nm", "-D", TESTS / "entry-fortify"], text=True,
                          capture_output=True, check=True).stdout
    for sym, rows in ENTRY_POINTS.items():
        if any(prog == "entry-fortify" for prog, _ in rows):
            assert f" {sym}@" in syms, f"entry-fortify does not call {sym}"


NOCACHE_EXPORTS = {
    "read", "readv", "pread", "pread64", "preadv", "preadv64", "preadv2", "preadv64v2",
    "write", "writev", "pwrite", "pwrite64", "pwritev", "pwritev64", "pwritev2",
    "pwritev64v2", "copy_file_range", "sendfile", "sendfile64", "close", "fclose",
    "dup2", "dup3", "closefrom", "close_range", "_exit", "_Exit",
    "execve", "execv", "execvp", "execvpe", "fexecve", "execveat", "execl", "execlp", "execle",
    "fopen", "fopen64", "fdopen", "freopen", "freopen64",
    # What would see a parked file (libnocache/visible.c).
    "fork", "vfork", "posix_spawn", "posix_spawnp", "system", "popen", "umount", "umount2",
    "unlink", "unlinkat", "remove", "rename", "renameat", "renameat2",
    # libuv's close (libnocache/fd.c), a file cut short (io.c), mappings (mmap.c).
    "syscall", "ftruncate", "ftruncate64", "mmap", "mmap64", "munmap", "mremap", "mprotect"}
EXPORTS = {"eatmydata": set(ENTRY_POINTS) | set(NEW_ENTRIES) | RECORDED_ONLY, "nocache": NOCACHE_EXPORTS,
           "hirestimes": {"times", "sysconf", "__sysconf"},
           "crashtest": {
               "open", "open64", "openat", "openat64", "creat", "creat64", "__open_2",
               "__open64_2", "__openat_2", "__openat64_2", "write", "pwrite", "pwrite64",
               "writev", "pwritev", "pwritev64", "ftruncate", "ftruncate64", "truncate",
               "truncate64", "fsync", "fdatasync", "sync", "syncfs", "msync", "mmap", "mmap64",
               "rename", "renameat", "renameat2", "link", "linkat", "unlink", "unlinkat",
               "mkdir", "mkdirat", "rmdir", "symlink", "symlinkat",
               "munmap", "fopen", "fopen64", "freopen", "freopen64", "fdopen", "fclose",
               "mkstemp", "mkstemp64", "mkostemp", "mkostemp64", "mkstemps", "mkstemps64",
               "mkostemps", "mkostemps64", "mkdtemp",
               "sync_file_range", "pwritev2", "pwritev64v2", "copy_file_range", "sendfile",
               "sendfile64", "fallocate", "fallocate64", "posix_fallocate", "posix_fallocate64",
               "mknod", "mknodat", "mkfifo", "mkfifoat", "bind", "syscall",
               # claims: what a program tells the world, and the descriptors that carry it
               "send", "sendto", "sendmsg", "sendmmsg", "vmsplice", "splice", "tee", "dup2",
               "dup3",
               # the picture of stdio buffers and mappings before an exec replaces the image
               "execve", "execv", "execvp", "execvpe", "fexecve", "execveat", "execl",
               "execlp", "execle",
               # a program the library cannot enter, named before it starts
               "posix_spawn", "posix_spawnp",
               # the release of a file emptied through its descriptor
               # (auto_da_alloc), and libc's children that may hold one
               "close", "system", "popen"}}


# Every library of both ELF classes; an empty list must fail, not skip.
LIBS = sorted(p for d in LIB_DIRS for p in (BUILD / d).glob("lib*.so"))


@pytest.mark.parametrize("lib", LIBS or [None], ids=lambda p: f"{p.parent.name}/{p.name}" if p else "none")
def test_exports_only_the_intercepted_functions(lib):
    assert lib and len(LIBS) == 8, f"expected 4 libraries in each of 2 classes, found {LIBS}"
    out = subprocess.run(["nm", "-D", "--defined-only", lib], text=True,
                         capture_output=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    assert exported == EXPORTS[lib.stem[3:]], f"nm -D --defined-only {lib}"


def test_disable_passes_everything_through(scratch):
    under = eaten([TESTS / "entry", "-t", "4", "fsync", scratch],
                  env={"EATMYDATA_DISABLE": "1"})
    assert under.syncs > 0, under.why()
    assert EATMYDATA.exists()
