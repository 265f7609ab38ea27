"""A JSON Lines row rejected before its fields are read (a key given twice, case c19; an object or array where a value
is read; a line that is not valid JSON) still carried its spin id: that id is present in the source, as the id of a
CSV row with the wrong number of fields is, and is never said to be missing (a gap) when the line names it once."""

from __future__ import annotations

import json
import random

import pytest
from _support import compact_read

import rngcert.collect.spinlog as spinlog
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")


def _log(path, bad: dict[int, str], *, n=300, ids=str, table=True, key="spin_id"):
    r = random.Random(7)
    out = []
    for i in range(1, n + 1):
        obj = {key: ids(i), "result": r.randrange(37)}
        if table:
            obj["table"] = "T1"
        out.append(bad.get(i, json.dumps(obj)).replace("ID", json.dumps(ids(i))))
    path.write_text("\n".join(out) + "\n")
    return path


def _notes(monkeypatch, path, exact: bool, **kw):
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([path], EU, **kw)
    (t,) = log.tables.values()
    return log, [x for x in t.notes if "missing" in x]


ROWS = {
    "duplicate result (c19)": '{"spin_id": ID, "result": 17, "result": 18, "table": "T1"}',
    "result in two spellings": '{"spin_id": ID, "result": 17, "Result": 18, "table": "T1"}',
    "an array result": '{"spin_id": ID, "result": [17], "table": "T1"}',
    "an object result": '{"spin_id": ID, "result": {"n": 17}, "table": "T1"}',
    "spin id given twice alike": '{"spin_id": ID, "spin_id": ID, "result": 3, "table": "T1"}',
    "a truncated line": '{"spin_id": ID, "table": "T1", "result": 17',
    "not an object": '[ID, 17]',
    "no table named": '{"spin_id": ID, "result": [17]}',  # (as a row with an empty table value: its id counts in every table)
}


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("ids", [str, int, lambda i: f"R{i}"], ids=["text", "number", "prefixed"])
@pytest.mark.parametrize("row", list(ROWS))
def test_the_id_of_a_row_rejected_before_its_fields_are_read_is_not_a_gap(row, ids, exact, tmp_path, monkeypatch):
    path = _log(tmp_path / "log.jsonl", {100: ROWS[row]}, ids=ids)
    log, missing = _notes(monkeypatch, path, exact)
    assert [r.line for r in log.rejected] == [100]
    assert log.sources[0].rejected == 1 and log.sources[0].accepted == 299
    if row == "not an object":  # (a JSON array names no key: its id is not known)
        assert missing == ["1 spin_id(s) missing between 1 and 300 (gaps in the sequence)".replace("1 and 300", "R1 and R300")
                           if ids(1) == "R1" else "1 spin_id(s) missing between 1 and 300 (gaps in the sequence)"]
    else:
        assert missing == []


@pytest.mark.parametrize("exact", [False, True])
def test_an_id_the_row_gives_twice_differently_is_not_known(exact, tmp_path, monkeypatch):
    path = _log(tmp_path / "log.jsonl", {100: '{"spin_id": 100, "spin_id": 1000, "result": 3, "table": "T1"}'})
    _, missing = _notes(monkeypatch, path, exact)
    assert missing == ["1 spin_id(s) missing between 1 and 300 (gaps in the sequence)"]


@pytest.mark.parametrize("exact", [False, True])
def test_the_id_counts_in_its_own_table_and_under_a_mapped_key(exact, tmp_path, monkeypatch):
    """``--column spin_id=Round``; the rejected row names table T2: its id is present in T2, not in T1."""
    r = random.Random(3)
    rows = [json.dumps({"Round": i, "table": t, "result": r.randrange(37)}) for t in ("T1", "T2") for i in range(1, 201)]
    rows[99] = '{"Round": 100, "table": "T1", "result": 5, "result": 6}'
    rows[200 + 49] = '{"Round": 50, "table": "T2", "result": [5]}'
    rows[200 + 59] = '{"Round": 60, "table": "T1", "result": [5]}'  # (T2's 60 named under T1: T2 lacks it)
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(rows) + "\n")
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([path], EU, columns={"spin_id": "Round"})
    missing = {name: [x for x in t.notes if "missing" in x] for name, t in log.tables.items()}
    assert missing == {"T1": [], "T2": ["1 spin_id(s) missing between 1 and 200 (gaps in the sequence)"]}


def test_c19_certify_says_no_id_is_missing(cli, tmp_path):
    from pathlib import Path

    case = Path(__file__).resolve().parents[2] / "shared" / "cases" / "c19-duplicate-key.jsonl"
    if not case.exists():
        pytest.skip(f"shared case not found: {case}")
    res = cli("certify", case, "--out", tmp_path, "--json")
    report = json.loads(res.output)
    text = json.dumps(report)
    assert "missing between" not in text
    assert "'result' given twice" in text
