# SPDX-License-Identifier: MIT
"""The records side tried as a hostile local user, and as a hostile or
buggy traced program would: the launcher's own limits and signals, a
setuid program given a forged record environment, a --keep directory
under a parent another user controls."""
import os
import pwd
import re
import struct
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import BUILD, EATMYDATA, TESTS, cmdline, require
from helpers import SYNCSTAT, slot, write_records

TOOLS = {"syncstat": [SYNCSTAT], "eatmydata --stats": [EATMYDATA, "--stats"]}


@pytest.fixture
def shm():
    """A directory on tmpfs, where an fsync costs little."""
    d = Path(tempfile.mkdtemp(prefix="records-attack-", dir="/dev/shm"))
    yield d
    shutil.rmtree(d)


def under_limit(tmp_path, tool, limit, program):
    """Run `program` (shell) under tool in a bash that set `limit`; the
    result, the record file the command was given, what the program printed
    and a command line to rerun it."""
    script = 'echo "$EATMYDATA_RECORD"; ' + program
    inner = cmdline([*TOOLS[tool], "--", "sh", "-c", script])
    cmd = ["bash", "-c", f"{limit}; exec {inner}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    records, _, out = r.stdout.partition("\n")
    return r, Path(records) if records else None, out, \
        cmdline(cmd) + f"\nexit {r.returncode}\n{r.stderr}"


def status_of(text, field):
    return re.search(rf"^{field}:\s*(.*)$", text, re.M)[1]


@pytest.mark.parametrize("tool", TOOLS)
def test_a_file_size_limit_is_the_commands_not_the_launchers(tmp_path, shm, tool):
    """`ulimit -S -f 100` for the command: the launcher's own 512 MiB record
    file made it die of SIGXFSZ (153) and leave its directory in /dev/shm.
    Now it runs, and the command still sees the user's limit and SIGXFSZ
    disposition."""
    native = subprocess.run(["bash", "-c", "ulimit -S -f 100; exec sh -c 'ulimit -f; "
                             "cat /proc/self/status'"], capture_output=True, text=True,
                            timeout=60)
    r, records, out, why = under_limit(
        tmp_path, tool, "ulimit -S -f 100",
        f"ulimit -f; cat /proc/self/status; {TESTS / 'storm'} threads 1 3 {shm}; exit 7")
    assert r.returncode == 7, why
    assert out.splitlines()[0] == native.stdout.splitlines()[0] != "unlimited", why
    assert status_of(out, "SigIgn") == status_of(native.stdout, "SigIgn"), why
    assert "3 durability calls" in r.stderr, why
    assert records and not records.parent.exists(), why


@pytest.mark.parametrize("tool", TOOLS)
def test_few_descriptors_are_the_commands_not_the_launchers(tmp_path, shm, tool):
    """`ulimit -S -n 5`: the command needs none beyond its standard streams
    and runs natively; the launcher's directory, record file and run file
    made it exit 125.  Now the command runs, with the user's limit, and
    records."""
    r, records, out, why = under_limit(
        tmp_path, tool, "ulimit -S -n 5",
        f"ulimit -n; {TESTS / 'storm'} threads 1 3 {shm}; exit 7")
    assert r.returncode == 7, why
    assert out == "5\n", why
    assert "3 durability calls" in r.stderr, why
    assert records and not records.parent.exists(), why


@pytest.mark.parametrize("tool", TOOLS)
def test_a_report_to_a_closed_pipe_leaves_no_directory(tool):
    """`syncstat cmd 2>&1 | head -1`: the reader is gone when the report is
    written and the launcher dies of SIGPIPE, as any writer would; its
    temporary directory went with it (it stayed in /dev/shm)."""
    cmd = [*TOOLS[tool], "--", "sh", "-c", 'echo "$EATMYDATA_RECORD"; read x']
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        records = Path(proc.stdout.readline().strip())
        proc.stderr.close()
        proc.communicate("\n", timeout=60)
    finally:
        proc.kill()
    assert records.name == "records", cmdline(cmd)
    assert proc.returncode == -13, cmdline(cmd) + " 2>&1 | head -c 0"
    assert not records.parent.exists(), cmdline(cmd) + " 2>&1 | head -c 0"


def next_slot(records):
    return struct.unpack_from("<Q", records.read_bytes(), 24)[0]


@pytest.fixture
def preloaded_etc(tmp_path):
    """/etc with an ld.so.preload naming the library, for a mount namespace
    of the test's own (the machine's /etc is untouched): the one way the
    library reaches a setuid program."""
    upper, work = tmp_path / "upper", tmp_path / "work"
    upper.mkdir()
    work.mkdir()
    (upper / "ld.so.preload").write_text(
        f"{BUILD / 'lib' / 'x86_64-linux-gnu' / 'libeatmydata.so'}\n")
    yield (f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work} "
           "/etc && exec ")


