# SPDX-License-Identifier: MIT
"""What crashtest's test files share: the launcher, the programs, the
checkers, the directories they start from, one way to run it and to read
its report."""
import json
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT, TESTS, cmdline, require

CRASHTEST = BUILD / "bin" / "crashtest"
CRASHY = TESTS / "crashy"
CRASH = ROOT / "tests" / "py" / "crash"
SCHEMA = ROOT / "doc" / "crashtest.schema.json"
# The interpreter itself, not a version manager's shell shim.
PYTHON = sys.executable

# The file holds the old text or the new one, and the new one once the
# program said it replaced it.
REPLACED = ('if grep -q replaced "$CRASHTEST_OUTPUT"; then grep -qx expected data; '
            'else grep -qx -e old -e expected data; fi')

SQL = ('for k in 1 2 3; do sqlite3 db "PRAGMA journal_mode=DELETE; PRAGMA synchronous=$1; '
       'BEGIN; INSERT INTO t VALUES($k, randomblob(3000)); COMMIT;" >/dev/null && echo $k; done')
# 3: the database is corrupt; 4: a transaction that returned is missing.
SQL_CHECK = ('test "$(sqlite3 db "PRAGMA integrity_check")" = ok || exit 3; '
             'for k in $(cat "$CRASHTEST_OUTPUT"); do '
             'test "$(sqlite3 db "SELECT count(*) FROM t WHERE k=$k")" = 1 || exit 4; done')


class Report(dict):
    """crashtest's JSON report, and what the tests ask of it."""

    @property
    def points(self):
        return self["points"]

    def verdicts(self):
        """(the call each point followed, its verdict), in order."""
        return [(p["after"], p["verdict"]) for p in self.points]

    def statuses(self):
        """Every checker exit status of every state."""
        return {s["check_status"] for p in self.points for s in p["states"]}

    def failed(self):
        """The states that failed, with their point's call."""
        return [(p["after"], s) for p in self.points for s in p["states"]
                if s["verdict"] == "failed"]


def crash_report(*args, env=None, timeout=300, cwd=None):
    """crashtest --json ARGS: its exit status and its whole report."""
    cmd = [CRASHTEST, "--json", *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    assert r.returncode in (0, 1, 2, 3), f"\nrerun: {cmdline(cmd)}\n{r.stdout}{r.stderr}"
    return r.returncode, Report(json.loads(r.stdout))


@pytest.fixture
def old(tmp_path):
    """A directory holding `data`, "old"."""
    d = tmp_path / "dir"
    d.mkdir()
    (d / "data").write_text("old\n")
    return d


@pytest.fixture
def database(tmp_path):
    """A directory holding an SQLite database `db`, table t."""
    sqlite3 = require("sqlite3")
    d = tmp_path / "db"
    d.mkdir()
    subprocess.run([sqlite3, d / "db", "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);"
                    "INSERT INTO t VALUES(0, randomblob(5000));"], check=True)
    return d
