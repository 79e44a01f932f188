# SPDX-License-Identifier: MIT
"""crashtest attacked like a hostile user and an odd program would: the
command plants symlinks and renames directories under the names its
journal holds, drops its privileges, tampers with the run directory
(journal, points, the base states are built from); crashtest is sent
signals, given a full TMPDIR, run as an ordinary user.  Nothing outside
the run directory may change -- a manifest of every entry, before and
after, with a native control showing the manifest sees a change -- and
what crashtest cannot trust makes the state unknown, never ok, never 125.
Each test is a defect that was found."""
import hashlib
import json
import os
import resource
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import time

import pytest

from conftest import TESTS, cmdline
from helpers import CRASH, CRASHTEST, PYTHON, Report, crash_report

crashtest = crash_report
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def manifest(top):
    """Every entry under top: its type, mode, owner, size, mtime and, for a
    file, its contents' hash; a symlink's target."""
    out = {}
    for dirpath, dirs, files in os.walk(top):
        for name in [""] + dirs + files:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            what = (stat.S_IFMT(st.st_mode), st.st_mode & 0o7777, st.st_uid, st.st_gid,
                    st.st_size, st.st_mtime_ns)
            if stat.S_ISREG(st.st_mode):
                what += (hashlib.sha256(open(p, "rb").read()).hexdigest(),)
            elif stat.S_ISLNK(st.st_mode):
                what += (os.readlink(p),)
            out[os.path.relpath(p, top)] = what
    return out


def private_env(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp, dict(os.environ, TMPDIR=str(tmp))


# The command renames a directory whose new entries are not durable and
# puts a symlink to the victim in its place: undoing those entries by path
# went through the link.
PLANT = """
import os, sys
victim = sys.argv[1]
def sync(p):
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.close(fd)
os.mkdir('d'); sync('.')
open('d/f', 'w').write('new')
os.mkdir('d/sub')
os.rename('d', 'd.old')
os.symlink(victim, 'd')
sync('.')
"""


def victim(top):
    v = os.path.join(top, "victim")
    os.makedirs(os.path.join(v, "sub"))
    for name in ("f", "sub/keep"):
        with open(os.path.join(v, name), "w") as f:
            f.write("precious\n")
    return v


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_planted_symlinks_never_reach_outside(tmp_path, user):
    """The state after the last fsync has the unsynced create and mkdir in
    d lost: crashtest removed them by path, through the symlink the command
    put at d, deleting the victim's f and sub.  As root and as an ordinary
    user, the victim and DIR are unchanged (their manifests), where the
    native run of the same program, followed by the same removals by path,
    changes the victim (the control: the manifest sees it)."""
    if user == "nobody" and os.geteuid() != 0:
        pytest.skip("runs the attack as another user")
    top = tempfile.mkdtemp(prefix="crashtest-plant.")
    try:
        os.chmod(top, 0o755)
        v, d = victim(top), os.path.join(top, "dir")
        os.mkdir(d)
        as_user = NOBODY if user == "nobody" else []
        if as_user:
            subprocess.run(["chown", "-R", "nobody:nogroup", top], check=True)
        native = os.path.join(top, "native")
        shutil.copytree(d, native)
        subprocess.run([PYTHON, "-c", PLANT, v], cwd=native, check=True)
        before = manifest(v)
        subprocess.run(["rm", "-rf", os.path.join(native, "d", "sub")], check=True)
        assert manifest(v) != before, "the control: removing through the link changes it"
        shutil.rmtree(v)
        v = victim(top)
        if as_user:
            subprocess.run(["chown", "-R", "nobody:nogroup", v], check=True)
        before, dir_before = manifest(v), manifest(d)
        tmp = os.path.join(top, "tmp")
        os.mkdir(tmp)
        if as_user:
            shutil.chown(tmp, "nobody", "nogroup")
        cmd = as_user + [str(CRASHTEST), "--each", "--writes", "--json", "--check=true", d, "--",
                         "python3", "-c", PLANT, v]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, TMPDIR=tmp))
        assert r.returncode == 0, f"\nrerun: {cmdline(cmd)}\n{r.stdout[-2000:]}{r.stderr}"
        assert manifest(v) == before and manifest(d) == dir_before
        assert not os.listdir(tmp), os.listdir(tmp)
    finally:
        subprocess.run(["rm", "-rf", top])


