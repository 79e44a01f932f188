# SPDX-License-Identifier: MIT
"""syncstat's supervisor keeps who called (the process, its program's name
and modules) per thread and address of the system call: an exec keeps the
thread's number, and a program built alike makes its call from the same
address, so the entry must not outlive the image (seccomp/timed.c).  So
does eatmydata's, whether the caller eats (seccomp/supervisor.c)."""
import json
import subprocess

import pytest

from conftest import BUILD, cmdline, eaten, require, run

SYNCSTAT = BUILD / "bin" / "syncstat"
N = 30

# Two static programs from this one source, FN named alike in length: the
# same layout, so the C library's fsync sits at the same address in both.
SOURCE = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void FN(int fd, int n)
{
	for (int i = 0; i < n; i++)
		if (write(fd, "x", 1) != 1 || fsync(fd) != 0)
			exit(1);
}

int main(int argc, char **argv)
{
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

	if (fd < 0)
		return 1;
	FN(fd, atoi(argv[2]));
	if (argc > 3)
		execv(argv[3], argv + 3);
	return argc > 3;
}
"""


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """syncs-a, whose fsyncs come from alpha_syncs, and syncs-b's from
    omega_syncs; fsync at one address in both."""
    require("cc"), require("nm")
    d = tmp_path_factory.mktemp("exec-pair")
    (d / "syncs.c").write_text(SOURCE)
    built = {}
    for name, fn in [("syncs-a", "alpha_syncs"), ("syncs-b", "omega_syncs")]:
        subprocess.run(["cc", "-O1", "-static", f"-DFN={fn}", "-o", d / name, d / "syncs.c"],
                       check=True)
        syms = subprocess.run(["nm", d / name], capture_output=True, text=True, check=True)
        built[name] = {line.split()[2]: line.split()[0] for line in syms.stdout.splitlines()
                       if len(line.split()) == 3}
    # The premise: else the entry would not be reused, and the test proves nothing.
    assert built["syncs-a"]["fsync"] == built["syncs-b"]["fsync"], "the layouts differ"
    return d / "syncs-a", d / "syncs-b"


def test_an_exec_is_a_new_caller(pair, scratch, tmp_path):
    """syncs-a fsyncs N times from alpha_syncs, then execs syncs-b (the same
    process and thread), which fsyncs N times from omega_syncs: each
    program's calls are named by its own function and its own name."""
    a, b = pair
    f = scratch / "f"
    out = tmp_path / "report.json"
    cmd = [SYNCSTAT, f"--json={out}", "-o", tmp_path / "report.txt", "--",
           a, f, str(N), b, f, str(N)]
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120)
    rerun = cmdline(cmd) + "\n" + r.stderr
    assert r.returncode == 0, rerun
    report = json.loads(out.read_text())
    sites = {s["site"].split(" (")[0]: s["count"] for s in report["sites"]}
    assert sites == {"alpha_syncs": N, "omega_syncs": N}, rerun + json.dumps(report["sites"])
    programs = {}
    for g in report["groups"]:
        programs[g["program"]] = programs.get(g["program"], 0) + g["count"]
    assert programs == {"syncs-a": N, "syncs-b": N}, rerun + json.dumps(report["groups"])


def test_an_exec_decides_again_whether_it_eats(pair, scratch):
    """syncs-a, eaten, execs env, which execs syncs-b with EATMYDATA_DISABLE
    set (one thread throughout): syncs-b's fsyncs reach the disk, as the
    library would decide at its start; syncs-a's do not.  The native run,
    the control, syncs both."""
    a, b = pair
    cmd = [a, scratch / "f", str(N), "/usr/bin/env", "EATMYDATA_DISABLE=1", b, scratch / "f",
           str(2 * N)]
    native, under = run(cmd), eaten(cmd)
    assert native.counts["ext4:ext4_sync_file_enter"] == 3 * N, native.why()
    assert under.counts["ext4:ext4_sync_file_enter"] == 2 * N, under.why()
