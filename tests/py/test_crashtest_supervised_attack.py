# SPDX-License-Identifier: MIT
"""crashtest's supervisor against a static program that tries to make it
act where the program itself would not, or journal what did not happen
(tests/c/crashhostile.c).  The program must see what it sees natively, and
what the supervisor could not make as the program (a path through /proc's
magic links, other rights, a file size limit) goes on to the kernel and
makes the run unknown, named -- never ok."""
import json
import os
import subprocess

import pytest

from conftest import TESTS, cmdline
from helpers import CRASHTEST, Report, crash_report

PROGRAM = TESTS / "crashhostile-static"

# mode: what the report must say of it (None: followed, ok)
MODES = {
    "proclink": "through /proc's links",
    "linkfollow": "through /proc's links",
    "fsize": "a write past the file size limit",
    "signals": None,
    "tmpfile": "an O_TMPFILE open",
    "missing": None,
    "rights": ("a write by a program of other rights",
               "a change of names by a program of other rights",
               "an open that creates or truncates, by a program of other rights"),
}


def native(tmp_path, *args):
    d = tmp_path / "native"
    d.mkdir()
    r = subprocess.run([PROGRAM, *args], cwd=d, capture_output=True, text=True, timeout=60)
    return r.stdout


def supervised(tmp_path, *args):
    """The program under crashtest: what it printed (on its standard error,
    which crashtest passes on: no checker runs at an unknown point) and the
    report."""
    d = tmp_path / "d"
    d.mkdir()
    cmd = [CRASHTEST, "--json", "--check=true", d, "--", PROGRAM, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, CRASHHOSTILE_STDERR="1"))
    assert r.returncode in (0, 1, 2, 3), f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    return r.returncode, r.stderr, Report(json.loads(r.stdout))


def unknown(report):
    return {w for p in report.points for w in p.get("unknown", [])}


@pytest.mark.parametrize("mode", [pytest.param(m, marks=pytest.mark.root) if m == "rights"
                                  else m for m in MODES])
def test_the_program_sees_what_it_sees_natively(tmp_path, mode):
    want = native(tmp_path, mode)
    code, out, report = supervised(tmp_path, mode)
    assert out == want, (mode, out, want)
    why = MODES[mode]
    if why is None:
        assert code == 0 and not unknown(report), unknown(report)
    else:
        for w in (why,) if isinstance(why, str) else why:
            assert code == 2 and any(w in u for u in unknown(report)), (w, unknown(report))


def test_a_rename_across_the_edge_is_unknown(tmp_path):
    """Out of the copy and back: the kernel's, as the program's own."""
    outside = tmp_path / "outside"
    outside.mkdir()
    want = native(tmp_path, "edge", outside)
    code, out, report = supervised(tmp_path, "edge", outside)
    assert out == want == "out: ok\nin: ok\n", (out, want)
    assert code == 2 and any("across the directory's edge" in w for w in unknown(report)), \
        unknown(report)


def test_a_symlink_to_outside_is_the_kernels(tmp_path):
    """O_TRUNC through a symlink the program planted: the kernel empties
    the file it points to, as it would natively; the supervisor makes
    nothing there, and the run is unknown."""
    outside = tmp_path / "outside"
    outside.write_text("keep")
    want = native(tmp_path, "symlink", outside)
    outside.write_text("keep")
    code, out, report = supervised(tmp_path, "symlink", outside)
    assert out == want and outside.read_text() == "", (out, want)
    assert code == 2 and any("through a symlink" in w for w in unknown(report)), unknown(report)


# mode: the program must see what it sees natively, and nothing the
# supervisor makes may leave the copy other than its journal says
FOLLOWED_AS_NATIVELY = ["emfile", "openat2", "direct", "noappend", "seekrace"]


