# SPDX-License-Identifier: MIT
"""nocache under attack: small descriptor limits, garbage in its options and
environment, a debug log path another user prepared, a read-only file
system, tmpfs; and what the parked files (a small file's writeback waited
for a few files later, on a descriptor of nocache's own) must never change:
the command's locks, its exec, its closefrom."""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import BUILD, cmdline, run
from helpers import DURABLE, NOCACHE, cached_bytes, cached_under, files_under, random_tree

# The library alone, as LD_PRELOAD users set it: ld.so picks the ELF class.
PRELOAD = f"{BUILD}/$LIB/libnocache.so"

# Python writing small files: each parked at its close.
WRITE_SMALL = """import os, sys
d = sys.argv[1]
for i in range(int(sys.argv[2])):
    fd = os.open(f"{d}/f{i}", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"x" * 16384)
    os.close(fd)
"""


def nocache(*args, **kw):
    return subprocess.run([str(NOCACHE), *map(str, args)], capture_output=True, text=True,
                          timeout=60, **kw)


@pytest.mark.parametrize("args,message", [
    (["-n", "0"], "-n: '0' is not a number from 1 to 100"),
    (["-n", "-1"], "-n: '-1' is not a number"),
    (["-n", "101"], "-n: '101'"),
    (["-n", "99999999999999999999999"], "-n: '99999999999999999999999'"),
    (["-n", "2x"], "-n: '2x'"),
    (["-n", ""], "-n: ''"),
    (["-n"], "-n: 'true' is not a number"),
    (["-D"], "no command given"),
    (["-D", "/nonexistent/dir/log"], "-D /nonexistent/dir/log: No such file or directory"),
    (["-D", "/dev/fd/999"], "-D /dev/fd/999: Bad file descriptor"),
])
def test_bad_options_exit_125(tmp_path, args, message):
    """Refused before anything is made: `-D true` with no command leaves no
    file called true."""
    r = nocache(*args, "true", cwd=tmp_path)
    assert r.returncode == 125 and r.stderr.startswith("nocache: ") and message in r.stderr, \
        r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("var,value", [
    ("NOCACHE_MAX_FDS", "abc"), ("NOCACHE_MAX_FDS", "-1"), ("NOCACHE_MAX_FDS", "1e9"),
    ("NOCACHE_MAX_FDS", "99999999999999999999"), ("NOCACHE_MAX_FDS", ""),
    ("NOCACHE_NR_FADVISE", "0"), ("NOCACHE_NR_FADVISE", "lots"),
    ("NOCACHE_DEBUGFD", "x"), ("NOCACHE_DEBUGFD", "500"),
])
def test_bad_environment(tmp_path, var, value):
    """The launcher refuses it (125, naming it); the library alone, which
    cannot print, ignores it and still drops what the command wrote."""
    r = nocache("true", env=dict(os.environ, **{var: value}))
    assert r.returncode == 125 and r.stderr.startswith(f"nocache: {var}"), r.stderr
    out = tmp_path / "copy"
    env = {var: value, "LD_PRELOAD": PRELOAD}
    native = tmp_path / "native"
    subprocess.run(["cp", "/etc/services", native], check=True)
    assert cached_bytes(native) > 0, "natively the copy is cached"
    r = run(["cp", "/etc/services", out], env=env, events=DURABLE)
    assert cached_bytes(out) == 0 and r.stderr == "", r.why()
    assert out.read_bytes() == Path("/etc/services").read_bytes()


def test_small_descriptor_limit(tmp_path):
    """ulimit -n 16: nothing is parked (no descriptor taken from the
    command), cp -r still runs and drops what it wrote."""
    src = random_tree(tmp_path / "src", 50, 16384)
    r = run(["sh", "-c", f'ulimit -n 16 && exec "{NOCACHE}" cp -r "{src}" "{tmp_path}/out"'],
            events=DURABLE)
    cached, size = cached_under(files_under(tmp_path / "out"))
    assert size == 50 * 16384 and cached == 0, r.why()


def test_descriptors_as_many_as_natively_at_a_small_limit(tmp_path):
    """At a limit below 256, a command that opens descriptors until EMFILE
    gets as many as natively."""
    script = WRITE_SMALL + """
n = 0
try:
    while True:
        os.open("/dev/null", os.O_RDONLY)
        n += 1
except OSError:
    print(n)
"""
    counts = []
    for prefix in ([], [str(NOCACHE)]):
        d = tmp_path / str(len(prefix))
        d.mkdir()
        r = subprocess.run(["sh", "-c", 'ulimit -n 200 && exec "$@"', "sh", *prefix,
                            "python3", "-c", script, d, "20"],
                           capture_output=True, text=True, timeout=60)
        counts.append(r.stdout)
    assert counts[0] == counts[1] and counts[0].strip().isdigit(), counts


