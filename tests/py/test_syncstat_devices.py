# SPDX-License-Identifier: MIT
"""syncstat's device attribution: the disks under the synced files, from
the counters every user can read (/sys/block/DEV/stat), read by the test
itself as the control; tmpfs, a loop device, /sys hidden, and a kept
directory's forged sample file."""
import json
import os
import subprocess

import jsonschema
import pytest

from conftest import cmdline, run
from helpers import SCHEMA, SYNCSTAT, slot, write_records

FSYNC = [("syscalls:sys_enter_fsync", None)]
N = 40


def fsyncs(path, n=N):
    """A program making n fsyncs of one file, each after a write."""
    return ["python3", "-c", f"""
import os
fd = os.open({str(path)!r}, os.O_WRONLY | os.O_CREAT, 0o600)
for i in range({n}):
    os.write(fd, b'x' * 4096)
    os.fsync(fd)
"""]


def disk_of(path):
    """The whole disk under path, as the test resolves it from sysfs."""
    st = os.stat(path)
    sys = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if os.path.exists(os.path.join(sys, "partition")):
        sys = os.path.dirname(sys)
    return os.path.basename(sys)


def flushes(disk):
    """The disk's completed flush requests (field 16 of its stat)."""
    return int(open(f"/sys/block/{disk}/stat").read().split()[15])


def syncstat(cmd, tmp_path, *args, **kw):
    out = tmp_path / "report.json"
    r = run([SYNCSTAT, "--json", "--output", out, *args, "--", *cmd], events=FSYNC, **kw)
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    return r, data


def test_fsyncs_on_ext4_are_the_disks_flushes(scratch, tmp_path):
    """N fsyncs of a file on ext4: the disk flushed at least N times (the
    test's own reading of /sys/block is the control), the report says so,
    and the share of the tree's time in the flushes is at most 100%."""
    disk = disk_of(scratch)
    before = flushes(disk)
    r, data = syncstat(fsyncs(scratch / "f"), tmp_path)
    control = flushes(disk) - before
    assert r.counts["syscalls:sys_enter_fsync"] == N, r.why()
    assert control >= N, f"this disk does not flush on fsync ({control}){r.why()}"
    dev = data["devices"]
    assert dev["available"] and dev["device_wide"], r.why()
    [d] = [d for d in dev["disks"] if d["name"] == disk]
    assert d["tree_calls"] == N
    assert N <= d["flushes"] <= control
    assert d["from_start"] and d["write_cache"] in ("write back", "write through")
    # No share when the disk spent longer writing and flushing than the tree
    # in its calls (others' writeback: this machine's other work), and then
    # only then.
    busier = d["write_ns"] + d["flush_ns"] > d["tree_total_ns"]
    assert (d["device_share_pct"] is None) == busier, d
    assert busier or 0 <= d["device_share_pct"] <= 100
    assert d["tree_total_ns"] == sum(f["total_ns"] for f in data["files"]
                                     if f["path"] == str(scratch / "f"))


def test_the_text_report_tells_the_disk_and_the_share(scratch, tmp_path):
    out = tmp_path / "report.txt"
    r = run([SYNCSTAT, "--output", out, "--", *fsyncs(scratch / "f")], events=FSYNC)
    text = out.read_text()
    assert f"  {disk_of(scratch)} (" in text, r.why()
    # The share, or why it cannot be told (the disk busier than the tree in
    # its calls: this machine's other writeback), never both and never neither.
    told = "in the device (its writes and cache flushes)" in text
    untold = "its share of that cannot be told" in text
    assert "cache flushes" in text and told != untold, text
    assert "what others did with it during the run is in them too" in text


