# SPDX-License-Identifier: MIT
"""The seccomp supervisor attacked a second time, by a hostile program and
an unlucky environment: long status lines, the vsyscall page, files swapped
under an open, worker threads that cannot start, registered io_uring rings.
Each case runs natively too, and the program must see what it sees there."""
import os
import signal
import shutil
import subprocess
import tempfile
import time
import uuid

import pytest

from conftest import EATMYDATA, TESTS, cmdline, run
from helpers import HOSTILE, SYNCS, first_line, same_as_native, supervisor_of

# Supplementary groups whose list in /proc/PID/status is longer than a
# line buffer; the last one is the one dropped.
MANY_GROUPS = list(range(100000, 100200))


def test_vsyscall_page_is_not_mapped():
    """msync of [vsyscall]: ENOMEM, as the kernel says, not 0."""
    same_as_native(["vsyscall"], "ENOMEM\n")


@pytest.fixture
def public_dir():
    """A directory every user can reach (pytest's own is root's alone)."""
    d = tempfile.mkdtemp(prefix="emd-attack-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d)


@pytest.mark.root
@pytest.mark.parametrize("dropped,expected", [
    (MANY_GROUPS[0], "plain ok\nsync ok\n"),  # control: the file's group is kept
    (MANY_GROUPS[-1], "plain EACCES\nsync EACCES\n"),
], ids=["kept", "dropped"])
def test_groups_past_a_long_line(public_dir, dropped, expected):
    """A caller that dropped a supplementary group at the end of a long
    Groups: line cannot have the supervisor open what only that group may
    read (a CAP_SETGID user, as the launcher's user and the program's)."""
    secret = os.path.join(public_dir, "secret")
    with open(secret, "w") as f:
        f.write("secret")
    os.chown(secret, 0, MANY_GROUPS[-1])
    os.chmod(secret, 0o040)
    who = ["setpriv", "--reuid=nobody", "--regid=nogroup",
           "--groups=" + ",".join(map(str, MANY_GROUPS)),
           "--inh-caps=+setgid", "--ambient-caps=+setgid", "--"]
    for prefix in [[], [EATMYDATA, "--seccomp=on", "--on-behalf=on"]]:
        cmd = [*who, *prefix, HOSTILE, "drop-group", str(dropped), secret]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.stdout == expected, cmdline(cmd) + r.stderr


@pytest.fixture
def pids_cgroup():
    """A pids cgroup (v1 or v2) of 24 tasks; whatever is left in it is
    killed at the end."""
    base = next((b for b in ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"]
                 if os.path.exists(os.path.join(b, "pids.max")) or
                 os.path.exists(os.path.join(b, "tasks"))), None)
    if base is None or not os.access(base, os.W_OK):
        pytest.skip("no writable pids cgroup")
    d = tempfile.mkdtemp(prefix="emd-attack-", dir=base)
    with open(os.path.join(d, "pids.max"), "w") as f:
        f.write("24")
    yield d
    empty(d)
    os.rmdir(d)


def empty(cgroup):
    """Kill what is left in the cgroup and wait until it counts no task."""
    for _ in range(100):
        with open(os.path.join(cgroup, "cgroup.procs")) as f:
            pids = [int(p) for p in f.read().split()]
        with open(os.path.join(cgroup, "pids.current")) as f:
            if not pids and f.read().strip() == "0":
                return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    raise AssertionError(f"{cgroup} does not empty")


@pytest.mark.slow
def test_no_worker_can_start(scratch, pids_cgroup):
    """Two threads' writes hold the supervisor's workers (memory no one
    provides) and the tree has taken every task pids.max allows: the main
    thread's fsync is still answered."""
    for prefix in ["", f"{EATMYDATA} --seccomp=on --on-behalf=on"]:
        script = (f"echo $$ > {pids_cgroup}/cgroup.procs && "
                  f"exec {prefix} {HOSTILE} pids-full {scratch / 'f'}")
        try:
            # What empty() kills cannot remove its directory: in the test's own.
            r = subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                               timeout=20, env=dict(os.environ, TMPDIR=str(scratch)))
        except subprocess.TimeoutExpired:
            pytest.fail("hangs: " + cmdline(["sh", "-c", script]))
        empty(pids_cgroup)
        assert r.stdout == "fsync ok\n", cmdline(["sh", "-c", script]) + r.stderr


