"""A log of two tables read from an `export --table A` folder is in the store only in part: a later ingest of its whole
export, or of the log itself, is refused (exit 3, nothing stored), never taken for 'already ingested' with table B left out."""

from __future__ import annotations

import numpy as np
from _support import run_cli

from rngcert.collect.store import Store


def _multi(path):
    g = np.random.default_rng(9)
    with open(path, "w") as fh:
        fh.write("spin_id,table,result\n")
        for i in range(1, 301):
            fh.write(f"{i},A,{g.integers(0, 37)}\n{i},B,{g.integers(0, 37)}\n")



def _exported_table_a(tmp_path):
    """``(log, store)``: the two-table log ``multi.csv`` ingested into ``src.duckdb``, and table A of that store
    exported to ``exA``."""
    log = tmp_path / "multi.csv"
    _multi(log)
    src = tmp_path / "src.duckdb"
    assert run_cli("ingest", log, "--db", src).exit_code == 0
    assert run_cli("export", "--parquet", tmp_path / "exA", "--db", src, "--table", "A").exit_code == 0
    return log, src

def test_a_source_stored_in_part_is_not_already_ingested(tmp_path):
    log, src = _exported_table_a(tmp_path)
    assert run_cli("export", "--parquet", tmp_path / "exAll", "--db", src).exit_code == 0
    db = tmp_path / "copy.duckdb"
    assert run_cli("ingest", tmp_path / "exA", "--db", db).exit_code == 0
    assert run_cli("ingest", tmp_path / "exA", "--db", db).exit_code == 0  # the same part again: nothing added, no error
    for again in (tmp_path / "exAll", log):
        r = run_cli("ingest", again, "--db", db)
        assert r.exit_code == 3, (again, r.output)
        assert "only in part" in r.output and "table(s) A" in r.output
    with Store(db, read_only=True) as st:
        assert {t["table"]: t["spins"] for t in st.tables()} == {"A": 300}
    # the whole export, or the log, into a store of their own: both tables
    whole = tmp_path / "whole.duckdb"
    assert run_cli("ingest", tmp_path / "exAll", "--db", whole).exit_code == 0
    assert run_cli("ingest", tmp_path / "exA", "--db", whole).exit_code == 0  # a part of what is stored: nothing added
    assert run_cli("ingest", log, "--db", whole).exit_code == 0
    with Store(whole, read_only=True) as st:
        assert {t["table"]: t["spins"] for t in st.tables()} == {"A": 300, "B": 300}


def test_a_source_stored_in_part_stays_in_part_through_an_export_of_that_store(tmp_path):
    log, src = _exported_table_a(tmp_path)
    part = tmp_path / "part.duckdb"
    assert run_cli("ingest", tmp_path / "exA", "--db", part).exit_code == 0
    # the store holding table A of the log, exported whole and read into a third store: still A only of those bytes
    assert run_cli("export", "--parquet", tmp_path / "exPart", "--db", part).exit_code == 0
    third = tmp_path / "third.duckdb"
    assert run_cli("ingest", tmp_path / "exPart", "--db", third).exit_code == 0
    r = run_cli("ingest", log, "--db", third)
    assert r.exit_code == 3 and "only in part" in r.output, r.output
