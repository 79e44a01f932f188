# SPDX-License-Identifier: MIT
"""The intercepted functions, one row each: the symbol the library exports and
the tests/c/entry.c requests that reach it (program, call)."""
from conftest import REQUESTS as TABLE

ENTRY_POINTS = {
    "fsync": [("entry", "fsync")],
    "fdatasync": [("entry", "fdatasync")],
    "sync": [("entry", "sync")],
    "syncfs": [("entry", "syncfs")],
    "sync_file_range": [("entry", "sync_file_range")],
    "msync": [("entry", "msync")],
    "open": [("entry", "open")],
    "open64": [("entry", "open64")],
    "openat": [("entry", "openat")],
    "openat64": [("entry", "openat64")],
    # A fortified build calls these when the flags are not a constant.
    "__open_2": [("entry-fortify", "open-nomode")],
    "__open64_2": [("entry-fortify", "open64-nomode")],
    "__openat_2": [("entry-fortify", "openat-nomode")],
    "__openat64_2": [("entry-fortify", "openat64-nomode")],
    # glibc's own open makes these, with the flags they are given.
    "mkostemp": [("entry", "mkostemp")],
    "mkostemp64": [("entry", "mkostemp64")],
    "mkostemps": [("entry", "mkostemps")],
    "mkostemps64": [("entry", "mkostemps64")],
    "open_by_handle_at": [("entry", "open_by_handle_at")],
    "pwritev2": [("entry", "pwritev2")],
    "pwritev64v2": [("entry", "pwritev64v2")],
    # Every request of the table the library eats (include/requests.h);
    # syscall-osync: two O_SYNC files opened through syscall(), written
    # through syscall() and through libc.
    # (Not io_uring's: its rings make no request through syscall() that
    # syncs by itself; test_tree.py runs them.)
    "syscall": [("entry", f"syscall-{r.name}") for r in TABLE
                if r.nr >= 0 and r.eat not in ("none", "uring", "ring")] + [("entry", "syscall-osync")],
    # A static program started through each exec entry point: the process
    # puts itself under the filter first (posix_spawn: the launcher stands
    # in for the program).
    **{f: [("entry", f"exec-{f}")] for f in (
        "execve", "execv", "execvp", "execvpe", "execl", "execle", "execlp", "fexecve",
        "execveat", "posix_spawn", "posix_spawnp")},
}

REQUESTS = [(sym, prog, call) for sym, rows in ENTRY_POINTS.items()
            for prog, call in rows]

# The requests that open with O_SYNC or O_DSYNC and write: syncstat records
# each open, and each write, which the kernel syncs.
SYNC_OPENS = [r for r in REQUESTS
              if "open" in r[2] or r[2] in ("syscall-osync",) or r[2].startswith("mk")]

# The calls that make a directory entry (create, rename, link) for a file
# they sync or find synced, never syncing the directory: syncstat --audit
# follows each entry, whatever the call.
NEW_ENTRIES = {
    "open": ["open"], "open64": ["open64"], "openat": ["openat"],
    "openat64": ["openat64"], "creat": ["creat"], "creat64": ["creat64"],
    "rename": ["rename"], "renameat": ["renameat"], "renameat2": ["renameat2"],
    "link": ["link"], "linkat": ["linkat"],
    **{c: [c] for c in ("fopen", "fopen64", "freopen", "freopen64", "mkstemp", "mkstemp64", "mkstemps", "mkstemps64", "mkostemp",
                        "mkostemp64", "mkostemps", "mkostemps64")},
    "syscall": [f"syscall-{c}" for c in (
        "open", "openat", "openat2", "creat", "rename", "renameat", "renameat2",
        "link", "linkat")],
}

# Wrapped only for syncstat: the writes on O_SYNC descriptors, the
# directory entries --audit follows, and creat, which cannot sync.
RECORDED_ONLY = {"write", "writev", "pwrite", "pwrite64", "pwritev", "pwritev64",
                 "rename", "renameat", "renameat2", "link", "linkat",
                 "creat", "creat64"}
