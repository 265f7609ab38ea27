"""Spin ids that a cast to int64 reads but that are not spin counters (``0x65``, ``-0``, ``1e18`` and up, 19 or more
digits): ``certify`` (both read paths) rejects each such row with its line, column and reason, as ``ingest`` does,
instead of reading ``0x65`` as spin 101 (a false conflict with the real spin 101, both rows lost) or accepting ids of
19 digits that the store refuses (README: a spin counter has at most 18 digits).
"""

from __future__ import annotations

import duckdb
import pytest

from rngcert.collect.spinlog import read as spinlog_read
from rngcert.collect.spinlog import read_spin_log
from rngcert.collect.store import ingest_files
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")


def _log(tmp_path, odd: list[str]):
    p = tmp_path / "ids.csv"
    p.write_text("spin_id,table,result\n" + "".join(f"{100 + k},T1,{k % 37}\n" for k in range(100)) + "".join(f"{t},T1,5\n" for t in odd))
    return p


def _store_rejects(tmp_path, p) -> list[tuple]:
    db = tmp_path / "s.duckdb"
    ingest_files(db, [p], "european")
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute('SELECT line, "column", reason FROM rejects ORDER BY line').fetchall()
    finally:
        con.close()


def _exact(*a, **k):
    raise spinlog_read._NeedExact("forced by the test")


def _reads(p, monkeypatch):
    """The log read on the streamed (compact) path and on the exact path."""
    fast = read_spin_log(p, EU)
    with monkeypatch.context() as m:
        m.setattr(spinlog_read, "_read_spin_log_compact", _exact)
        slow = read_spin_log(p, EU)
    return fast, slow


@pytest.mark.parametrize("odd", [["0x65"], ["0X1"], ["0xFFFFFFFFFFFFFFFF"], ["-0"], ["0000000000000000000001"], ["1000000000000000000"],
                                 ["9223372036854775807"], ["9223372036854775806", "9223372036854775807"]])
def test_ids_a_cast_reads_but_a_counter_is_not_are_rejected_as_on_ingest(tmp_path, monkeypatch, odd):
    p = _log(tmp_path, odd)
    want = _store_rejects(tmp_path, p)
    assert [line for line, _, _ in want] == list(range(102, 102 + len(odd)))  # (the store rejects each odd row, no other)
    for log in _reads(p, monkeypatch):
        got = [(r.line, r.column, r.reason) for r in log.rejected]
        assert got == want
        (t,) = log.tables.values()
        assert t.n == 100  # the 100 counters, spin 101 among them (no false conflict with 0x65)
