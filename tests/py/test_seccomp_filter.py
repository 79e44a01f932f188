# SPDX-License-Identifier: MIT
"""When the seccomp filter is on and who pays for it: only the programs no
preloaded library sees, --seccomp's modes, one listener in a tree (eatmydata
within eatmydata); the supervisor started when first needed and serving its
user alone (planted launchers, another user's socket, a chroot without
/proc, a Landlock domain, a killed supervisor); a failed exec or spawn as
natively, and a set-user-ID program beside them keeps its privilege."""
import contextlib
import ctypes
import os
import shlex
import shutil
import stat
import subprocess
import tempfile

import pytest

from conftest import EATMYDATA, TESTS, cmdline, eaten, run
from helpers import FS_SYNCS, STATIC


def seccomp_status(prefix):
    """The Seccomp: line of a dynamic program and of a static one, both
    started by the same shell."""
    script = f"grep Seccomp: /proc/self/status; {TESTS / 'hostile-static'} status"
    r = subprocess.run([*prefix, "sh", "-c", script], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, cmdline([*prefix, "sh", "-c", script]) + r.stderr
    return r.stdout.split()


def test_only_the_programs_that_need_it_pay_for_the_filter():
    """A dynamic program the library serves runs with no filter; the static
    one beside it runs under it (and natively neither)."""
    assert seccomp_status([]) == ["Seccomp:", "0", "Seccomp:", "0"]
    assert seccomp_status([EATMYDATA]) == ["Seccomp:", "0", "Seccomp:", "2"]
    assert seccomp_status([EATMYDATA, "--seccomp=off"]) == ["Seccomp:", "0", "Seccomp:", "0"]
    assert seccomp_status([EATMYDATA, "--seccomp=on"]) == ["Seccomp:", "2", "Seccomp:", "2"]


# What a supervisor's start would make: a process (or thread), a socket, a
# directory.
STARTED = [("task:task_newtask", None), ("syscalls:sys_enter_socket", None),
           ("syscalls:sys_enter_socketpair", None), ("syscalls:sys_enter_bind", None),
           ("syscalls:sys_enter_mkdir", None), ("syscalls:sys_enter_mkdirat", None)]


@pytest.mark.slow
@pytest.mark.parametrize("cmd", [["/bin/true"], ["sh", "-c", "/bin/true; /bin/true"],
                                 ["python3", "-c", "import subprocess; subprocess.run('true')"]],
                         ids=["true", "sh", "python"])
def test_nothing_is_started_when_no_program_needs_the_filter(cmd, scratch):
    """A tree that never execs a program the library cannot reach: the
    default starts, creates and leaves nothing more than --seccomp=off (the
    same processes, no socket, no directory); beside it, a static program's
    run, where the supervisor does start."""
    off = run([EATMYDATA, "--seccomp=off", *cmd], events=STARTED)
    default = run([EATMYDATA, *cmd], events=STARTED)
    assert default.counts == off.counts, default.why() + off.why()
    static = [*cmd[:-1], cmd[-1].replace("/bin/true", f"{STATIC['static']} fsync {scratch}")] \
        if cmd[0] == "sh" else [STATIC["static"], "fsync", scratch]
    off = run([EATMYDATA, "--seccomp=off", *static], events=STARTED)
    default = run([EATMYDATA, *static], events=STARTED)
    assert default.counts["task:task_newtask"] > off.counts["task:task_newtask"], default.why()
    assert default.counts["syscalls:sys_enter_socketpair"] > 0, default.why()


def test_seccomp_off_leaves_static_programs_alone(scratch):
    cmd = ["sh", "-c", f"{STATIC['static']} fsync {scratch}"]
    off = run([EATMYDATA, "--seccomp=off", *cmd], events=FS_SYNCS)
    assert off.syncs > 0, off.why()


NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]


