# SPDX-License-Identifier: MIT
"""The eatmydata launcher: exit statuses like env(1), LD_PRELOAD kept, symlink
mode, --only and --sync-on-exit."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import (BUILD, EATMYDATA, LIB_DIRS, SANITIZED, TESTS, cmdline, eaten,
                      run)

FSYNC_PY = ("import os, sys; f = open(sys.argv[1], 'w'); f.write('x'); f.flush(); "
            "os.fsync(f.fileno())")
FSYNC_PL = ("open(my $f, '>', $ARGV[0]) or die; print $f 'x'; $f->flush; "
            "$f->sync or die 'sync'")


def launch(args, **kw):
    cmd = [str(a) for a in [EATMYDATA] + args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
    changed = {k: v for k, v in kw.get("env", {}).items() if os.environ.get(k) != v}
    r.why = f"\nrerun: {cmdline(cmd, changed, kw.get('cwd'))}\nstderr: {r.stderr}"
    return r


@pytest.mark.parametrize("args,status,message", [
    (["--bogus", "true"], 125, "eatmydata: unknown or incomplete option '--bogus'"),
    (["--only"], 125, "eatmydata: unknown or incomplete option '--only'"),
    (["--only=", "true"], 125, "eatmydata: --only needs at least one program name"),
    (["--only=,", "true"], 125, "eatmydata: --only needs"),
    ([], 125, "eatmydata: no command given"),
    (["--"], 125, "eatmydata: no command given"),
    (["no-such-command-xyz"], 127, "eatmydata: cannot run no-such-command-xyz"),
    (["/etc/passwd"], 126, "eatmydata: cannot run /etc/passwd: Permission denied"),
    (["/etc"], 126, "eatmydata: cannot run /etc"),
    (["sh", "-c", "exit 42"], 42, ""),
    (["--", "sh", "-c", "exit 3"], 3, ""),
    (["false"], 1, ""),
])
def test_exit_status_like_env(args, status, message):
    r = launch(args)
    assert r.returncode == status, r.why
    assert message in r.stderr, r.why
    if not message:
        assert r.stderr == "", r.why


def test_missing_library_is_a_tool_error():
    r = launch(["true"], env=dict(os.environ, EATMYDATA_LIBDIR="/nonexistent"))
    assert r.returncode == 125
    assert r.stderr.startswith("eatmydata: cannot find /nonexistent/"), r.why


def test_help_and_version():
    r = launch(["--help"])
    assert r.returncode == 0 and "Usage: eatmydata" in r.stdout and "--only" in r.stdout
    r = launch(["--version"])
    assert r.returncode == 0 and r.stdout.startswith("eatmydata ")


def test_execs_without_leaving_a_parent():
    r = launch(["sh", "-c", "echo $PPID"])
    assert int(r.stdout) == os.getpid(), "eatmydata stayed as the parent"


def test_preload_is_prepended_and_others_kept(tmp_path):
    other = BUILD / "bench" / "libfloor.so"
    env = dict(os.environ, LD_PRELOAD=f"{other}")
    r = launch(["sh", "-c", "echo $LD_PRELOAD"], env=env)
    entries = r.stdout.split()
    assert entries[0].endswith("/$LIB/libeatmydata.so"), r.why
    assert entries[1:] == [str(other)], r.why
    # Nested: not added twice.
    r = launch([EATMYDATA, "sh", "-c", "echo $LD_PRELOAD"], env=env)
    assert len(r.stdout.split()) == 2, r.why


def test_killed_by_signal_is_passed_on():
    r = launch(["--sync-on-exit", "sh", "-c", "kill -TERM $$"])
    assert r.returncode == -signal.SIGTERM, r.why


def test_symlink_mode_runs_the_real_program(tmp_path, scratch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(EATMYDATA)
    env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
    r = run(["python3", "-c", "import sys; print(sys.argv[0]);" + FSYNC_PY, scratch / "f"],
            env=env)
    assert r.syncs == 0, "symlink mode did not eat" + r.why()
    native = run([sys.executable, "-c", FSYNC_PY, scratch / "g"])
    assert native.syncs > 0


def test_symlink_mode_without_the_real_program(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "no-such-tool-xyz").symlink_to(EATMYDATA)
    r = subprocess.run(["no-such-tool-xyz"], env=dict(os.environ, PATH=str(bindir)),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 127
    assert r.stderr.startswith("eatmydata: no-such-tool-xyz: command not found")


@pytest.mark.slow
def test_only_eats_in_the_named_programs(scratch):
    (scratch / "fsync.py").write_text(FSYNC_PY)
    (scratch / "fsync.pl").write_text(FSYNC_PL)
    script = (f"python3 {scratch}/fsync.py {scratch}/a && "
              f"perl {scratch}/fsync.pl {scratch}/b")
    both = run(["sh", "-c", script])
    perl_only = run(["perl", "-e", FSYNC_PL, scratch / "c"])
    assert both.counts["syscalls:sys_enter_fsync"] == 2
    for only in ["python3*", "pyth?n3,nothing", "*/python3*"]:
        r = eaten(["sh", "-c", script], env={"EATMYDATA_ONLY": only})
        assert r.counts == perl_only.counts, f"EATMYDATA_ONLY={only}" + r.why()
        r = run([EATMYDATA, f"--only={only}", "sh", "-c", script])
        assert r.counts == perl_only.counts, f"--only={only}" + r.why()


@pytest.mark.parametrize("call", ["fsync", "open", "pwritev2", "syscall-fsync",
                                  "syscall-openat", "syscall-openat2", "syscall-pwritev2"])
def test_sync_on_exit_syncs_each_file_system_once(tmp_path, scratch, call):
    """Whichever way a sync was asked and eaten, its file system is noted."""
    cmd = [TESTS / "entry", "-t", "8", "-f", call, scratch]
    native = run(cmd)
    assert native.counts["ext4:ext4_sync_file_enter"] >= 16, native.why()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = run([EATMYDATA, "--sync-on-exit"] + cmd, env={"TMPDIR": str(tmp)})
    # One syncfs, which ext4 answers with two passes (no wait, then wait).
    assert r.counts["syscalls:sys_enter_syncfs"] == 1, r.why()
    assert r.counts["ext4:ext4_sync_fs"] == 2, r.why()
    assert r.syncs == 3, r.why()
    assert list(tmp.iterdir()) == [], "note directory left behind" + r.why()


def test_sync_on_exit_falls_back_to_sync(scratch):
    native = run([TESTS / "entry", "msync", scratch])
    assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
    r = run([EATMYDATA, "--sync-on-exit", TESTS / "entry", "msync", scratch])
    assert r.counts["syscalls:sys_enter_sync"] == 1, r.why()
    assert r.counts["ext4:ext4_sync_file_enter"] == 0, r.why()


def test_sync_on_exit_keeps_the_status(scratch):
    script = f"{TESTS / 'entry'} fsync {scratch}; exit 7"
    r = run([EATMYDATA, "--sync-on-exit", "sh", "-c", script], check=False)
    assert r.returncode == 7
    assert r.counts["syscalls:sys_enter_syncfs"] == 1, "something was eaten" + r.why()
    r = run([EATMYDATA, "--sync-on-exit", "sh", "-c", "exit 7"], check=False)
    assert r.returncode == 7
    assert r.syncs == 0, "nothing was eaten, nothing to sync" + r.why()


@pytest.mark.parametrize("tool", ["eatmydata", "nocache", "hirestimes", "syncstat"])
@pytest.mark.parametrize("args,status,message", [
    (["--bogus", "true"], 125, "{tool}: unknown or incomplete option '--bogus'"),
    (["-xh", "true"], 125, "{tool}: unknown or incomplete option '-x'"),
    (["-V", "-hx", "true"], 0, ""),
    (["-", "true"], 127, "{tool}: cannot run -"),
    ([], 125, "{tool}: no command given"),
    (["--"], 125, "{tool}: no command given"),
    (["no-such-command-xyz"], 127, "{tool}: cannot run no-such-command-xyz"),
    (["/etc/passwd"], 126, "{tool}: cannot run /etc/passwd"),
    (["--", "sh", "-c", "exit 42"], 42, ""),
])
def test_every_launcher_exits_like_env(tool, args, status, message):
    cmd = [str(BUILD / "bin" / tool)] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == status, cmdline(cmd) + r.stderr
    assert message.format(tool=tool) in r.stderr, cmdline(cmd) + r.stderr
    if status == 42 and tool != "syncstat":
        assert r.stderr == ""


def path_commands(tmp_path):
    """PATH's directories: `prog` not executable in the second, a script
    in the fourth; `bare`, a script without #!, there too; `plain` only
    where it cannot be run."""
    dirs = [tmp_path / f"d{i}" for i in range(4)]
    for d in dirs:
        d.mkdir()
    files = {dirs[1] / "prog": (0o644, "#!/bin/sh\necho not me\n"),
             dirs[3] / "prog": (0o755, '#!/bin/sh\necho "ran $0 $1"\nexit 3\n'),
             dirs[3] / "bare": (0o755, 'echo "bare $0 $1"\nexit 4\n'),
             dirs[1] / "plain": (0o644, "#!/bin/sh\n")}
    for f, (mode, text) in files.items():
        f.write_text(text)
        f.chmod(mode)
    return ":".join(map(str, dirs)) + ":/usr/bin:/bin"


@pytest.mark.parametrize("tool", ["eatmydata", "nocache", "hirestimes", "syncstat"])
@pytest.mark.parametrize("name", ["prog", "bare", "plain"])
def test_every_launcher_execs_the_command_it_found(tmp_path, tool, name):
    """A command named without a path is exec'ed where the launcher found
    it, one execve, where env(1)'s execvp (the control) tries each
    directory of PATH before it; as execvp, a file without #! is run by
    /bin/sh, and one that cannot be run exits 126."""
    env = dict(os.environ, PATH=path_commands(tmp_path))
    out = {}
    for who, launcher in [("native", ["env"]), ("tool", [BUILD / "bin" / tool])]:
        log = tmp_path / f"{who}.strace"
        cmd = ["strace", "-f", "-qq", "-e", "trace=execve", "-o", log, *launcher, name, "x"]
        r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, env=env,
                           timeout=60)
        execs = [l for l in log.read_text().splitlines() if f'/{name}", ' in l]
        out[who] = (r.returncode, r.stdout, len(execs))
        why = cmdline(cmd, {"PATH": env["PATH"]}) + "\n" + r.stderr
    assert out["tool"][:2] == out["native"][:2], why
    assert out["native"][0] == {"prog": 3, "bare": 4, "plain": 126}[name], why
    if name == "prog":
        assert out["native"][2] == 4 and out["tool"][2] == 1, (out, why)


@pytest.mark.parametrize("tool", ["nocache", "hirestimes"])
def test_every_launcher_prepends_its_library(tool):
    env = dict(os.environ, LD_PRELOAD=str(BUILD / "bench" / "libfloor.so"))
    cmd = [str(BUILD / "bin" / tool), "sh", "-c", "echo $LD_PRELOAD"]
    entries = subprocess.run(cmd, capture_output=True, text=True, env=env,
                             timeout=60).stdout.split()
    assert entries[0].endswith(f"/$LIB/lib{tool}.so"), entries
    assert entries[1:] == [env["LD_PRELOAD"]]
    r = subprocess.run([str(BUILD / "bin" / tool), "--version"], capture_output=True, text=True)
    assert r.stdout.startswith(f"{tool} ")


def native_fsync_control(scratch):
    """The fsync the tests below have eaten reaches the disk natively."""
    native = run([TESTS / "entry", "fsync", scratch])
    assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()


def assert_made_good(r):
    """The fsync was eaten, and the file system synced at the end."""
    assert r.counts["ext4:ext4_sync_file_enter"] == 0, r.why()
    assert r.counts["syscalls:sys_enter_syncfs"] == 1, "not made good" + r.why()
    assert r.counts["ext4:ext4_sync_fs"] == 2, r.why()


def test_sync_on_exit_reaches_a_private_tmp(tmp_path, scratch):
    """A process in a mount namespace whose $TMPDIR is a fresh tmpfs still
    notes what it ate: the note directory is inherited, not looked up."""
    native_fsync_control(scratch)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    script = f'mount -t tmpfs none "$TMPDIR" && exec {TESTS / "entry"} fsync {scratch}'
    r = run([EATMYDATA, "--sync-on-exit", "unshare", "-m", "sh", "-c", script],
            env={"TMPDIR": str(tmp)})
    assert_made_good(r)
    assert list(tmp.iterdir()) == [], "note directory left behind"


def make_chroot(root):
    """A root with the entry program, libc and our library at their paths."""
    lib = next(BUILD.glob("lib*/**/libeatmydata.so"))
    libs = subprocess.run(["ldd", str(TESTS / "entry")], capture_output=True,
                          text=True, check=True).stdout
    needed = [line.split()[-2] if "=>" in line else line.split()[0]
              for line in libs.splitlines() if "/" in line]
    for path in needed + [str(lib), str(TESTS / "entry")]:
        dest = root / path.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, dest)
    (root / "w").mkdir()
    return root


@pytest.mark.skipif(SANITIZED, reason="a sanitized program needs libasan in its root, first")
def test_sync_on_exit_reaches_a_chroot(tmp_path, scratch):
    native_fsync_control(scratch)
    root = make_chroot(tmp_path / "root")
    r = run([EATMYDATA, "--sync-on-exit", "chroot", root,
             TESTS / "entry", "fsync", "/w"], env={"TMPDIR": str(tmp_path)})
    assert_made_good(r)
    assert list((root / "w").iterdir()), "nothing was written in the chroot"


def test_sync_on_exit_with_a_relative_tmpdir(tmp_path, scratch):
    native_fsync_control(scratch)
    (tmp_path / "t").mkdir()
    (tmp_path / "elsewhere").mkdir()
    script = f"cd {tmp_path / 'elsewhere'} && exec {TESTS / 'entry'} fsync {scratch}"
    r = run([EATMYDATA, "--sync-on-exit", "sh", "-c", script],
            env={"TMPDIR": "t"}, cwd=tmp_path)
    assert_made_good(r)
    assert list((tmp_path / "t").iterdir()) == [], "note directory left behind"
    assert list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.parametrize("lose", ["closed", "reused"])
def test_sync_on_exit_without_its_directory_syncs_at_once(tmp_path, scratch, lose):
    """A process that has lost the note directory (a closed descriptor, or
    its number reused for a file, and no path to it) does not eat at all."""
    native_fsync_control(scratch)
    redirect = ">&-" if lose == "closed" else f">{tmp_path}/other"
    script = (f'eval "exec $EATMYDATA_SYNC_FD{redirect}"; unset EATMYDATA_SYNC_DIR; '
              f"exec {TESTS / 'entry'} fsync {scratch}")
    r = run([EATMYDATA, "--sync-on-exit", "bash", "-c", script],
            env={"TMPDIR": str(tmp_path)})
    assert r.counts["ext4:ext4_sync_file_enter"] > 0, "eaten, never made good" + r.why()


def test_sync_on_exit_notes_for_a_static_program(tmp_path, scratch):
    """The seccomp supervisor, which closes every descriptor it does not
    need, keeps the note directory: one syncfs at the end, not one per
    request (what it falls back to when it cannot note)."""
    native = run([TESTS / "entry-static", "fsync", scratch])
    assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
    r = run([EATMYDATA, "--sync-on-exit", "--seccomp=on", TESTS / "entry-static",
             "-t", "8", "fsync", scratch], env={"TMPDIR": str(tmp_path)})
    assert_made_good(r)


def test_rerun_command_has_the_env_and_cwd(tmp_path):
    """The command a failure prints does what the test did when pasted."""
    script = 'test "$EMD_PROBE" = "a b" && test "$(pwd)" = "$0"'
    r = run(["sh", "-c", script, tmp_path], env={"EMD_PROBE": "a b"}, cwd=tmp_path)
    rerun = r.why().split("rerun: ")[1].split("\n")[0]
    assert rerun.startswith(f"cd {tmp_path} && EMD_PROBE="), rerun
    again = subprocess.run(["sh", "-c", rerun], cwd="/", env=os.environ, timeout=60)
    assert again.returncode == 0, rerun


@pytest.mark.parametrize("tool", ["eatmydata", "nocache", "syncstat"])
def test_status_kept_when_stderr_is_closed(tool):
    """The status says why the command could not run even when saying it
    on stderr fails."""
    cmd = [str(BUILD / "bin" / tool), "no-such-command-xyz"]
    r = subprocess.run(cmd, stderr=subprocess.DEVNULL, timeout=60,
                       preexec_fn=lambda: os.close(2))
    assert r.returncode == 127, cmdline(cmd) + " 2>&-"


SIGNAL_IN_FORK = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
/* The launcher gets SIGTERM right after fork returns in it, before it
 * could install a handler. */
pid_t fork(void)
{
	pid_t (*real)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, "fork");
	pid_t pid = real();

	if (pid > 0 && strcmp(program_invocation_short_name, "eatmydata") == 0)
		kill(getpid(), SIGTERM);
	return pid;
}
"""


