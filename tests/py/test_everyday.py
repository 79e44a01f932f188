# SPDX-License-Identifier: MIT
"""The everyday matrix (everyday.py): each ordinary command, natively and
under eatmydata, syncstat and nocache, all in one perf run per group of
rows; and under crashtest where a check says what its files must hold.
Each cell is the tool's answer against the kernel's count of the same run,
the page cache, or the native run's files (the control of every "nothing
reached the disk" and "nothing stayed cached")."""
import pytest

from conftest import go_build, require
from everyday import (ROWS, TOOLS, command, crashtest, environment, fixture, judge_crashtest,
                      judge_eatmydata, judge_nocache, judge_syncstat)

MARKS = {"go": [pytest.mark.go], "node": [pytest.mark.node], "postgres": [pytest.mark.postgres]}


def rows(pred=lambda r: True):
    return [pytest.param(r, id=r.name, marks=[pytest.mark.slow, *MARKS.get(r.needs, [])])
            for r in ROWS if pred(r)]


@pytest.fixture(scope="module")
def go_programs(tmp_path_factory):
    return {"GO_FSYNC": go_build(tmp_path_factory, "fsync.go", "fsync-go"),
            "GO_REPLACE": go_build(tmp_path_factory, "replace.go", "replace-go")}


@pytest.fixture
def env(request):
    """The rows' environment: the Go programs built where a row needs them."""
    row = request.node.callspec.params["row"]
    if row.needs in ("node", "postgres"):
        require({"node": "node", "postgres": "initdb"}[row.needs])
    return environment(request.getfixturevalue("go_programs") if row.needs == "go" else None)


@pytest.fixture
def matrix(batch, env, request):
    """The runs of the row's group (its `needs`), every tool, made once."""
    row = request.node.callspec.params["row"]
    group = [r for r in ROWS if r.needs == row.needs]

    def make(key, scratch, tmp):
        r = next(x for x in group if x.name == key[0])
        fixture(scratch, r, env, cold=key[1] in ("native", "nocache"))
        return command(r, key[1], scratch, tmp)
    runs = batch(f"everyday-{row.needs}", [(r.name, t) for r in group for t in TOOLS], make,
                 env=env)
    return lambda t: (runs[(row.name, t)][0], runs[(row.name, t)][1])


@pytest.mark.parametrize("row", rows())
def test_eatmydata(matrix, row):
    (native, nt), (eaten, et) = matrix("native"), matrix("eatmydata")
    assert not judge_eatmydata(native, eaten, nt / "w", et / "w", row), \
        judge_eatmydata(native, eaten, nt / "w", et / "w", row) + eaten.why()


@pytest.mark.parametrize("row", rows())
def test_syncstat(matrix, row):
    run, tmp = matrix("syncstat")
    why = judge_syncstat(run, tmp / "syncstat.json")
    assert not why, why + run.why()


@pytest.mark.parametrize("row", rows())
def test_nocache(matrix, row):
    (native, nt), (run, t) = matrix("native"), matrix("nocache")
    why = judge_nocache(native, run, nt / "w", t / "w", row)
    assert not why, why + run.why()


@pytest.mark.parametrize("row", rows(lambda r: r.check))
def test_crashtest(tmp_path, env, row):
    d = tmp_path / "d"
    fixture(d, row, env)
    r, report = crashtest(row, d, env)
    why = judge_crashtest(row, r, report)
    assert not why, why + f"\n{r.stderr[-2000:]}"
