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
from rngcert.pipeline.audit import audit_all
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
    with audit_mod._read_session(db, 0.0) as a:
        pass
    with audit_mod._read_session(db, 0.0) as b:
        pass
    assert a is not b
    with Store(db) as st:  # both closed: this process can write the store again
        assert st.tables_with_spins() == ["A"]
    monkeypatch.setattr(parallel, "_POOL_WORKER", True)
    monkeypatch.setattr(audit_mod, "_WORKER_SESSIONS", {})
    try:
        with audit_mod._read_session(db, 0.0) as c:
            pass
        with audit_mod._read_session(db, 0.0) as d:
            assert d.tables_with_spins() == ["A"]
        assert c is d and list(audit_mod._WORKER_SESSIONS) == [str(db)]
    finally:
        for st in audit_mod._WORKER_SESSIONS.values():
            st.close()


@pytest.mark.slow
def test_a_pool_worker_opens_the_store_once_and_the_audits_are_recorded_after_it(tmp_path, monkeypatch):
    """Every Store opened is logged with its process and mode (the patch is inherited by the forked workers):
    a worker opens one read-only session for all its tables, this process opens the store read-only once (the
    tables and their sizes) and for writing once (the records, in one transaction, after the workers ended).
    The reports and records equal a serial run's."""
    db = _store(tmp_path)
    serial_db = tmp_path / "serial.duckdb"
    serial_db.write_bytes(db.read_bytes())
    opens = tmp_path / "opens.txt"
    init = Store.__init__

    def logged(self, path, *a, read_only=False, **k):
        with open(opens, "a") as fh:
            fh.write(f"{os.getpid()} {'r' if read_only else 'w'} {path}\n")
        init(self, path, *a, read_only=read_only, **k)

    monkeypatch.setattr(Store, "__init__", logged)
    kw = dict(seed=3, n_resamples=99, figures=False)
    got = audit_all(db, plan=Plan(workers=2), outdir=tmp_path / "pool", **kw)
    rows = [ln.split() for ln in opens.read_text().splitlines()]
    here = [m for pid, m, _ in rows if int(pid) == os.getpid()]
    workers = [pid for pid, m, _ in rows if int(pid) != os.getpid()]
    assert here == ["r", "w"], rows
    assert workers and len(workers) == len(set(workers)) <= 2, rows  # one session a worker, not one a table
    assert all(m == "r" for pid, m, _ in rows if int(pid) != os.getpid())
    assert [r.audit_id for r in got] == [1, 2, 3, 4]
    opens.unlink()
    ref = audit_all(serial_db, plan=Plan(workers=1), outdir=tmp_path / "serial", **kw)
    serial = [ln.split()[1] for ln in opens.read_text().splitlines()]
    assert serial.count("r") == 1 + 4 and serial.count("w") == 4  # serially: a session a table, a record after each
    assert [r.report["tables"] for r in got] == [r.report["tables"] for r in ref]
    with Store(db, read_only=True) as a, Store(serial_db, read_only=True) as b:
        k = ("audit_id", "table_id", "verdict", "pvalues", "bias", "homogeneity", "n")
        assert [{x: r[x] for x in k} for r in a.audits()] == [{x: r[x] for x in k} for r in b.audits()]


@pytest.mark.slow
@pytest.mark.parametrize("start", ["forkserver"])
def test_the_workers_of_another_start_method_are_pool_workers_too(monkeypatch, start):
    monkeypatch.setenv(parallel.START_ENV, start)
    got = map_items(_where, range(2), plan=Plan(workers=2))
    assert all(w for w, _ in got)


def test_audit_starts_no_blas_worker_threads_unless_asked():
    """`rngcert audit` loads its command through rngcert.cli._audit, which asks for one BLAS thread before numpy
    loads (every statistic runs pinned to one anyway): no idle OpenBLAS workers spin beside the pool (0.1 CPU-s
    on 2 cores); a thread count the user set is kept."""
    probe = ("import json\nimport rngcert.cli._audit\nfrom threadpoolctl import threadpool_info\n"
             "print(json.dumps(sorted({i['num_threads'] for i in threadpool_info() if i['internal_api'] == 'openblas'})))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    for preset, want in ((None, [1]), ("2", [2])):
        e = dict(env, PYTHONPATH=str(ROOT), **({"OPENBLAS_NUM_THREADS": preset} if preset else {}))
        res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=e)
        got = json.loads(res.stdout.strip().splitlines()[-1])
        assert got in (want, []), (preset, got, res.stderr)  # [] : numpy without OpenBLAS (nothing to start)
    from rngcert.cli.app import COMMANDS

    assert COMMANDS["audit"] == "rngcert.cli._audit:audit"
