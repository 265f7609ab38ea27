"""A header spells a known column with spaces, hyphens, underscores or capitals of its own (`Spin ID`, `spin-id`, `SpinID`,
`Time Stamp`, `Release Pocket`): the column is read as that known column, so that its checks run (a log headed `Spin ID`
had its exact duplicate counted twice and its conflict used, with no word that the ids were not read)."""

from __future__ import annotations

import json
import random

import pytest
from _support import compact_read

import rngcert.collect.spinlog as spinlog
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError

EU = load_wheel("european")


def _write(path, head, rows):
    """``rows`` under the header ``head`` as CSV, or as JSON Lines with those keys (by the path's suffix)."""
    if path.suffix == ".csv":
        path.write_text(",".join(head) + "\n" + "".join(",".join(x) + "\n" for x in rows))
    else:
        path.write_text("".join(json.dumps(dict(zip(head, x))) + "\n" for x in rows))
    return path


def _rows(n=300):
    r = random.Random(1)
    rows = [(str(i), str(r.randrange(37)), f"2026-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z", str(r.randrange(37))) for i in range(1, n + 1)]
    rows.insert(50, rows[50])  # spin 51 exported twice
    rows.insert(100, (rows[100][0], str((int(rows[100][1]) + 1) % 37), rows[100][2], rows[100][3]))  # spin 100: two results
    return rows


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("head", [("Spin ID", "Result", "Time Stamp", "Release Pocket"), ("spin-id", "RESULT", "time_stamp", "release-pocket"),
                                  ("SpinID", "result", "TimeStamp", "ReleasePocket"), ("spinId", "Result", "timestamp", "release.pocket")])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_known_column_in_another_spelling_is_read(head, fmt, exact, tmp_path, monkeypatch):
    rows = _rows()
    path = _write(tmp_path / f"log.{fmt}", head, rows)
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([path], EU)
    (t,) = log.tables.values()
    assert any("exact duplicate" in x for x in t.notes) and any("conflicting results" in x for x in t.notes)
    assert log.sources[0].accepted == 299 and log.sources[0].rejected == 3  # (302 rows: the copy of 51, both rows of 100)
    assert t.release is not None and log.period is not None


@pytest.mark.parametrize("exact", [False, True])
def test_two_columns_that_both_spell_one_known_column_are_refused(exact, tmp_path, monkeypatch):
    path = tmp_path / "log.csv"
    path.write_text("Spin ID,spin-id,result\n1,1,5\n2,2,6\n")
    with compact_read(monkeypatch, exact=exact), pytest.raises(InputError, match="'Spin ID' and 'spin-id'"):
        spinlog.read_spin_log([path], EU)


@pytest.mark.parametrize("exact", [False, True])
def test_the_exact_name_and_a_mapped_column_come_first(exact, tmp_path, monkeypatch):
    """`spin_id` beside `Spin ID`: the first is the id (as before); `--column result="Spin ID"` takes that column."""
    path = tmp_path / "log.csv"
    path.write_text("spin_id,Spin ID,result\n1,7,5\n2,8,6\n")
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([path], EU)
        mapped = spinlog.read_spin_log([path], EU, columns={"result": "Spin ID"})
    assert log.tables["log"].outcomes.tolist() == [EU.labels.index("5"), EU.labels.index("6")]
    assert mapped.tables["log"].outcomes.tolist() == [EU.labels.index("7"), EU.labels.index("8")]


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_column_not_read_that_names_a_spin_id_or_table_is_said(fmt, exact, tmp_path, monkeypatch):
    """`Round ID`, `Table ID`, `Dealer Name` are not read (no spelling of a known column): a note names each with the
    --column that reads it, so that ids whose repeats and gaps are not checked are never so without a word."""
    head = ("Round ID", "Result", "Table ID", "Dealer Name", "Colour")
    rows = [(str(i), str(i % 37), "T1", "Ann", "red") for i in range(1, 301)]
    path = _write(tmp_path / f"log.{fmt}", head, rows)
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([path], EU)
        mapped = spinlog.read_spin_log([path], EU, columns={"spin_id": "Round ID", "table": "Table ID", "dealer": "Dealer Name"})
    (note,) = [n for n in log.notes if "not read" in n]
    assert note == (f"{path}: column(s) not read: 'Round ID' (to read it as spin_id: --column spin_id='Round ID'), 'Table ID' (to read "
                    "it as table: --column table='Table ID'), 'Dealer Name' (to read it as dealer: --column dealer='Dealer Name')")
    assert not [n for n in mapped.notes if "not read" in n]


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_notes_name_each_column_read_by_its_spelling(fmt, exact, tmp_path, monkeypatch):
    """A lab must see which column was read as what: `Spin ID` read as spin_id was said nowhere in the report (and
    `Dealer ID`, not a spelling of `dealer`, is not read and not named)."""
    head = ("Spin ID", "RESULT", "Time Stamp", "Dealer ID")
    rows = [(str(i), str(i % 37), f"2026-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z", "D1") for i in range(1, 301)]
    path = _write(tmp_path / f"log.{fmt}", head, rows)
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([path], EU)
    said = [x for x in log.notes if "by their spelling" in x]
    assert len(said) == 1, log.notes
    assert "'Spin ID' as spin_id, 'Time Stamp' as timestamp" in said[0] and "RESULT" not in said[0] and "Dealer" not in said[0], said
    plain = tmp_path / f"plain.{fmt}"
    plain.write_text(path.read_text().replace("Spin ID", "spin_id").replace("Time Stamp", "timestamp"))
    assert not [x for x in spinlog.read_spin_log([plain], EU).notes if "by their spelling" in x]
