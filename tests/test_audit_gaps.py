"""An audit of a stored table states the spin ids missing from the store between the lowest and the highest id of its
window, as certify states the gaps of a log (an audit said nothing: a month's spins with ids removed audited clean).
Whole-number ids and text ids of one prefix (``R1200``); an id stored outside the window is not missing; a row rejected
on ingest stored no id, and the note says so (certify of the log counts that id as present)."""

from __future__ import annotations

import json

import pytest


def _log(path, ids, *, prefix="", bad=()):
    rows = ["spin_id,result"] + [f"{prefix}{i},{99 if i in bad else i * 7 % 37}" for i in ids]
    path.write_text("\n".join(rows) + "\n")
    return path


def _audit_notes(cli, db, *extra) -> list[str]:
    r = cli("audit", "--db", db, "--table", "T", "--no-record", "--json", *extra)
    assert r.exit_code in (0, 10, 11, 12), r.output
    return json.loads(r.stdout)["notes"]


@pytest.mark.parametrize("prefix", ["", "R"])
def test_an_audit_states_the_ids_missing_from_the_store(tmp_path, cli, prefix):
    log = _log(tmp_path / "a.csv", [i for i in range(1, 1001) if not 101 <= i <= 103], prefix=prefix)
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "T").exit_code == 0
    notes = _audit_notes(cli, db)
    want = f"3 spin_id(s) missing between {prefix}1 and {prefix}1000 (gaps in the sequence): not in the store: spins the sources never carried"
    assert want in notes, notes


def test_ids_stored_outside_the_window_are_not_missing_and_a_window_without_gaps_says_none(tmp_path, cli):
    """The late file holds ids 101-103 (stored after the window of --last 500): not missing; the last 500 spins have
    no gap of their own."""
    db = tmp_path / "s.duckdb"
    a = _log(tmp_path / "a.csv", [i for i in range(1, 1001) if not 101 <= i <= 103])
    b = _log(tmp_path / "b.csv", [101, 102, 103])
    assert cli("ingest", a, b, "--db", db, "--table", "T").exit_code == 0
    assert not any("gaps in the sequence" in n for n in _audit_notes(cli, db))
    assert not any("gaps in the sequence" in n for n in _audit_notes(cli, db, "--last", "500"))


def test_a_rejected_row_stored_no_id_and_the_note_says_so(tmp_path, cli):
    log = _log(tmp_path / "a.csv", range(1, 301), bad=(50,))
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "T").exit_code == 0
    notes = [n for n in _audit_notes(cli, db) if "gaps in the sequence" in n]
    assert len(notes) == 1 and notes[0].startswith("1 spin_id(s) missing between 1 and 300"), notes
    assert "rows rejected on ingest, which stored no spin id (1 rejected row(s) in this window's sources: see rngcert rejects)" in notes[0]


@pytest.mark.parametrize("ids,want", [
    (["R1", "R2", "R5"], (2, "R1", "R5")),
    (["R1", "R2", "Q5"], None),  # another prefix: labels
    (["R1", "R2", "R5", "RX"], None),  # the prefix and no number: labels (it counted as of the shape: a gap note)
    (["R1", "R2", "R5", "R-7"], None),  # another prefix (R-): labels
    (["R1", "R02", "R5"], None),  # a leading zero: a label
    (["T5-1", "T5-3"], None),  # not letters and a number
    (["1", "2", "R3"], None),  # two kinds
    (["7", "9", "10"], (1, "7", "10")),
    (["001", "002", "005"], (2, "1", "5")),  # leading zeros: whole numbers, as certify reads them
    (["001", "02", "0002", "005"], (2, "1", "5")),  # 02 and 0002 are one number
    (["001", "003", "2", "100"], (96, "1", "100")),  # 2 stored as such beside labels
])
def test_store_id_gaps_counts_only_ids_of_one_kind(tmp_path, cli, ids, want):
    from rngcert.collect.store import Store

    log = tmp_path / "a.csv"
    log.write_text("spin_id,result\n" + "\n".join(f"{s},{k}" for k, s in enumerate(ids)) + "\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "T").exit_code == 0
    with Store(db, read_only=True) as st:
        assert st.id_gaps("T", (0, 10**6)) == want


def test_a_log_without_spin_ids_has_no_id_gap_where_a_row_was_rejected(tmp_path, cli):
    """A log without a spin_id column is numbered by position on ingest (row k is spin k), a rejected row too: its number
    is no spin id missing (the audit said '1 spin_id(s) missing between 1 and 300 (gaps in the sequence)' of a log that
    has no spin ids, where certify of the log states no gap)."""
    log = tmp_path / "a.csv"
    log.write_text("result\n" + "\n".join("99" if i == 150 else str(i * 7 % 37) for i in range(1, 301)) + "\n")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", log, "--db", db, "--table", "T").exit_code == 0
    assert not any("gaps in the sequence" in n for n in _audit_notes(cli, db))


def test_ids_written_with_leading_zeros_have_their_gaps_stated(tmp_path, cli):
    """Ids written with leading zeros (``001`` to ``300``, as many controllers pad them) are whole numbers to certify,
    which states the gap; the store keeps ``001``-``099`` as labels beside ``100``-``300`` as numbers, and the audit said
    nothing. A number stored in both spellings (``050`` and ``50`` from another file) is counted once."""
    db = tmp_path / "s.duckdb"
    a = _log(tmp_path / "a.csv", [i for i in range(1, 301) if i not in (50, 150)])
    a.write_text("\n".join(ln if k == 0 else f"{int(ln.split(',')[0]):03d},{ln.split(',')[1]}" for k, ln in enumerate(a.read_text().splitlines())) + "\n")
    b = _log(tmp_path / "b.csv", [50, 7])
    assert cli("ingest", a, b, "--db", db, "--table", "T").exit_code == 0
    want = "1 spin_id(s) missing between 1 and 300 (gaps in the sequence)"
    assert any(n.startswith(want) for n in _audit_notes(cli, db)), _audit_notes(cli, db)
