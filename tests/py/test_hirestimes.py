# SPDX-License-Identifier: MIT
"""hirestimes: times() and sysconf(_SC_CLK_TCK) in microseconds, consistent
with the kernel's own clocks."""
import subprocess

import pytest

from conftest import BUILD, TESTS, cmdline

HIRESTIMES = BUILD / "bin" / "hirestimes"

PYTHON = """
import os, time
hz = os.sysconf("SC_CLK_TCK")
worst = 0
# Each end of os.times()'s interval between two monotonic readings, so a
# preemption anywhere widens the bracket instead of failing the test; the
# error is how far the interval falls outside it (a microsecond's
# truncation at each end allowed).
for _ in range(5):
    a0 = time.monotonic(); t0 = os.times().elapsed; b0 = time.monotonic()
    time.sleep(0.0123)
    a1 = time.monotonic(); t1 = os.times().elapsed; b1 = time.monotonic()
    d = t1 - t0
    worst = max(worst, d - (b1 - a0) - 2e-6, (a1 - b0) - d - 2e-6, 0)
print(hz, worst)
"""

def run_out(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, cmdline(cmd) + r.stderr
    return r.stdout


def test_python_os_times_to_the_microsecond():
    hz, worst = run_out(["python3", "-c", PYTHON]).split()
    assert hz == "100" and float(worst) > 0.0005, "natively 10 ms steps"
    hz, worst = run_out([HIRESTIMES, "python3", "-c", PYTHON]).split()
    assert hz == "1000000"
    assert float(worst) == 0, f"os.times() is {worst} s outside the monotonic clock's bracket"


@pytest.mark.parametrize("probe", ["timesprobe", "timesprobe32"])
def test_c_program_times_and_rusage_agree(probe):
    exe = TESTS / probe
    out = dict(line.split(" ", 1) for line in run_out([HIRESTIMES, exe]).splitlines())
    assert out["hz"] == "1000000"
    for key in ["elapsed", "utime", "cutime"]:
        mine, before, after = map(float, out[key].split())
        # A microsecond either side: each end of an interval is truncated.
        assert before - 2e-6 <= mine <= after + 2e-6, f"{key}: {out[key]}"
    assert float(out["cutime"].split()[0]) > 0.01, "the child's CPU time is counted"


def test_bad_pointer_fails_as_natively(tmp_path):
    """glibc's times() writes to the buffer itself when the kernel says
    EFAULT (to tell -EFAULT from a clock value), so both crash alike."""
    src = tmp_path / "bad.c"
    src.write_text("#include <sys/times.h>\nint main(void) { return times((void *)8) == 0; }\n")
    subprocess.run(["cc", "-o", tmp_path / "bad", src], check=True)
    native = subprocess.run([tmp_path / "bad"], capture_output=True)
    under = subprocess.run([HIRESTIMES, tmp_path / "bad"], capture_output=True)
    assert native.returncode == under.returncode != 0


def test_elapsed_is_monotonic():
    script = ("import os\nlast = 0\nfor _ in range(100000):\n"
              "    e = os.times().elapsed\n    assert e >= last\n    last = e\nprint('ok')")
    assert run_out([HIRESTIMES, "python3", "-c", script]) == "ok\n"


@pytest.mark.parametrize("prog,said", [(TESTS / "fsyncs-static", "a static program"),
                                       (TESTS / "fsyncs", None)])
def test_a_command_it_cannot_enter_is_named(prog, said):
    """A static program keeps the kernel's ticks, which hirestimes says; a
    dynamic one (the control) runs without a word."""
    r = subprocess.run([HIRESTIMES, prog, "/dev/null", "0", "fsync"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
    want = f"hirestimes: {prog} is {said}: its times() and CLK_TCK stay the kernel's\n" if said else ""
    assert r.stderr == want
