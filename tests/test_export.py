"""`rngcert export --parquet DIR` and `rngcert ingest DIR` (issue 11, item 4): the spins as a
Parquet data set partitioned by table and day, readable by DuckDB and pyarrow (the readers Spark
and Dask use), and read back into a store with every spin, its provenance and the rejects, so an
audit of the copy equals an audit of the original. Runtime: about 10 s.
"""

from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.dataset as ds
from _support import run_cli

from rngcert.collect.store import Store
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.audit import audit_table
from rngcert.simulate.wheel import simulate_spins, write_spin_log

EU = load_wheel("european")


def make_store(tmp_path) -> Path:
    db = tmp_path / "orig.duckdb"
    a = tmp_path / "a.csv"
    sim = simulate_spins(EU, 6000, np.random.default_rng(1), dealers=3, void_rate=0.02, with_release=True)
    with open(a, "wb") as fh:
        write_spin_log(fh, EU, sim, table="T1")  # 6000 spins, 40 s apart from 2026-01-01: three days
    with open(a, "ab") as fh:
        fh.write(b"6001,2026-01-04T00:00:00Z,T1,D1,cw,3,3,false,=HYPERLINK(1)\n")  # rejected
    perm = tmp_path / "wiesbaden-9.txt"
    perm.write_text(" ".join(str(x) for x in np.random.default_rng(2).integers(0, 37, 3000)) + "\n")
    r = run_cli("ingest", a, perm, "--db", db)
    assert r.exit_code == 0, r.output
    return db


def test_export_layout_and_readers(tmp_path, cli):
    db = make_store(tmp_path)
    out = tmp_path / "exp"
    r = cli("export", "--db", db, "--parquet", out)
    assert r.exit_code == 0, r.output
    days = sorted(p.name for p in (out / "table_id=T1").iterdir())
    assert days == ["day=2026-01-01", "day=2026-01-02", "day=2026-01-03"]
    assert [p.name for p in (out / "table_id=wiesbaden-9").iterdir()] == ["day=__HIVE_DEFAULT_PARTITION__"]  # no timestamps
    man = json.loads((out / "_rngcert" / "manifest.json").read_text())
    r = cli("export", "--db", db, "--parquet", tmp_path / "again", "--json", "--table", "T1")
    assert r.exit_code == 0 and json.loads(r.output)["spins"] == 6000
    assert man["spins"] == 9000 and man["rejects"] == 1 and man["partitioning"] == ["table_id", "day"]
    con = duckdb.connect()
    rows = con.execute(f"SELECT table_id, count(*), count(DISTINCT day), sum(CASE WHEN void THEN 1 ELSE 0 END) FROM read_parquet('{out}/*/*/*.parquet', hive_partitioning = true) GROUP BY 1 ORDER BY 1").fetchall()
    with Store(db, read_only=True) as st:
        tabs = {t["table"]: t for t in st.tables()}
        sp = st.spins("T1")
    assert rows == [("T1", 6000, 3, tabs["T1"]["void"]), ("wiesbaden-9", 3000, 0, 0)]
    # results as labels, in spin order, with provenance
    got = con.execute(f"SELECT result, pos, spin_id, source_path, line FROM read_parquet('{out}/*/*/*.parquet', hive_partitioning = true) WHERE table_id = 'T1' ORDER BY seq").fetchall()
    labels = np.array(EU.position_space().labels, dtype=object)
    assert [g[0] for g in got if g[1] is not None] == list(labels[sp.pos[sp.pos >= 0]])
    assert got[0][2] == "1" and got[0][3].endswith("a.csv") and got[0][4] == 2
    # pyarrow's dataset reader (the one Dask uses) sees the same rows and partitions
    d = ds.dataset(str(out), format="parquet", partitioning="hive", exclude_invalid_files=True)
    assert d.count_rows() == 9000
    assert set(d.to_table(columns=["table_id"]).column("table_id").to_pylist()) == {"T1", "wiesbaden-9"}


