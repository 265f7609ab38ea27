"""Huge lines (issue 11, item 6; case c10): one line of 16 MB is rejected with its line number
and a short copy of its text, and every other row is kept, in certify, ingest and watch.
Runtime: about 15 s (three 16 MB files).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _support import shared_path

from rngcert.collect.csvstream import MAX_LINE
from rngcert.collect.spinlog import read_spin_log
from rngcert.collect.store import Store
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")
CASES = shared_path("cases")


def c10_file(tmp_path) -> Path:
    """The file of case c10 (its generator when the shared cases are present, else the same bytes)."""
    gen = CASES / "c10-one-huge-line.py"
    if gen.is_file():
        subprocess.run([sys.executable, str(gen)], cwd=tmp_path, check=True)
    else:
        with open(tmp_path / "c10-one-huge-line.csv", "w") as f:
            f.write("spin_id,result\n")
            for i in range(1, 2001):
                f.write(f"{i},{i % 37}\n")
            f.write("2001," + "x" * 16_000_000 + "\n")
    return tmp_path / "c10-one-huge-line.csv"


def test_c10_one_huge_line_certify_keeps_the_2000_good_rows(tmp_path, cli):
    log = c10_file(tmp_path)
    r = cli("certify", log, "--json", "--no-plots", "--resamples", "199", "--seed", "1", "--out", tmp_path / "rep")
    assert r.exit_code in (0, 10, 11, 12), r.output
    rep = json.loads(r.output)
    assert rep["rows"] == {"accepted": 2000, "void": 0, "rejected": 1}
    (bad,) = rep["rejected_sample"]
    assert bad["line"] == 2002 and bad["column"] == "*" and "16,000,005 bytes" in bad["reason"]
    assert bad["text"].startswith("2001,xxxx") and len(bad["text"].encode()) <= 1024
    rows = (Path(rep["rejects_file"])).read_text().splitlines()
    assert len(rows) == 2 and len(rows[1].encode()) <= 1024 + 200


def test_c10_ingest_and_rejects(tmp_path, cli):
    log = c10_file(tmp_path)
    db = tmp_path / "s.duckdb"
    r = cli("ingest", log, "--db", db)
    assert r.exit_code == 0 and "2000 new spins stored" in r.output and "1 rejected" in r.output
    with Store(db, read_only=True) as st:
        (rej,) = st.rejects()
    assert rej["line"] == 2002 and len(rej["text"].encode()) <= 1024


def test_huge_lines_of_the_same_kind_anywhere_in_the_file(tmp_path):
    """The kind of c10, not only the instance: two long lines, one in the middle and one last
    without a newline, in a UTF-8-BOM, CRLF file with a blank line; line numbers stay exact."""
    log = tmp_path / "mixed.csv"
    body = ["spin_id,result,dealer"] + [f"{i},{i % 37},D{i % 3}" for i in range(1, 501)]
    body.insert(200, "")  # a blank line (line 201)
    body.insert(300, "300x," + "7" * (MAX_LINE + 10) + ",D1")  # line 301
    text = "\r\n".join(body) + "\r\n" + "999," + "1" * (3 * MAX_LINE)  # last line, no newline
    log.write_bytes(b"\xef\xbb\xbf" + text.encode())
    spins = read_spin_log([log], EU)
    (t,) = spins.tables.values()
    assert t.n == 500
    assert [r.line for r in spins.rejected] == [301, 504]  # 503 lines in body, then the last one
    assert all(len(r.text.encode()) <= 1024 for r in spins.rejected)
    assert spins.sources[0].blank_lines == 1


def test_c10_watch_counts_the_good_rows(tmp_path, cli):
    log = c10_file(tmp_path)
    r = cli("watch", log, "--no-record", "--block", "1", "--alpha", "1e-300")
    status = [ln for ln in r.output.splitlines() if ln.startswith("[")]
    assert status[-1].split("] ")[1].startswith("2000 spins"), r.output[-2000:]
