"""The DuckDB store: idempotent, atomic ingest with provenance, rejects, conflicts, schema version.

Runtime budget: about 10 s (one SIGKILLed subprocess ingest of 200,000 rows and its rerun).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import duckdb
import numpy as np
import pytest
from _support import ingest_into

from rngcert.collect.spinlog import read_spin_log, sha256_of
from rngcert.collect.store import SCHEMA_VERSION, Store, StoreVersionError
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError
from rngcert.simulate.wheel import simulate_spins, write_spin_log

EU = load_wheel("european")
LABELS = list(EU.labels)


def csv_log(path, n, seed, *, first=0, header=True, mode="wb", table="T1"):
    sim = simulate_spins(EU, n, np.random.default_rng(seed), dealers=3, void_rate=0.02, first_spin=first)
    with open(path, mode) as fh:
        write_spin_log(fh, EU, sim, table=table, first_spin=first, header=header)
    return sim


def snapshot(db):
    """Everything a store holds, for before/after comparisons."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for t in ("sources", "spins", "rejects", "conflicts", "tables"):
            cols = "* EXCLUDE (ingested_utc)" if t == "sources" else ("* EXCLUDE (created_utc)" if t == "tables" else ("* EXCLUDE (detected_utc)" if t == "conflicts" else "*"))
            out[t] = con.execute(f"SELECT {cols} FROM {t} ORDER BY ALL").fetchall()
        return out
    finally:
        con.close()


def test_ingest_keeps_every_row_with_provenance(tmp_path):
    log = tmp_path / "a.csv"
    sim = csv_log(log, 500, 1)
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        (res,) = st.ingest([log])
        assert res.status == "ingested" and res.inserted == 500 and res.rejected == 0
        assert res.void == int(sim.void.sum())
        sp = st.spins("T1")
        src = st.sources()
    assert sp.n == 500
    np.testing.assert_array_equal(sp.pos, sim.positions)
    np.testing.assert_array_equal(sp.void, sim.void)
    assert sp.spin_id.to_pylist() == [str(i) for i in range(1, 501)]
    assert sp.dealer_labels == ["D1", "D2", "D3"]
    assert src[0]["sha256"] == sha256_of(log.read_bytes()) and src[0]["rows"] == 500
    con = duckdb.connect(str(db), read_only=True)
    lines = [r[0] for r in con.execute("SELECT line FROM spins ORDER BY seq").fetchall()]
    con.close()
    assert lines == list(range(2, 502))  # physical line of each spin (line 1 is the header)


def test_duplicate_ingest_adds_nothing(tmp_path):
    log = tmp_path / "a.csv"
    csv_log(log, 300, 2)
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([log])
    before = snapshot(db)
    with Store(db) as st:
        (res,) = st.ingest([log])
    assert res.status == "already ingested" and res.inserted == 0
    assert snapshot(db) == before
    # the same rows under another file name (copy): not a new source hash... but a copy with a
    # different byte (CRLF) is a new file whose rows are all duplicates
    copy = tmp_path / "b.csv"
    copy.write_bytes(log.read_bytes().replace(b"\n", b"\r\n"))
    with Store(db) as st:
        (res,) = st.ingest([copy])
        assert res.status == "ingested" and res.inserted == 0 and res.duplicates == 300 and res.conflicts == 0
        assert st.count_spins() == 300


def test_appended_log_adds_only_new_rows(tmp_path):
    log = tmp_path / "live.csv"
    sim1 = csv_log(log, 400, 3)
    db = tmp_path / "s.duckdb"
    ingest_into(db, log)
    sim2 = csv_log(log, 250, 4, first=400, header=False, mode="ab")
    with Store(db) as st:
        (res,) = st.ingest([log])
        assert (res.inserted, res.duplicates, res.conflicts) == (250, 400, 0)
        sp = st.spins("T1")
        assert len(st.sources()) == 2
    np.testing.assert_array_equal(sp.pos, np.concatenate([sim1.positions, sim2.positions]))
    assert np.all(np.diff(sp.seq) > 0)
    # the store's table equals certify's reading of the grown file
    t = read_spin_log(log, EU).tables["T1"]
    np.testing.assert_array_equal(sp.pos[~sp.void], t.outcomes)