@pytest.mark.parametrize("tasks", [1, 2, 3])
def test_supervisor_cannot_start(scratch, pids_cgroup, tasks):
    """With room for the command and nothing or little else, the launcher
    runs the command with its requests answered, or says why not (125): it
    never dies of a signal, never hangs."""
    with open(os.path.join(pids_cgroup, "pids.max"), "w") as f:
        f.write(str(tasks))
    script = (f"echo $$ > {pids_cgroup}/cgroup.procs && "
              f"exec {EATMYDATA} --seccomp=on {TESTS / 'entry-static'} fsync {scratch}")
    r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=20,
                       env=dict(os.environ, TMPDIR=str(scratch)))
    rerun = cmdline(["sh", "-c", script]) + r.stderr
    assert r.returncode in (0, 125), rerun
    assert r.returncode == 0 or r.stderr.startswith("eatmydata: cannot "), rerun


def test_registered_ring_is_not_another(scratch):
    """An io_uring_enter through a registered ring's index rewrites nothing
    of another ring (the process's only ring descriptor); the other ring's
    fsync is eaten when that ring itself submits it."""
    native, under = same_as_native([TESTS / "uring-rings", scratch / "f"],
                                   "B's SQE untouched\nB's fsync ok\n", program=True)
    assert native.syncs > 0 and under.syncs == 0, under.why()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["swap", "swap-create"])
def test_file_swapped_for_a_fifo(scratch, how):
    """A FIFO and a file exchange names while the program opens one of them
    with O_SYNC (or a FIFO comes and goes at a name the program creates):
    nothing but the program's own opens reaches the FIFO."""
    for d in ["native", "eaten"]:
        (scratch / d).mkdir()
    native = run([HOSTILE, how, scratch / "native"], events=SYNCS)
    under = run([EATMYDATA, "--seccomp=on", "--on-behalf=on", HOSTILE, how, scratch / "eaten"],
                events=SYNCS)
    expected = "the FIFO opened as often as the program got it\n"
    assert native.stdout == expected, native.why()
    assert under.stdout == expected, under.why()


@pytest.mark.parametrize("limit", [6, 10, 16])
def test_small_descriptor_limit(scratch, limit):
    """Under `ulimit -n` (soft and hard) the program runs as natively, and
    its fsync is still eaten: the supervisor needs only a few descriptors."""
    cmd = f"{TESTS / 'entry-static'} fsync {scratch}"
    native = run(["sh", "-c", f"ulimit -n {limit}; exec {cmd}"], events=SYNCS)
    assert native.syncs > 0, native.why()
    under = run(["sh", "-c", f"ulimit -n {limit}; exec {EATMYDATA} --seccomp=on {cmd}"],
                events=SYNCS)
    assert under.returncode == 0 and under.stdout == native.stdout, under.why()
    assert under.syncs == 0, under.why()


@pytest.mark.root
def test_create_in_a_sticky_directory(public_dir, protected_regular):
    """O_CREAT of another user's file in a world-writable sticky directory:
    EACCES (fs.protected_regular), for the supervisor's open too."""
    sticky = os.path.join(public_dir, "sticky")
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    victim = os.path.join(sticky, "victim")
    with open(victim, "w"):
        pass
    os.chmod(victim, 0o666)
    os.chown(victim, 12345, 12345)  # neither the directory's owner nor the caller
    who = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
    for prefix in [[], [EATMYDATA, "--seccomp=on", "--on-behalf=on"]]:
        cmd = [*who, *prefix, HOSTILE, "create", victim]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.stdout == "EACCES\n", cmdline(cmd) + r.stderr


@pytest.mark.xfail(strict=True, reason="a request the supervisor has not taken yet is "
                   "interruptible in the kernel: EINTR without SA_RESTART (SECURITY.md)")
def test_signals_without_restart():
    """fsync under a 30 µs signal whose handler does not restart calls:
    natively none fails; filtered, a signal that comes before the supervisor
    takes the request makes it fail with EINTR, which nothing outside the
    kernel can prevent."""
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        args = [HOSTILE, "fsync-storm", os.path.join(d, "f"), "30", "5000"]
        native = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert native.stdout == "0 failed\n", cmdline(args)
        under = subprocess.run([EATMYDATA, "--seccomp=on", *args], capture_output=True,
                               text=True, timeout=60)
        assert under.stdout == "0 failed\n", cmdline([EATMYDATA, "--seccomp=on", *args])