@pytest.fixture
def public():
    """A directory every user reaches (pytest's own is root's alone), with a
    set-user-ID root program that prints its effective user id, and a
    directory `w` where anyone writes."""
    d = tempfile.mkdtemp(prefix="emd-tree-")
    os.chmod(d, 0o755)
    src = os.path.join(d, "euid.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include <unistd.h>\n'
                'int main(void) { printf("%d\\n", (int)geteuid()); return 0; }\n')
    subprocess.run(["cc", "-o", os.path.join(d, "euid"), src], check=True)
    os.chmod(os.path.join(d, "euid"), 0o4755)
    os.mkdir(os.path.join(d, "w"), 0o777)
    os.chmod(os.path.join(d, "w"), 0o777)
    yield d
    shutil.rmtree(d)


def test_unprivileged_tree_keeps_setuid_and_eats_static(public):
    """An unprivileged user's tree: the set-user-ID program still gains its
    privilege (no no_new_privs where no filter is), while the static program
    started next to it is eaten."""
    script = f"{public}/euid; {STATIC['static']} fsync {public}/w"
    native = run([*NOBODY, "sh", "-c", script], events=FS_SYNCS)
    assert native.stdout == "0\n" and native.syncs > 0, native.why()
    under = run([*NOBODY, EATMYDATA, "sh", "-c", script], events=FS_SYNCS)
    assert under.returncode == 0 and under.stdout == "0\n", under.why()
    assert under.syncs == 0, under.why()


def test_static_set_user_id_program_keeps_its_privilege(public):
    """A static set-user-ID program is left unfiltered: no_new_privs would
    take its privilege."""
    src = os.path.join(public, "euid.c")
    exe = os.path.join(public, "euid-static")
    subprocess.run(["cc", "-static", "-o", exe, src], check=True)
    os.chmod(exe, 0o4755)
    native = run([*NOBODY, "sh", "-c", exe], events=FS_SYNCS)
    assert native.stdout == "0\n", native.why()
    under = run([*NOBODY, EATMYDATA, "sh", "-c", exe], events=FS_SYNCS)
    assert under.stdout == "0\n", under.why()


@pytest.mark.root
@pytest.mark.parametrize("how", ["posix_spawn", "exec"])
@pytest.mark.parametrize("owner", ["nobody", "root"])
def test_planted_launcher_is_never_run(public, tmp_path, how, owner):
    """EATMYDATA_SECCOMP_EXEC from the environment names a program another
    user could have written (theirs, or root's that anyone may write): it
    is run neither as posix_spawn's stand-in nor as the supervisor; the
    program asked for runs, unfiltered (a root process may have its
    caller's environment: sudo -E)."""
    marker = os.path.join(public, "w", "planted-ran")
    evil = os.path.join(public, "w", "evil")
    with open(evil + ".c", "w") as f:
        f.write('#include <fcntl.h>\nint main(void) { return open("%s", O_CREAT | O_WRONLY, '
                '0600) < 0; }\n' % marker)
    subprocess.run(["cc", "-o", evil, evil + ".c"], check=True)
    os.chmod(evil, 0o777 if owner == "root" else 0o755)
    if owner == "nobody":
        shutil.chown(evil, "nobody")
    prog = STATIC["static"]
    spawn = ("os.waitpid(os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ), 0)"
             if how == "posix_spawn" else "subprocess.run(sys.argv[2:])")
    py = ("import os, subprocess, sys; os.environ['EATMYDATA_SECCOMP_EXEC'] = sys.argv[1]; "
          + spawn)
    r = eaten(["python3", "-c", py, evil, prog, "fsync", tmp_path], events=FS_SYNCS)
    assert not os.path.exists(marker), r.why()
    assert r.syncs > 0, r.why()  # the program ran, unfiltered


# Another user's socket bound to the name a process of the tree looks for
# its supervisor at: with its backlog full ("full"), or answering each
# connection as a supervisor does ("ready") and counting the listeners
# they bring, printed at the end.
SQUATTER = """import socket, sys, threading
name = sys.argv[1].replace("@", "\\0", 1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(name); s.listen(0)
listeners = 0
def serve():
    global listeners
    while True:
        c, _ = s.accept()
        c.settimeout(5)
        c.send(b"R")
        try:
            _, anc, _, _ = c.recvmsg(1, socket.CMSG_SPACE(4))
            listeners += len(anc)
        except OSError:
            pass
if sys.argv[2] == "full":
    fill = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    fill.connect(name)
else:
    threading.Thread(target=serve, daemon=True).start()
print("ready", flush=True)
sys.stdin.readline()
print(listeners)
"""