@pytest.fixture
def setuid_storm(shm, other_user, preloaded_etc):
    """Run a setuid-root copy of storm (3 fsyncs in a tmpfs directory) as
    root or as the other user, with `env`, in the namespace whose
    ld.so.preload names the library; the result and a rerun command."""
    shared = Path(tempfile.mkdtemp(prefix="records-attack-"))
    shared.chmod(0o755)
    shutil.copy(TESTS / "storm", shared / "storm")
    (shared / "storm").chmod(0o4755)
    shm.chmod(0o777)

    def run_as(who, env):
        drop = [] if who == "root" else [require("setpriv"), f"--reuid={who}",
                                           f"--regid={who}", "--clear-groups", "--"]
        prog = cmdline([*drop, "env", *(f"{k}={v}" for k, v in env.items()),
                        shared / "storm", "threads", "1", "3", shm])
        cmd = [require("unshare"), "--mount", "--propagation", "private",
               "sh", "-c", preloaded_etc + prog]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"{cmdline(cmd)}\n{r.stderr}"
        return cmdline(cmd)
    yield run_as
    shutil.rmtree(shared)


def test_a_setuid_program_ignores_a_forged_record_environment(tmp_path, other_user,
                                                              setuid_storm):
    """With the library in /etc/ld.so.preload, a user runs a setuid-root
    program with EATMYDATA_RECORD naming the records root keeps of a run
    going on (and a descriptor that is not open): the program, running as root, opened
    root's file by name and wrote the user's records into it.  Under
    secure execution the record environment is not the caller's to give;
    root running the same program with the same environment (the control)
    still records."""
    runs = {}
    for who in ("root", other_user):
        keep = tmp_path / f"kept-{who}"
        cmd = [SYNCSTAT, "--keep", keep, "--output", "/dev/null", "--",
               "sh", "-c", "echo ready; read x"]
        run = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert run.stdout.readline() == "ready\n", cmdline(cmd)
            st = os.stat(keep / "records")
            rerun = setuid_storm(who, {
                "EATMYDATA_RECORD": str(keep / "records"),
                "EATMYDATA_RECORD_FD": f"1000:{st.st_dev}:{st.st_ino}",
                "EATMYDATA_DISABLE": "1"})
            runs[who] = (next_slot(keep / "records"), rerun)
            run.communicate("\n", timeout=60)
        finally:
            run.kill()
    # three calls and the module record of their site (record.h)
    assert runs["root"][0] == 4, runs["root"][1]
    assert runs[other_user][0] == 0, runs[other_user][1]


def test_a_setuid_program_ignores_a_forged_note_directory(tmp_path, other_user,
                                                          setuid_storm):
    """The sibling in note.c: a user names a directory only root can write
    in as EATMYDATA_SYNC_DIR and runs a setuid-root program whose fsyncs the
    preloaded library eats: root's program makes the user's entries there.
    Root doing the same (the control) does make them."""
    made = {}
    for who in ("root", other_user):
        notes = tmp_path / f"notes-{who}"
        notes.mkdir(mode=0o700)
        st = os.stat(notes)
        rerun = setuid_storm(who, {"EATMYDATA_SYNC_DIR": str(notes),
                                   "EATMYDATA_SYNC_ID": f"{st.st_dev}:{st.st_ino}"})
        made[who] = (sorted(p.name for p in notes.iterdir()), rerun)
    assert made["root"][0], made["root"][1]
    assert made[other_user][0] == [], made[other_user][1]