def test_appended_permanence_list_numbered_by_position(tmp_path):
    p = tmp_path / "perm.txt"
    p.write_text("1,2,3\n4,5\n")
    db = tmp_path / "s.duckdb"
    (r1,) = ingest_into(db, p)
    assert r1.spin_id_rule == "position" and r1.tables == ["perm"]
    with open(p, "a") as fh:
        fh.write("6,7,8\n")
    with Store(db) as st:
        (r2,) = st.ingest([p])
        assert (r2.inserted, r2.duplicates) == (3, 5)
        sp = st.spins("perm")
    assert sp.spin_id.to_pylist() == [str(i) for i in range(1, 9)]
    assert [LABELS[i] for i in sp.pos] == [str(i) for i in range(1, 9)]


def test_permanence_title_line_is_counted_among_the_rows_of_the_ingest_c20(tmp_path):
    """Trial (break2), kind of c20: a permanence list with a title line at its end read in certify as
    "2001 rows: 2000 accepted, 1 rejected" but in ingest as "2000 rows → 2000 stored, 1 rejected":
    the counts did not add up. An export and its read-back keep the same count."""
    p = tmp_path / "perm.txt"
    p.write_text("1 2 3 4 5\n6 7 8 9 10\nSpielbank Tisch 1 19.04.2026\n")
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        (r,) = st.ingest([p])
        assert (r.rows, r.inserted, r.rejected) == (11, 10, 1)
        assert "11 rows → 10 new spins stored" in r.summary()
        st.export_parquet(tmp_path / "exp")
    with Store(tmp_path / "copy.duckdb") as st:
        (back,) = st.ingest_parquet(tmp_path / "exp")
    assert (back.rows, back.inserted, back.rejected) == (11, 10, 1)