@pytest.mark.root
@pytest.mark.parametrize("victim", ["root", "12345"])
@pytest.mark.parametrize("backlog", ["full", "ready"])
def test_another_users_socket_at_the_supervisors_name(public, victim, backlog):
    """Another user binds the name a process of the tree finds its
    supervisor at (abstract names are seen in /proc/net/unix), and may
    fill its backlog: the program is eaten all the same, by a supervisor
    of the process's own, without waiting, and no listener reaches the
    other user's socket (whoever holds one answers the process's system
    calls)."""
    name = os.urandom(16).hex()
    uid = 0 if victim == "root" else int(victim)
    squatter = subprocess.Popen([*NOBODY, "python3", "-c", SQUATTER,
                                 f"@eatmydata-{name}-{uid}", backlog],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert squatter.stdout.readline() == "ready\n"
        lib = next(EATMYDATA.parent.parent.glob("lib*/**/libeatmydata.so"))
        env = {"LD_PRELOAD": str(lib), "EATMYDATA_SECCOMP": name,
               "EATMYDATA_SECCOMP_EXEC": str(EATMYDATA)}
        who = [] if victim == "root" else ["setpriv", f"--reuid={victim}", f"--regid={victim}",
                                           "--clear-groups", "--"]
        cmd = [*who, "sh", "-c", f"{STATIC['static']} fsync {public}/w && echo ran"]
        try:
            r = run(cmd, env=env, events=FS_SYNCS, timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("hangs: " + cmdline(cmd, env))
        assert r.stdout == "ran\n" and r.syncs == 0, r.why()
        listeners, _ = squatter.communicate("\n", timeout=30)
        assert listeners == "0\n", r.why()
    finally:
        squatter.kill()
        squatter.wait()


# Another user's process that connects to a supervisor's name: what it is
# sent ("ready" or nothing, the connection closed).
CONNECT = """import socket, sys
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.connect(sys.argv[1].replace("@", "\\0", 1)); c.settimeout(30)
print(repr(c.recv(1)))
"""


@pytest.mark.root
def test_a_supervisor_serves_its_user_alone(public):
    """A process of another user connects to root's running supervisor (its
    name is in /proc/net/unix): it is not answered, so could hand it no
    listener."""
    name = os.urandom(16).hex()
    lib = next(EATMYDATA.parent.parent.glob("lib*/**/libeatmydata.so"))
    env = dict(os.environ, LD_PRELOAD=str(lib), EATMYDATA_SECCOMP=name,
               EATMYDATA_SECCOMP_EXEC=str(EATMYDATA))
    tree = subprocess.Popen(["sh", "-c", f"exec {TESTS / 'hostile-static'} fsync-twice "
                             f"{public}/w/f"], env=env, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    try:
        assert tree.stdout.readline() == "first ok\n"
        for who, expected in [([], "b'R'\n"), (NOBODY, "b''\n")]:
            cmd = [*who, "python3", "-c", CONNECT, f"@eatmydata-{name}-0"]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            assert r.stdout == expected, cmdline(cmd) + r.stderr
    finally:
        tree.kill()
        tree.wait()


@contextlib.contextmanager
def opens_of(path):
    """A function counting the opens of path since it was last called
    (inotify's IN_OPEN, queued as each open is made)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    assert fd >= 0 and libc.inotify_add_watch(fd, str(path).encode(), 0x20) >= 0

    def count():
        n = 0
        while True:
            try:
                buf = os.read(fd, 4096)
            except BlockingIOError:
                return n
            while buf:  # struct inotify_event: wd, mask, cookie, len, name
                n += 1
                buf = buf[16 + int.from_bytes(buf[12:16], "little"):]
    try:
        yield count
    finally:
        os.close(fd)


@pytest.mark.root
@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize("how", ["launcher", "sh", "python-posix_spawn", "fexecve"])
def test_exec_of_a_fifo_or_device_opens_nothing(tmp_path, kind, how):
    """A FIFO or a device named as a program (executable bits and all): the
    exec fails as natively, and nothing opens it (a writer blocked on the
    FIFO would be let go, a tape rewound)."""
    node = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(node, 0o755)
    else:
        os.mknod(node, 0o755 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    py = ("import os, sys\ntry:\n    os.waitpid(os.posix_spawn(sys.argv[1], sys.argv[1:], "
          "os.environ), 0)\nexcept OSError as e:\n    print(e.strerror)\n")
    cmd = {"launcher": ["env", node], "sh": ["sh", "-c", f"{node}; true"],
           "python-posix_spawn": ["python3", "-c", py, node],
           "fexecve": [TESTS / "execs", "fexecve-opath", node]}[how]
    with opens_of(node) as opens:
        os.close(os.open(node, os.O_RDONLY | os.O_NONBLOCK))
        assert opens() == 1, "inotify sees an open"
        native = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert opens() == 0, cmdline(cmd)
        eaten_cmd = [EATMYDATA, *(cmd[1:] if how == "launcher" else cmd)]  # not env's exec
        under = subprocess.run(eaten_cmd, capture_output=True, text=True, timeout=60)
        assert opens() == 0, cmdline(eaten_cmd)
    assert (under.returncode, under.stdout) == (native.returncode, native.stdout), \
        cmdline(eaten_cmd) + under.stderr


# A set-user-ID root program that says what it runs as and under.
STATUS_C = r"""#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	printf("euid %d\n", (int)geteuid());
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8) || !strncmp(line, "NoNewPrivs:", 11))
			fputs(line, stdout);
	return 0;
}
"""


@pytest.fixture
def failing_static(public):
    """Static programs whose exec fails (each by its name), beside a
    set-user-ID root program `status` that prints its effective user id,
    Seccomp: and NoNewPrivs:."""
    src = os.path.join(public, "status.c")
    with open(src, "w") as f:
        f.write(STATUS_C)
    subprocess.run(["cc", "-o", os.path.join(public, "status"), src], check=True)
    os.chmod(os.path.join(public, "status"), 0o4755)
    progs = {}
    for name in ["EACCES", "ENOEXEC", "E2BIG"]:
        progs[name] = os.path.join(public, f"static-{name}")
        shutil.copy(STATIC["static"], progs[name])
    os.chmod(progs["EACCES"], 0o644)
    with open(progs["ENOEXEC"], "r+b") as f:  # e_machine: no architecture's
        f.seek(18)
        f.write(b"\xef\xbe")
    # A program that needs the filter (it links liburing) whose interpreter
    # is not there.
    progs["ENOENT"] = os.path.join(public, "uring-ENOENT")
    with open(TESTS / "uring-sync", "rb") as f:
        elf = f.read()
    interp = b"/lib64/ld-linux-x86-64.so.2\0"
    assert interp in elf
    with open(progs["ENOENT"], "wb") as f:
        f.write(elf.replace(interp, interp[:-2] + b"X\0", 1))
    os.chmod(progs["ENOENT"], 0o755)
    yield progs


@pytest.mark.root
@pytest.mark.parametrize("who", ["nobody", "root"])
@pytest.mark.parametrize("why", ["EACCES", "ENOEXEC", "E2BIG", "E2BIG-string", "noexec",
                                 "ENOENT"])
def test_failed_exec_leaves_the_process_as_it_was(public, failing_static, who, why):
    """A static program's exec fails (not executable, not for this machine,
    too many arguments, on a noexec mount; a liburing program's interpreter
    missing); the process then runs a
    set-user-ID program, which gains its privilege and runs unfiltered, as
    natively: nothing of the filter is left behind by the exec that failed."""
    first = failing_static.get(why.split("-")[0], f"{public}/noexec/static")
    how = {"E2BIG": "exec-big", "E2BIG-string": "exec-long"}.get(why, "exec-then")
    as_who = NOBODY if who == "nobody" else []
    prefix = (f"mount -t tmpfs -o noexec,mode=755 none {public}/noexec && "
              f"cp {STATIC['static']} {first} && " if why == "noexec" else "")
    os.makedirs(f"{public}/noexec", exist_ok=True)
    expected = (f"first {'EACCES' if why == 'noexec' else why.split('-')[0]}\n"
                "euid 0\nNoNewPrivs:\t0\nSeccomp:\t0\n")
    for launcher in [[], [EATMYDATA]]:
        cmd = [*as_who, *launcher, TESTS / "execs", how, first, f"{public}/status"]
        script = prefix + " ".join(shlex.quote(str(c)) for c in cmd)
        r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                           text=True, timeout=120)
        assert r.stdout == expected, cmdline(["unshare", "-m", "sh", "-c", script]) + r.stderr


@pytest.mark.parametrize("how", ["C", "python"])
def test_posix_spawn_of_a_program_that_cannot_run(failing_static, how):
    """posix_spawn of a static program the kernel will not run: its error,
    as natively (Python's subprocess raises it), not a child exiting 126."""
    prog = failing_static["EACCES"]
    py = ("import subprocess, sys\ntry:\n"
          "    print(subprocess.run([sys.argv[1]], close_fds=False).returncode)\n"
          "except OSError as e:\n    print(type(e).__name__)\n")
    cmd = {"C": [TESTS / "execs", "spawn", prog], "python": ["python3", "-c", py, prog]}[how]
    expected = {"C": "posix_spawn EACCES\n", "python": "PermissionError\n"}[how]
    for launcher in [[], [EATMYDATA]]:
        r = subprocess.run([*launcher, *cmd], capture_output=True, text=True, timeout=60)
        assert r.stdout == expected, cmdline([*launcher, *cmd]) + r.stderr


# A chroot where the launcher and its libraries are (the host's /usr and the
# build, bound at their own paths), but no /proc.
JAIL_WITH_LAUNCHER = """set -e
mount --make-rprivate /
mkdir -p "$0/usr" "$0/w" "$0$1"
mount --bind /usr "$0/usr"
mount --bind "$1" "$0$1"
for d in bin lib lib32 lib64 libx32 sbin; do [ -e "$0/$d" ] || ln -s "usr/$d" "$0/$d"; done
shift
exec "$@"
"""


def test_supervisor_in_a_chroot_without_proc(tmp_path):
    """The launcher can be run in the chroot, but there is no /proc: the
    supervisor cannot tell a listener from anything else, so it does not
    start, and the program runs unfiltered (it syncs, and succeeds), never
    under a filter no one answers."""
    jail = tmp_path / "jail"
    jail.mkdir()
    shutil.copy(STATIC["static"], jail / "static")
    build = EATMYDATA.parent.parent
    cmd = ["unshare", "-m", "sh", "-c", JAIL_WITH_LAUNCHER, jail, build,
           EATMYDATA, "chroot", jail, "/static", "fsync", "/w"]
    r = run(cmd, events=FS_SYNCS)
    assert r.syncs > 0, r.why()


def test_landlock_before_the_filter_is_kept():
    """A dynamic process enters a Landlock domain, unseen by any filter, then
    execs a static program: that program's filter is the tree's, not the
    launcher's, so nothing is opened for it, even with --on-behalf=on:
    /etc/shadow stays out of reach, O_SYNC or not."""
    cmd = [TESTS / "hostile", "landlock-exec", TESTS / "hostile-static", "open-sync",
           "/etc/shadow"]
    native = run(cmd, events=FS_SYNCS)
    assert native.stdout == "plain EACCES\nsync EACCES\n", native.why()
    under = run([EATMYDATA, "--on-behalf=on", *cmd], events=FS_SYNCS)
    assert under.stdout == native.stdout, under.why()


def test_a_killed_supervisor_is_started_again(scratch):
    """The run's supervisor is killed between two static programs: the
    second runs all the same, under a supervisor started for it."""
    tag = os.urandom(8).hex()
    prog = f"{STATIC['static']} fsync {scratch}"
    script = (f"{prog} && echo first; "
              "for p in $(pgrep -x eatmydata); do "
              f"tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx EMD_TAG={tag} && "
              "kill -9 $p; done; sleep 0.2; "
              f"{prog} && echo second")
    r = run([EATMYDATA, "sh", "-c", script], env={"EMD_TAG": tag},
            events=[("ext4:ext4_sync_file_enter", None)])
    assert r.stdout == "first\nsecond\n", r.why()
    assert r.syncs == 0, r.why()
    native = run(["sh", "-c", script], events=[("ext4:ext4_sync_file_enter", None)])
    assert native.syncs == 2, native.why()


@pytest.mark.parametrize("tmpdir", ["/nonexistent", "/proc"])
def test_an_unusable_tmpdir_costs_nothing(scratch, tmpdir):
    """The supervisor needs no directory: with TMPDIR unusable, a static
    program is eaten."""
    cmd = ["sh", "-c", f"{STATIC['static']} fsync {scratch} && echo ran"]
    native = run(cmd, events=FS_SYNCS)
    assert native.syncs > 0, native.why()
    under = eaten(cmd, env={"TMPDIR": tmpdir}, events=FS_SYNCS)
    assert under.stdout == "ran\n" and under.syncs == 0, under.why()


def status_field(field, args, user=None):
    prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] \
        if user else []
    r = subprocess.run(prefix + [*args, "grep", f"^{field}:", "/proc/self/status"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()[1]


@pytest.mark.root
def test_when_the_filter_is_on(shared_lib):
    emd = str(shared_lib / "bin" / "eatmydata")
    # auto: a dynamically linked program is reached by the library alone.
    assert status_field("Seccomp", [emd]) == "0"
    assert status_field("Seccomp", [emd, "--seccomp=on"]) == "2"
    assert status_field("Seccomp", [emd, "--seccomp=off"]) == "0"
    # no_new_privs only where it is needed: an unprivileged user.
    assert status_field("NoNewPrivs", [emd, "--seccomp=on"]) == "0"
    assert status_field("NoNewPrivs", [emd, "--seccomp=on"], user=True) == "1"
    assert status_field("NoNewPrivs", [emd], user=True) == "0"


def test_no_io_uring():
    assert subprocess.run([EATMYDATA, "--seccomp=on", TESTS / "uring"], capture_output=True,
                          text=True).stdout == "ok\n"
    assert subprocess.run([EATMYDATA, "--seccomp=on", "--no-io-uring", TESTS / "uring"],
                          capture_output=True, text=True).stdout == "ENOSYS\n"


def test_bad_mode():
    r = subprocess.run([EATMYDATA, "--seccomp=maybe", "true"], capture_output=True, text=True)
    assert r.returncode == 125
    assert r.stderr == "eatmydata: --seccomp takes auto, on or off, not 'maybe'\n"


def test_eatmydata_within_eatmydata(scratch):
    """A tree may hold only one seccomp listener: the inner eatmydata
    (image build scripts call it again) ran nothing and exited 125.  Its
    "auto" now runs the command under the outer supervisor, which eats; an
    explicit --seccomp=on says why it cannot."""
    cmd = [TESTS / "entry-static", "fsync", scratch]
    native = run(cmd)
    assert native.syncs > 0, native.why()
    nested = run([EATMYDATA, "--seccomp=on", EATMYDATA, *cmd])
    assert nested.returncode == 0 and nested.syncs == 0, nested.why()
    r = subprocess.run([EATMYDATA, "--seccomp=on", EATMYDATA, "--seccomp=on", *cmd],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 125
    assert r.stderr == ("eatmydata: cannot install the seccomp filter: the process is under "
                        "one with a supervisor already (an outer eatmydata --seccomp, or a "
                        "container's)\n")


@pytest.mark.parametrize("args", [10, 3000])
def test_a_spawn_too_long_for_the_stand_in_is_said(args):
    """posix_spawn of a static program stands the launcher in for it, its
    arguments on the stack, which may be small: past 2048 the program runs
    as it is, and eatmydata says so (under, it says nothing)."""
    code = ("import os, sys; p = os.posix_spawn(sys.argv[1], [sys.argv[1], '/bin/true', "
            "*['x'] * int(sys.argv[2])], os.environ); os.waitpid(p, 0)")
    cmd = [EATMYDATA, "--", "python3", "-c", code, TESTS / "sigchld-static", str(args)]
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=60)
    said = (f"eatmydata: {TESTS / 'sigchld-static'}: not eaten: too many arguments for the "
            "stand-in that would filter it\n")
    assert r.returncode == 0 and r.stderr == (said if args > 2048 else ""), cmdline(cmd) + r.stderr
