# SPDX-License-Identifier: MIT
"""appenders.py [PAD] -- two processes append a record each to `log`, one
after the other, then each fsyncs it and prints its record (both appends
come before either fsync).  With PAD, the
first record is padded with spaces to PAD bytes (512: the second record is
in the next sector).  Each prints with one write: print() makes two when
stdout is unbuffered (PYTHONUNBUFFERED), and the two processes' lines then
interleave ("rec 1rec 11"), a record the checker finds nowhere."""
import os
import sys

pad = int(sys.argv[1]) if len(sys.argv) > 1 else 0
first = b"rec 1".ljust(pad - 1) + b"\n" if pad else b"rec 1\n"
r, w = os.pipe()
back_r, back_w = os.pipe()
if os.fork() == 0:
    os.read(r, 1)
    fd = os.open("log", os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"rec 11\n")
    os.write(back_w, b"x")
    os.fsync(fd)
    os.write(1, b"rec 11\n")
    os._exit(0)
fd = os.open("log", os.O_WRONLY | os.O_APPEND)
os.write(fd, first)
os.write(w, b"x")
os.read(back_r, 1)  # both appends are made before either fsync
os.fsync(fd)
os.write(1, b"rec 1\n")
os.wait()
