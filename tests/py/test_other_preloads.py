# SPDX-License-Identifier: MIT
"""Our library among other preloads: the first intercepted call may come
from another library's constructor, before ours, from several threads;
other preloaded libraries (allocators, libfaketime, nocache) may sit before
or after us."""
import os
import subprocess
from pathlib import Path

import pytest

from conftest import EATMYDATA, TESTS, run

MULTIARCH = "/usr/lib/x86_64-linux-gnu"
OTHERS = {
    "jemalloc": (f"{MULTIARCH}/libjemalloc.so.2", {}),
    "libfaketime": (f"{MULTIARCH}/faketime/libfaketime.so.1", {"FAKETIME": "-2d"}),
    "nocache": ("/usr/lib/nocache/nocache.so", {}),
}


def our_preload():
    return subprocess.run([EATMYDATA, "sh", "-c", "echo $LD_PRELOAD"], text=True,
                          capture_output=True, check=True).stdout.strip()


def init_order(preload):
    """The libraries in the order ld.so runs their constructors."""
    r = subprocess.run(["/bin/true"], env=dict(os.environ, LD_DEBUG="libs",
                       LD_PRELOAD=preload), capture_output=True, text=True, timeout=60)
    return [Path(line.split("calling init: ")[1]).name
            for line in r.stderr.splitlines() if "calling init: " in line]


@pytest.mark.parametrize("ours_first", [True, False])
def test_durability_from_a_constructor(scratch, ours_first):
    ctor = str(TESTS / "libctor.so")
    env = {"EMD_CTOR_FILE": str(scratch / "f")}
    native = run(["env", f"LD_PRELOAD={ctor}", "/bin/true"], env=env)
    assert native.counts["ext4:ext4_sync_file_enter"] >= 4, native.why()
    preload = f"{our_preload()} {ctor}" if ours_first else f"{ctor} {our_preload()}"
    order = init_order(preload)
    ctor_runs_first = order.index("libctor.so") < order.index("libeatmydata.so")
    # ld.so runs the later preload's constructor first: the first order
    # exercises the calls made before our constructor.
    assert ctor_runs_first == ours_first, order
    r = run(["env", f"LD_PRELOAD={preload}", "/bin/true"], env=env)
    assert r.syncs == 0, r.why()
    assert (scratch / "f").read_text() == "x" * 8


@pytest.mark.slow
@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("ours_first", [True, False])
def test_alongside_other_preloads(scratch, other, ours_first):
    lib, extra_env = OTHERS[other]
    assert os.path.exists(lib), f"{lib} missing: .ci/run installs it"
    preload = f"{our_preload()} {lib}" if ours_first else f"{lib} {our_preload()}"
    for cmd in ([TESTS / "entry", "-t", "16", "-f", "fsync", scratch],
                ["python3", "-c", "import os; f = open('%s/p', 'w'); f.write('x'); "
                 "f.flush(); os.fsync(f.fileno()); print('ok')" % scratch]):
        # The other library alone lets the fsync reach the disk.
        native = run(["env", f"LD_PRELOAD={lib}"] + cmd, env=extra_env)
        assert native.counts["ext4:ext4_sync_file_enter"] > 0, native.why()
        r = run(["env", f"LD_PRELOAD={preload}"] + cmd, env=extra_env)
        assert r.syncs == 0, r.why()
