# SPDX-License-Identifier: MIT
"""The intercepted functions, one row each: the symbol the library exports and
the tests/c/entry.c requests that reach it (program, call)."""

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
    "pwritev2": [("entry", "pwritev2")],
    "pwritev64v2": [("entry", "pwritev64v2")],
    "syscall": [("entry", f"syscall-{c}") for c in (
        "fsync", "fdatasync", "sync", "syncfs", "sync_file_range", "msync",
        "open", "openat", "openat2", "write", "pwritev2")],
}

REQUESTS = [(sym, prog, call) for sym, rows in ENTRY_POINTS.items()
            for prog, call in rows]

# Wrapped only for syncstat: the writes on O_SYNC descriptors, and the
# directory entries --audit follows.
RECORDED_ONLY = {"write", "writev", "pwrite", "pwrite64", "pwritev", "pwritev64",
                 "rename", "renameat", "renameat2", "link", "linkat"}