@pytest.mark.root
def test_a_file_on_tmpfs_has_no_block_device(tmp_path):
    """The JSON names the file system and no disk; the text, kept and
    reported again later, says "no block device"."""
    shm = "/dev/shm"
    assert subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", shm],
                          capture_output=True, text=True).stdout.split()[-1] == "tmpfs"
    f = os.path.join(shm, f"syncstat-test-{os.getpid()}")
    keep = tmp_path / "kept"
    try:
        r, data = syncstat(fsyncs(f, 5), tmp_path, "--keep", keep)
    finally:
        os.unlink(f)
    assert r.counts["syscalls:sys_enter_fsync"] == 5, r.why()
    [fs] = [m for m in data["devices"]["file_systems"] if m["calls"] == 5]
    assert fs["fstype"] == "tmpfs" and fs["disks"] == []
    assert all(d["tree_calls"] == 0 for d in data["devices"]["disks"])
    text = subprocess.run([SYNCSTAT, "report", keep], capture_output=True, text=True)
    assert text.returncode == 0
    assert "no block device: 5 calls" in text.stderr and "on tmpfs (" in text.stderr


@pytest.fixture
def loop_mount(tmp_path):
    """An ext4 file system on a loop device over a file on this disk."""
    image, mnt = tmp_path / "image", tmp_path / "mnt"
    with open(image, "wb") as f:
        f.truncate(64 << 20)
    loop = subprocess.run(["losetup", "-f", "--show", image], capture_output=True,
                          text=True, check=True).stdout.strip()
    try:
        subprocess.run(["mkfs.ext4", "-q", loop], check=True)
        mnt.mkdir()
        subprocess.run(["mount", loop, mnt], check=True)
        yield loop, mnt
        subprocess.run(["umount", mnt], check=True)
    finally:
        subprocess.run(["losetup", "-d", loop])


def test_a_loop_device_counts_on_the_disk_under_its_file(loop_mount, tmp_path):
    loop, mnt = loop_mount
    r, data = syncstat(fsyncs(mnt / "f", 10), tmp_path)
    assert r.counts["syscalls:sys_enter_fsync"] == 10, r.why()
    [fs] = [m for m in data["devices"]["file_systems"] if m["calls"] == 10]
    assert fs["fstype"] == "ext4" and fs["via"] == os.path.basename(loop)
    assert fs["disks"] == [disk_of(tmp_path)]
    [d] = [d for d in data["devices"]["disks"] if d["name"] == disk_of(tmp_path)]
    assert d["tree_calls"] == 10