def as_user(user, script):
    return subprocess.run([require("setpriv"), f"--reuid={user}", f"--regid={user}",
                           "--clear-groups", "--", "sh", "-c", script],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def reachable():
    """A directory every user can reach (the test's tmp_path is root's)."""
    d = Path(tempfile.mkdtemp(prefix="records-attack-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d)


@pytest.mark.parametrize("mode", [0o755, 0o2775], ids=["owned", "group-writable"])
def test_keep_under_a_directory_another_user_controls(tmp_path, reachable, other_user,
                                                      mode):
    """Root keeps an audited run in a directory of its own inside one that
    another user owns (0755), or may write in (a group's 02775): that user
    moves root's directory aside mid-run and puts one of theirs in its
    place, with records of their making and `tails` a link to a file of
    root's; root's syncstat reported their records and wrote the audit's
    tails through the link.  Now a --keep directory whose parents
    someone else controls is refused up front."""
    precious = tmp_path / "precious"
    precious.write_text("root's\n")
    parent = reachable / "theirs"
    parent.mkdir()
    if mode == 0o755:
        shutil.chown(parent, other_user, other_user)
    else:
        shutil.chown(parent, "root", other_user)
    parent.chmod(mode)
    keep, forged = parent / "k", parent / "forged"
    write_records(forged, [slot(1000)], flags=2)
    (forged / "command").write_text("prog\n")
    (forged / "tails").symlink_to(precious)
    for p in (forged, *forged.iterdir()):
        os.chown(p, pwd.getpwnam(other_user).pw_uid, -1, follow_symlinks=False)
    cmd = [SYNCSTAT, "--audit", "--keep", keep, "--output", tmp_path / "report", "--",
           "sh", "-c", "echo ready; read x"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        if proc.stdout.readline() == "ready\n":
            swap = as_user(other_user, f"mv {keep} {parent}/aside && mv {forged} {keep}")
            assert swap.returncode == 0, swap.stderr
        _, err = proc.communicate("\n", timeout=60)
    finally:
        proc.kill()
    assert precious.read_text() == "root's\n", cmdline(cmd) + "\n" + err
    assert proc.returncode == 125 and err.startswith(
        f"syncstat: cannot keep the records in {keep}: "), cmdline(cmd) + "\n" + err


@pytest.mark.parametrize("keep", [True, False], ids=["kept", "temporary"])
def test_the_audit_never_writes_through_a_link_the_tree_planted(tmp_path, keep):
    """The traced program plants `tails` in its record directory, a link
    to a file it wants overwritten: syncstat --audit truncates the file and
    writes its tails there.  Every file the tools write is to be created
    exclusively, never through a link."""
    precious = tmp_path / "precious"
    precious.write_text("mine\n")
    plant = f'ln -s {precious} "$(dirname "$EATMYDATA_RECORD")/tails"'
    where = ["--keep", tmp_path / "kept"] if keep else []
    cmd = [SYNCSTAT, "--audit", *where, "--output", tmp_path / "report", "--",
           "sh", "-c", plant]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert precious.read_text() == "mine\n", cmdline(cmd) + "\n" + r.stderr


TRUNCATES = """\
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
os.fsync(fd)
os.system('truncate -s 0 "$EATMYDATA_RECORD" 2>/dev/null')
os.fsync(fd)
print("alive")
"""


@pytest.mark.xfail(strict=True, reason="libeatmydata/record.c stores through a shared "
                   "mapping of a file any process of the tree may truncate (a sealed memfd "
                   "would prevent it; no small fix)")
@pytest.mark.parametrize("tool", TOOLS)
def test_a_truncated_record_file_costs_records_not_the_program(tmp_path, shm, tool):
    """A process of the tree truncates the record file (a clean-up of the
    user's files in /dev/shm, a program that truncates what it inherits):
    the next call of every other process of the tree dies of SIGBUS
    (natively, the program prints "alive")."""
    script = tmp_path / "truncates.py"
    script.write_text(TRUNCATES)
    native = subprocess.run(["python3", script, shm / "f"], capture_output=True, text=True,
                            timeout=60)
    assert native.stdout == "alive\n", native.stderr
    cmd = [*TOOLS[tool], "--", "python3", script, shm / "f"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.stdout == "alive\n", cmdline(cmd) + f"\nexit {r.returncode}\n{r.stderr}"


FORGES = """\
import os, sys
db = os.open(sys.argv[1], os.O_RDWR)
st = os.fstat(db)
os.set_inheritable(db, True)
env = dict(os.environ, EATMYDATA_RECORD_FD=f"{db}:{st.st_dev}:{st.st_ino}")
env.pop("EATMYDATA_RECORD", None)
os.execve(sys.argv[2], sys.argv[2:], env)
"""


@pytest.mark.parametrize("tool", [[SYNCSTAT, "--output", "/dev/null"], [EATMYDATA]],
                         ids=["syncstat", "eatmydata"])
@pytest.mark.parametrize("db", ["zeros", "a record file's first bytes"])
def test_a_forged_descriptor_never_writes_into_the_programs_file(tmp_path, shm, tool, db):
    """The program opens its own database read-write and execs a child
    with EATMYDATA_RECORD_FD naming it (its descriptor, device and inode):
    the library maps only a file that is a record file, so the database,
    whatever its size, keeps its bytes."""
    path = tmp_path / "db"
    head = b"" if db == "zeros" else b"EMDREC01" + bytes([2, 0, 0, 0, 0, 2, 0, 0])
    data = head + bytes(1 << 20) if head else bytes(1 << 20)
    path.write_bytes(data)
    script = tmp_path / "forges.py"
    script.write_text(FORGES)
    cmd = [*tool, "--", "python3", script, path, TESTS / "storm", "threads", "2", "5", shm]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, cmdline(cmd) + "\n" + r.stderr
    assert path.read_bytes() == data, cmdline(cmd)


OUTLIVES = """\
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
os.fsync(fd)
if os.fork() == 0:
    os.setsid()
    for _ in range(6000):
        if os.path.exists(sys.argv[2]):
            break
        time.sleep(0.01)
    os.fsync(fd)
    os.system(sys.argv[3])
    open(sys.argv[2] + ".done", "w").close()
    os._exit(0)
"""


@pytest.mark.slow
def test_a_daemon_that_outlives_the_run_records_no_more(tmp_path, shm):
    """`syncstat --keep DIR -- service start`: the daemon outlives the run,
    keeps the descriptor and the environment, and went on writing its calls
    (and those of every program it starts) into the kept records after the
    report was made: `syncstat report DIR` no longer told of the run.  A
    run's records end with the run."""
    keep, go = tmp_path / "kept", tmp_path / "go"
    script = tmp_path / "outlives.py"
    script.write_text(OUTLIVES)
    helper = cmdline([TESTS / "storm", "threads", "1", "3", shm])
    cmd = [SYNCSTAT, "--keep", keep, "--output", "/dev/null", "--",
           "python3", script, shm / "f", go, helper]
    subprocess.run(cmd, check=True, timeout=60)
    before = (keep / "records").read_bytes()[:4096]
    go.touch()
    for _ in range(6000):
        if Path(f"{go}.done").exists():
            break
        time.sleep(0.01)
    assert Path(f"{go}.done").exists(), cmdline(cmd)
    # the run's one call and the module record of its site
    assert next_slot(keep / "records") == 2, cmdline(cmd)
    assert (keep / "records").read_bytes()[:4096] == before, cmdline(cmd)


ALLOCATES = """\
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
os.fsync(fd)
b = bytearray(400 << 20)
os.fsync(fd)
print("ok")
"""


@pytest.mark.parametrize("tool", TOOLS)
def test_an_address_space_limit_is_the_programs(tmp_path, shm, tool):
    """`ulimit -v 700000` and a program that needs 400 MiB: natively it
    runs; under the tools every process mapped the whole 512 MiB record
    file and the program failed (MemoryError).  The mapping now takes a
    small share of what the process may use, and the calls are recorded."""
    script = tmp_path / "allocates.py"
    script.write_text(ALLOCATES)
    limit = "ulimit -S -v 700000"
    native = subprocess.run(["bash", "-c", f"{limit}; exec python3 {script} {shm}/f"],
                            capture_output=True, text=True, timeout=60)
    assert native.stdout == "ok\n", native.stderr
    r, _, out, why = under_limit(tmp_path, tool, limit, f"exec python3 {script} {shm}/f")
    assert r.returncode == 0 and out == "ok\n", why
    assert "2 durability calls" in r.stderr, why


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_during_the_report_ends_the_launcher_and_its_directory(tmp_path, sig):
    """The command has ended and syncstat waits to write its report (to a
    FIFO no one reads yet): a SIGTERM or SIGHUP was passed on to the
    command's pid, long reaped (or another process's by now), and SIGINT
    ignored, so the launcher stayed.  Now it dies of the signal, and its
    temporary directory goes with it."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cmd = [SYNCSTAT, "--output", fifo, "--", "sh", "-c", 'echo "$EATMYDATA_RECORD"']
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        records = Path(proc.stdout.readline().strip())
        for _ in range(1000):
            if (records.parent / "run").exists():
                break
            time.sleep(0.01)
        time.sleep(0.2)
        proc.send_signal(getattr(signal, sig))
        try:
            proc.wait(timeout=10)
        finally:
            # Whatever happened, release a launcher still blocked on the FIFO.
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            proc.wait(timeout=60)
            os.close(fd)
    finally:
        proc.kill()
    assert proc.returncode == -getattr(signal, sig), cmdline(cmd)
    assert records.name == "records" and not records.parent.exists(), cmdline(cmd)


@pytest.mark.parametrize("tool", TOOLS)
def test_a_killed_launcher_leaves_only_private_records(other_user, tool):
    """SIGKILL of the launcher mid-run: its temporary directory stays (no
    one is left to remove it), still the user's alone, and the tree goes on
    to the end.  (A regression guard: the directory was 01777 and its files
    0666.)"""
    cmd = [*TOOLS[tool], "--", "sh", "-c", 'echo "$EATMYDATA_RECORD"; read x; echo end']
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        records = Path(proc.stdout.readline().strip())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdin.write("\n")
        proc.stdin.close()
        end = proc.stdout.readline()
        left = {p.name: p.stat().st_mode & 0o7777 for p in [records.parent,
                                                              *records.parent.iterdir()]}
        peek = as_user(other_user, f"ls {records.parent}; cat {records}")
    finally:
        proc.kill()
        shutil.rmtree(records.parent, ignore_errors=True)
    assert end == "end\n", cmdline(cmd)
    devices = {"devices": 0o600} if tool == "syncstat" else {}  # its disks' samples
    assert left == {records.parent.name: 0o700, "records": 0o600, "command": 0o600,
                    ".run": 0o600, **devices}, cmdline(cmd)
    assert peek.returncode != 0 and "Permission denied" in peek.stderr, peek.stderr


@pytest.mark.root
@pytest.mark.parametrize("tool", TOOLS)
def test_a_dev_shm_without_inodes_falls_back_to_tmp(tmp_path, tool):
    """Another user filled /dev/shm with empty files (its inodes, not its
    space): every run of the tools exited 125.  The records go to /tmp
    instead, and the command runs."""
    report = tmp_path / "report"
    script = ("mount -t tmpfs -o size=1m,nr_inodes=2 tmpfs /dev/shm && touch /dev/shm/full "
              "&& exec " + cmdline([*TOOLS[tool], "--", "sh", "-c",
                                    'echo "$EATMYDATA_RECORD"; exit 7']) + ' 2>"$0"')
    cmd = [require("unshare"), "--mount", "sh", "-c", script, report]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    why = cmdline(cmd) + f"\nexit {r.returncode}\n" + report.read_text()
    assert r.returncode == 7, why
    records = Path(r.stdout.strip())
    assert records.parent.parent == Path("/tmp") and not records.parent.exists(), why


@pytest.mark.parametrize("how", ["their directory", "a link to it"])
def test_a_tmpdir_another_user_controls_is_not_used(reachable, other_user, how):
    """TMPDIR names a directory another user owns (or a link to one): the
    records never go there (they could swap what is in it).  A regression
    guard: the temporary directory is always /dev/shm's or /tmp's."""
    theirs = reachable / "theirs"
    theirs.mkdir(mode=0o777)
    shutil.chown(theirs, other_user, other_user)
    tmpdir = theirs
    if how == "a link to it":
        tmpdir = reachable / "link"
        tmpdir.symlink_to(theirs)
    cmd = [SYNCSTAT, "--output", "/dev/null", "--", "sh", "-c", 'echo "$EATMYDATA_RECORD"']
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, TMPDIR=str(tmpdir)))
    assert r.returncode == 0, cmdline(cmd) + "\n" + r.stderr
    assert Path(r.stdout.strip()).parent.parent in (Path("/dev/shm"), Path("/tmp"))
    assert list(theirs.iterdir()) == []


@pytest.fixture
def memory_cgroup():
    """A memory cgroup of the test's own, under the one it runs in (v2, or
    v1's memory hierarchy); its directory and the file that limits it."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "memory":
            base, limit = Path("/sys/fs/cgroup/memory"), "memory.limit_in_bytes"
        elif controllers == "" and (Path("/sys/fs/cgroup") / path.lstrip("/") /
                                    "memory.max").exists():
            base, limit = Path("/sys/fs/cgroup"), "memory.max"
        else:
            continue
        d = base / path.lstrip("/") / f"records-attack-{os.getpid()}"
        d.mkdir()
        yield d, limit
        d.rmdir()
        return
    pytest.skip("no memory cgroup to make one in")


FILLS = """\
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
for _ in range(300000):
    os.fsync(fd)
b = bytearray(40 << 20)
print("ok")
"""


@pytest.mark.parametrize("tool", TOOLS)
def test_records_leave_the_programs_memory_limit_to_it(tmp_path, shm, memory_cgroup, tool):
    """A program in a 96 MiB memory cgroup (a container's limit) makes 300k
    fsyncs, then needs 40 MiB: natively it runs; under the tools the
    records' pages were charged to its cgroup until nothing was left, and
    the OOM killer took the program (and the launcher, which left its
    directory).  The record file now takes a small share of the limit."""
    cgroup, limit = memory_cgroup
    (cgroup / limit).write_text(str(96 << 20))
    script = tmp_path / "fills.py"
    script.write_text(FILLS)
    enter = f"echo $$ > {cgroup / 'cgroup.procs'} && exec "
    native = subprocess.run(["sh", "-c", enter + f"python3 {script} {shm}/f"],
                            capture_output=True, text=True, timeout=300)
    assert native.stdout == "ok\n", native.stderr
    cmd = ["sh", "-c", enter + cmdline([*TOOLS[tool], "--", "sh", "-c",
                                        f'echo "$EATMYDATA_RECORD"; exec python3 {script} '
                                        f"{shm}/f"])]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    why = cmdline(cmd) + f"\nexit {r.returncode}\n{r.stderr}"
    records, _, out = r.stdout.partition("\n")
    assert r.returncode == 0 and out == "ok\n", why
    assert "calls were not recorded" in r.stderr and not Path(records).parent.exists(), why