def test_landlock_through_the_i386_entry():
    """A Landlock domain entered with int 0x80 (i386 numbers, which the
    filter's x86_64 rules do not match) is seen all the same."""
    same_as_native(["landlock32", "/etc/shadow"], "plain EACCES\nsync EACCES\n")


def test_write_to_cgroup_procs(pids_cgroup):
    """"0" written to cgroup.procs moves the writer: the program, never the
    supervisor (a frozen or full cgroup would stall every request)."""
    procs = os.path.join(pids_cgroup, "cgroup.procs")
    name = os.path.basename(pids_cgroup)
    same_as_native(["cgroup-zero", procs, name], "moved itself\n")


@pytest.fixture
def memory_cgroup():
    """A memory cgroup (v1) of the test's own."""
    base = "/sys/fs/cgroup/memory"
    if not os.access(base, os.W_OK):
        pytest.skip("no writable memory cgroup")
    d = tempfile.mkdtemp(prefix="emd-attack-", dir=base)
    yield d
    for _ in range(100):
        try:
            os.rmdir(d)
            return
        except OSError:
            time.sleep(0.05)


def test_write_charged_to_the_callers_cgroup(scratch, memory_cgroup):
    """A program that moved itself into a memory cgroup: what it writes
    with RWF_DSYNC is charged there (its limits hold), not to the
    supervisor's cgroup."""
    procs, stat = (os.path.join(memory_cgroup, f) for f in ["cgroup.procs", "memory.stat"])
    same_as_native(["memcg-write", procs, scratch / "f", stat], "charged to its cgroup\n")


def test_tmpfile_excl_stays_unlinkable(scratch):
    """O_TMPFILE|O_EXCL|O_SYNC: the file can never be given a name."""
    same_as_native(["tmpfile-excl", scratch, scratch / "named"], "link ENOENT\n")
    assert not (scratch / "named").exists()


@pytest.mark.root
def test_exclusive_create_on_a_pseudo_file_system(public_dir):
    """O_CREAT|O_EXCL|O_SYNC of a fresh name on mqueue (a file system whose
    files are message queues): created once, by the program, as natively,
    never made by the supervisor and then refused with EEXIST."""
    for prefix in ["", f"{EATMYDATA} --seccomp=on --on-behalf=on"]:
        script = (f"mount -t mqueue mq {public_dir} && "
                  f"{prefix} {HOSTILE} create-excl {public_dir}/q")
        r = subprocess.run(["unshare", "-m", "-i", "sh", "-c", script], capture_output=True,
                           text=True, timeout=60)
        assert r.stdout == "ok\n", cmdline(["unshare", "-m", "-i", "sh", "-c", script]) + \
            r.stderr


def test_descriptor_limit_creates_nothing(scratch):
    """At its descriptor limit, O_CREAT|O_SYNC of a fresh name fails with
    EMFILE and creates nothing, as natively (the kernel takes a descriptor
    before it looks the name up)."""
    same_as_native(["fdlimit-create", scratch / "a"], "EMFILE, not created\n")


NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]


@pytest.mark.root
@pytest.mark.parametrize("launcher_as,program_as,signal_right", [
    ("root", "nobody", "EPERM"),
    # Its own user may signal it (kill it: ENOSYS after, SECURITY.md), nothing more.
    ("nobody", "nobody", "ok"),
], ids=["program dropped privileges", "same user"])
def test_program_cannot_take_over_the_supervisor(scratch, launcher_as, program_as, signal_right):
    """The program cannot trace the supervisor, take its listener or read
    its memory (it is not dumpable), nor signal it unless it is its user."""
    outer = NOBODY if launcher_as == "nobody" else []
    inner = NOBODY if program_as == "nobody" and launcher_as != "nobody" else []
    tag = uuid.uuid4().hex
    cmd = [*outer, EATMYDATA, "--seccomp=on", *inner, HOSTILE, "attack"]
    p = subprocess.Popen(cmd, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ, EMD_TEST_TAG=tag))
    try:
        assert first_line(p) == "ready\n", cmdline(cmd)
        out, _ = p.communicate(f"{supervisor_of(p, f'EMD_TEST_TAG={tag}')}\n", timeout=30)
    finally:
        p.kill()
    assert out == ("ptrace EPERM\nlistener EPERM\nmemory EPERM\n"
                   f"signal {signal_right}\n"), cmdline(cmd)