DROP = """
set -e
python3 -c 'import os; os.fsync(os.open(".", os.O_RDONLY))'
setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c '
  mkdir d && python3 -c "import os; os.fsync(os.open(\\".\\", os.O_RDONLY))" &&
  echo x > d/f && mkdir d/sub && mv d d.old && ln -s "$1" d' - "$1"
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="drops from root to nobody")
def test_root_running_a_command_that_drops_privileges(tmp_path):
    """Root runs crashtest on a command that syncs once, then drops to
    nobody and plants d -> a root-only directory: root's crashtest removed
    what the unprivileged part named (its records were trusted).  The
    root-only directory is unchanged; what crashtest could not see is
    unknown, never acted on."""
    top = tmp_path / "top"
    (top / "dir").mkdir(parents=True)
    os.chmod(tmp_path, 0o755)
    os.chmod(top, 0o755)
    os.chmod(top / "dir", 0o777)
    secret = top / "root-only"
    (secret / "dir" / "sub").mkdir(parents=True)
    (secret / "dir" / "sub" / "x").write_text("root's\n")
    os.chmod(secret, 0o700)
    before = manifest(secret)
    status, report = crashtest("--each", "--writes", "--check=true", top / "dir", "--", "sh",
                               "-c", DROP, "-", secret / "dir")
    assert manifest(secret) == before
    assert report.points[-1]["verdict"] in ("unknown", "ok"), report.verdicts()


RENAMED_DIR = """
import os
def sync(p):
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.close(fd)
os.mkdir('d'); sync('.')
fd = os.open('d/f', os.O_CREAT | os.O_WRONLY, 0o644); os.write(fd, b'f'); os.fsync(fd)
os.rename('d', 'e'); sync('.')
fd = os.open('g', os.O_CREAT | os.O_WRONLY, 0o644); os.write(fd, b'g1'); os.close(fd)
fd = os.open('h', os.O_CREAT | os.O_WRONLY, 0o644); os.write(fd, b'g2'); os.fsync(fd)
os.rename('h', 'g'); sync('.')
"""


def test_a_directory_renamed_keeps_its_entries_identity(old):
    """d/f written and fsynced but d never synced, then d renamed to e and
    the rename synced: posix loses e/f (its name was never durable); undoing
    by path missed it (ok where a crash loses it).  And g, made unsynced,
    then replaced by a fully durable h renamed over it: g holds h's data
    (the undo of g's create removed the durable g: a false failure)."""
    check = 'test -d e && test ! -e e/f && test ! -e d && test "$(cat g)" = g2'
    status, report = crashtest("--classes=lost", f"--check={check}", old, "--", PYTHON, "-c",
                               RENAMED_DIR)
    assert status == 0, report.failed()
    status, report = crashtest("--classes=kept", "--check=test -e e/f", old, "--", PYTHON,
                               "-c", RENAMED_DIR)
    assert status == 0, "the control: the page cache had e/f"


@pytest.mark.parametrize("tamper", [
    'printf garbagegarbagegarbagegarbagegarbagegarbagegarbage >> "$CRASHTEST_RUN/journal"',
    'rm "$CRASHTEST_RUN/journal"',
    'mv "$CRASHTEST_RUN/journal" "$CRASHTEST_RUN/j"; echo forged > "$CRASHTEST_RUN/journal"',
    'rm "$CRASHTEST_RUN/journal"; mkfifo "$CRASHTEST_RUN/journal"',
    'rm "$CRASHTEST_RUN/journal"; ln -s /dev/zero "$CRASHTEST_RUN/journal"',
    'rm "$CRASHTEST_RUN/points"; mkfifo "$CRASHTEST_RUN/points"',
    'rm "$CRASHTEST_RUN/points"; ln -s /dev/zero "$CRASHTEST_RUN/points"',
    'rm -rf "$CRASHTEST_RUN/base"',
    'rm "$CRASHTEST_RUN/base/data"; mkfifo "$CRASHTEST_RUN/base/data"',
    'rm "$CRASHTEST_RUN/base/data"; ln -s /etc/passwd "$CRASHTEST_RUN/base/data"',
], ids=["appended", "removed", "replaced", "journal-fifo", "journal-zero", "points-fifo",
        "points-zero", "base-removed", "base-fifo", "base-link"])
def test_a_tampered_run_directory_is_unknown(old, tmp_path, tamper):
    """The command can reach the run directory ($CRASHTEST_RUN): crashtest
    must neither trust what it reads there (ok), nor hang on a FIFO, nor
    read /dev/zero for ever, nor fail itself (125, its directory left
    behind): the state is unknown.  The control, the same write without the
    tampering, is known."""
    tmp, env = private_env(tmp_path)
    status, report = crashtest("--check=true", old, "--", "sh", "-c", "echo new > data",
                               env=env)
    assert status == 0 and report.points[0]["verdict"] == "ok", report
    cmd = [CRASHTEST, "--json", "--check=true", old, "--", "sh", "-c",
           f"echo new > data; {tamper}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2, f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    assert json.loads(r.stdout)["points"][0]["verdict"] == "unknown", r.stdout
    assert not list(tmp.iterdir()), list(tmp.iterdir())


def pids(marker):
    """The processes running `marker` itself: not crashtest, nor the sh, whose
    command lines hold it too (the control then passed before the command
    ran, and the signal came while crashtest was making its copy)."""
    r = subprocess.run(["pgrep", "-f", f"^{marker}"], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_crashtest_leaves_nothing(old, tmp_path, sig):
    """crashtest interrupted while the command runs (in a process group of
    its own, so a terminal's ^C reaches crashtest alone): it must kill the
    command's tree, remove its directory and die of the signal.  The
    control: the command is running (and the directory there) before."""
    tmp, env = private_env(tmp_path)
    marker = f"sleep 3{sig:02d}.5"
    p = subprocess.Popen([CRASHTEST, old, "--", "sh", "-c", f"{marker}; echo late"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(500):
        if pids(marker):
            break
        time.sleep(0.01)
    assert pids(marker) and list(tmp.iterdir()), "the control: the command never ran"
    p.send_signal(sig)
    try:
        p.wait(timeout=30)
    finally:
        gone = not pids(marker)
        for pid in pids(marker):
            os.kill(pid, signal.SIGKILL)
    assert p.returncode == -sig, (p.returncode, p.stderr.read())
    assert gone and not list(tmp.iterdir()), list(tmp.iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs")
def test_a_full_tmpdir_leaves_no_run_directory(old, tmp_path):
    """TMPDIR on a small tmpfs that DIR does not fit in: crashtest dies (125,
    its message naming the file), its private directory removed.  The
    control: DIR fits, and runs."""
    tmp = tmp_path / "small"
    tmp.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", tmp], check=True)
    try:
        env = dict(os.environ, TMPDIR=str(tmp))
        r = subprocess.run([CRASHTEST, old, "--", "true"], capture_output=True, text=True,
                           env=env, timeout=60)
        assert r.returncode == 3 and not list(tmp.iterdir()), r
        (old / "big").write_bytes(b"x" * (2 << 20))
        r = subprocess.run([CRASHTEST, old, "--", "true"], capture_output=True, text=True,
                           env=env, timeout=60)
        assert r.returncode == 125 and f"crashtest: cannot copy {old}/big" in r.stderr, r
        assert not list(tmp.iterdir()), list(tmp.iterdir())
    finally:
        subprocess.run(["umount", tmp], check=True)


def test_an_unreadable_dir_is_named_in_crashtests_words():
    """As an ordinary user, a DIR with a directory it cannot read: crashtest's
    own message (cp's came first), 125, nothing left in TMPDIR."""
    if os.geteuid() != 0:
        pytest.skip("runs as nobody")
    top = tempfile.mkdtemp(prefix="crashtest-unreadable.")
    try:
        os.chmod(top, 0o755)
        secret = os.path.join(top, "secret")
        os.makedirs(os.path.join(secret, "inner"))
        os.chmod(os.path.join(secret, "inner"), 0o700)
        tmp = os.path.join(top, "tmp")
        os.mkdir(tmp)
        os.chmod(tmp, 0o777)
        r = subprocess.run(NOBODY + [CRASHTEST, secret, "--", "true"], capture_output=True,
                           text=True, timeout=60, env=dict(os.environ, TMPDIR=tmp))
        assert r.returncode == 125 and r.stderr.startswith("crashtest: cannot "), r
        assert f"{secret}/inner" in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert not os.listdir(tmp)
    finally:
        shutil.rmtree(top)


MKDIRS = """
import os, sys
os.makedirs('a/b')
fd = os.open('a/b/f', os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b'x')
for name in ['a/b/f', 'a/b'] + sys.argv[1:]:
    os.fsync(os.open(name, os.O_RDONLY))
"""


def test_a_lost_directory_loses_what_is_in_it(old):
    """mkdir -p a/b, a/b/f written and synced, a/b synced, but not a nor
    '.': under posix the entry 'a' is lost and everything under it.  The
    control syncs a and '.' too: a/b/f stays."""
    status, report = crashtest("--classes=lost", "--check=test ! -e a", old, "--", PYTHON,
                               "-c", MKDIRS)
    assert status == 0, report.failed()
    status, report = crashtest("--classes=lost", "--check=test -s a/b/f", old, "--", PYTHON,
                               "-c", MKDIRS, "a", ".")
    assert status == 0, report.failed()


FAILING = {
    "ftruncate-negative": ("os.ftruncate(fd, -1)", "EINVAL"),
    "ftruncate-read-only": ("os.ftruncate(os.open('data', os.O_RDONLY), 0)", "EINVAL"),
    "pwrite-o-path": ("os.pwrite(os.open('data', os.O_PATH), b'new', 0)", "EBADF"),
    "fallocate-o-path": ("os.posix_fallocate(os.open('data', os.O_PATH), 0, 10)", "EBADF"),
    "create-excl-trunc": ("os.open('data', os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_TRUNC)",
                          "EEXIST"),
}


@pytest.mark.parametrize("call", FAILING)
def test_a_failing_call_changes_nothing(old, call):
    """A call that fails changes no file: the library keeps its result and
    errno (the native run is the control), journals nothing, and every
    state holds the old contents (under ext4-ordered, a failed truncation
    kept as one emptied the file)."""
    code, want = FAILING[call]
    prog = ("import errno, os\nfd = os.open('data', os.O_RDWR)\n"
            f"try:\n    {code}\nexcept OSError as e:\n    print(errno.errorcode[e.errno])")
    native = subprocess.run([PYTHON, "-c", prog], cwd=old, capture_output=True, text=True)
    assert native.stdout == f"{want}\n", native
    status, report = crashtest("--model=ext4-ordered", f"--check=grep -qx {want} "
                               "\"$CRASHTEST_OUTPUT\" && grep -qx old data", old, "--",
                               PYTHON, "-c", prog)
    assert status == 0 and report.points[0]["changes"] == 0, report


@pytest.mark.xfail(strict=True, reason="the crash-point counters are a MAP_SHARED file the "
                   "command can truncate; sealing them needs a memfd handed down the tree")
def test_a_truncated_points_file_does_not_kill_the_command(old):
    """The command truncates the run's shared counters (the points file):
    the library's next count touches the mapping past its end and the
    command dies of SIGBUS before it prints 'after'.  The native control
    prints it."""
    script = ': > "${CRASHTEST_RUN:-.}/points"; echo new > data; echo after'
    native = subprocess.run(["sh", "-c", script], cwd=old, capture_output=True, text=True)
    assert native.stdout == "after\n", native
    status, report = crashtest('--check=grep -qx after "$CRASHTEST_OUTPUT"', old, "--", "sh",
                               "-c", script)
    assert report.points[0]["states"][0]["check_status"] == 0, report


def test_a_rename_between_links_of_one_file(old):
    """rename() between two hard links of one inode, or of a name onto
    itself, succeeds and does nothing (the native control keeps both
    names): every state has both, holding the old data."""
    os.link(old / "data", old / "b")
    prog = "import os; os.rename('data', 'b'); os.rename('b', 'b')"
    subprocess.run(["cp", "-a", old, old.parent / "native"], check=True)
    subprocess.run([PYTHON, "-c", prog], cwd=old.parent / "native", check=True)
    assert sorted(os.listdir(old.parent / "native")) == ["b", "data"]
    status, report = crashtest("--check=grep -qx old data && grep -qx old b", old, "--",
                               PYTHON, "-c", prog)
    assert status == 0, report.failed()


FSIZE = """
import os, signal
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # as a C program has it
fd = os.open('data', os.O_RDWR)
for i in range(30):
    os.pwrite(fd, b'x' * 250, i * 250)
    os.fsync(fd)
print('done')
"""


def test_a_file_size_limit_neither_kills_nor_hides(old):
    """ulimit -f 8: the command's own writes fit (the native control
    prints 'done'), but the journal outgrows the limit: SIGXFSZ must not
    kill the command (it exits 0, having printed 'done'), and records it
    could not take make the state unknown (not checked)."""
    (old / "data").write_bytes(bytes(7500))

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    native = subprocess.run(["sh", "-c", f"cp -a {old} n && cd n && python3 -c \"$0\"", FSIZE],
                            cwd=old.parent, capture_output=True, text=True, preexec_fn=limit)
    assert native.stdout == "done\n", native
    cmd = [CRASHTEST, "--json", "--classes=kept", '--check=grep -qx done "$CRASHTEST_OUTPUT"',
           old, "--", PYTHON, "-c", FSIZE]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, preexec_fn=limit)
    report = Report(json.loads(r.stdout))
    assert report["command_status"] == {"exit": 0, "signal": None, "stopped_at_point": None,
                                        "failed": False}, report
    assert report.points[0]["output_bytes"] == len("done\n"), report
    assert r.returncode == 2 and report.points[0]["verdict"] == "unknown", report
    assert report.points[0]["states"][0]["check_status"] is None, report


def test_a_create_through_a_dangling_symlink(old):
    """open(O_CREAT) of a dangling symlink creates its target: the link,
    which was there before, stays in every state, the target only in those
    that keep the create.  The native control shows what the open makes."""
    (old / "link").symlink_to("target")
    subprocess.run(["cp", "-a", old, old.parent / "native"], check=True)
    subprocess.run(["sh", "-c", "echo new > link"], cwd=old.parent / "native", check=True)
    assert (old.parent / "native" / "target").read_text() == "new\n"
    status, report = crashtest("--check=test -L link && test ! -e target", old, "--", "sh",
                               "-c", "echo new > link")
    states = report.points[0]["states"]
    assert states[0]["verdict"] == "ok" and states[1]["verdict"] == "failed", states


@pytest.mark.parametrize("mode", [0o1777, 0o700])
def test_a_removed_directory_comes_back_as_it_was(old, mode):
    """rmdir not synced: the directory is there in the state where it is
    lost, with its mode and, when crashtest may give it, its owner.  The
    control: a native stat of the directory."""
    sub = old / "sub"
    sub.mkdir()
    sub.chmod(mode)
    owner = (os.getuid(), os.getgid())
    if os.geteuid() == 0:
        owner = (12345, 12345)
        os.chown(sub, *owner)
    want = f"{mode:o} {owner[0]} {owner[1]}"
    native = subprocess.run(["stat", "-c", "%a %u %g", sub], capture_output=True, text=True)
    assert native.stdout == want + "\n", native
    status, report = crashtest("--classes=lost",
                               f'--check=test "$(stat -c "%a %u %g" sub)" = "{want}"', old,
                               "--", "rmdir", "sub")
    assert status == 0, report.failed()


def user_dir(top):
    """top/dir holding data ("old"), and the command prefix that runs as its
    owner: nobody when the tests run as root, else the user running them."""
    os.chmod(top, 0o755)
    d = os.path.join(top, "dir")
    os.mkdir(d)
    with open(os.path.join(d, "data"), "w") as f:
        f.write("old\n")
    if os.geteuid() != 0:
        return d, []
    for p in (top, d, os.path.join(d, "data")):
        shutil.chown(p, "nobody", "nogroup")
    return d, NOBODY


READ_ONLY = """
import os
fd = os.open('obj', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'blob')
os.fchmod(fd, 0o444)
fd = os.open('data', os.O_WRONLY)
os.write(fd, b'new')
os.fchmod(fd, 0o444)
os.mkdir('sub')
os.rename('obj', 'sub/obj')
os.chmod('sub', 0o555)
os.chmod('.', 0o555)
"""


def test_an_unprivileged_run_with_read_only_files_and_directories():
    """Run as an ordinary user (nobody, when the tests run as root): the
    command makes files and directories read-only, as git makes its
    objects.  Each state is built (a directory filled before it gets its
    mode), checked and removed, and nothing is left in TMPDIR.  The control:
    natively the user cannot write in such a directory."""
    top = tempfile.mkdtemp(prefix="crashtest-attack.")
    try:
        d, as_user = user_dir(top)
        probe = as_user + ["sh", "-c", "cp -a dir native && cd native && python3 -c \"$0\" && "
                           "echo x > other", READ_ONLY]
        native = subprocess.run(probe, cwd=top, capture_output=True, text=True)
        assert native.returncode != 0 and "Permission denied" in native.stderr, native
        tmp = os.path.join(top, "tmp")
        os.mkdir(tmp)
        if as_user:
            shutil.chown(tmp, "nobody", "nogroup")
        cmd = as_user + [CRASHTEST, "--json", "--check=true", d, "--", "python3", "-c",
                         READ_ONLY]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=top,
                           env=dict(os.environ, TMPDIR=tmp))
        assert r.returncode == 0, f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
        assert not os.listdir(tmp), os.listdir(tmp)
        kept = Report(json.loads(r.stdout)).points[0]["states_distinct"]
        assert kept > 5, r.stdout
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", top])
        subprocess.run(["rm", "-rf", top])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [6, 7, 8])
def test_all_lost_names_are_the_last_synced_state(tmp_path, seed):
    """Differential, of names: seeded creates, writes, renames, links and
    unlinks in two directories, fsyncs of files and of directories; at every
    change and sync, the state where all unsynced changes are lost has the
    entries of each directory's last fsync, each file the contents of its
    inode's last fsync.  Seed 6 renames between two links of one inode."""
    d = tmp_path / "dir"
    (d / "d").mkdir(parents=True)
    (d / "a").write_bytes(b"A")
    (d / "b").write_bytes(b"B")
    status, report = crashtest("--each", "--writes", "--classes=lost",
                               f"--check={PYTHON} {CRASH / 'names_check.py'}", d, "--",
                               PYTHON, CRASH / "names.py", seed, 35)
    assert len(report.points) > 30, report.verdicts()
    assert status == 0, report.failed()[:3]


def test_an_unnamed_temporary_file_is_known(old):
    """O_TMPFILE written and never linked leaves nothing a crash could show:
    known (ok), as a file created, written and unlinked; one linked in is
    there in the state that keeps the link (ok and failed states)."""
    for prog in ["import os; fd = os.open('t', os.O_CREAT | os.O_WRONLY); "
                 "os.write(fd, b'x' * 100); os.unlink('t')",
                 "import os; fd = os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o600); "
                 "os.write(fd, b'x' * 100)"]:
        status, report = crashtest("--check=true", old, "--", PYTHON, "-c", prog)
        assert status == 0 and not report.points[0]["unknown"], (prog, report)
    prog = ("import ctypes, os; fd = os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o600); "
            "os.write(fd, b'x' * 100); ctypes.CDLL(None).linkat(-100, "
            "f'/proc/self/fd/{fd}'.encode(), -100, b't', 0x400)")  # AT_SYMLINK_FOLLOW
    status, report = crashtest("--check=test ! -e t", old, "--", PYTHON, "-c", prog)
    verdicts = {s["verdict"] for s in report.points[0]["states"]}
    assert verdicts == {"ok", "failed"} and not report.points[0]["unknown"], report


DROPPED = """
echo mid > data
python3 -c 'import os; os.fsync(os.open("data", os.O_RDONLY)); os.fsync(os.open(".", os.O_RDONLY))'
exec 3<>data
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'printf XYZ >&3'
python3 -c 'import os; os.fsync(os.open(".", os.O_RDONLY))'
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges needs root")
def test_a_process_that_cannot_open_the_journal_is_unknown(old):
    """A process that dropped its privileges writes on a descriptor it
    inherited (the native control: data ends "XYZ"), but cannot open the
    private journal: its write goes unrecorded, and the points after it are
    unknown, where a state kept a write no fsync covered, ok."""
    native = old.parent / "native"
    shutil.copytree(old, native)
    subprocess.run(["sh", "-c", DROPPED], cwd=native, check=True)
    assert (native / "data").read_text() == "XYZ\n", "the native control wrote nothing"
    status, report = crashtest("--at=3", "--check=true", old, "--", "sh", "-c", DROPPED)
    assert report.verdicts() == [("fsync(.)", "unknown")], report


@pytest.mark.parametrize("made", ["touch marker", "mkdir newdir", "ln -s data link",
                                  "rmdir d", "echo x > data"])
def test_a_change_made_unseen_is_unknown(old, made):
    """An entry made or removed, or a file written, by a program run
    without LD_PRELOAD (no record of it): the run's copy does not match its
    journal, and the state is unknown, where a crash could lose it.  The
    same through libc is journaled (ok)."""
    (old / "d").mkdir()
    status, report = crashtest("--check=true", old, "--", "sh", "-c", f"env -u LD_PRELOAD {made}")
    assert status == 2 and "past the library" in " ".join(report.points[0]["unknown"]) or \
        "unseen" in " ".join(report.points[0]["unknown"]), report
    status, report = crashtest("--check=true", old, "--", "sh", "-c", made)
    assert status == 0 and not report.points[0]["unknown"], report


def test_a_socket_and_a_fifo_made_are_no_change_of_data(old):
    """A unix socket bound in the copy (a Redis on a socket) and a FIFO made
    in it hold no data: known, not unknown, made through libc or not."""
    prog = ("import os, socket; os.mkfifo('fifo'); "
            "socket.socket(socket.AF_UNIX).bind('sock')")
    for env in ["", "env -u LD_PRELOAD "]:
        status, report = crashtest("--check=true", old, "--", "sh", "-c",
                                   f"{env}{PYTHON} -c \"{prog}\"")
        assert status == 0, (env, report)


SYNCFS_ELSEWHERE = """
import ctypes, os
open('data', 'w').write('new\\n')
fd = os.open('/proc', os.O_RDONLY)
assert ctypes.CDLL(None, use_errno=True).syncfs(fd) == 0
"""


def test_a_syncfs_of_another_file_system_keeps_nothing(old):
    """syncfs of /proc (another file system; the native control shows the
    call succeeds and data written) was taken for a sync of the copy: the
    unsynced "new" was kept, a state safer than a crash leaves."""
    native = old.parent / "native"
    shutil.copytree(old, native)
    subprocess.run([PYTHON, "-c", SYNCFS_ELSEWHERE], cwd=native, check=True)
    assert (native / "data").read_text() == "new\n", "the native control wrote nothing"
    status, report = crashtest("--at=1", "--classes=lost", "--check=grep -qx old data", old,
                               "--", PYTHON, "-c", SYNCFS_ELSEWHERE)
    assert report.verdicts() == [("syncfs of another file system", "ok")], report


ERRNO_AFTER_CREATE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
ctypes.set_errno(0)
assert libc.open(b"made", os.O_CREAT | os.O_WRONLY, 0o644) >= 0
print(ctypes.get_errno())
"""

ERRNO_AFTER_RENAME = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.close(os.open("made", os.O_CREAT | os.O_WRONLY, 0o644))
ctypes.set_errno(0)
assert libc.rename(b"made", b"moved") == 0
print(ctypes.get_errno())
"""


@pytest.mark.parametrize("prog", [ERRNO_AFTER_CREATE, ERRNO_AFTER_RENAME],
                         ids=["open", "rename"])
def test_a_call_that_succeeds_leaves_errno(tmp_path, prog):
    """open(O_CREAT) of a new file, rename to a new name, succeed and leave
    errno as it was (the native control prints 0); the library's look for
    the file first (ENOENT) leaked into the caller's errno."""
    d = tmp_path / "dir"
    d.mkdir()
    native = subprocess.run([PYTHON, "-c", prog], cwd=d, check=True,
                            capture_output=True, text=True)
    assert native.stdout == "0\n", native
    shutil.rmtree(d)
    d.mkdir()
    status, report = crashtest("--check=grep -qx 0 \"$CRASHTEST_OUTPUT\"", d, "--",
                               PYTHON, "-c", prog)
    assert status == 0, report.failed()


def test_a_write_during_an_fsync_is_not_covered_by_it(old):
    """One thread writes while another's fsync of the same file is under
    way: POSIX promises nothing of that write, so a state without it is
    built (the fsync covers what was recorded before it began)."""
    native = old.parent / "native"
    shutil.copytree(old, native)
    subprocess.run([PYTHON, CRASH / "race.py", "1"], cwd=native, check=True, timeout=120)
    assert (native / "data").read_bytes()[:5] == b"SECND", "the native write did not land"
    check = 'grep -qx inside "$CRASHTEST_OUTPUT" && test "$(head -c 5 data)" = first'
    status, report = crashtest("--classes=lost", f"--check={check}", old, "--", PYTHON,
                               CRASH / "race.py")
    assert status == 0, report.failed()


BLOCKED_PIPE = """
import os, threading
r, w = os.pipe()
os.set_blocking(w, True)
def fill():
    os.write(w, b'x' * (1 << 20))  # more than a pipe holds: blocks until drained
t = threading.Thread(target=fill)
t.start()
fd = os.open('data', os.O_WRONLY)
os.write(fd, b'new')  # while the other thread is blocked in its write
left = 1 << 20
while left:
    left -= len(os.read(r, left))
t.join()
print('done')
"""


def test_a_blocked_pipe_write_does_not_stop_other_threads(old):
    """One thread blocks writing a pipe that the main thread drains only after
    its own write to a file of the copy: a lock held over the pipe's write
    made the file write wait for ever."""
    (old.parent / "data").write_text("old\n")
    native = subprocess.run([PYTHON, "-c", BLOCKED_PIPE], cwd=old.parent, capture_output=True,
                            text=True, timeout=60)
    assert native.stdout == "done\n", native
    status, report = crashtest("--classes=lost",
                               '--check=grep -qx done "$CRASHTEST_OUTPUT" && grep -qx old data',
                               old, "--", PYTHON, "-c", BLOCKED_PIPE, timeout=60)
    assert status == 0, report.failed()


def procs(who, n, m, how=""):
    """ctprocs by the library, the supervisor (its static build) or both (n
    children each of the two at once), as one shell command."""
    dyn, static = f"{TESTS / 'ctprocs'} {n} {m} {how}", f"{TESTS / 'ctprocs-static'} {n} {m} {how}"
    return {"library": dyn, "supervisor": static, "both": f"{dyn} & {static} & wait"}[who]


WHO = ["library", "supervisor", "both"]


@pytest.mark.parametrize("who", WHO)
def test_processes_at_once_stop_at_each_point(tmp_path, who):
    """Four processes appending and fdatasyncing at once, their crash points
    interleaved: at each point --at asks for, the journal has the records
    in the order their points were numbered, and nothing changed after the
    point (one lock on the journal's open file for the libraries and the
    supervisor; a process that finds the point passed stops before its
    change): never unknown."""
    for at in range(1, 49, 2):
        d = tmp_path / f"d{at}"
        d.mkdir()
        _, report = crash_report(f"--at={at}", "--check=true", d, "--", "sh", "-c",
                                 procs(who, 2 if who == "both" else 4, 12))
        unknown = [w for p in report.points for w in p.get("unknown", [])]
        assert not unknown, (who, at, unknown)


# include/crashtest.h: struct ct_record, and the kinds read here.
RECORD = struct.Struct("<IHHIIQQQQQQqqQQQ")
CT_WRITE, CT_TRUNC, CT_CREATE = 1, 3, 5


def stale_sizes(journal):
    """The writes whose record gives their file another size before them
    than the journal's own earlier records do (files made in the run):
    (record, pid, offset, size given, size journaled)."""
    data, at, n, size, stale = journal.read_bytes(), 0, 0, {}, []
    while at + RECORD.size <= len(data):
        _, kind, _, length, pid, _, dev, ino, _, ino2, _, off, was, *_ = \
            RECORD.unpack_from(data, at)
        if kind == CT_CREATE:
            size[dev, ino2] = 0
        elif kind == CT_WRITE and (dev, ino) in size:
            if was != size[dev, ino]:
                stale.append((n, pid, off, was, size[dev, ino]))
            size[dev, ino] = max(size[dev, ino], off + length)
        elif kind == CT_TRUNC and (dev, ino) in size:
            size[dev, ino] = was
        at, n = at + RECORD.size + length, n + 1
    return stale


@pytest.mark.parametrize("how", ["shared", "unlink"])
@pytest.mark.parametrize("who", WHO)
def test_processes_changing_the_same_names_are_journaled_as_they_were(tmp_path, who, how):
    """Four processes open the same names at once with O_CREAT, write at
    their own places in them, and (unlink) remove them: whichever made a
    name, the journal says so once, before what another wrote there (the
    library judged whether it existed before its lock, and journaled a
    second create over another's write: 'changed past the library'); a
    write's size before it is the one the lock found (it was the first
    look's, before another's write past it); a name another removed
    meanwhile is made again under the lock, not by the kernel unseen (the
    supervisor left the open of an existing name to it).  ctprocs runs the
    race hundreds of times; the journal is linked out of the run directory
    at the end (the same file system: TMPDIR)."""
    _, env = private_env(tmp_path)
    d = tmp_path / "d"
    d.mkdir()
    journal = tmp_path / "journal"
    cmd = f'{procs(who, 2 if who == "both" else 4, 300, how)}; ln "$CRASHTEST_RUN/journal" ' \
          f'{journal}'
    _, report = crash_report("--states=1", "--check=true", d, "--", "sh", "-c", cmd, env=env)
    unknown = [w for p in report.points for w in p.get("unknown", [])]
    assert not unknown, (who, how, unknown)
    assert report.points[-1]["changes"] >= 4 * 300, report.points[-1]  # a write each, at least
    assert not stale_sizes(journal), (who, how, stale_sizes(journal)[:5])


@pytest.mark.parametrize("who", WHO)
def test_a_process_out_of_the_group_stops_at_the_point(tmp_path, who):
    """Two processes leave the process group and make files (mkstemp) and
    write 64 KiB at a time from the moment their parent is killed at the
    point --at asks for: no one kills them until crashtest ends the run,
    so each must stop at its next change, before making it (the library
    did not look: a write, or its record, cut by crashtest's kill made the
    run unknown; and mkstemp made its file before the lock)."""
    for at in (2, 5, 9, 15):
        d = tmp_path / f"d{at}"
        d.mkdir()
        _, report = crash_report(f"--at={at}", "--check=true", d, "--", "sh", "-c",
                                 procs(who, 1 if who == "both" else 2, 20, "setsid"))
        unknown = [w for p in report.points for w in p.get("unknown", [])]
        assert not unknown, (who, at, unknown)
