"""Independent work items on Dask (issue 11, item 3): a multi-table certify, audit --all and
bits --streams m give, on a 2-worker local cluster, exactly the report of the serial run with the
same seed (whole report.json minus its timestamp, command line and paths; figures byte for byte).

One 2-worker LocalCluster serves the module (passed as --scheduler ADDRESS, the path of an
existing cluster); one test lets `--workers 2` start its own local pool. Runtime: about 60-90 s on 2 cores.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from _support import run_cli

from rngcert.collect.store import Store
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError
from rngcert.pipeline.certify_wheel import certify_log
from rngcert.pipeline.parallel import Plan, describe, iter_items, map_items
from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log

pytestmark = pytest.mark.slow

EU = load_wheel("european")
# the integrity block hashes the whole report (timestamp and command line included) and the HTML
# (which prints them): it differs with them, so it is compared through everything else
VOLATILE = ("generated_utc", "command", "rejects_file", "integrity")


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR, scheduler_port=0,
                     scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"})
    yield c.scheduler_address
    c.close()


def multi_table_log(path: Path) -> Path:
    """Four tables of a live-dealer export, one of them biased, with dealers and release pockets.
    T1 is large enough (20,000 spins) for OpenBLAS to split a dot product over threads: without one
    BLAS thread per work item, the serial run (2 threads) and a worker (1) could differ in the last
    bits of a statistic summed by BLAS (serial_correlation was one until it was computed from lag-pair
    counts)."""
    with open(path, "wb") as fh:
        for k, (table, n, bias) in enumerate([("T1", 20000, WheelBias()), ("T2", 2500, WheelBias(sectors=((4, 5, 1.8),))), ("T3", 1200, WheelBias()), ("T4", 40, WheelBias())]):
            sim = simulate_spins(EU, n, np.random.default_rng(k), bias=bias, dealers=3, with_release=True, void_rate=0.01)
            write_spin_log(fh, EU, sim, table=table, header=k == 0)
    return path


def stable(report: dict) -> dict:
    out = {k: v for k, v in report.items() if k not in VOLATILE}
    files = (report.get("integrity") or {}).get("files", {})
    out["input_and_rejects_hashes"] = {k: v for k, v in files.items() if not k.startswith("report.")}
    return out


def run_json(*args) -> dict:
    r = run_cli(*args)
    assert r.exit_code in (0, 10, 11, 12), r.output[-3000:]
    return json.loads(r.output)


def test_multi_table_certify_on_dask_equals_serial(tmp_path, cluster):
    log = multi_table_log(tmp_path / "casino.csv")
    # --min-bias 3: T2 (2,500 spins, a planted sector) FAILs instead of being held INCONCLUSIVE by the default +50% (issue 23)
    common = ["certify", log, "--seed", 7, "--resamples", 499, "--min-bias", 3, "--json"]
    serial = run_json(*common, "--workers", 1, "--out", tmp_path / "s")
    dask = run_json(*common, "--scheduler", cluster, "--out", tmp_path / "d")
    assert [t["table"] for t in serial["tables"]] == ["T1", "T2", "T3", "T4"]
    assert {t["battery"]["verdict"] for t in serial["tables"]} >= {"FAIL", "INCONCLUSIVE"}  # the comparison covers a rejection and a too-small table
    assert stable(serial) == stable(dask)
    # the figures, byte for byte (PNG drawn on the workers)
    a = certify_log([log], EU, seed=7, n_resamples=499, plan=Plan(workers=1), required_bias=3.0)
    b = certify_log([log], EU, seed=7, n_resamples=499, plan=Plan(scheduler=cluster), required_bias=3.0)
    assert [[f.png_base64 for f in figs] for figs in a.figures] == [[f.png_base64 for f in figs] for figs in b.figures]
    assert sum(len(f) for f in a.figures) >= 12


def test_certify_with_workers_2_starts_its_own_cluster_and_equals_serial(tmp_path):
    log = multi_table_log(tmp_path / "casino.csv")
    common = ["certify", log, "--seed", 8, "--resamples", 199, "--no-plots", "--json"]
    assert stable(run_json(*common, "--workers", 1, "--out", tmp_path / "s")) == stable(run_json(*common, "--workers", 2, "--out", tmp_path / "d"))


def test_bits_streams_on_dask_equal_serial(tmp_path, cluster):
    common = ["bits", "--source", "philox", "--streams", 12, "--length", 20000, "--seed", 3, "--json", "--no-plots"]
    serial = run_json(*common, "--workers", 1, "--out", tmp_path / "s")
    dask = run_json(*common, "--scheduler", cluster, "--out", tmp_path / "d")
    assert serial["tables"][0]["two_level"]["m"] == 12
    assert stable(serial) == stable(dask)


def test_bits_from_a_file_on_dask_equal_serial(tmp_path, cluster):
    """A raw dump: the streams travel packed (8 bits a byte) to the workers."""
    from rngcert.simulate.sources import generate_bits

    dump = tmp_path / "dump.bin"
    dump.write_bytes(np.packbits(generate_bits("pcg64", 8 * 20001, seed=5)).tobytes())
    common = ["bits", dump, "--format", "binary", "--streams", 8, "--length", 20001, "--json", "--no-plots"]
    assert stable(run_json(*common, "--workers", 1, "--out", tmp_path / "s")) == stable(run_json(*common, "--scheduler", cluster, "--out", tmp_path / "d"))


def test_audit_all_on_dask_equals_serial(tmp_path, cluster, cli):
    """Two copies of one store, audited with --all serially and on the cluster: the same reports
    (each table read by its own worker from the store) and the same audit records, in table order."""
    log = multi_table_log(tmp_path / "casino.csv")
    one = tmp_path / "one.duckdb"
    with Store(one) as st:
        st.ingest([log])
    two, three = tmp_path / "two.duckdb", tmp_path / "three.duckdb"
    shutil.copy(one, two)
    shutil.copy(one, three)
    args = ["--seed", "4", "--resamples", "199", "--all"]
    r1 = cli("audit", "--db", one, "--workers", "1", "--out", tmp_path / "r1", *args)
    r2 = cli("audit", "--db", two, "--scheduler", cluster, "--out", tmp_path / "r2", *args)
    # a local cluster: each worker writes its own table's report
    r3 = cli("audit", "--db", three, "--workers", "2", "--out", tmp_path / "r3", *args)
    assert r1.exit_code == r2.exit_code == r3.exit_code and r1.exit_code in (0, 10, 11, 12), r1.output + r2.output + r3.output
    # the workers' read sessions and the client's records never wait on each other (recorded after the last table)
    assert not any("held by another process" in r.output for r in (r1, r2, r3)), r2.output + r3.output

    def reports(d):
        out = {}
        for p in sorted(Path(d).glob("*/report.json")):
            rep = json.loads(p.read_text())
            out[rep["tables"][0]["table"]] = {k: v for k, v in stable(rep).items() if k != "notes"} | {
                "notes": [n.replace(str(one), "STORE").replace(str(two), "STORE") for n in rep["notes"]]
            }
        return out

    def stable_notes(d):
        return {t: dict(r, notes=[n.replace(str(three), "STORE") for n in r["notes"]]) for t, r in reports(d).items()}

    a, b, c = reports(tmp_path / "r1"), reports(tmp_path / "r2"), stable_notes(tmp_path / "r3")
    assert sorted(a) == ["T1", "T2", "T3", "T4"] and a == b == c
    with Store(one, read_only=True) as s1, Store(two, read_only=True) as s2, Store(three, read_only=True) as s3:
        k = ("audit_id", "table_id", "verdict", "pvalues", "bias", "homogeneity", "n", "first_seq", "last_seq")
        assert [{x: r[x] for x in k} for r in s1.audits()] == [{x: r[x] for x in k} for r in s2.audits()] == [{x: r[x] for x in k} for r in s3.audits()]
        assert [r["table_id"] for r in s1.audits()] == ["T1", "T2", "T3", "T4"]
        assert all(r["report_sha256"] for r in s3.audits())  # the workers' reports are the ones recorded


def test_shuffle_tables_in_batches_on_dask_equal_serial(tmp_path, cluster, cli):
    """`shuffle certify --shoes N`: the simulated tables are work items of TABLE_BATCH tables (batch
    0 from the plain stream key, so up to TABLE_BATCH tables nothing changes); the tables, and the
    whole report, are the same on a 2-worker cluster as serially."""
    from rngcert.equipment.procedure import load_procedure
    from rngcert.pipeline.certify_shuffle import _simulate
    from rngcert.simulate.procedure import TABLE_BATCH, simulate_batch, simulate_tables, table_batches

    proc = load_procedure("baccarat-004")
    n = TABLE_BATCH + 37
    assert table_batches(n) == [(0, TABLE_BATCH), (1, 37)]
    serial = simulate_tables(proc, n, 9, burn_in=1)
    dask = _simulate(proc, n, 9, burn_in=1, plan=Plan(scheduler=cluster))
    for f in ("first_after", "before", "after", "after_rotated", "before_unseen"):
        assert np.array_equal(getattr(serial, f), getattr(dask, f)), f
    one = simulate_batch(proc, 0, 50, 9, burn_in=1)  # batch 0 is the plain key: a small run is one pass
    assert np.array_equal(one.after, simulate_tables(proc, 50, 9, burn_in=1).after)
    args = ["shuffle", "certify", "baccarat-004", "--shoes", str(n), "--burn-in", "2", "--seed", "3", "--no-plots", "--json", "--no-sensitivity"]
    a = cli(*args, "--workers", "1", "--out", tmp_path / "s")
    b = cli(*args, "--scheduler", cluster, "--out", tmp_path / "d")
    assert a.exit_code in (0, 10, 11, 12) and b.exit_code == a.exit_code, b.output[-2000:]
    ra, rb = (json.loads(r.output[r.output.index("{"):]) for r in (a, b))
    assert stable(ra) == stable(rb)


def test_forked_audit_workers_import_nothing_that_the_client_could_have(tmp_path, monkeypatch):
    """`audit --all` on a local pool: the client imports what an item needs (the certification, the
    report writers, pandas) before it forks the workers, so no worker imports them again (each
    would pay about 0.4 CPU-s). Checked in a fresh process, through the timings file."""
    import subprocess
    import sys

    log = multi_table_log(tmp_path / "casino.csv")
    db = tmp_path / "one.duckdb"
    with Store(db) as st:
        st.ingest([log])
    timings = tmp_path / "t.jsonl"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]), RNGCERT_TIMINGS=str(timings))
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    r = subprocess.run([sys.executable, "-m", "rngcert", "audit", "--db", str(db), "--all", "--workers", "2", "--seed", "4",
                        "--resamples", "199", "--no-record", "--out", str(tmp_path / "r")], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode in (0, 10, 11, 12), r.stderr[-2000:]
    rec = next(json.loads(ln) for ln in timings.read_text().splitlines() if json.loads(ln)["func"] == "_audit_item")
    assert rec["mode"] == "local pool" and rec["start_method"] == "fork" and rec["workers"] == 2
    heavy = [m for m in rec["worker_imports"] if m.split(".")[0] in ("rngcert", "pandas", "jinja2", "scipy", "duckdb", "numpy")]
    assert heavy == [], heavy


def test_shuffle_sensitivity_grid_points_are_work_items_equal_to_serial(tmp_path, monkeypatch):
    """The sensitivity grid's points (each trained, simulated and tested) run on a local pool of 2 forked
    workers: the grid is that of the serial run (where the grid's tracker edges are floats, not None).
    Four of the 32 points (two clumps x two riffle counts), 100 tables each, so that the test stays short."""
    from rngcert.equipment.procedure import load_procedure
    from rngcert.pipeline.certify_shuffle.procedure import _sensitivity

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    proc = load_procedure("baccarat-004")
    kw = dict(tables=100, alpha=0.01, threshold=0.0, n_resamples=199, standard="edge", bj_rules=None,
              clumps=(1.0, 4.0), travels=(0.15,), riffles=(1, 2))
    serial = _sensitivity(proc, 3, plan=Plan(workers=1), **kw)
    timings = tmp_path / "t.jsonl"
    monkeypatch.setenv("RNGCERT_TIMINGS", str(timings))
    pooled = _sensitivity(proc, 3, plan=Plan(workers=2), **kw)
    rows = serial["rows"]
    assert len(rows) == 4 and any(r["edge"] is not None for r in rows)
    assert pooled == serial
    rec = [json.loads(ln) for ln in timings.read_text().splitlines()]
    assert [(r["mode"], r["workers"]) for r in rec if r["func"] == "_sensitivity_point"] == [("local pool", 2)]


def _fails(x):
    if x == 2:
        raise InputError("item 2 is bad")
    return x * x


def test_worker_errors_keep_their_type_and_results_keep_item_order(cluster):
    assert map_items(_fails, [0, 1, 3, 4], plan=Plan(scheduler=cluster)) == [0, 1, 9, 16]
    with pytest.raises(InputError, match="item 2 is bad"):
        map_items(_fails, [0, 1, 2, 3], plan=Plan(scheduler=cluster))


def test_pinned_blas_makes_a_blas_statistic_independent_of_threads():
    """The reason for pinned(): numpy.dot over 20,000 values can give other last bits with 2 BLAS
    threads (the shuffle trackers' products are BLAS calls)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from rngcert.pipeline.parallel import pinned

    x = np.random.default_rng(1).standard_normal((2, 20_000))
    with threadpool_limits(limits=1):
        one = float(np.dot(x[0], x[1]))
    with pinned():
        assert float(np.dot(x[0], x[1])) == one
        assert all(d["num_threads"] == 1 for d in threadpool_info())


def test_one_item_and_workers_1_stay_serial(monkeypatch):
    t: dict = {}
    assert map_items(abs, [-3], plan=Plan(), timings=t) == [3] and t["mode"] == "serial" and t["start_s"] == 0.0
    t = {}
    assert list(iter_items(abs, [-1, -2], plan=Plan(workers=1), timings=t)) == [(0, 1), (1, 2)] and t["mode"] == "serial"
    assert describe(Plan(workers=1), 5) == "5 work item(s), serial in one process"
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://10.9.8.7:8786")
    assert Plan().address == "tcp://10.9.8.7:8786"
    # an explicit worker count beats the environment: --workers 1 is serial here, --workers 2 a local pool
    assert Plan(workers=1).serial and Plan(workers=1).address is None and Plan(workers=2).address is None
    assert describe(Plan(workers=1), 3) == "3 work item(s), serial in one process"
    assert "local pool of 2" in describe(Plan(workers=2), 3)
    assert Plan(workers=1, scheduler="tcp://10.0.0.1:8786").address == "tcp://10.0.0.1:8786"
    assert "tcp://10.9.8.7:8786" in describe(Plan(), 3)
    with pytest.raises(InputError, match="tcp://HOST:PORT"):
        Plan(scheduler="10.9.8.7:8786")
    with pytest.raises(InputError):
        Plan(workers=0)
    os.environ.pop("DASK_SCHEDULER_ADDRESS", None)


def test_a_local_pool_that_does_not_start_falls_back_to_serial(monkeypatch, tmp_path, cli):
    """A fork refused (no memory, a process limit) is not an error: the items then run serially,
    with the same results and a warning, never an internal error (exit 1)."""
    from rngcert.pipeline.parallel import ClusterFallbackWarning

    def refuse():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    # the module's Dask client left its IO thread here (which would make the pool use a fork server): a command has none
    monkeypatch.setattr("rngcert.pipeline.parallel._python_threads", lambda: 1)
    monkeypatch.setattr(os, "fork", refuse)
    t: dict = {}
    with pytest.warns(ClusterFallbackWarning, match="Resource temporarily unavailable"):
        assert map_items(_fails, [0, 1, 3], plan=Plan(workers=2), timings=t) == [0, 1, 9]
    assert t["mode"].startswith("serial") and t["workers"] == 1
    with pytest.warns(ClusterFallbackWarning), pytest.raises(InputError, match="item 2 is bad"):
        map_items(_fails, [0, 2], plan=Plan(workers=2))  # an item's own error keeps its type
    log = multi_table_log(tmp_path / "mt.csv")
    r = cli("certify", log, "--seed", "5", "--no-plots", "--resamples", "99", "--workers", "2", "--out", tmp_path / "fb", "--json")
    assert r.exit_code in (0, 10, 11, 12), r.output[-2000:]
    assert "rngcert: warning: the local worker pool did not start (BlockingIOError: [Errno 11] Resource temporarily unavailable)" in r.output
    serial = run_json("certify", log, "--seed", "5", "--no-plots", "--resamples", "99", "--workers", "1", "--out", tmp_path / "s", "--json")
    fell_back = json.loads(r.output[r.output.index("{"):])
    assert stable(fell_back) == stable(serial)


def test_bits_exact_null_laws_are_work_items_after_the_streams(monkeypatch):
    """The two-level analysis's exact null laws (5 CPU-s at n = 10**6) that are not on disk are computed on
    the workers, as work items of a run after the streams' (every stream on the workers, none here first),
    and give the serial run's report."""
    import rngcert.pipeline.certify_bits as cb
    from rngcert.simulate.sources import generate_bits

    monkeypatch.setenv("RNGCERT_CACHE", "off")  # laws on disk from an earlier run would be read, not scheduled
    streams = generate_bits("pcg64", 4000, seed=11, streams=4)
    seen = []

    def fake_map(func, items, *, plan=None, progress=None, **kw):  # runs the items here, in order
        items = list(items)
        seen.append((func.__name__, len(items)))
        out = [func(it) for it in items]
        for i, r in enumerate(out):
            if progress:
                progress(i, r)
        return out

    serial = cb.certify_streams(streams, source={"generator": "pcg64"}, figures=False, plan=Plan(workers=1))
    monkeypatch.setattr(cb, "map_items", fake_map)
    ticks = []
    par = cb.certify_streams(streams, source={"generator": "pcg64"}, figures=False, plan=Plan(workers=2),
                             progress=lambda done, total: ticks.append(done))
    assert [f for f, _ in seen] == ["_stream_item", "_law_item"] and seen[0][1] == 4 and seen[1][1] >= 5  # 6 laws at n = 4000
    assert ticks == [1, 2, 3, 4]  # the progress bar counts streams, not laws
    a, b = serial.report["tables"][0], par.report["tables"][0]
    assert a["two_level"] == b["two_level"] and a["battery"] == b["battery"]
