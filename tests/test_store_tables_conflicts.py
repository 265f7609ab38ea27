"""``Store.tables()`` counts what audits use: a spin id stored with two results (a conflict) is used by
neither, so it is not among a table's ``spins``/``void`` but counted apart (``conflicted``), beside the
stored rows (``stored_spins``/``stored_void``); ``tables_with_spins`` agrees; `rngcert ingest` says how many
stored spins are conflicted (issue 26, leftovers of the last stop)."""

from __future__ import annotations

import json

from _support import run_cli

from rngcert.collect.store import Store


def _store(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("spin_id,table,result,void\n" + "".join(f"{i},A,{i},false\n" for i in range(1, 6)) + "6,A,,true\n7,A,,true\n1,B,4,false\n")
    b.write_text("spin_id,table,result,void\n3,A,30,false\n6,A,5,false\n1,B,9,false\n2,A,2,false\n")  # conflicts: A3, A6 (void), B1; A2 again
    db = tmp_path / "s.duckdb"
    r = run_cli("ingest", a, b, "--db", db)
    assert r.exit_code == 0, r.output
    return db, r.output


def test_tables_count_what_audits_use_and_what_is_stored(tmp_path):
    db, out = _store(tmp_path)
    assert f"store {db}: 8 spins in 2 table(s) (3 of them stored under a spin_id with another result as well: audits use neither)" in out
    with Store(db, read_only=True) as st:
        tabs = {t["table"]: t for t in st.tables()}
        sp = st.spins("A")
        assert (tabs["A"]["spins"], tabs["A"]["void"], tabs["A"]["conflicted"], tabs["A"]["stored_spins"], tabs["A"]["stored_void"]) == (4, 1, 2, 5, 2)
        assert tabs["A"]["spins"] == int((~sp.void).sum()) and tabs["A"]["void"] == int(sp.void.sum()) and sp.conflicted == 2  # as an audit reads it
        assert (tabs["B"]["spins"], tabs["B"]["void"], tabs["B"]["conflicted"], tabs["B"]["stored_spins"]) == (0, 0, 1, 1)
        assert st.count_spins() == sum(t["stored_spins"] + t["stored_void"] for t in tabs.values()) == 8
        assert st.tables_with_spins() == [t for t, v in tabs.items() if v["spins"]] == ["A"]  # B's only spin is a conflict
    r = run_cli("ingest", tmp_path / "a.csv", "--db", db, "--json")
    assert r.exit_code == 0 and json.loads(r.output)["store_conflicted"] == 3


def test_export_manifest_counts_the_rows_of_the_data(tmp_path):
    db, _ = _store(tmp_path)
    out = tmp_path / "exp"
    with Store(db, read_only=True) as st:
        man = st.export_parquet(out)
    t = {x["table_id"]: x for x in man["tables"]}
    assert (t["A"]["spins"], t["A"]["void"], t["A"]["conflicted"], t["B"]["spins"], t["B"]["conflicted"]) == (5, 2, 2, 1, 1)
    copy = tmp_path / "copy.duckdb"
    r = run_cli("ingest", out, "--db", copy)
    assert r.exit_code == 0, r.output
    with Store(copy, read_only=True) as st:
        assert [(x["table"], x["spins"], x["void"], x["conflicted"]) for x in st.tables()] == [("A", 4, 1, 2), ("B", 0, 0, 1)]
