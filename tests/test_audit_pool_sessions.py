"""`audit --all` on the local pool: each worker opens the store's read-only session once, for all its
tables, and it ends with the worker, before the audits are recorded (issue 26 item 6: 0.03 CPU-s a table
saved). Serially, and after a pool failed, every table still opens and closes its own session, so a
serial run can record each audit between tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rngcert.collect.store import Store
from rngcert.pipeline import audit as audit_mod
from rngcert.pipeline import parallel
from rngcert.pipeline.parallel import Plan, in_pool_worker, map_items

ROOT = Path(__file__).resolve().parents[1]


def _where(_):
    return in_pool_worker(), os.getpid()


def _store(tmp_path, tables=("A", "B", "C", "D"), n=400):
    path = tmp_path / "log.csv"
    rng = np.random.default_rng(7)
    lines = ["spin_id,table,result"]
    for t in tables:
        lines += [f"{i},{t},{x}" for i, x in enumerate(rng.integers(0, 37, n), 1)]
    path.write_text("\n".join(lines) + "\n")
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([path])
    return db


def test_in_pool_worker_is_true_only_in_the_workers_of_the_local_pool():
    assert not in_pool_worker()
    got = map_items(_where, range(4), plan=Plan(workers=2))
    assert all(w for w, _ in got) and os.getpid() not in {p for _, p in got}
    assert map_items(_where, range(3), plan=Plan(workers=1)) == [(False, os.getpid())] * 3
    assert not in_pool_worker()  # (this process is never marked)


def test_read_session_is_kept_in_a_pool_worker_and_closed_at_once_elsewhere(tmp_path, monkeypatch):
    db = _store(tmp_path, tables=("A",), n=50)
    with audit_mod._read_session(db, 0.0) as (a, _):
        pass
    with audit_mod._read_session(db, 0.0) as (b, _):
        pass
    assert a is not b
    with Store(db) as st:  # both closed: this process can write the store again
        assert st.tables_with_spins() == ["A"]
    monkeypatch.setattr(parallel, "_POOL_WORKER", True)
    monkeypatch.setattr(audit_mod, "_WORKER_SESSIONS", {})
    monkeypatch.setattr(audit_mod, "SESSION_SPINS", 100)
    try:
        with audit_mod._read_session(db, 0.0) as (c, served):
            served(60)
        with audit_mod._read_session(db, 0.0) as (d, served):
            assert d.tables_with_spins() == ["A"]
            served(60)
        assert c is d and list(audit_mod._WORKER_SESSIONS) == [str(db)]
        # 120 spins served, more than SESSION_SPINS: closed (DuckDB's cached blocks released) and opened afresh
        with audit_mod._read_session(db, 0.0) as (e, served):
            served(10)
        assert e is not d and audit_mod._WORKER_SESSIONS[str(db)] == [e, 10]
        with pytest.raises(Exception):
            d.tables_with_spins()  # (the old one is closed)
    finally:
        audit_mod._close_session(str(db))
    assert audit_mod._WORKER_SESSIONS == {}


#: Run in a fresh interpreter (a test that left a thread running would make the pool start by forkserver, where the
#: patch below is not inherited): every Store opened is logged with its process and mode, then audit --all runs.
_PROBE = """
import json, os, sys
from rngcert.collect.store import Store
from rngcert.pipeline.audit import audit_all
from rngcert.pipeline.parallel import Plan
log, db, workers, out = sys.argv[1:5]
init = Store.__init__
def logged(self, path, *a, read_only=False, **k):
    with open(log, "a") as fh:
        fh.write(f"{os.getpid()} {'r' if read_only else 'w'}\\n")
    init(self, path, *a, read_only=read_only, **k)