def planted(tmp_path, kind):
    """A sticky, world-writable directory (like /tmp) where user nobody has
    put `log` first: a symbolic link to a file of root's, or a file of its
    own."""
    shared = Path(tempfile.mkdtemp(prefix="nocache-shared-", dir="/tmp"))
    shared.chmod(0o1777)
    victim = tmp_path / "victim"
    victim.write_text("root's\n")
    log = shared / "log"
    if kind == "symlink":
        how = f'ln -s "{victim}" "{log}"'
    elif kind == "file":
        how = f'echo nobody > "{log}" && chmod 666 "{log}"'
    else:
        how = f'mkfifo -m 666 "{log}"'
    subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                    "sh", "-c", how], check=True, timeout=30)
    return log, victim


@pytest.mark.parametrize("kind,message", [("symlink", "a symbolic link, not followed"),
                                          ("file", "not a regular file of this user's"),
                                          ("fifo", "not a regular file nor a character")])
def test_D_refuses_what_another_user_planted(tmp_path, kind, message):
    if os.geteuid() != 0:
        pytest.skip("needs root to act as another user")
    log, victim = planted(tmp_path, kind)
    try:
        r = nocache("-D", log, "cp", "/etc/passwd", tmp_path / "copy")
        assert r.returncode == 125 and message in r.stderr, r.stderr
        assert victim.read_text() == "root's\n"
        assert not (tmp_path / "copy").exists(), "the command must not run"
        if kind == "file":
            assert log.read_text() == "nobody\n"
    finally:
        shutil.rmtree(log.parent)


def test_D_refuses_a_second_link(tmp_path):
    """A hard link to a file of the user's elsewhere: its other name may be
    anything of value."""
    own = tmp_path / "precious"
    own.write_text("data\n")
    os.link(own, tmp_path / "log")
    r = nocache("-D", tmp_path / "log", "true")
    assert r.returncode == 125 and "one link" in r.stderr
    assert own.read_text() == "data\n"


@pytest.fixture
def read_only(tmp_path):
    """A read-only bind mount of a directory holding an uncached file."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount")
    src, ro = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    ro.mkdir()
    (src / "f").write_bytes(os.urandom(8 << 20))
    subprocess.run(["mount", "--bind", "-o", "ro", src, ro], check=True)
    try:
        yield ro
    finally:
        subprocess.run(["umount", ro], check=True)


def test_read_only_file_system(read_only, tmp_path):
    f = read_only / "f"
    subprocess.run(["sh", "-c", f'cat "{f}" > /dev/null'], check=True)
    assert cached_bytes(f) == 8 << 20, "natively the read fills the cache"
    subprocess.run([BUILD / "bin" / "cachedel", f], check=True)
    run([NOCACHE, "sh", "-c", f'cat "{f}" > /dev/null'], events=DURABLE)
    assert cached_bytes(f) <= 0.01 * (8 << 20)
    native = subprocess.run(["cp", "/etc/passwd", read_only / "x"], capture_output=True,
                            text=True)
    under = nocache("cp", "/etc/passwd", read_only / "x")
    assert (under.returncode, under.stderr) == (native.returncode, native.stderr)


def test_tmpfs_writes(tmp_path):
    """tmpfs has no writeback and DONTNEED cannot drop its pages (they are
    the file): writes there work and say nothing."""
    d = Path("/dev/shm") / f"nocache-{os.getpid()}"
    d.mkdir()
    try:
        r = run([NOCACHE, "python3", "-c", WRITE_SMALL, d, "40"], events=DURABLE)
        assert r.stderr == "" and all((d / f"f{i}").read_bytes() == b"x" * 16384
                                      for i in range(40))
        r = run([NOCACHE, "dd", "if=/dev/zero", f"of={d}/dd", "bs=4k", "count=512",
                 "status=none"], events=DURABLE)
        assert (d / "dd").stat().st_size == 512 * 4096
    finally:
        subprocess.run(["rm", "-rf", d])


# ---- what parking must not change ------------------------------------

def test_exec_after_writing(tmp_path):
    """Parked descriptors close on exec: what they held is dropped first."""
    script = WRITE_SMALL + "os.execv('/bin/true', ['true'])\n"
    for name in ("native", "ours"):
        (tmp_path / name).mkdir()
    subprocess.run(["python3", "-c", script, tmp_path / "native", "8"], check=True)
    cached, size = cached_under(files_under(tmp_path / "native"))
    assert cached == size, "natively they stay cached"
    r = run([NOCACHE, "python3", "-c", script, tmp_path / "ours", "8"], events=DURABLE)
    cached, size = cached_under(files_under(tmp_path / "ours"))
    assert size == 8 * 16384 and cached == 0, r.why()


def test_closerange_after_writing(tmp_path):
    """The command closes every descriptor above 2, parked ones included."""
    script = WRITE_SMALL + "os.closerange(3, 1 << 20)\n"
    (tmp_path / "d").mkdir()
    r = run([NOCACHE, "python3", "-c", script, tmp_path / "d", "8"], events=DURABLE)
    cached, size = cached_under(files_under(tmp_path / "d"))
    assert size == 8 * 16384 and cached == 0, r.why()


# Whether another process can take the lock on f at once: "free" or "held".
TRY_LOCK = """
r = subprocess.run([sys.executable, "-c", "import fcntl, os, sys; fcntl.{call}("
                    "os.open(sys.argv[1], os.O_RDWR), fcntl.LOCK_EX | fcntl.LOCK_NB)", f])
