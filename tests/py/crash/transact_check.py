# SPDX-License-Identifier: MIT
"""transact_check.py -- the checker of `transact names` (tests/c/transact.c)
under crashtest: what a crash left in '.' must hold every transaction the
program said it committed ("committed K" in $CRASHTEST_OUTPUT), and nothing
it never wrote.

Each name and each inode has a timeline of values (below, in program order,
each change tagged with the transaction it belongs to).  Once K is said, a
name or an inode holds its value at the end of transaction K or a value a
later change gives it -- never an older one, nor one it never had.  Exit 1
says which name broke the rule, and what it held."""
import os
import re
import sys

# (transaction, object, value): an object is a name ("sub/a") or an inode
# ("@A"); a name's value is None (absent), "dir", "link:TARGET" or "file:@X",
# an inode's its contents.  Transaction 0 is DIR as the test makes it.
NAMES = [
    (0, "old", "file:@O"), (0, "@O", "old\n"),
    (1, "sub", "dir"),
    (2, "sub/a", "file:@A"), (2, "@A", ""), (2, "@A", "alpha\n"),
    (3, "sub/b", "file:@A"), (3, "sub/c", "link:a"),
    (4, "gone", "dir"), (4, "gone", None),
    (5, "sub/a", None),
    (6, "new.tmp", "file:@N"), (6, "@N", ""), (6, "@N", "new\n"), (6, "old", "file:@N"),
    (6, "new.tmp", None),
    (7, "@A", "alp"), (7, "@A", "aXY"),
    (8, "log", "file:@L"), (8, "@L", ""), (8, "@L", "one\ntwo\n"), (8, "@L", "ONE\ntwo\n"),
    (9, "moved", "file:@A"), (9, "sub/b", None),
    (10, "@A", ""), (10, "@A", "final\n"),
    (11, "sub/again", "file:@A"), (11, "sub/up", "link:../moved"), (11, "sub/c", None),
    (11, "gone2", "dir"), (11, "gone2", None),
]


def committed():
    said = re.findall(r"^committed (\d+)$", open(os.environ["CRASHTEST_OUTPUT"]).read(), re.M)
    return int(said[-1]) if said else 0


def fail(why):
    print(why)
    sys.exit(1)


def allowed(obj, k):
    """What obj may hold once transaction k was said."""
    values = set() if obj.startswith("@") else {None}
    for t, o, v in NAMES:
        if o == obj and t <= k:
            values = {v}
    return values | {v for t, o, v in NAMES if o == obj and t > k}


def found(name):
    if not os.path.lexists(name):
        return None
    if os.path.islink(name):
        return "link:" + os.readlink(name)
    return "dir" if os.path.isdir(name) else "file"


def check_names(k):
    known = {o for _, o, _ in NAMES if not o.startswith("@")}
    seen = {os.path.relpath(os.path.join(d, e)) for d, ds, fs in os.walk(".")
            for e in ds + fs}
    if seen - known:
        fail(f"committed {k}, and unexpected names: {sorted(seen - known)}")
    for name in sorted(known):
        got, may = found(name), allowed(name, k)
        if got == "file":
            text = open(name).read()
            inodes = [v[5:] for v in may if v and v.startswith("file:")]
            if not any(text in allowed(i, k) for i in inodes):
                fail(f"committed {k}, and {name} holds {text!r}, not one of "
                     f"{sorted(c for i in inodes for c in allowed(i, k))}")
        elif got not in may:
            fail(f"committed {k}, and {name} is {got}, not one of {sorted(may, key=str)}")


if __name__ == "__main__":
    check_names(committed())
