"""Text spin ids of which most are letters and a number (`R1`-`R300`) and some are not (`abc`, `R2.5`, `r7`): the table's
ids are read as labels (repeats checked, gaps not), and a note says so, naming the first id of the other shape with its
file and line; certify said nothing (R150 and R151 missing went unsaid, case c06's kind: a bad id must be named)."""

from __future__ import annotations

import random

import pytest
from _support import compact_read

import rngcert.collect.spinlog as spinlog
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")


def _log(tmp_path, bad: str, suffix=".csv"):
    r = random.Random(1)
    rows = [(f"R{i}", str(r.randrange(37))) for i in range(1, 301) if i not in (150, 151)]
    rows[100] = (bad, "5")  # (line 102)
    p = tmp_path / f"log{suffix}"
    if suffix == ".csv":
        p.write_text("spin_id,result\n" + "".join(f"{a},{b}\n" for a, b in rows))
    else:
        p.write_text("\n" + "".join(f'{{"spin_id": "{a}", "result": {b}}}\n' for a, b in rows))  # (a blank first line: the CSV's lines)
    return p


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("bad", ["abc", "R2.5", "R-5", "r7", "X9"])
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_an_id_of_another_shape_is_named(bad, suffix, exact, tmp_path, monkeypatch):
    p = _log(tmp_path, bad, suffix)
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([p], EU)
    (t,) = log.tables.values()
    assert t.notes == [f"spin ids of two shapes: 297 of 298 are R and a number (R1, R2, ...), {bad!r} ({p}:102) is not: all are read as labels "
                       "(repeats are checked, gaps are not)"]


@pytest.mark.parametrize("exact", [False, True])
def test_ids_of_one_shape_keep_their_gap_count_and_labels_stay_quiet(exact, tmp_path, monkeypatch):
    r = random.Random(2)
    p = tmp_path / "one.csv"
    p.write_text("spin_id,result\n" + "".join(f"R{i},{r.randrange(37)}\n" for i in range(1, 301) if i != 150))
    q = tmp_path / "uuid.csv"
    q.write_text("spin_id,result\n" + "".join(f"{r.getrandbits(64):016x}-{i},{r.randrange(37)}\n" for i in range(1, 301)))
    with compact_read(monkeypatch, exact=exact):
        one = spinlog.read_spin_log([p], EU)
        uuid = spinlog.read_spin_log([q], EU)
    assert one.tables["one"].notes == ["1 spin_id(s) missing between R1 and R300 (gaps in the sequence)"]
    assert uuid.tables["uuid"].notes == []