def test_conflicting_rows_reported_not_overwritten(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("spin_id,table,result\n1,T,5\n2,T,7\n3,T,9\n")
    b = tmp_path / "b.csv"
    b.write_text("spin_id,table,result\n2,T,7\n3,T,10\n4,T,11\n4,T,12\n")
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([a])
        (res,) = st.ingest([b])
        assert res.inserted == 1 and res.duplicates == 1 and res.conflicts == 2
        sp = st.spins("T")
        conf = st.conflicts()
        stored = [r[0] for r in st.con.execute("SELECT pos FROM spins ORDER BY seq").fetchall()]
    assert [LABELS[i] for i in stored] == ["5", "7", "9", "11"]  # stored 9 never overwritten; first 4 stored
    # the rule of certify (c07): a spin id with two results is read back by neither result
    assert [LABELS[i] for i in sp.pos] == ["5", "7"] and sp.conflicted == 2
    got = sorted((c["spin_id"], LABELS[c["stored_pos"]], LABELS[c["new_pos"]], c["line"]) for c in conf)
    assert got == [("3", "9", "10", 3), ("4", "11", "12", 5)]
    assert res.conflict_sample[0]["stored"] == "9" and res.conflict_sample[0]["new"] == "10"


def test_unreadable_rows_go_to_rejects_once(tmp_path, cli):
    log = tmp_path / "bad.csv"
    log.write_text("spin_id,result,timestamp\n1,5,2026-01-01T00:00:00Z\n2,37,2026-01-01T00:01:00Z\n3,7,yesterday\n4,1,2,3\n5,0,2026-01-01T00:04:00Z\n")
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        (res,) = st.ingest([log])
        assert res.inserted == 2 and res.rejected == 3
        rej = st.rejects()
    got = {(r["line"], r["column"].split(" ")[0], r["reason"].split(" ")[0]) for r in rej}
    assert got == {(3, "result", "'37'"), (4, "timestamp", "timestamp"), (5, "*", "expected")}
    assert all(r["file"] == str(log) for r in rej)
    with open(log, "a") as fh:  # grown log re-reads its bad lines: stored once
        fh.write("6,abc,2026-01-01T00:05:00Z\n")
    with Store(db) as st:
        st.ingest([log])
        assert len(st.rejects()) == 4
    out = cli("rejects", "--db", db)
    assert out.exit_code == 0
    assert f"{log}:3: result (column 2):" in out.output and "'abc'" in out.output
    out = cli("rejects", "--db", db, "--csv")
    assert out.output.splitlines()[0] == "file,line,column,reason,text" and len(out.output.splitlines()) == 5


_KILL_SCRIPT = textwrap.dedent(
    """
    import sys, time
    import rngcert.collect.store as s
    if sys.argv[3] == "hook":
        def hook():
            print("PAUSED", flush=True)
            time.sleep(600)
        s.ingest._before_commit = hook
    print("START", flush=True)
    with s.Store(sys.argv[1]) as st:
        st.ingest([sys.argv[2]])
    print("DONE", flush=True)
    """
)


def _spawn(tmp_path, db, log, mode):
    script = tmp_path / "ingest_child.py"
    script.write_text(_KILL_SCRIPT)
    return subprocess.Popen([sys.executable, str(script), str(db), str(log), mode], stdout=subprocess.PIPE, text=True)


def test_sigkill_during_ingest_leaves_store_unchanged_and_rerun_completes_once(tmp_path):
    db = tmp_path / "s.duckdb"
    first = tmp_path / "first.csv"
    csv_log(first, 1000, 5, table="A")
    with Store(db) as st:
        st.ingest([first])
    before = snapshot(db)
    big = tmp_path / "big.csv"
    csv_log(big, 200_000, 6, table="B")
    # 1) killed (SIGKILL) at the last moment before COMMIT: every row is already inserted
    proc = _spawn(tmp_path, db, big, "hook")
    assert proc.stdout.readline().strip() == "START"
    assert proc.stdout.readline().strip() == "PAUSED"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert snapshot(db) == before
    # 2) killed at an arbitrary moment of a real ingest: before or after commit, never half
    proc = _spawn(tmp_path, db, big, "plain")
    assert proc.stdout.readline().strip() == "START"
    import time

    time.sleep(0.4)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    with Store(db) as st:
        n = st.count_spins()
        assert n in (1000, 201_000), n
        # 3) rerun completes it exactly once
        (res,) = st.ingest([big])
        assert st.count_spins() == 201_000
        assert res.status == ("already ingested" if n == 201_000 else "ingested")
        (res,) = st.ingest([big])
        assert res.status == "already ingested"
        assert st.count_spins() == 201_000
        assert [s["path"] for s in st.sources()] == [str(first), str(big)]
        assert st.count_spins("B") == 200_000


def test_schema_version_checked(tmp_path):
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        assert st.schema_version == SCHEMA_VERSION
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    con.close()
    with pytest.raises(StoreVersionError, match=rf"schema version {SCHEMA_VERSION + 1}.*reads schema versions up to {SCHEMA_VERSION}: upgrade rngcert"):
        Store(db)
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE foo (x INTEGER)")
    con.close()
    with pytest.raises(StoreVersionError, match="not an rngcert store"):
        Store(other)
    with pytest.raises(InputError, match="does not exist"):
        Store(tmp_path / "missing.duckdb", read_only=True)


def test_table_keeps_its_wheel_and_unknown_table(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("table,result\nX,5\nX,7\n")
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([p])
        q = tmp_path / "u.csv"
        q.write_text("table,result\nX,00\n")
        with pytest.raises(InputError, match="stored as wheel 'european'"):
            st.ingest([q], "american")
        assert st.count_spins() == 2
        with pytest.raises(InputError, match="not in store"):
            st.spins("Y")


def test_ingest_cli(tmp_path, cli):
    log = tmp_path / "a.csv"
    log.write_text("spin_id,result\n1,5\n2,5\n")
    b = tmp_path / "b.csv"
    b.write_text("spin_id,result\n2,6\n")
    db = tmp_path / "s.duckdb"
    r = cli("ingest", log, "--db", db, "--table", "T9")
    assert r.exit_code == 0 and "2 new spins stored" in r.output
    r = cli("ingest", log, b, "--db", db, "--table", "T9")
    assert r.exit_code == 0 and "already ingested" in r.output
    assert "conflict: table T9 spin 2: stored 5 (line 3), this file says 6 (line 2)" in r.output
    r = cli("ingest", tmp_path / "nope.csv", "--db", db)
    assert r.exit_code == 3 and "no such file" in r.output
    assert "Examples:" in cli("ingest", "--help").output


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "permanence"])
def test_every_certify_format_ingests_like_certify_reads_it(tmp_path, fmt):
    rng = np.random.default_rng(8)
    x = rng.integers(0, 37, 300)
    labels = [LABELS[i] for i in x]
    if fmt == "csv":
        p = tmp_path / "l.csv"
        p.write_text("spin_id,dealer,result,void\n" + "".join(f"{i + 1},D{i % 2},{lab},{'true' if i % 50 == 7 else 'false'}\n" for i, lab in enumerate(labels)))
    elif fmt == "jsonl":
        import json as _json

        p = tmp_path / "l.jsonl"
        p.write_text("".join(_json.dumps({"spin_id": i + 1, "dealer": f"D{i % 2}", "result": lab, "void": i % 50 == 7}) + "\n" for i, lab in enumerate(labels)))
    else:
        p = tmp_path / "l.txt"
        p.write_text("\n".join(",".join(labels[i : i + 10]) for i in range(0, 300, 10)) + "\n")
    with Store(tmp_path / "s.duckdb") as st:
        (res,) = st.ingest([p], table="L")
        sp = st.spins("L")
    (t,) = read_spin_log(p, EU).tables.values()
    np.testing.assert_array_equal(sp.pos[~sp.void], t.outcomes)
    assert res.inserted == 300 and res.rejected == 0
    assert int(sp.void.sum()) == t.void == (6 if fmt != "permanence" else 0)
    if fmt != "permanence":
        assert [sp.dealer_labels[c] for c in sp.dealer[:3]] == ["D0", "D1", "D0"]