@pytest.mark.parametrize("mode", FOLLOWED_AS_NATIVELY)
def test_the_supervisor_makes_what_the_kernel_would(tmp_path, mode):
    """emfile: at its descriptor limit an open creates and empties nothing;
    openat2: what openat2 refuses (an unknown flag, a mode past 07777, a
    larger struct with unknown bytes) is refused, nothing emptied; direct:
    an O_DIRECT write from a misaligned buffer is EINVAL; noappend: a write
    with RWF_NOAPPEND is journaled where it went; seekrace: a write at the
    file's position, moved by another thread meanwhile, is journaled where
    it went, or said not to be told."""
    want = native(tmp_path, mode)
    code, out, report = supervised(tmp_path, mode)
    assert out == want, (mode, out, want)
    assert not any("changed past the library" in w for w in unknown(report)), unknown(report)


def states_check(tmp_path, mode, check, *args):
    d = tmp_path / "d"
    d.mkdir()
    return crash_report("--each", f"--check={check}", d, "--", PROGRAM, mode, *args)


@pytest.mark.parametrize("mode", ["procfd", "outlink"])
def test_an_open_that_empties_the_copy_past_the_supervisor_is_never_ok(tmp_path, mode):
    """O_TRUNC through the program's own /proc/self/fd/N, or through a
    symlink outside the copy to a file of it: the kernel empties a file of
    the copy, and an empty file is a state a crash can leave (the library's
    journal of the same program fails the check).  The run may be unknown
    or failed, never ok."""
    outside = tmp_path / "outside"
    outside.mkdir()
    code, report = states_check(tmp_path, mode, "test ! -e file || test -s file", outside)
    assert code in (1, 2), (code, unknown(report))


def test_pkey_mprotect_is_mprotect(tmp_path):
    """A shared mapping of a file of the copy made writable by
    pkey_mprotect: its changes are past the supervisor, whose run must not
    be ok (a state with BBBB fails the check)."""
    code, report = states_check(tmp_path, "pkey", "! grep -q BBBB file")
    assert code in (1, 2), (code, unknown(report))


@pytest.mark.root
def test_a_write_from_lazily_filled_memory_does_not_hang(tmp_path):
    """The supervisor reads the caller's buffer while the thread that fills
    it (userfaultfd) writes a line to a file of the copy first: the write
    must not wait on the other (natively it completes at once; a write
    still hung after 10 s is ended by the program's watchdog)."""
    want = native(tmp_path, "uffd")
    assert want == "userfaultfd: ok\nlog: ok\nwrite: ok\n", want
    code, out, report = supervised(tmp_path, "uffd")
    assert out == want, (out, want)


@pytest.mark.root
def test_a_program_that_is_not_dumpable_is_unknown(tmp_path):
    """Run as nobody (a supervisor without CAP_SYS_PTRACE), a program that
    made itself not dumpable cannot be read: its create, write, fsync and
    unlink go on to the kernel, and the run is unknown, never ok (a file
    made and removed unseen leaves no difference at the end)."""
    import shutil
    import tempfile
    top = tempfile.mkdtemp(prefix="crashnodump")
    try:
        os.chmod(top, 0o755)
        d = os.path.join(top, "d")
        os.mkdir(d)
        os.chown(d, 65534, 65534)
        env = dict(os.environ, HOME=top, TMPDIR=top)
        os.chown(top, 65534, 65534)
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            str(CRASHTEST), "--json", "--check=true",
                            d, "--", PROGRAM, "nodump"],
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr)
    finally:
        shutil.rmtree(top)


def test_the_copy_moved_away_is_unknown(tmp_path):
    """The program renames its working directory, the copy, and works in it
    by its new name: nothing there is the copy's by path, and the run must
    be unknown, never ok (what it made there it removed before the end)."""
    want = native(tmp_path, "rootmove")
    assert "away: ok" in want, want
    code, out, report = supervised(tmp_path, "rootmove")
    assert out == want, (out, want)
    assert code == 2 and unknown(report), (code, unknown(report))