def test_signal_right_after_fork_is_passed_on(tmp_path):
    """A SIGTERM that reaches the launcher between fork and its handlers is
    passed on to the command, not lost with the launcher (the command left
    running on its own)."""
    src = tmp_path / "sigfork.c"
    src.write_text(SIGNAL_IN_FORK)
    shim = tmp_path / "libsigfork.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", shim, src, "-ldl"], check=True)
    done = tmp_path / "done"
    cmd = [str(EATMYDATA), "--sync-on-exit", "sh", "-c", f"sleep 1; touch {done}"]
    r = subprocess.run(cmd, env=dict(os.environ, LD_PRELOAD=str(shim)),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == -signal.SIGTERM, cmdline(cmd) + r.stderr
    subprocess.run(["sleep", "1.5"])
    assert not done.exists(), "the command never got the signal: " + cmdline(
        cmd, {"LD_PRELOAD": shim})


PLANTED = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void)
{
	close(open(getenv("EMD_PLANTED_MARK"), O_WRONLY | O_CREAT, 0600));
}
"""


def test_relative_libdir_is_made_absolute(tmp_path):
    """EATMYDATA_LIBDIR=build from the source tree: after the command's
    `cd`, a library planted at build/$LIB/ of the new directory is not the
    one loaded."""
    plant = tmp_path / "plant"
    src = tmp_path / "planted.c"
    src.write_text(PLANTED)
    build = Path(BUILD.name)
    for d in LIB_DIRS:
        (plant / build / d).mkdir(parents=True)
        subprocess.run(["cc", "-shared", "-fPIC", "-o", plant / build / d / "libeatmydata.so",
                        src], check=True)
    mark = tmp_path / "mark"
    env = {"EATMYDATA_LIBDIR": str(build), "EMD_PLANTED_MARK": str(mark)}
    r = run([EATMYDATA, "sh", "-c", f"cd {plant} && sh -c 'echo $LD_PRELOAD'"],
            env=env, cwd=BUILD.parent)
    assert r.stdout.split()[0] == f"{BUILD}/$LIB/libeatmydata.so", r.why()
    assert not mark.exists(), "the planted library was loaded" + r.why()


def link_dirs(tmp_path, copies):
    """Directories each holding `fsync-test`, a link to its own copy of the
    launcher, then one with the real program under that name."""
    dirs = []
    for i in range(copies):
        d = tmp_path / f"link{i}"
        d.mkdir()
        shutil.copy(EATMYDATA, d / "eatmydata")
        (d / "fsync-test").symlink_to(d / "eatmydata")
        dirs.append(d)
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(TESTS / "entry", real / "fsync-test")
    return dirs, real


def test_two_launchers_in_path_do_not_run_each_other(tmp_path, scratch):
    dirs, real = link_dirs(tmp_path, 3)
    env = {"PATH": ":".join(map(str, dirs + [real])) + ":/usr/bin:/bin",
           "EATMYDATA_LIBDIR": str(BUILD)}
    cmd = ["fsync-test", "fsync", scratch]
    try:
        subprocess.run(cmd, env=dict(os.environ, **env), timeout=20, capture_output=True)
    except subprocess.TimeoutExpired:
        pytest.fail("the launchers ran each other forever: " + cmdline(cmd, env))
    native = run([real / "fsync-test", "fsync", scratch])
    assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
    r = run(cmd, env=env)
    assert r.syncs == 0, r.why()


@pytest.mark.slow
@pytest.mark.parametrize("path", ["{link}::/usr/bin:/bin", "{link}:.:/usr/bin:/bin",
                                  "{link}:/usr/bin:/bin:"])
def test_working_directory_in_path_is_searched_like_the_rest(tmp_path, scratch, path):
    """An empty PATH element or "." is the working directory: the link
    there is skipped like any other, the program there is run like any
    other (eaten)."""
    dirs, real = link_dirs(tmp_path, 1)
    env = {"PATH": path.format(link=dirs[0]), "EATMYDATA_LIBDIR": str(BUILD)}
    r = run(["fsync-test", "fsync", scratch], env=env, cwd=real)
    assert r.syncs == 0, r.why()
    native = run([real / "fsync-test", "fsync", scratch], cwd=real)
    assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
    r = run(["fsync-test", "fsync", scratch], env=env, cwd=dirs[0], check=False)
    assert r.returncode == 127, r.why()
    assert "fsync-test: command not found in PATH" in r.stderr, r.why()


def test_sync_on_exit_for_a_process_of_another_user(tmp_path):
    """The note directory is private to the launcher's user: a process of
    the tree running as another user cannot note, so it syncs at once the
    file system of what it ate, and eats nothing after that."""
    data = Path(tempfile.mkdtemp(prefix="emd-nobody-", dir="/tmp"))
    try:
        data.chmod(0o777)
        native_fsync_control(data)
        as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
        r = run([EATMYDATA, "--sync-on-exit"] + as_nobody + [TESTS / "entry", "fsync", data],
                env={"TMPDIR": str(tmp_path)})
        twice = FSYNC_PY + "; g = open(sys.argv[2], 'w'); g.write('y'); g.flush(); " \
            "os.fsync(g.fileno())"
        r2 = run([EATMYDATA, "--sync-on-exit"] + as_nobody +
                 ["python3", "-c", twice, data / "a", data / "b"],
                 env={"TMPDIR": str(tmp_path)})
    finally:
        shutil.rmtree(data)
    assert r.counts["ext4:ext4_sync_file_enter"] == 0, r.why()
    assert r.counts["syscalls:sys_enter_syncfs"] == 1, "not made good" + r.why()
    assert list(tmp_path.glob("eatmydata-sync.*")) == [], r.why()
    # The first fsync becomes a syncfs; the second one is real.
    assert r2.counts["syscalls:sys_enter_syncfs"] == 1, r2.why()
    assert r2.counts["ext4:ext4_sync_file_enter"] == 1, r2.why()