def test_ingest_of_an_export_reproduces_the_store_and_its_audits(tmp_path, cli):
    db = make_store(tmp_path)
    out = tmp_path / "exp"
    assert cli("export", "--db", db, "--parquet", out).exit_code == 0
    copy = tmp_path / "copy.duckdb"
    r = cli("ingest", out, "--db", copy)
    assert r.exit_code == 0, r.output
    assert "store " + str(copy) + ": 9000 spins in 2 table(s)" in r.output
    cols = ", ".join(f"s.{c}" for c in ("table_id", "spin_no", "spin_label", "ts", "pos", "sym", "dealer", "direction", "release", "void", "line"))
    q = f"SELECT {cols}, src.sha256, src.path FROM spins s JOIN sources src USING (source_id) ORDER BY s.seq"
    with duckdb.connect(str(db), read_only=True) as c1, duckdb.connect(str(copy), read_only=True) as c2:
        assert c1.execute(q).fetchall() == c2.execute(q).fetchall()
        rq = 'SELECT file, line, "column", reason, text FROM rejects ORDER BY ALL'
        assert c1.execute(rq).fetchall() == c2.execute(rq).fetchall()
        sq = "SELECT path, sha256, format, rows, accepted, void, rejected, equipment FROM sources ORDER BY source_id"
        assert c1.execute(sq).fetchall() == c2.execute(sq).fetchall()
    for table in ("T1", "wiesbaden-9"):
        a = audit_table(db, table, seed=3, n_resamples=199, figures=False, outdir=None, record=False)
        b = audit_table(copy, table, seed=3, n_resamples=199, figures=False, outdir=None, record=False)
        pa_ = {t["name"]: t.get("pvalue") for t in a.report["tables"][0]["battery"]["tests"]}
        pb = {t["name"]: t.get("pvalue") for t in b.report["tables"][0]["battery"]["tests"]}
        assert pa_ == pb and a.verdict == b.verdict
        assert a.report["inputs"] == b.report["inputs"]
    # idempotent: the same folder again adds nothing
    r = cli("ingest", out, "--db", copy)
    assert r.exit_code == 0 and r.output.count("already ingested") == 2
    with Store(copy, read_only=True) as st:
        assert st.count_spins() == 9000


def test_export_refuses_a_non_empty_folder_and_ingest_a_plain_folder(tmp_path, cli):
    db = make_store(tmp_path)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x.txt").write_text("x")
    r = cli("export", "--db", db, "--parquet", busy)
    assert r.exit_code == 3 and "not an empty folder" in r.output
    r = cli("ingest", busy, "--db", tmp_path / "n.duckdb")
    assert r.exit_code == 3 and "rngcert export" in r.output
    r = cli("export", "--db", db, "--parquet", tmp_path / "one", "--table", "nope")
    assert r.exit_code == 3 and "not in store" in r.output


def small_store(tmp_path) -> Path:
    """A few hundred spins over two days of table S, then a re-export of part of it that adds no
    spin (duplicates, a conflict and two rejects), and a log with an in-file conflict."""
    db = tmp_path / "small.duckdb"
    a = tmp_path / "s1.csv"
    res = np.random.default_rng(7).integers(0, 37, 300)
    head = "spin_id,timestamp,table,result"
    t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    rows = [f"{i + 1},{(t0 + datetime.timedelta(minutes=6 * i)).isoformat().replace('+00:00', 'Z')},S,{x}" for i, x in enumerate(res)]
    a.write_text("\n".join([head] + rows) + "\n")  # 300 spins 6 min apart: two days
    k = 3

    def with_result(row, value):
        cells = row.split(",")
        cells[k] = value
        return ",".join(cells)

    b = tmp_path / "s2.csv"  # nothing new: 10 duplicates, 1 conflict, 2 rejected rows
    other = "0" if rows[10].split(",")[k] != "0" else "1"
    b.write_text("\n".join([head] + rows[:10] + [with_result(rows[10], other), with_result(rows[11], "99"), with_result(rows[12], "abc")]) + "\n")
    c = tmp_path / "s3.csv"  # one new spin, then the same spin_id again with another result (in-file conflict)
    new = rows[-1].split(",")
    new[0] = "9999"
    c.write_text("\n".join([head, ",".join(new), with_result(",".join(new), other if new[k] != other else "2")]) + "\n")
    r = run_cli("ingest", a, b, c, "--db", db)
    assert r.exit_code == 0, r.output
    with Store(db, read_only=True) as st:
        assert st.count_spins() == 301 and len(st.rejects()) == 2 and len(st.conflicts()) == 2
        assert [s["inserted"] for s in st.sources()] == [300, 0, 1]
    return db