def test_money_wheel_symbol_log_ingests_and_audits(tmp_path):
    from rngcert.pipeline.audit import audit_table

    mw = load_wheel("money-wheel-52")
    rng = np.random.default_rng(9)
    sym = np.array(mw.symbols)[rng.choice(len(mw.symbols), 2000, p=np.array(mw.symbol_counts) / 52)]
    p = tmp_path / "mw.csv"
    p.write_text("result\n" + "\n".join(sym) + "\n")
    with Store(tmp_path / "s.duckdb") as st:
        st.ingest([p], "money-wheel-52")
        sp = st.spins("mw")
        assert np.all(sp.pos == -1) and np.all(sp.sym >= 0)
        a = audit_table(st, "mw", seed=1, n_resamples=99, figures=False, outdir=None)
    c = __import__("rngcert.pipeline.certify_wheel", fromlist=["certify_log"]).certify_log([p], mw, seed=1, n_resamples=99, figures=False)
    assert a.report["level"] == "symbol"
    assert {t["name"]: t.get("pvalue") for t in a.report["tables"][0]["battery"]["tests"]} == {t["name"]: t.get("pvalue") for t in c.report["tables"][0]["battery"]["tests"]}


def test_tables_with_spins_are_the_tables_audit_all_audits(tmp_path):
    """``Store.tables_with_spins`` (one DISTINCT over a column) names exactly the tables that
    :meth:`Store.tables` counts a non-void spin for, in the same order: a table of void spins only
    is left out, names sort as the store sorts them (upper case, lower case, accents)."""
    log = tmp_path / "t.csv"
    rows = ["table,result,void"]
    for name in ("b-2", "B-10", "Ä1", "a1"):
        rows += [f"{name},{k % 37},false" for k in range(5)]
    rows += [f"only-void,{k},true" for k in range(4)]
    log.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with Store(tmp_path / "s.duckdb") as st:
        st.ingest([log])
        listed = st.tables()
        assert {t["table"] for t in listed} == {"b-2", "B-10", "Ä1", "a1", "only-void"}
        expected = [t["table"] for t in listed if t["spins"]]
        assert "only-void" not in expected and len(expected) == 4
        assert st.tables_with_spins() == expected
        # with their sizes (audit --all plans its work items from them): the same tables, in the same order
        assert st.tables_with_spins(counts=True) == {t["table"]: t["spins"] for t in listed if t["spins"]}
        assert list(st.tables_with_spins(counts=True)) == expected


