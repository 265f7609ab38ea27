"""A reader that goes away (``rngcert rejects | head``): the command ends quietly with exit 0, not
with "[Errno 32] Broken pipe" and the input-error exit 3 (issue 27, item 4); a command that stores
(``rngcert ingest … | head``) finishes storing every file first (found by a break test: the first
fix stopped the ingest at the closed pipe, with exit 0, and the files after it were never stored).

Each case runs the real console process with its standard output a pipe that this test closes
before the process writes to it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _support import REPO, run_cli


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store with a few hundred rejected rows (enough lines that `rejects` writes after the reader left)."""
    d = tmp_path_factory.mktemp("closed-stdout")
    log = d / "spins.csv"
    lines = ["spin_id,result"] + [f"{i},{99 if i % 3 == 0 else i % 37}" for i in range(1, 1201)]
    log.write_text("\n".join(lines) + "\n")
    db = d / "s.duckdb"
    res = run_cli("ingest", log, "--db", db)
    assert res.exit_code == 0, res.output
    return d, log, db


def _run_with_closed_stdout(args, cwd, read_lines: int = 0) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("RNGCERT_DEBUG", None)
    p = subprocess.Popen([sys.executable, "-m", "rngcert", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    for _ in range(read_lines):  # as `| head -1`: the reader takes what it wants, then goes away
        p.stdout.readline()
    p.stdout.close()  # the reader is gone (before the command has started, with read_lines=0)
    err = p.stderr.read().decode("utf-8", "replace")
    p.stderr.close()
    return p.wait(timeout=120), err


@pytest.mark.parametrize("args", [pytest.param(["rejects"], id="rejects"), pytest.param(["rejects", "--csv"], id="rejects-csv"),
                                  pytest.param(["ingest", "{log2}", "{log3}", "{log4}"], id="ingest", marks=pytest.mark.slow)])
def test_a_closed_stdout_ends_the_table_quietly(store, args):
    d, log, db = store
    log2 = d / "copy.csv"
    log2.write_bytes(log.read_bytes().replace(b"\n", b"\r\n"))  # another file (other bytes): ingested again
    log3, log4 = d / "copy3.csv", d / "copy4.csv"  # more new files after the first summary line
    log3.write_bytes(log.read_bytes() + b"\n")
    log4.write_bytes(log.read_bytes() + b"\n\n")
    args = [a.format(log=log, log2=log2, log3=log3, log4=log4) for a in args] + ["--db", db]
    code, err = _run_with_closed_stdout(args, d, read_lines=1 if args[0] == "ingest" else 0)
    assert code == 0, err
    assert "Broken pipe" not in err and "Errno" not in err and "Traceback" not in err, err
    if args[0] == "ingest":  # the reader left; the ingest did not stop: every file is in the store
        for f in (log2, log3, log4):
            again = run_cli("ingest", f, "--db", db)
            assert again.exit_code == 0 and "already ingested" in again.output, again.output