def test_export_keeps_sources_rejects_and_conflicts_of_a_source_without_new_spins(tmp_path, cli):
    db = small_store(tmp_path)
    out = tmp_path / "exp"
    r = cli("export", "--db", db, "--parquet", out)
    assert r.exit_code == 0 and "from 3 source(s)" in r.output and "2 rejected row(s)" in r.output, r.output
    man = json.loads((out / "_rngcert" / "manifest.json").read_text())
    assert man["sources"] == 3 and man["rejects"] == 2 and man["conflicts"] == 2
    assert [p["spins"] for p in man["per_source"]] == [300, 0, 1]
    assert len((out / "_rngcert" / "sources.jsonl").read_text().splitlines()) == 3
    copy = tmp_path / "copy.duckdb"
    r = cli("ingest", out, "--db", copy)
    assert r.exit_code == 0, r.output
    sq = "SELECT path, sha256, rows, accepted, void, rejected, inserted, conflicts FROM sources ORDER BY source_id"
    rq = 'SELECT r.file, r.line, r."column", r.reason, r.text, s.sha256 FROM rejects r JOIN sources s USING (source_id) ORDER BY ALL'
    cq = """SELECT c.table_id, c.spin_id, c.stored_pos, c.stored_sym, c.stored_void, a.sha256, c.stored_line,
                   c.new_pos, c.new_sym, c.new_void, b.sha256, c.line
            FROM conflicts c JOIN sources a ON a.source_id = c.stored_source_id JOIN sources b ON b.source_id = c.source_id ORDER BY ALL"""
    pq_ = "SELECT s.table_id, s.spin_no, s.spin_label, s.ts, s.pos, s.void, s.line, src.sha256 FROM spins s JOIN sources src USING (source_id) ORDER BY s.seq"
    with duckdb.connect(str(db), read_only=True) as c1, duckdb.connect(str(copy), read_only=True) as c2:
        for q in (sq, rq, cq, pq_):
            assert c1.execute(q).fetchall() == c2.execute(q).fetchall(), q
        assert len(c2.execute(cq).fetchall()) == 2 and len(c2.execute(rq).fetchall()) == 2
    # the duplicates the original ingest counted are not rows of the store: the ingest says so
    with Store(tmp_path / "third.duckdb") as st:
        res = st.ingest_parquet(out)
    assert [x.duplicates for x in res] == [0, 0, 0]
    assert "counted 10 row(s) already stored" in res[1].note and "counted" not in res[0].note
    assert "counted 10 row(s) already stored" in res[1].summary()  # the line `rngcert ingest DIR` prints


def _export(tmp_path, name="exp"):
    db = small_store(tmp_path)
    out = tmp_path / name
    assert run_cli("export", "--db", db, "--parquet", out).exit_code == 0
    return out


def _refused(tmp_path, out, *words):
    new = tmp_path / "new.duckdb"
    r = run_cli("ingest", out, "--db", new)
    assert r.exit_code == 3, r.output
    for w in words:
        assert w in r.output, r.output
    with Store(new, read_only=True) as st:  # nothing stored
        assert st.count_spins() == 0 and st.sources() == [] and st.rejects() == []


def test_ingest_refuses_an_export_with_a_missing_partition(tmp_path):
    out = _export(tmp_path)
    days = sorted((out / "table_id=S").iterdir())
    assert len(days) == 2
    gone = days[0]
    n_gone = ds.dataset(str(gone), format="parquet").count_rows()
    shutil.rmtree(gone)
    _refused(tmp_path, out, "missing", str(gone))
    # also when the manifest's file list was edited to match: the spins per source and table disagree
    man = json.loads((out / "_rngcert" / "manifest.json").read_text())
    man["files"] = [f for f in man["files"] if not f["path"].startswith(gone.relative_to(out).as_posix())]
    (out / "_rngcert" / "manifest.json").write_text(json.dumps(man))
    _refused(tmp_path, out, "table S", f"{300 + 1 - n_gone} spins read, the manifest lists 301", "s1.csv")


def test_ingest_refuses_a_changed_data_file_or_metadata_file(tmp_path):
    out = _export(tmp_path)
    man = json.loads((out / "_rngcert" / "manifest.json").read_text())
    data = [f for f in man["files"] if f["path"].endswith(".parquet")]
    assert data and all(len(f["sha256"]) == 64 and f["rows"] > 0 for f in data)
    assert sum(f["rows"] for f in data) == man["spins"] == 301
    assert {f["path"] for f in man["files"]} >= {"_rngcert/sources.jsonl", "_rngcert/rejects.jsonl", "_rngcert/conflicts.jsonl"}
    victim = out / data[0]["path"]
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2: len(raw) // 2 + 16] = bytes(16)  # zeroed bytes inside the file
    victim.write_bytes(bytes(raw))
    _refused(tmp_path, out, "SHA-256", str(victim))
    # a truncated rejects list is refused as well (it would drop rejected rows silently)
    out2 = tmp_path / "exp2"
    with Store(tmp_path / "small.duckdb", read_only=True) as st:
        st.export_parquet(out2)
    rej = out2 / "_rngcert" / "rejects.jsonl"
    rej.write_text(rej.read_text().splitlines()[0] + "\n")
    _refused(tmp_path, out2, str(rej))
