#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The everyday matrix as a table (doc/everyday.md): every row of
tests/py/everyday.py, natively and under each tool, judged as
tests/py/test_everyday.py judges it, with the kernel's count of the native
run's syncs beside it.  As root (perf's tracepoints, PostgreSQL run as its
own user):

    python3 bench/everyday.py > doc/everyday.md
"""
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "py"))

import conftest  # noqa: E402
from everyday import (ROWS, TOOLS, command, crashtest, environment, fixture,  # noqa: E402
                      judge_crashtest, judge_eatmydata, judge_nocache, judge_syncstat)


HEAD = """# The everyday matrix

Ordinary commands, each run natively and under every tool meant for it; each
answer set against the kernel's own view of the same run. Made by
`python3 bench/everyday.py > doc/everyday.md` (as root), from the rows of
[tests/py/everyday.py](../tests/py/everyday.py) that `make check` asserts
(`tests/py/test_everyday.py`).

- **native syncs**: what the kernel counted in the native run's tree (perf:
  `ext4:ext4_sync_file_enter`, `ext4:ext4_sync_fs` and the durability system
  calls, `O_SYNC` opens among them).
- **eatmydata**: the same exit status, output and files as the native run,
  and no sync reached the disk -- or eatmydata said which it left there.
- **syncstat**: each kind of call in its report is the kernel's count of that
  system call in the same run, and its file syncs are never fewer than ext4's
  (a write on an `O_DSYNC` descriptor is one); nothing unobserved or lost.
- **nocache**: the files the command read or wrote are out of the page cache
  afterwards (fincore), where natively they stay; the native run's files.
  Both runs start with none of the fixture's files cached (a page nocache
  finds cached is to stay).
- **crashtest**: `--each` with a check of what the files must hold: the
  verdict the command's syncs deserve under the posix model (ok, or failed
  where a crash can lose what it wrote), and no point unknown.
"""


def factory(top):
    """What pytest's tmp_path_factory gives the Go build: a new directory."""
    class Factory:
        def mktemp(self, name):
            return Path(tempfile.mkdtemp(prefix=name, dir=top))
    return Factory()


def runs_of(rows, top, env):
    cmds, dirs = {}, {}
    for i, row in enumerate(rows):
        for t in TOOLS:
            d = top / f"{i}-{t}"
            fixture(d / "w", row, env, cold=t in ("native", "nocache"))
            cmds[(row.name, t)] = command(row, t, d / "w", d)
            dirs[(row.name, t)] = d
    return conftest.run_many(cmds, env=env), dirs


def cell(why):
    return "ok" if not why else "**wrong**: " + why.replace("|", "/")[:160]


def table(top):
    go = {"GO_FSYNC": conftest.go_build(factory(top), "fsync.go", "fsync-go"),
          "GO_REPLACE": conftest.go_build(factory(top), "replace.go", "replace-go")}
    env = environment(go)
    runs, dirs = runs_of(ROWS, top, env)
    print(HEAD)
    print("| command | native syncs | eatmydata | syncstat | nocache | crashtest |")
    print("|---|---:|---|---|---|---|")
    for row in ROWS:
        r = {t: runs[(row.name, t)] for t in TOOLS}
        w = {t: dirs[(row.name, t)] / "w" for t in TOOLS}
        cells = [judge_eatmydata(r["native"], r["eatmydata"], w["native"], w["eatmydata"], row),
                 judge_syncstat(r["syncstat"], dirs[(row.name, "syncstat")] / "syncstat.json"),
                 judge_nocache(r["native"], r["nocache"], w["native"], w["nocache"], row)]
        crash = "-"
        if row.check:
            d = top / f"crash-{ROWS.index(row)}"
            fixture(d, row, env)
            why = judge_crashtest(row, *crashtest(row, d, env))
            crash = cell(why) if why else ("FAILED, rightly" if row.verdict == "failed" else "ok")
        name = (row.script if len(row.script) < 60 else row.name).replace("|", "\\|")
        print(f"| `{name}` | {r['native'].syncs} | "
              + " | ".join(cell(c) for c in cells) + f" | {crash} |")


def main():
    if os.geteuid() != 0:
        sys.exit("everyday.py: run as root (perf's tracepoints, PostgreSQL's own user)")
    with tempfile.TemporaryDirectory(prefix="everyday-") as top:
        Path(top).chmod(0o755)
        table(Path(top))


if __name__ == "__main__":
    main()