@pytest.mark.root
def test_sys_hidden_leaves_the_attribution_unavailable(scratch, tmp_path):
    """/sys hidden in a mount namespace: the run and the report go on, and
    say the attribution is unavailable; beside it, the same run with /sys."""
    out = tmp_path / "hidden.json"
    cmd = [SYNCSTAT, "--json", "--output", out, "--", *fsyncs(scratch / "f", 3)]
    hidden = ["unshare", "-m", "sh", "-c",
              'mount --make-rprivate / && mount -t tmpfs none /sys && exec "$@"', "-", *cmd]
    r = subprocess.run(hidden, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, cmdline(hidden) + r.stderr
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["calls"] == 3
    assert data["devices"] == {"available": False, "reason":
                               "/sys/dev/block could not be read when the run started"}
    _, control = syncstat(fsyncs(scratch / "f", 3), tmp_path)
    assert control["devices"]["available"]


def kept(d, devices, latency=1000):
    write_records(d, [slot(latency)])
    (d / "run").write_text("status 0\nwall 0.5\n")
    (d / "command").write_bytes(b"prog\0")
    (d / "devices").write_bytes(devices)


def report(d, *args):
    cmd = [SYNCSTAT, "report", *args, d]
    r = subprocess.run(cmd, capture_output=True, timeout=60)
    assert r.returncode in (0, 125), cmdline(cmd) + f" died: {r.returncode}"
    return r


GOOD = (b"syncstat-devices 1\nmount 0:0 ext4 - vda\n"
        b"sample 100\ndisk vda 254:0 0 1 0 17" + b" 1" * 17 + b"\n"
        b"sample 200\ndisk vda 254:0 0 1 0 17" + b" 3" * 17 + b"\n")
STAT = b" 0" * 17


@pytest.mark.parametrize("devices,why", [
    (b"garbage\n", "not a syncstat device sample file, version 1"),
    (b"syncstat-devices 2\n", "not a syncstat device sample file, version 1"),
    (GOOD + b"disk ../../etc 1:1 0 1 0 17" + STAT + b"\n", "a device's name is not a kernel's"),
    (GOOD + b"disk <script> 1:1 0 1 0 17" + STAT + b"\n", "a device's name is not a kernel's"),
    (GOOD + b"sample 50\n", "a sample older than the one before"),
    (GOOD + b"disk vda 254:0 0 1 0 99" + STAT + b"\n", "expected 11 to 17 counters"),
    (GOOD + b"disk vda 254:0 0 1 0 17" + b" 0" * 16 + b"\n", "expected a number"),
    (GOOD + b"disk vda 254:0 0 1 0 11" + STAT + b"\n", "more counters than announced"),
    (GOOD + b"disk vda 254:0 0 7 0 17" + STAT + b"\n", "expected a cache setting"),
    (GOOD + b"disk vda 254:0 0 1 0 17" + b" -1" * 17 + b"\n", "expected a number"),
    (GOOD + b"disk vda 254:0 0 1 0 17" + b" 18446744073709551616" * 17 + b"\n",
     "expected a number"),
    (GOOD + b"mount 1:2 ext4 - " + b"a " * 9 + b"\n", "too many disks under one file system"),
    (GOOD + b"sample 300", "the last line is cut short"),
    (GOOD + b"\0", "a NUL byte"),
    (GOOD + b"".join(b"disk d%d 1:%d 0 1 0 17%s\n" % (i, i, STAT) for i in range(70)),
     "too many disks"),
])
def test_a_forged_sample_file_is_refused(tmp_path, devices, why):
    d = tmp_path / "r"
    kept(d, devices)
    r = report(d)
    assert r.returncode == 125, r.stderr
    assert r.stderr.decode().startswith("syncstat: ") and why in r.stderr.decode()
    assert "devices: line " in r.stderr.decode()


def test_counters_that_go_backwards_or_wrap_are_never_negative(tmp_path):
    """A counter lower than the sample before: a 32-bit millisecond count
    wrapped, or the device was replaced (counted from zero); forged values
    at the top of the range saturate; the share stays within 100%."""
    top = 18446744073709551614
    d = tmp_path / "r"
    kept(d, b"syncstat-devices 1\nmount 0:0 ext4 - vda\n"
         b"sample 100\ndisk vda 254:0 0 1 0 17" + b" 4294967000" * 17 + b"\n"
         b"sample 200\ndisk vda 254:0 0 1 0 17" + b" 100" * 17 + b"\n"
         b"sample 300\ndisk vda 254:0 0 1 0 17" + b" %d" % top * 17 + b"\n")
    r = report(d, "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stderr)
    jsonschema.validate(data, SCHEMA)
    [disk] = data["devices"]["disks"]
    # ms fields: 4294967000 -> 100 wrapped (396), then + (top - 100); counts:
    # a decrease is a reset (+100).  Sums saturate, and JSON's counts stop
    # at 2^63 - 1.
    assert disk["flushes"] == 2 ** 63 - 1
    assert disk["flush_ns"] == 2 ** 63 - 1
    assert disk["device_share_pct"] is None
    assert report(d).returncode == 0
    assert report(d, "--html", tmp_path / "page.html").returncode == 0


def test_a_linked_sample_file_is_not_followed(tmp_path):
    d = tmp_path / "r"
    kept(d, GOOD)
    (d / "devices").rename(tmp_path / "elsewhere")
    (d / "devices").symlink_to(tmp_path / "elsewhere")
    r = report(d)
    assert r.returncode == 125
    assert b"devices: a symbolic link, not followed" in r.stderr


@pytest.mark.slow
def test_a_long_run_is_sampled_every_few_seconds(scratch, tmp_path):
    """The launcher samples while it waits (every 2 s), from a timer that is
    its own: the command starts with no timer and SIGALRM's default."""
    keep = tmp_path / "kept"
    probe = ("import signal, time\n"
             "assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)\n"
             "assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL\n"
             "time.sleep(4.5)\n")
    r, data = syncstat(["python3", "-c", probe], tmp_path, "--keep", keep)
    assert data["exit_status"] == 0, r.why()
    samples = (keep / "devices").read_text().count("\nsample ")
    assert data["devices"]["samples"] == samples >= 4, r.why()
    assert data["devices"]["span_ns"] >= 4_000_000_000


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_sample_file_that_is_not_a_regular_file_is_refused(tmp_path, kind):
    """A FIFO must not hang the report."""
    d = tmp_path / "r"
    kept(d, GOOD)
    (d / "devices").unlink()
    if kind == "fifo":
        os.mkfifo(d / "devices")
    else:
        (d / "devices").mkdir()
    r = report(d)
    assert r.returncode == 125
    assert b"devices: not a regular file" in r.stderr


# A /sys made up in a mount namespace, for the root file system's device
# MAJ:MIN ($1): a device whose slaves/ holds ten entries that are each that
# device again ("loop"), or a plain disk whose stat file is a FIFO ("fifo"),
# one that a process keeps open and has written counters to ("fed").
CRAFTED_SYS = """set -e
mount --make-rprivate /
mount -t tmpfs none /sys
mkdir -p /sys/dev/block /sys/devices/d /sys/class/block /sys/block/d
ln -s ../../devices/d "/sys/dev/block/$1"
echo "$1" > /sys/block/d/dev
if [ "$2" = loop ]; then
    mkdir /sys/devices/d/slaves
    for i in 0 1 2 3 4 5 6 7 8 9; do
        mkdir /sys/class/block/s$i
        echo "$1" > /sys/class/block/s$i/dev
        touch /sys/devices/d/slaves/s$i
    done
else
    mkfifo /sys/block/d/stat
fi
if [ "$2" = fed ]; then
    sh -c 'exec 3<>/sys/block/d/stat; echo 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 >&3
           exec sleep 60' </dev/null >/dev/null 2>&1 &
    writer=$!
fi
shift 2
set +e
"$@"
rc=$?
[ -z "${writer-}" ] || kill "$writer"
exit $rc
"""


@pytest.mark.root
@pytest.mark.parametrize("sysfs", ["loop", "fifo", "fed"])
def test_a_crafted_sys_does_not_hang_the_run(scratch, tmp_path, sysfs):
    """Devices made of each other (the walk would grow tenfold a level), a
    FIFO for a disk's counters: the run and its report end all the same,
    and nothing is read from the FIFO."""
    st = os.stat(scratch)
    out, kept = tmp_path / "report.json", tmp_path / "kept"
    cmd = [SYNCSTAT, "--json", "--output", out, "--keep", kept, "--",
           *fsyncs(scratch / "f", 3)]
    crafted = ["unshare", "-m", "sh", "-c", CRAFTED_SYS, "sh",
               f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}", sysfs, *cmd]
    try:
        r = subprocess.run(crafted, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("hangs: " + cmdline(crafted))
    assert r.returncode == 0, cmdline(crafted) + r.stderr
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["calls"] == 3
    samples = (kept / "devices").read_text()
    assert "\ndisk " not in samples, samples


@pytest.mark.parametrize("tree_ms,share", [(10, 40.0), (4, 100.0), (3, None)])
def test_a_device_busier_than_the_tree_has_no_share(tmp_path, tree_ms, share):
    """The disk's writes and flushes (2 + 2 ms here) against the tree's 10, 4
    or 3 ms in durability calls: up to 40%, up to 100%, and then no share at
    all -- the counters are device-wide, others' writeback is in them, and
    "up to 100%" (what any writeback beside the run gave) bounds nothing."""
    d = tmp_path / "r"
    kept(d, GOOD, latency=tree_ms * 1000000)
    data = json.loads(report(d, "--json").stderr)
    jsonschema.validate(data, SCHEMA)
    [disk] = data["devices"]["disks"]
    assert disk["device_share_pct"] == share
    text = report(d).stderr.decode()
    if share is None:
        assert "its share of that cannot be told: the device spent longer in writes and " \
               "cache flushes than the tree in those calls" in text, text
        assert "in the device (its writes" not in text
    else:
        assert f"up to {share:.0f}% in the device (its writes and cache flushes)" in text, text
    html = tmp_path / "page.html"
    assert report(d, "--html", html).returncode == 0
    assert ("cannot be told" if share is None else f"up to {share:.0f}%") in html.read_text()
