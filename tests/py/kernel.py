# SPDX-License-Identifier: MIT
"""The kernel as the reference for crashtest's models: the command runs on a
real file system (a loop-mounted ext4 or xfs image inside a host xfs image
that can share extents), and at each crash point the library stops it (its
test hook, CRASHTEST_HOOK_FD) while the image is copied with a reflink: the
device as a power cut at that instant would leave it.  Each copy is mounted
(its journal replays), checked with the same checker, unmounted and found
clean by fsck.  The kernel's verdict at a point must be one of the verdicts
the model's states gave at that point.  Needs root (loop devices, mounts)."""
import json
import os
import random
import select
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from conftest import cmdline
from helpers import CRASHTEST

# ext4 as most systems have it, committing its journal each second (it
# commits every five by default: the states between are the same kind);
# xfs as mkfs makes it.
FILE_SYSTEMS = {
    "ext4": (["mkfs.ext4", "-q", "-F", "-b", "4096"], 128 << 20, ["commit=1"], ["e2fsck", "-fn"]),
    "xfs": (["mkfs.xfs", "-q", "-f"], 320 << 20, [], ["xfs_repair", "-n"]),
}
MODEL = {"ext4": "ext4-ordered", "xfs": "xfs"}


def sh(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, timeout=120,
                          **kw)


@contextmanager
def mounted(image, where, options=()):
    where.mkdir(exist_ok=True)
    sh("mount", "-o", ",".join(["loop", *options]), image, where)
    try:
        yield where
    finally:
        for _ in range(50):
            r = subprocess.run(["umount", where], capture_output=True, text=True)
            if r.returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"umount {where}: {r.stderr}")
        # The loop device is let go after the unmount returns, and until
        # then may not have written all it was given into the image (an
        # xfs log found dirty by xfs_repair -n, twice, on a loaded machine).
        for _ in range(100):
            if not subprocess.run(["losetup", "-j", image], capture_output=True,
                                  text=True).stdout.strip():
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"{image} is still on a loop device after its unmount")


@contextmanager
def host(tmp):
    """A host xfs image (reflinks) mounted at tmp/host."""
    image = tmp / "host.img"
    with open(image, "wb") as f:
        f.truncate(4 << 30)
    sh("mkfs.xfs", "-q", "-f", image)
    with mounted(image, tmp / "host") as where:
        yield where


@contextmanager
def writeback(centisecs):
    """The kernel's writeback every `centisecs`, data older than that
    written: unsynced data reaches the disk between the program's calls."""
    keys = ["vm.dirty_writeback_centisecs", "vm.dirty_expire_centisecs"]
    old = {k: sh("sysctl", "-n", k).stdout.decode().strip() for k in keys}
    try:
        for k in keys:
            sh("sysctl", "-q", f"{k}={centisecs}")
        yield
    finally:
        for k, v in old.items():
            sh("sysctl", "-q", f"{k}={v}")


@dataclass
class Snapshot:
    point: int
    image: Path
    output: bytes
    held: float


@dataclass
class Case:
    fs: str
    snapshots: list = field(default_factory=list)
    report: dict = None
    rel: str = None  # the run directory's work copy, relative to the guest's top


def stop_group(pgid):
    """SIGSTOP the command's process group, and wait until every thread of
    it is stopped (a thread in a system call finishes it first)."""
    os.killpg(pgid, signal.SIGSTOP)
    for _ in range(1000):
        running = False
        for p in Path("/proc").iterdir():
            if not p.name.isdigit():
                continue
            try:
                if int((p / "stat").read_text().rsplit(")", 1)[1].split()[2]) != pgid:
                    continue
                for t in (p / "task").iterdir():  # a zombie is stopped for good
                    running |= (t / "stat").read_text().rsplit(")", 1)[1].split()[0] not in "TtZX"
            except (OSError, IndexError, ValueError):
                continue
        if not running:
            return
        time.sleep(0.001)
    raise AssertionError("the command's group would not stop")


# A snapshot at the end, at each durability call and claim (CT_SYNC,
# CT_SYNC_ALL, CT_CLAIM in include/crashtest.h), at the first changes and,
# drawn, at a part of the others.
DURABLE_OR_CLAIM = {13, 14, 16}
STEPS = 0.2


