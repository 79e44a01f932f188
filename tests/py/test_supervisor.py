# SPDX-License-Identifier: MIT
"""The seccomp supervisor against a hostile or unlucky tree: it never acts
with rights the caller does not have (Landlock, /proc/self, a chroot, file
size limits, a thread's own descriptor table), never turns a fault of its
own into the program's (signals, limits, memory that blocks, seccomp
refused), and reads the whole environment.  Every case runs natively too:
the program must see the same thing eaten as natively."""
import os
import re
import signal
import subprocess
import time
import uuid

import pytest

from conftest import EATMYDATA, TESTS, cmdline, eaten, litter, run
from helpers import HOSTILE, SYNCS, first_line, same_as_native, supervisor_of

def test_landlock_domain_is_kept():
    """Reading only under /usr: /etc/shadow stays out of reach, O_SYNC or not."""
    same_as_native(["landlock", "/etc/shadow"], "plain EACCES\nsync EACCES\n")


def test_proc_self_is_the_caller():
    native, under = same_as_native(["proc-mem"], "its own memory\n")
    r = eaten([HOSTILE, "proc-status"])
    assert "Name:\thostile-static\n" in r.stdout, r.why()


@pytest.mark.parametrize("where", ["/proc/self/cwd/", ""], ids=["/proc/self/cwd", "relative"])
def test_working_directory_is_the_callers(scratch, where):
    """The program's working directory, not the supervisor's (which is the
    launcher's, then /), for a relative name or through /proc/self/cwd."""
    name, sub = f"x-{uuid.uuid4().hex}", scratch / "sub"
    sub.mkdir()
    try:
        for prefix in ["", f"{EATMYDATA} --seccomp=on --on-behalf=on"]:
            script = f"{prefix} sh -c 'cd sub && exec {HOSTILE} create {where}{name}'"
            r = subprocess.run(["sh", "-c", script], cwd=scratch, capture_output=True,
                               text=True, timeout=60)
            assert r.stdout == "ok\n", cmdline(["sh", "-c", script]) + r.stderr
            assert (sub / name).exists() and not (scratch / name).exists(), script
            (sub / name).unlink()
    finally:
        assert not os.path.exists(f"/{name}"), "created in the supervisor's directory"


@pytest.mark.root
def test_chroot_into_a_bind_mount_of_root(scratch):
    """A chroot into a bind mount of /: its /dev/shm is the directory of the
    root file system, not the tmpfs mounted over it, which the supervisor
    would see (same device and inode at the root, another mount)."""
    jail, name = scratch / "jail", f"emd-{uuid.uuid4().hex}"
    jail.mkdir()
    for prefix in ["", f"{EATMYDATA} --on-behalf=on"]:
        script = (f"mount --make-rprivate / && mount --bind / {jail} && "
                  f"{prefix} {HOSTILE} chroot-create {jail} /dev/shm/{name}; "
                  f"ls {jail}/dev/shm/{name} && rm {jail}/dev/shm/{name}")
        r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                           text=True, timeout=60)
        rerun = cmdline(["unshare", "-m", "sh", "-c", script]) + r.stderr
        assert r.stdout == f"ok\n{jail}/dev/shm/{name}\n", rerun
        assert not os.path.exists(f"/dev/shm/{name}"), rerun
        assert r.returncode == 0, rerun


@pytest.mark.parametrize("where", ["program", "shell before eatmydata"])
def test_file_size_limit_is_the_callers(scratch, where):
    """A 64 KiB RWF_DSYNC write under a file size limit writes up to the
    limit, as natively, and the supervisor lives on (the fsync after it
    succeeds).  The shell's limit (dash: 16 blocks of 512 bytes) also binds
    the supervisor, which must not die of SIGXFSZ."""
    args = ["fsize", scratch / "f"]
    if where == "program":
        same_as_native(args, "wrote 16384 ok\nfsync ok\n")
        return
    for prefix in ["", f"{EATMYDATA} --on-behalf=on"]:
        script = f"ulimit -f 16; exec {prefix} {HOSTILE} {' '.join(map(str, args))}"
        r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
        assert r.stdout == "wrote 8192 ok\nfsync ok\n", cmdline(["sh", "-c", script]) + r.stderr