@pytest.mark.root
def test_a_link_of_a_descriptor_is_unknown(tmp_path):
    """linkat(fd, "", AT_EMPTY_PATH) names no old file: the kernel links the
    descriptor's file into the copy, unseen, and the run is unknown (the
    unlink after it removes a name the journal never had)."""
    want = native(tmp_path, "emptypath")
    assert "link: ok" in want, want
    code, out, report = supervised(tmp_path, "emptypath")
    assert out == want, (out, want)
    assert code == 2 and any("across the directory's edge" in w for w in unknown(report)), \
        (code, unknown(report))


@pytest.mark.root
def test_names_in_a_chroot_are_the_copys(tmp_path):
    """A program chrooted into the copy names its files by absolute paths,
    which are not this process's: they resolve in the caller's root, and the
    run is unknown (a program of other rights), never ok."""
    want = native(tmp_path, "chroot")
    assert "chroot: ok" in want, want
    code, out, report = supervised(tmp_path, "chroot")
    assert out == want, (out, want)
    assert code == 2 and unknown(report), (code, unknown(report))


@pytest.mark.root
def test_the_copy_by_another_name_is_the_copy(tmp_path):
    """The copy bound at another path, in a mount namespace of the
    program's own: a name made there by that path is in the copy, which
    its path does not say, and the run is unknown, never ok."""
    outside = tmp_path / "alias"
    outside.mkdir()
    want = native(tmp_path, "alias", outside)
    assert "bind: ok" in want, want
    code, out, report = supervised(tmp_path, "alias", outside)
    assert out == want, (out, want)
    assert code == 2 and unknown(report), (code, unknown(report))


def test_static_programs_started_at_once_at_each_point(tmp_path):
    """Two static programs a shell starts at once, each of whose execs may
    start a supervisor of its own, making the same files: their records
    are journaled in order, and the stop at any point --at asks for leaves
    nothing unknown."""
    d = tmp_path / "d"
    d.mkdir()
    cmd = f"{PROGRAM} together & {PROGRAM} together; wait"
    code, report = crash_report("--check=true", d, "--", "sh", "-c", cmd)
    assert code == 0 and not unknown(report), unknown(report)
    seen = set()
    for at in range(1, 65):
        code, report = crash_report(f"--at={at}", "--check=true", d, "--", "sh", "-c", cmd)
        seen |= unknown(report)
    assert not seen, seen


def test_the_supervisor_killed_is_unknown(tmp_path):
    """The supervisor killed while the program runs: the program's calls
    then fail (ENOSYS, the kernel's answer with no one to ask), and it does
    not run as it would natively; the run is unknown, never ok."""
    import signal
    import time
    d = tmp_path / "d"
    d.mkdir()
    p = subprocess.Popen([CRASHTEST, "--json", "--check=true", d, "--", PROGRAM, "late"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    for _ in range(200):
        for e in os.listdir("/proc"):
            try:
                with open(f"/proc/{e}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{e}/cmdline", "rb") as f:
                    cmd = f.read()
            except (OSError, ValueError, IndexError):
                continue
            if ppid == p.pid and b"--seccomp-supervise=crashtest" in cmd:
                os.kill(int(e), signal.SIGKILL)
                killed = e
        if killed:
            break
        time.sleep(0.01)
    out, err = p.communicate(timeout=60)
    assert killed, "no supervisor found"
    assert p.returncode == 2, (p.returncode, out, err)
    assert any(json.loads(out)["points"][-1]["unknown"])


@pytest.mark.parametrize("limit", [6, 7, 8, 9, 10, 12])
def test_a_static_program_execd_at_a_low_descriptor_limit(tmp_path, limit):
    """A dynamic shell at a low descriptor limit execs the static program:
    its changes (which leave the directory as it was) are journaled by the
    supervisor, or the run is unknown -- never ok with none of them seen
    (the library could not open the program to look at it, and let it run
    unfiltered, unnamed)."""
    d = tmp_path / "d"
    d.mkdir()
    code, report = crash_report("--each", "--check=true", d, "--", "sh", "-c",
                                f"ulimit -n {limit}; exec {PROGRAM} undo")
    seen = len(report.points) > 1
    assert seen or (code == 2 and unknown(report)), (code, len(report.points), unknown(report))