def run_case(tmp, hostdir, fs, setup, command, check, holds=0.12, seed=1):
    """crashtest with the fs's model on `command` in a guest fs, a snapshot
    at crash points (held stopped 1.1 s at `holds` of them, drawn with
    `seed`, for the journal to commit meanwhile); returns the Case."""
    mkfs, size, options, _ = FILE_SYSTEMS[fs]
    image = hostdir / f"{fs}.img"
    with open(image, "wb") as f:
        f.truncate(size)
    sh(*mkfs, image)
    case, rng = Case(fs), random.Random(seed)
    guest = tmp / "guest"
    with mounted(image, guest, options):
        setup(guest / "dir")
        (guest / "tmp").mkdir()
        sh("sync")
        to_lib, from_harness = os.pipe(), os.pipe()
        env = dict(os.environ, TMPDIR=str(guest / "tmp"),
                   CRASHTEST_HOOK_FD=f"{to_lib[1]}:{from_harness[0]}")
        cmd = [str(CRASHTEST), "--json", "--each", "--writes", "--states=100000",
               f"--model={MODEL[fs]}", f"--check={check}", str(guest / "dir"), "--", *command]
        out, err = tmp / "report.json", tmp / "errors"
        with open(out, "wb") as o, open(err, "wb") as e:
            p = subprocess.Popen(cmd, env=env, stdout=o, stderr=e, start_new_session=True,
                                 pass_fds=(to_lib[1], from_harness[0]))
        os.close(to_lib[1])
        os.close(from_harness[0])
        try:
            hook(case, p, to_lib[0], from_harness[1], image, hostdir, guest, rng, holds)
            p.wait(timeout=600)
        finally:
            if p.poll() is None:  # crashtest and its tree, all of it: it is a subreaper
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        assert p.returncode in (0, 1, 2), f"\nrerun: {cmdline(cmd)}\n{err.read_text()}"
        case.report = json.loads(out.read_text())
    return case


def hook(case, p, reader, writer, image, hostdir, guest, rng, holds):
    """Answer the library at each crash point, snapshotting first, until
    crashtest ends (it keeps the pipe open while it builds the states)."""
    lines = os.fdopen(reader, "rb", buffering=0)
    buf, deadline = b"", time.monotonic() + 600
    while p.poll() is None:
        assert time.monotonic() < deadline, "the command never reached its next crash point"
        ready, _, _ = select.select([lines], [], [], 0.2)
        chunk = lines.read(4096) if ready else b""
        if ready and not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            point, pgid, kind = map(int, line.split())
            if not point:  # the end: crashtest waited for the whole tree
                case.snapshots.append(snapshot(case, 0, image, hostdir, guest, 0))
            elif kind in DURABLE_OR_CLAIM or point <= 4 or rng.random() < STEPS:
                stop_group(pgid)
                held = 1.1 if rng.random() < holds else 0
                time.sleep(held)
                case.snapshots.append(snapshot(case, point, image, hostdir, guest, held))
                os.killpg(pgid, signal.SIGCONT)
            os.write(writer, b"x")
    os.close(writer)


def snapshot(case, point, image, hostdir, guest, held):
    run = next((guest / "tmp").glob("crashtest.*"))
    case.rel = str((run / "work").relative_to(guest))
    snap = hostdir / f"snap-{case.fs}-{point}-{len(case.snapshots)}.img"
    sh("cp", "--reflink=always", image, snap)
    return Snapshot(point, snap, (run / "out").read_bytes(), held)


def kernel_verdicts(case, tmp, check):
    """Each snapshot mounted (its journal replayed), checked, unmounted,
    found clean by fsck: (point, checker's exit status, held)."""
    _, _, options, fsck = FILE_SYSTEMS[case.fs]
    where = tmp / "snap"
    out = []
    for s in case.snapshots:
        output = tmp / "output"
        output.write_bytes(s.output)
        with mounted(s.image, where, options + (["nouuid"] if case.fs == "xfs" else [])) as top:
            r = subprocess.run(["sh", "-c", check], cwd=top / case.rel, capture_output=True,
                               timeout=120, env=dict(os.environ, CRASHTEST_OUTPUT=str(output)))
        clean = subprocess.run([*fsck, s.image], capture_output=True)
        for _ in range(3):
            if b"metadata changes in a log" not in clean.stdout + clean.stderr:
                break
            # xfs_repair -n found the log not yet clean after the unmount
            # (twice in many runs, on a loaded machine): mounted and
            # unmounted again, which replays and settles it.
            with mounted(s.image, where, options + ["nouuid"]):
                pass
            clean = subprocess.run([*fsck, s.image], capture_output=True)
        kernel_log = subprocess.run(["dmesg"], capture_output=True, text=True).stdout[-3000:]
        assert clean.returncode == 0, \
            f"{s.image} is not clean:\n{clean.stdout}{clean.stderr}\nkernel log:\n{kernel_log}"
        out.append((s.point, r.returncode, s.held))
        s.image.unlink()
    return out


def model_statuses(report):
    """Per crash point (0: the end), the checker's exit statuses over its
    states."""
    return {p["point"] or 0: {s["check_status"] for s in p["states"]} for p in report["points"]}