def test_direct_io_with_dsync(scratch):
    native, under = same_as_native(["direct", scratch / "f"], "ok\n")
    assert native.syncs > 0 and under.syncs == 0, under.why()


def test_write_from_partly_unmapped_memory(scratch):
    """The kernel's answer, not a stale errno (0 bytes written)."""
    native = run([HOSTILE, "partial", scratch / "f"], events=SYNCS)
    assert native.stdout in ("4096 ok\n", "-1 EFAULT\n"), native.why()
    under = eaten([HOSTILE, "partial", scratch / "f"], events=SYNCS)
    assert under.stdout == native.stdout, under.why()


def test_thread_with_its_own_descriptor_table(scratch):
    a, b = scratch / "a", scratch / "b"
    for f in [a, b]:
        f.write_bytes(b"")
    native, under = same_as_native(["files", a, b], "ok\n")
    assert a.read_bytes() == b"" and b.read_bytes() == b"thread"
    assert native.syncs > 0 and under.syncs == 0, under.why()


def test_interrupted_appends_are_made_once(scratch):
    """200 µs signals while appending with RWF_DSYNC: a call restarted after
    a signal must not be written twice."""
    native, under = same_as_native(["appends", scratch / "f", "40", "200"], "size as written\n")
    assert native.syncs > 0 and under.syncs == 0, under.why()


def test_interrupted_exclusive_creates(scratch):
    d = scratch / "d"
    d.mkdir()
    r = eaten([HOSTILE, "exclusive", d, "30"])
    assert r.stdout == "0 failed\n", r.why()


def test_descriptor_limit_is_answered(scratch):
    (scratch / "f").write_bytes(b"")
    same_as_native(["fdlimit", scratch / "f"], "EMFILE\n")


def test_blocked_caller_stalls_only_itself(scratch):
    """One thread's write is stuck reading memory nobody provides; the other
    thread's fsync is answered all the same."""
    same_as_native(["stalled", scratch / "f"], "fsync ok\n")


def test_refused_seccomp_leaves_nothing_behind():
    """$(eatmydata ...) returns when seccomp() is refused: no supervisor
    keeps the output open."""
    cmd = [HOSTILE, "deny-seccomp", EATMYDATA, "--seccomp=on", "true"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert r.returncode == 125, cmdline(cmd) + r.stderr
    assert r.stderr.startswith("eatmydata: cannot install the seccomp filter"), r.stderr


def start_tagged(scratch):
    """fsync-twice under eatmydata, with a tag in its environment that finds
    its supervisor among those of other test runs on the machine."""
    tag = f"EMD_TEST_TAG={uuid.uuid4().hex}"
    # A supervisor killed cannot remove its directory: in the test's own.
    p = subprocess.Popen([EATMYDATA, HOSTILE, "fsync-twice", scratch / "f"], text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ, EMD_TEST_TAG=tag.split("=")[1],
                                  TMPDIR=str(scratch)))
    return p, tag


@pytest.mark.root
@pytest.mark.parametrize("sig,expected", [
    ([signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXFSZ, signal.SIGPIPE,
      signal.SIGUSR1, signal.SIGALRM], "second ok\n"),
    # What the tree sees if the supervisor dies anyway: the kernel has no one
    # to ask, so the request fails (SECURITY.md).
    ([signal.SIGKILL], "second ENOSYS\n"),
], ids=["survives signals", "killed"])
def test_supervisor_and_signals(scratch, sig, expected):
    p, tag = start_tagged(scratch)
    try:
        assert first_line(p) == "first ok\n"
        sup = supervisor_of(p, tag)
        for s in sig:
            os.kill(sup, s)
        time.sleep(0.2)
        out, _ = p.communicate("\n", timeout=30)
        assert out == expected
    finally:
        p.kill()


