"""A spin id stored with two results is used by neither (README, the store): `rngcert export` says so in
the data itself (the ``conflict`` column on the stored row; the other result is in
``_rngcert/conflicts.jsonl``), so an outside reader counts with ``WHERE NOT conflict`` what audits
count; `rngcert ingest DIR` checks the column against conflicts.jsonl and stores the conflicts again
(issue 26, leftovers of the last stop)."""

from __future__ import annotations

import json

import duckdb
import pyarrow.parquet as pq
from _support import run_cli
from test_export import _refused, small_store

from rngcert.collect.store import Store
from rngcert.collect.store.export import _file_sha256


def _read(out) -> list[tuple]:
    con = duckdb.connect()
    return con.execute(f"SELECT table_id, spin_id, void, conflict FROM read_parquet('{out}/*/*/*.parquet', hive_partitioning = true) "
                       "ORDER BY table_id, seq").fetchall()


def _rewrite(out, change) -> None:
    """Apply ``change`` to every data file's table and put the new SHA-256 and rows in the manifest."""
    mp = out / "_rngcert" / "manifest.json"
    man = json.loads(mp.read_text())
    for f in man["files"]:
        if f["path"].endswith(".parquet"):
            p = out / f["path"]
            t = change(pq.read_table(p, partitioning=None))
            pq.write_table(t, p)
            f["sha256"], f["rows"] = _file_sha256(p), t.num_rows
    mp.write_text(json.dumps(man))


def test_export_marks_conflicted_spins_and_ingest_keeps_them(tmp_path):
    db = small_store(tmp_path)  # table S: spin 11 conflicts with a later file, spin 9999 within its file
    out = tmp_path / "exp"
    r = run_cli("export", "--db", db, "--parquet", out)
    assert r.exit_code == 0 and "2 conflict(s) in " in r.output and "conflict = true" in r.output, r.output
    rows = _read(out)
    assert len(rows) == 301 and sorted(r[1] for r in rows if r[3]) == ["11", "9999"]
    with Store(db, read_only=True) as st:
        sp = st.spins("S")
    used = sum(1 for r in rows if not r[2] and not r[3])
    assert sp.conflicted == 2 and used == int((~sp.void).sum()) == 299  # what an outside reader counts = what an audit uses
    copy = tmp_path / "copy.duckdb"
    r = run_cli("ingest", out, "--db", copy)
    assert r.exit_code == 0, r.output
    with Store(copy, read_only=True) as st:
        assert st.spins("S").conflicted == 2 and len(st.conflicts()) == 2
        st.export_parquet(tmp_path / "again")
    assert _read(tmp_path / "again") == rows  # round trip: the same rows, the same marks


def test_ingest_refuses_a_conflict_column_that_disagrees_with_conflicts_jsonl(tmp_path):
    import pyarrow as pa
    import pyarrow.compute as pc

    db = small_store(tmp_path)
    for name, change, words in (
        ("unmark", lambda t: t.set_column(t.schema.get_field_index("conflict"), "conflict", pa.array([False] * t.num_rows)),
         ["2 conflict(s)", "not marked conflict", "table S spin 11"]),
        ("mark", lambda t: t.set_column(t.schema.get_field_index("conflict"), "conflict",
                                        pc.or_(t.column("conflict"), pc.equal(t.column("spin_id"), "5"))),
         ["1 spin(s) marked conflict", "table S spin 5"]),
    ):
        out = tmp_path / name
        with Store(db, read_only=True) as st:
            st.export_parquet(out)
        before = _read(out)
        _rewrite(out, change)
        assert _read(out) != before  # the tampering took: only the conflict column differs
        assert [r[:3] for r in _read(out)] == [r[:3] for r in before]
        _refused(tmp_path, out, "damaged or incomplete export", *words)


def test_ingest_reads_a_format_2_export_without_the_column(tmp_path):
    db = small_store(tmp_path)
    out = tmp_path / "old"
    with Store(db, read_only=True) as st:
        st.export_parquet(out)
    _rewrite(out, lambda t: t.drop_columns(["conflict"]))
    mp = out / "_rngcert" / "manifest.json"
    man = json.loads(mp.read_text())
    assert man["rngcert_export"] == 3
    man["rngcert_export"] = 2
    mp.write_text(json.dumps(man))
    copy = tmp_path / "copy.duckdb"
    r = run_cli("ingest", out, "--db", copy)
    assert r.exit_code == 0, r.output
    with Store(copy, read_only=True) as st:
        assert st.spins("S").conflicted == 2 and st.count_spins() == 301
    man["rngcert_export"] = 3  # the same folder as format 3: the column is required
    mp.write_text(json.dumps(man))
    _refused(tmp_path, out, "no 'conflict' column")