BIGOPEN = TESTS / "bigopen32-static"


@pytest.mark.parametrize("size,flags,expected", [
    (3 << 30, "4011001", "open EOVERFLOW size 3221225472\n"),
    (1 << 31, "4011001", "open EOVERFLOW size 2147483648\n"),
    ((1 << 31) - 1, "4011001", "open ok size 1\n"),  # the largest it may open
    (3 << 30, "4111001", "open ok size 1\n"),  # with O_LARGEFILE
], ids=["3 GiB", "2 GiB", "2 GiB - 1", "O_LARGEFILE"])
def test_32_bit_open_of_a_large_file(scratch, size, flags, expected):
    """A 32-bit program opens a large file O_WRONLY|O_TRUNC|O_SYNC: without
    large-file support, EOVERFLOW past 2^31 - 1 bytes, and the file keeps
    its size, as natively (the size is checked before anything is opened);
    what it may open is eaten."""
    big = scratch / "big"
    with open(big, "wb") as f:
        f.truncate(size)
    native = run([BIGOPEN, big, flags], events=SYNCS)
    assert native.stdout == expected, native.why()
    with open(big, "wb") as f:
        f.truncate(size)
    under = run([EATMYDATA, "--seccomp=on", "--on-behalf=on", BIGOPEN, big, flags],
                events=SYNCS)
    assert under.stdout == expected, under.why()
    assert (native.syncs > 0) == ("ok" in expected) and under.syncs == 0, under.why()


@pytest.mark.parametrize("flags,eaten", [
    ("4010101", True),  # O_WRONLY|O_CREAT|O_SYNC: the control
    ("44010101", False),  # and a bit no kernel has given a meaning yet
], ids=["known", "unknown"])
def test_open_flag_the_supervisor_does_not_know(scratch, flags, eaten):
    """An O_SYNC open with a flag the supervisor does not know is the
    kernel's to make (and sync), whatever that flag may come to mean."""
    native, under = same_as_native([BIGOPEN, scratch / "f", flags], "open ok size 1\n",
                                   program=True)
    (scratch / "f").unlink()
    assert native.syncs > 0, native.why()
    assert (under.syncs == 0) == eaten, under.why()


@pytest.mark.root
@pytest.mark.parametrize("option,env,expected", [
    ([], {}, "plain EPERM\nsync EPERM\n"),  # the default: the kernel opens, as the program
    (["--on-behalf=off"], {"EATMYDATA_ON_BEHALF": "1"}, "plain EPERM\nsync EPERM\n"),
    # Asked for: the supervisor opens, and the watcher judges eatmydata.
    (["--on-behalf=on"], {}, "plain EPERM\nsync ok\n"),
    ([], {"EATMYDATA_ON_BEHALF": "1"}, "plain EPERM\nsync ok\n"),
], ids=["default", "off", "on", "environment"])
def test_open_permission_watcher(scratch, option, env, expected):
    """A fanotify permission watcher (an on-access scanner, fapolicyd) that
    denies this program's opens of a file: its O_SYNC open is denied too, as
    natively, unless opens on its behalf were asked for."""
    secret = scratch / "secret"
    secret.write_text("secret")
    watcher = subprocess.Popen([TESTS / "fanotify-deny", secret, HOSTILE.name], text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert first_line(watcher) == "ready\n"
        native = run([HOSTILE, "open-sync", secret], events=SYNCS)
        assert native.stdout == "plain EPERM\nsync EPERM\n", native.why()
        under = run([EATMYDATA, "--seccomp=on", *option, HOSTILE, "open-sync", secret],
                    events=SYNCS, env=env)
        assert under.stdout == expected, under.why()
    finally:
        watcher.kill()
        watcher.wait()


def test_on_behalf_takes_on_or_off():
    r = subprocess.run([EATMYDATA, "--on-behalf=yes", "true"], capture_output=True, text=True)
    assert r.returncode == 125 and r.stderr == \
        "eatmydata: --on-behalf takes on or off, not 'yes'\n", r.stderr
