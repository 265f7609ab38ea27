"""The spin id of a row rejected before its cells are read (a CSV row of another number of fields, a JSON Lines line
that is not valid JSON) is present in its own file's table: in a file without a table column, that is the table named
after the file, and never another file's (certifying a.csv with b.csv said nothing of b.csv's gap at 100, which a.csv's
unsplit row 100 filled)."""

from __future__ import annotations

import random

import pytest
from _support import compact_read

import rngcert.collect.spinlog as spinlog
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")
GAP = "1 spin_id(s) missing between 1 and 300 (gaps in the sequence)"


def _files(tmp_path, suffix: str):
    r = random.Random(4)
    if suffix == ".csv":
        a = ["spin_id,result"] + [f"{i},{r.randrange(37)}" for i in range(1, 301)]
        a[100] = "100,5,extra"  # (line 101: three fields where the header has two)
        b = ["spin_id,result"] + [f"{i},{r.randrange(37)}" for i in range(1, 301) if i != 100]
    else:
        a = [f'{{"spin_id": {i}, "result": {r.randrange(37)}}}' for i in range(1, 301)]
        a[99] = '{"spin_id": 100, "result": 5'  # (cut short: not valid JSON)
        b = [f'{{"spin_id": {i}, "result": {r.randrange(37)}}}' for i in range(1, 301) if i != 100]
    pa, pb = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    pa.write_text("\n".join(a) + "\n")
    pb.write_text("\n".join(b) + "\n")
    return pa, pb


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
@pytest.mark.parametrize("exact", [False, True])
def test_an_unsplit_row_fills_no_gap_of_another_files_table(suffix, exact, tmp_path, monkeypatch):
    pa, pb = _files(tmp_path, suffix)
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([pa, pb], EU)
        alone = spinlog.read_spin_log([pb], EU)
    gaps = {name: [x for x in t.notes if "missing" in x] for name, t in log.tables.items()}
    assert gaps == {"a": [], "b": [GAP]}
    assert [x for x in alone.tables["b"].notes if "missing" in x] == [GAP]
