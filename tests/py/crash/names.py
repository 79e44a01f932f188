# SPDX-License-Identifier: MIT
"""names.py SEED OPS -- seeded creates, writes, renames, links and unlinks of
files in two directories, and fsyncs of files and directories, for
crashtest's differential test of names.  Before each fsync it prints what
the fsync makes durable: "filesync LABEL SHA256" (a file's contents, LABEL
naming its inode) or "dirsync DIR PATH:LABEL..." (a directory's entries).
Renames and links stay within a directory: the posix model asks a rename
between two directories for both fsyncs, which this checker does not model."""
import hashlib
import os
import random
import sys

rng = random.Random(int(sys.argv[1]))
label = {"a": "a0", "b": "b0"}  # path -> its inode's label
created = 0


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def sibling(path):
    """A name in path's directory."""
    return os.path.normpath(os.path.join(os.path.dirname(path), "f%d" % rng.randrange(6)))


def fsync(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


for _ in range(int(sys.argv[2])):
    op = rng.random()
    names = sorted(label)
    d = rng.choice([".", "d"])
    new = os.path.normpath(os.path.join(d, "f%d" % rng.randrange(6)))
    p = rng.choice(names) if names else None
    if op < 0.15 and new not in label:
        created += 1
        fd = os.open(new, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        os.write(fd, rng.randbytes(rng.randrange(1, 3000)))
        os.close(fd)
        label[new] = "n%d" % created
    elif op < 0.35 and p:
        fd = os.open(p, os.O_WRONLY)
        os.pwrite(fd, rng.randbytes(rng.randrange(1, 3000)), rng.randrange(0, 4000))
        os.close(fd)
    elif op < 0.45 and p and (q := sibling(p)) != p:
        os.rename(p, q)  # between two links of one inode: does nothing
        if label.get(q) != label[p]:
            label[q] = label.pop(p)
    elif op < 0.52 and p and (q := sibling(p)) not in label:
        os.link(p, q)
        label[q] = label[p]
    elif op < 0.6 and p:
        os.unlink(p)
        label.pop(p)
    elif op < 0.8 and p:
        print("filesync", label[p], digest(p), flush=True)
        fsync(p)
    elif op >= 0.8:
        print("dirsync", d, " ".join("%s:%s" % (q, lab) for q, lab in sorted(label.items())
                                     if (os.path.dirname(q) or ".") == d), flush=True)
        fsync(d)