print("free" if r.returncode == 0 else "held")
"""

# The lock goes with the close.
FLOCK = """import fcntl, os, subprocess, sys
f = sys.argv[1]
fd = os.open(f, os.O_WRONLY | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, b"pid\\n")
os.close(fd)
""" + TRY_LOCK.format(call="flock")


def test_flock_released_at_close(tmp_path):
    outs = [subprocess.run(prefix + ["python3", "-c", FLOCK, tmp_path / f"lock{len(prefix)}"],
                           capture_output=True, text=True, timeout=60).stdout
            for prefix in ([], [str(NOCACHE)])]
    assert outs == ["free\n", "free\n"], outs


# Twenty more small files push f0's parked descriptor out of the list.
POSIX_LOCK = WRITE_SMALL + """import fcntl, subprocess
f = f"{d}/f0"
fd = os.open(f, os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX)
for i in range(100, 120):
    w = os.open(f"{d}/f{i}", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(w, b"y" * 16384)
    os.close(w)
""" + TRY_LOCK.format(call="lockf")


def test_posix_lock_survives_parking(tmp_path):
    """Closing a parked descriptor would release the process's POSIX lock
    on its file: one with a lock is kept open to exit."""
    outs = []
    for prefix in ([], [str(NOCACHE)]):
        d = tmp_path / str(len(prefix))
        d.mkdir()
        outs.append(subprocess.run(prefix + ["python3", "-c", POSIX_LOCK, d, "1"],
                                   capture_output=True, text=True, timeout=60).stdout)
    assert outs == ["held\n", "held\n"], outs


@pytest.fixture
def small_ext4(tmp_path):
    """A fresh 32 MiB ext4 image, and a mount point for it (mounted by the
    test, in a mount namespace of its own)."""
    img, mnt = tmp_path / "img", tmp_path / "mnt"
    with open(img, "wb") as f:
        f.truncate(32 << 20)
    subprocess.run(["mkfs.ext4", "-q", img], check=True)
    mnt.mkdir()
    yield img, mnt


# Written, closed, then the file system unmounted: by a child of the shell
# that wrote (dash: vfork), of fork, of Python's subprocess (vfork), of
# posix_spawn, system() or popen(), or by the process itself (umount,
# umount2).
WRITE_THEN = ("import ctypes, os, subprocess, sys\n"
              "fd = os.open(sys.argv[1] + '/f', os.O_WRONLY | os.O_CREAT, 0o600)\n"
              "os.write(fd, b'data'); os.close(fd)\n")
UNMOUNT = {
    "sh": 'echo data > "$1/f" && umount "$1" && echo unmounted',  # dash: vfork
    "fork": WRITE_THEN + "pid = os.fork()\n"
                         "if pid == 0:\n    os.execvp('umount', ['umount', sys.argv[1]])\n"
                         "print('unmounted' if os.waitpid(pid, 0)[1] == 0 else 'busy')\n",
    "subprocess": WRITE_THEN + "subprocess.run(['umount', sys.argv[1]], check=True)\n"
                               "print('unmounted')\n",
    "posix_spawn": WRITE_THEN + "import shutil\n"
                                "p = os.posix_spawn(shutil.which('umount'), "
                                "['umount', sys.argv[1]], os.environ)\n"
                                "print('unmounted' if os.waitpid(p, 0)[1] == 0 else 'busy')\n",
    "posix_spawnp": WRITE_THEN + "p = os.posix_spawnp('umount', ['umount', sys.argv[1]], "
                                 "os.environ)\n"
                                 "print('unmounted' if os.waitpid(p, 0)[1] == 0 else 'busy')\n",
    "popen": WRITE_THEN + "libc = ctypes.CDLL(None)\n"
                          "libc.popen.restype = ctypes.c_void_p\n"
                          "f = libc.popen(b'umount ' + sys.argv[1].encode(), b'r')\n"
                          "print('unmounted' if libc.pclose(ctypes.c_void_p(f)) == 0 "
                          "else 'busy')\n",
    "system": WRITE_THEN + "libc = ctypes.CDLL(None)\n"
                           "print('unmounted' if libc.system(b'umount ' + sys.argv[1].encode()) "
                           "== 0 else 'busy')\n",
    "umount2": WRITE_THEN + "libc = ctypes.CDLL(None, use_errno=True)\n"
                            "print('unmounted' if libc.umount2(sys.argv[1].encode(), 0) == 0 "
                            "else os.strerror(ctypes.get_errno()))\n",
    "umount": WRITE_THEN + "libc = ctypes.CDLL(None, use_errno=True)\n"
                           "print('unmounted' if libc.umount(sys.argv[1].encode()) == 0 "
                           "else os.strerror(ctypes.get_errno()))\n",
}


@pytest.mark.root
@pytest.mark.parametrize("how", list(UNMOUNT))
def test_unmount_after_writing(small_ext4, how):
    """A file written and closed leaves nothing open on its file system:
    the command (or a process it starts) may unmount it, as natively."""
    img, mnt = small_ext4
    prog = ["sh", "-c", UNMOUNT[how], "sh"] if how == "sh" else ["python3", "-c", UNMOUNT[how]]
    for prefix in [[], [str(NOCACHE)]]:
        script = 'mount -o loop "$0" "$1" && shift && exec "$@"'
        cmd = ["unshare", "-m", "sh", "-c", script, img, mnt, *prefix, *prog, mnt]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.stdout == "unmounted\n", cmdline(cmd) + r.stderr


# A small file written, closed, then removed (unlinked, or replaced by a
# rename): what the process still holds of it, as /proc/self/fd says.
REMOVED = """import ctypes, os, sys
d, how = sys.argv[1], sys.argv[2]
for name in ("a", "b"):
    fd = os.open(f"{d}/{name}", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"x" * 16384)
    os.close(fd)
at = os.open(d, os.O_RDONLY)
{"unlink": lambda: os.unlink(f"{d}/a"), "unlinkat": lambda: os.unlink("a", dir_fd=at),
 "remove": lambda: ctypes.CDLL(None).remove(f"{d}/a".encode()),
 "rename": lambda: os.rename(f"{d}/b", f"{d}/a"),
 "renameat": lambda: os.rename("b", "a", src_dir_fd=at, dst_dir_fd=at),
 "renameat2": lambda: ctypes.CDLL(None).renameat2(at, b"b", at, b"a", 0)}[how]()
held = []
for n in os.listdir("/proc/self/fd"):
    try:
        held.append(os.readlink(f"/proc/self/fd/{n}"))
    except FileNotFoundError:  # listdir's own
        pass
print([h for h in held if h.endswith(" (deleted)")])
"""


@pytest.mark.parametrize("how", ["unlink", "unlinkat", "remove", "rename", "renameat",
                                 "renameat2"])
def test_removed_file_is_not_held(tmp_path, how):
    """A file written, closed and removed is not held open: its space is
    free again, as natively."""
    for prefix in [[], [str(NOCACHE)]]:
        d = tmp_path / str(len(prefix))
        d.mkdir()
        cmd = [*prefix, "python3", "-c", REMOVED, d, how]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.stdout == "[]\n", cmdline(cmd) + r.stderr


# A file written and closed, opened again, and leased: a write lease is
# refused while another descriptor of the file is open.
LEASE = """import fcntl, os, sys
f = sys.argv[1]
fd = os.open(f, os.O_WRONLY | os.O_CREAT, 0o600)
os.write(fd, b"x" * 16384)
os.close(fd)
fd = os.open(f, os.O_RDONLY)
try:
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    print("leased")
except OSError as e:
    print(e.strerror)
"""


def test_lease_after_writing(tmp_path):
    for prefix in [[], [str(NOCACHE)]]:
        cmd = [*prefix, "python3", "-c", LEASE, tmp_path / f"f{len(prefix)}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.stdout == "leased\n", cmdline(cmd) + r.stderr


# A file its owner may write but not read, written in small pieces.
WRITE_ONLY = """import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o200)
os.write(fd, b"x" * 16384)
os.close(fd)
"""


@pytest.mark.root
def test_file_its_writer_cannot_read(tmp_path):
    """A file its writer may not open to read (nor drop through such a
    descriptor later) is waited for and dropped at its close, not parked
    (an unprivileged user: root reads anything)."""
    d = Path(tempfile.mkdtemp(prefix="emd-nocache-"))
    try:
        d.chmod(0o777)
        for prefix in [[], [str(NOCACHE)]]:
            f = d / f"f{len(prefix)}"
            cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
                   *prefix, "python3", "-c", WRITE_ONLY, f]
            subprocess.run(cmd, check=True, timeout=60)
            assert cached_bytes(f) == (16384 if not prefix else 0), cmdline(cmd)
    finally:
        shutil.rmtree(d)