Store.__init__ = logged
got = audit_all(db, plan=Plan(workers=int(workers)), outdir=out, seed=3, n_resamples=99, figures=False)
print(json.dumps({"pid": os.getpid(), "ids": [r.audit_id for r in got], "tables": [r.report["tables"] for r in got]}))
"""


def _probe(tmp_path, db, workers):
    log = tmp_path / f"opens-{workers}.txt"
    res = subprocess.run([sys.executable, "-c", _PROBE, str(log), str(db), str(workers), str(tmp_path / f"out-{workers}")],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    return got, [ln.split() for ln in log.read_text().splitlines()]


@pytest.mark.slow
def test_a_pool_worker_opens_the_store_once_and_the_audits_are_recorded_after_it(tmp_path):
    """A worker opens one read-only session for all its tables; this process opens the store read-only once (the
    tables and their sizes) and for writing once (the records, in one transaction, after the workers ended).
    Serially every table opens its own session and each record its own write session. Reports and records equal."""
    db = _store(tmp_path)
    serial_db = tmp_path / "serial.duckdb"
    serial_db.write_bytes(db.read_bytes())
    got, rows = _probe(tmp_path, db, 2)
    here = [m for pid, m in rows if int(pid) == got["pid"]]
    workers = [pid for pid, m in rows if int(pid) != got["pid"]]
    assert here == ["r", "w"], rows
    assert workers and len(workers) == len(set(workers)) <= 2, rows  # one session a worker, not one a table
    assert all(m == "r" for pid, m in rows if int(pid) != got["pid"])
    assert got["ids"] == [1, 2, 3, 4]
    ref, rows = _probe(tmp_path, serial_db, 1)
    assert {int(pid) for pid, _ in rows} == {ref["pid"]}
    serial = [m for _, m in rows]
    assert serial.count("r") == 1 + 4 and serial.count("w") == 4  # serially: a session a table, a record after each
    assert got["tables"] == ref["tables"] and ref["ids"] == [1, 2, 3, 4]
    with Store(db, read_only=True) as a, Store(serial_db, read_only=True) as b:
        k = ("audit_id", "table_id", "verdict", "pvalues", "bias", "homogeneity", "n")
        assert [{x: r[x] for x in k} for r in a.audits()] == [{x: r[x] for x in k} for r in b.audits()]


@pytest.mark.slow
@pytest.mark.parametrize("start", ["forkserver"])
def test_the_workers_of_another_start_method_are_pool_workers_too(monkeypatch, start):
    monkeypatch.setenv(parallel.START_ENV, start)
    got = map_items(_where, range(2), plan=Plan(workers=2))
    assert all(w for w, _ in got)


def test_audit_is_loaded_through_the_module_that_sets_one_blas_thread():
    from rngcert.cli.app import COMMANDS

    assert COMMANDS["audit"] == "rngcert.cli._audit:audit"  # (tests/test_cli_lazy.py checks its BLAS threads)


@pytest.mark.slow
def test_record_audits_in_few_statements_writes_the_rows_and_types_that_record_audit_writes(tmp_path):
    """record_audits (audit --all's one transaction) inserts its records in multi-row statements, 100 audits and
    200 test rows a statement: 120 records of mixed value types (None beside numbers, whole-number and
    fractional df, text and missing windows) give, row for row and type for type, what record_audit gives one
    after the other, across the statements' boundaries."""
    import datetime as dt

    rng = np.random.default_rng(26)

    def rec(i):
        return {"table_id": f"T{i}", "equipment": "european", "created_utc": dt.datetime(2026, 12, 3, 22, 0, i % 60, 1000 * i),
                "since": "2026-06-01" if i % 3 == 0 else None, "until": None, "last_n": int(i * 7) if i % 2 else None,
                "first_seq": i, "last_seq": 10 * i + 9, "first_ts": "2026-06-01T00:00:00" if i % 4 else None, "last_ts": None, "n": 10 * i,
                "void": i % 5, "verdict": ["PASS", "SUSPECT", "FAIL"][i % 3], "seed": str(10 ** 30 + i), "alpha": 0.01, "n_resamples": 9999,
                "report_path": f"/r/{i}/report.json" if i % 7 else None, "pvalues": '{"chi_square": 0.5}', "bias": "{}", "homogeneity": "{}",
                "report_sha256": "ab" * 32}

    def battery_rows(i):
        out = []
        for k in range(int(rng.integers(0, 21))):
            out.append({"name": f"t{k}", "requirement": "r", "applicable": bool(k % 4), "statistic": None if k % 5 == 0 else float(rng.normal()),
                        "df": [None, 36, 36.5, 1][k % 4], "pvalue": float(rng.random()), "pvalue_holm": None if k % 3 else 1.0,
                        "method": "exact" if k % 2 else None, "reason": None if k % 4 else "too few spins"})
        return out

    records = [(rec(i), battery_rows(i)) for i in range(1, 121)]
    assert sum(len(t) for _, t in records) > 200
    with Store(tmp_path / "a.duckdb") as a, Store(tmp_path / "b.duckdb") as b:
        earlier = battery_rows(0)
        a.record_audit(rec(0), earlier)  # (an earlier audit: the ids go on from it)
        b.record_audit(rec(0), earlier)
        one_by_one = [a.record_audit(r, t) for r, t in records]
        together = b.record_audits(records)
        assert one_by_one == together == list(range(2, 122))
        for table in ("audits", "audit_tests"):
            q = f"SELECT * EXCLUDE (rngcert) FROM {table} ORDER BY rowid" if table == "audits" else f"SELECT * FROM {table} ORDER BY rowid"
            assert a.con.execute(q).fetchall() == b.con.execute(q).fetchall()
            assert a.con.execute(f"DESCRIBE {table}").fetchall() == b.con.execute(f"DESCRIBE {table}").fetchall()
        assert a.audits() == b.audits()