def test_ingest_checks_spin_ids_without_a_python_call_per_id(tmp_path, monkeypatch):
    """Issue 26 item 4: the streamed ingest counted whole-number and text ids with one Python call
    of spinlog._id_value per distinct id (9.5 of 15.4 s for 1 M spins); now in one vectorised
    pass. The counts still send a file whose ids are partly whole numbers, partly text, to the
    exact path (where the text ids are rejected with their lines), and a clean file stores every row."""
    import rngcert.collect.spinlog.core as sl_core
    import rngcert.collect.spinlog.order as sl_order

    calls = []
    real = sl_core._id_value
    for mod in (sl_core, sl_order):  # the two modules of rngcert.collect.spinlog that call _id_value
        monkeypatch.setattr(mod, "_id_value", lambda t: calls.append(t) or real(t))
    clean = tmp_path / "clean.csv"
    csv_log(clean, 5000, 26)
    with Store(tmp_path / "a.duckdb") as st:
        (res,) = st.ingest([clean])
        assert res.inserted == 5000 and st.count_spins() == 5000
    assert len(calls) < 50
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("spin_id,table,result\n" + "".join(f"{i},T1,{i % 37}\n" for i in range(1, 201)) + "abc,T1,5\n007,T1,6\n")
    with Store(tmp_path / "b.duckdb") as st:
        (res,) = st.ingest([mixed])
        assert res.rejected == 1 and res.inserted == 201  # the exact path: 'abc' (line 202) rejected, the rest stored
        assert st.con.execute("SELECT line, text FROM rejects").fetchall() == [(202, "abc")]


@pytest.mark.parametrize("held", [0, 3000, 10**9])
def test_a_log_held_in_memory_or_spilled_is_stored_alike(tmp_path, monkeypatch, held):
    """Issue 26 item 4: a streamed log of up to _Spool.IN_MEMORY_ROWS rows is inserted from Arrow
    batches held in memory, a larger one from the Parquet spool (some batches held, then spilled):
    the store holds the same rows either way, in the same order."""
    import rngcert.collect.csvstream as cs
    from rngcert.collect import store as store_mod

    log = tmp_path / "log.csv"
    csv_log(log, 6000, 27)
    with Store(tmp_path / "ref.duckdb") as st:
        st.ingest([log])
    monkeypatch.setattr(cs, "BLOCK_SIZE", 64 << 10)  # several batches
    monkeypatch.setattr(store_mod.spool._Spool, "IN_MEMORY_ROWS", held)
    import tempfile

    (tmp_path / "t").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "t"))
    with Store(tmp_path / "x.duckdb") as st:
        (res,) = st.ingest([log])
        assert res.inserted == 6000 - res.duplicates - res.conflicts and res.status == "ingested"
    a, b = snapshot(tmp_path / "ref.duckdb"), snapshot(tmp_path / "x.duckdb")
    assert a["spins"] == b["spins"] and a["rejects"] == b["rejects"] and len(a["spins"]) > 5000
    assert not list((tmp_path / "t").iterdir())  # the spool's folder is removed, used or not