@pytest.mark.root
def test_supervisor_leaves_with_the_tree(scratch):
    p, tag = start_tagged(scratch)
    try:
        assert first_line(p) == "first ok\n"
        sup = supervisor_of(p, tag)
        p.communicate("\n", timeout=30)
    finally:
        p.kill()
    for _ in range(200):
        if not os.path.exists(f"/proc/{sup}") or \
                open(f"/proc/{sup}/stat").read().split()[2] == "Z":
            return
        time.sleep(0.05)
    raise AssertionError(f"supervisor {sup} outlived its tree")


def test_short_runs_leave_nothing_in_tmpdir(tmp_path, scratch):
    """Forty runs of a command that ends at once (before its supervisor has
    said it is ready, often) and ten of a static program: every
    supervisor's directory goes, whatever the timing."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    for cmd in [["true"]] * 40 + [[TESTS / "entry-static", "fsync", scratch]] * 10:
        r = subprocess.run([EATMYDATA, *cmd], env=env, capture_output=True, timeout=30)
        assert r.returncode == 0, cmdline([EATMYDATA, *cmd], {"TMPDIR": tmp})
    assert litter(tmp) == [], f"for i in $(seq 40); do TMPDIR={tmp} {EATMYDATA} true; done"


def test_disable_read_past_8k_of_environment(scratch):
    """EATMYDATA_DISABLE after 10 KiB of other variables still disables."""
    cmd = [TESTS / "entry-static", "fsync", scratch]
    env = {"EMD_PADDING": "x" * 10000, "EATMYDATA_DISABLE": "1"}
    assert len("".join(f"{k}={v}" for k, v in os.environ.items())) + 10000 > 8192
    disabled = eaten(cmd, env=env, events=SYNCS)
    assert disabled.syncs == 1, disabled.why()
    env["EATMYDATA_DISABLE"] = "0"
    enabled = eaten(cmd, env=env, events=SYNCS)
    assert enabled.syncs == 0, enabled.why()


# ---- one test for each row of SECURITY.md's table ------------------------
# (the rows that other tests here and in test_supervisor_attack.py do not
# cover already: each fails when its check in seccomp/rights.c or
# seccomp/behalf.c is taken out)

def test_own_seccomp_filter_keeps_the_supervisor_away(scratch):
    """A program with a filter of its own (one that would send getppid to a
    tracer): nothing is opened for it, its O_SYNC open is the kernel's and
    syncs, as natively."""
    native, under = same_as_native(["own-filter", scratch / "f"], "ok\n")
    assert native.syncs > 0 and under.syncs > 0, under.why()


@pytest.mark.root
@pytest.mark.parametrize("ids", ["12345:0", "0:12345"], ids=["user", "group"])
def test_ids_are_the_callers(scratch, ids):
    """Root that took another user or group id, keeping every capability:
    its O_SYNC file is that user's and group's, as natively, never made by
    the supervisor as root's.  In a user namespace, where root has every
    capability (here CAP_SYS_RESOURCE may be missing, which keeps the
    supervisor away from another user's process anyway)."""
    uid, gid = ids.split(":")
    for prefix in [[], [EATMYDATA, "--seccomp=on", "--on-behalf=on"]]:
        cmd = [*prefix, HOSTILE, "setid-create", uid, gid, scratch / f"f{len(prefix)}"]
        out = in_user_namespace(cmd)
        assert (refused(out) if prefix else out) == f"{ids}\n", cmdline(cmd)


@pytest.mark.root
def test_capabilities_are_the_callers(scratch):
    """Root that dropped CAP_DAC_OVERRIDE from its effective set cannot have
    another user's file opened for it, O_SYNC or not."""
    secret = scratch / "secret"
    secret.write_text("secret")
    os.chown(secret, 12345, 12345)
    secret.chmod(0o600)
    same_as_native(["drop-dac", secret], "plain EACCES\nsync EACCES\n")


def test_umask_is_the_callers(scratch):
    """umask 077, then O_SYNC|O_CREAT with mode 0666: 0600, as natively,
    not the supervisor's umask's 0644."""
    native = run([HOSTILE, "umask-create", scratch / "native"], events=SYNCS)
    assert native.stdout == "0600\n", native.why()
    under = run([EATMYDATA, "--seccomp=on", "--on-behalf=on", HOSTILE, "umask-create",
                 scratch / "eaten"], events=SYNCS)
    assert under.stdout == "0600\n", under.why()


def test_chroot_into_a_directory(scratch):
    """A plain chroot (a debootstrap's): the same mount as the supervisor's
    root, another directory; an absolute name is the jail's, never the
    host's."""
    jail, name = scratch / "jail", f"emd-{uuid.uuid4().hex}"
    (jail / "tmp").mkdir(parents=True)
    try:
        same_as_native(["chroot-create", jail, f"/tmp/{name}"], "ok\n")
        assert (jail / "tmp" / name).exists()
    finally:
        assert not os.path.exists(f"/tmp/{name}"), "created on the host"


def test_another_mount_namespace(scratch):
    """A tmpfs mounted in a mount namespace of the program's: the file is
    created there, not in the directory under it, which the supervisor
    sees."""
    under_it = scratch / "d"
    under_it.mkdir()
    script = f"mount -t tmpfs none {under_it} && {HOSTILE} create {under_it}/f && ls {under_it}"
    cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", script]
    same_as_native(cmd, "ok\nf\n", program=True)
    assert list(under_it.iterdir()) == [], "created outside the program's namespace"


def refused(out):
    """eatmydata's output: the supervisor, which may not act for a program
    with other ids (or namespace), says at its end that its O_SYNC open
    went on to the kernel; the rest, the program's."""
    said = re.compile(r"eatmydata: \S+ \(pid \d+\): 1 durability request left to the disk "
                      r"\(1 open with O_SYNC or O_DSYNC\); no option eats it: the supervisor may "
                      r"not act for the program\n")
    assert said.search(out), out
    return said.sub("", out)


def in_user_namespace(cmd):
    """cmd's output, run in a user namespace that maps uids and gids 0 to
    65535 to themselves: root there may do what root here may to their
    files, and its capabilities look the same as any namespace's (a full
    bounding set).  Skipped where none can be made (in a chroot the kernel
    refuses one: EPERM)."""
    if subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespace can be made here (a chroot, or the kernel's setting)")
    p = subprocess.Popen(["unshare", "-U", "--", "sh", "-c", 'read _ && exec "$@"', "sh",
                          *map(str, cmd)], text=True, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(200):
            if os.readlink(f"/proc/{p.pid}/ns/user") != os.readlink("/proc/self/ns/user"):
                break
            time.sleep(0.01)
        for name in ["uid_map", "gid_map"]:
            with open(f"/proc/{p.pid}/{name}", "w") as f:
                f.write("0 0 65536\n")
        out, err = p.communicate("\n", timeout=60)
    finally:
        p.kill()
    return out + err


@pytest.mark.root
def test_another_user_namespace(scratch):
    """Root in a user namespace of its own, where only root is mapped, under
    a supervisor in one where more users are: a file of another user's is
    out of its reach (its capabilities are its namespace's), O_SYNC or
    not."""
    secret = scratch / "secret"
    secret.write_text("secret")
    os.chown(secret, 12345, 12345)
    secret.chmod(0o600)
    inner = ["unshare", "-U", "--map-root-user", HOSTILE, "open-sync", secret]
    for prefix in [[], [EATMYDATA, "--seccomp=on", "--on-behalf=on"]]:
        out = in_user_namespace([*prefix, *inner])
        assert (refused(out) if prefix else out) == "plain EACCES\nsync EACCES\n", \
            cmdline(prefix + inner)
    # The supervisor's namespace reaches it: the check is of the namespace.
    assert in_user_namespace(["cat", secret]) == "secret"
