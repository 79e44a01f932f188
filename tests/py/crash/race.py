# SPDX-License-Identifier: MIT
"""race.py -- a write made by one thread while another's fsync of the same
file is under way, to a region written (and saved) before the fsync began.
Tries until the write falls inside the fsync (64 MiB of dirty data make it
slow) and prints "inside" then; at most ATTEMPTS times (argument, 20)."""
import os
import sys
import threading
import time

fd = os.open('data', os.O_RDWR)
for attempt in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
    os.pwrite(fd, b'first', 0)
    os.pwrite(fd, os.urandom(1 << 20) * 64, 4096)
    began = threading.Event()
    times = {}

    def syncer():
        began.set()
        times['start'] = time.monotonic()
        os.fsync(fd)
        times['end'] = time.monotonic()

    t = threading.Thread(target=syncer)
    t.start()
    began.wait()
    time.sleep(0.002)
    w = time.monotonic()
    os.pwrite(fd, b'SECND', 0)
    t.join()
    if times['start'] < w < times['end']:
        print('inside', flush=True)
        break
