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
for _ in range(5):
    m0, t0 = time.monotonic(), os.times().elapsed
    time.sleep(0.0123)
    t1, m1 = os.times().elapsed, time.monotonic()
    worst = max(worst, abs((t1 - t0) - (m1 - m0)))
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
    assert float(worst) < 0.0001, f"os.times() is {worst} s off across a 12.3 ms sleep"


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
