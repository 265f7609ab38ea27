"""Constant-memory reading (issue 11): the streamed, compact paths give exactly the results of
the exact paths, whatever the batch size.

* ``certify``: a log read in many tiny record batches and in one batch gives the same report
  statistics; a log in the usual shape takes the compact path (int8 arrays) and equals the exact
  path; a log with repeats, rejects and several tables falls back to the exact path and still
  equals the one-batch read.
* ``ingest``: the Parquet spool of a streamed CSV stores the same rows, rejects, conflicts and
  source counts as the in-memory path.
"""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pytest

import rngcert.collect.csvstream as csvstream
import rngcert.collect.spinlog as spinlog
import rngcert.collect.spinlog.read as spinlog_read  # where read_spin_log looks up _read_spin_log_compact
import rngcert.collect.store as store
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.certify_wheel import certify_log

EU = load_wheel("european")


def _write_log(path, *, n=1300, oddities=True, seed=3):
    """A 9-column log of two tables (interleaved), voids, and with ``oddities``: unreadable
    results, a row with a field too many, a blank line, an exact duplicate, a conflict and a gap."""
    rng = np.random.default_rng(seed)
    lines = ["spin_id,timestamp,table,dealer,direction,release_pocket,revolutions,void,result"]
    ids = {"T1": 0, "T2": 100}
    for i in range(n):
        t = "T1" if rng.random() < 0.6 else "T2"
        ids[t] += 1
        if oddities and t == "T2" and i == 700:
            ids[t] += 3  # a gap
        ts = f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z"
        rev = "2" if rng.random() < 0.02 else str(rng.integers(3, 9))
        res = str(rng.integers(0, 37))
        if oddities and rng.random() < 0.01:
            res = rng.choice(["", "37", "x"])
        row = f"{ids[t]},{ts},{t},D{rng.integers(1, 4)},{rng.choice(['cw', 'ccw'])},{rng.integers(0, 37)},{rev},false,{res}"
        lines.append(row)
        if oddities and i == 300:
            lines.append(row)  # exported twice: an exact duplicate
        if oddities and i == 900:
            lines.append(row.rsplit(",", 1)[0] + ",17" if not row.endswith(",17") else row[:-2] + "18")  # a conflict
        if oddities and i == 1100:
            lines.append(row + ",extra")
            lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


def _stats(cert) -> str:
    r = cert.report
    keep = {k: r[k] for k in ("rows", "rejected_count", "rejected_sample", "verdict", "notes")}
    keep["inputs"] = [{k: v for k, v in s.items() if k != "path"} for s in r["inputs"]]
    keep["tables"] = r["tables"]
    return json.dumps(keep, sort_keys=True, default=str)


def _certify(path, monkeypatch, block):
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", block)
    return certify_log([path], EU, seed=7, n_resamples=99, figures=False)


@pytest.mark.parametrize("oddities", [True, False])
def test_certify_tiny_batches_equal_one_batch(tmp_path, monkeypatch, oddities):
    log = _write_log(tmp_path / "spins.csv", oddities=oddities)
    one = _certify(log, monkeypatch, 1 << 30)
    many = _certify(log, monkeypatch, 600)  # about ten rows a batch: hundreds of batches
    assert _stats(many) == _stats(one)
    rep = one.report
    if oddities:
        assert rep["rows"]["rejected"] >= 8 and rep["rows"]["void"] > 0
        text = json.dumps(rep["tables"])
        assert "exact duplicate" in text and "conflicting results" in text and "missing" in text
    assert [t["table"] for t in rep["tables"]] == ["T1", "T2"]


def _snapshot(log) -> list:
    out = [log.level, [s.to_dict() for s in log.sources], [r.to_dict() for r in log.rejected], list(log.notes)]
    for name, t in log.tables.items():
        out.append([name, t.void, list(t.notes), t.dealer_labels]
                   + [None if a is None else a.astype(np.int64).tolist() for a in (t.outcomes, t.release, t.dealer, t.direction)])
    return out


def _exact(*a, **k):
    raise spinlog._NeedExact("forced by the test")


@pytest.mark.parametrize("pool", [False, True])
def test_compact_path_equals_exact_path(tmp_path, monkeypatch, pool, compact_reads):
    """A log in the usual shape (ids increasing per table, times in order, one blank line and a
    bad result) is read on the compact path (small integer arrays) and equals the exact path."""
    log = _write_log(tmp_path / "a.csv", oddities=False)
    text = log.read_text().splitlines()
    text.insert(50, "")
    text[80] = text[80].rsplit(",", 1)[0] + ",99"  # rejected, with line and reason
    log.write_text("\n".join(text) + "\n")
    other = _write_log(tmp_path / "b.csv", n=500, oddities=False, seed=4)
    other.write_text(other.read_text().replace(",T1,", ",T3,").replace(",T2,", ",T4,"))
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 700)
    taken = compact_reads
    fast = spinlog.read_spin_log([log, other], EU, pool=pool)
    # pooled, the tables' ids interleave: their gaps cannot be proven from runs, the exact path reads it
    assert taken == ([] if pool else ["compact"])
    assert all(t.outcomes.dtype == np.int8 and t.dealer.dtype == np.int8 for t in fast.tables.values())
    monkeypatch.setattr(spinlog_read, "_read_spin_log_compact", _exact)
    slow = spinlog.read_spin_log([log, other], EU, pool=pool)
    assert _snapshot(fast) == _snapshot(slow)
    assert any(r.line == 81 and "99" in r.reason for r in fast.rejected)


def test_usual_shape_broken_late_falls_back(tmp_path, monkeypatch):
    """A timestamp that goes back in the last batch: the compact read is abandoned and the exact
    path sorts and says so."""
    log = _write_log(tmp_path / "a.csv", n=1500, oddities=False)
    lines = log.read_text().splitlines()
    lines[-1] = lines[-1].replace("2026-01-01T", "2025-12-31T")
    log.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 800)
    got = spinlog.read_spin_log([log], EU)
    monkeypatch.setattr(spinlog_read, "_read_spin_log_compact", _exact)
    assert _snapshot(got) == _snapshot(spinlog.read_spin_log([log], EU))
    # with spin ids, id order is the order: the clock going back is a data-integrity finding (c18)
    assert any(f["name"] == "time_order" for t in got.tables.values() for f in t.findings)


def _dump(db) -> list:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [
            con.execute("SELECT table_id, spin_no, spin_label, seq, ts, pos, sym, dealer, direction, release, void, source_id, line FROM spins ORDER BY seq").fetchall(),
            con.execute("SELECT * EXCLUDE (ingested_utc, rngcert) FROM sources ORDER BY source_id").fetchall(),
            con.execute("SELECT * FROM rejects ORDER BY ALL").fetchall(),
            con.execute("SELECT * EXCLUDE (detected_utc) FROM conflicts ORDER BY ALL").fetchall(),
        ]
    finally:
        con.close()


@pytest.mark.parametrize("oddities", [True, False])
def test_ingest_spool_equals_in_memory(tmp_path, monkeypatch, oddities):
    log = _write_log(tmp_path / "spins.csv", oddities=oddities)
    grown = tmp_path / "grown.csv"
    grown.write_text(log.read_text() + log.read_text().splitlines()[-1].replace(",T", ",T", 1) + "\n")
    spooled = []
    real = store.ingest._prepare_streamed

    def spy(*a, **k):
        out = real(*a, **k)
        spooled.append(out is not None)
        return out

    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 900)
    monkeypatch.setattr(store.ingest, "_prepare_streamed", spy)
    store.ingest_files(tmp_path / "s.duckdb", [log, grown])
    assert spooled == [True, True]
    assert not list(tmp_path.glob("rngcert-ingest-*"))
    monkeypatch.setattr(store.ingest, "_prepare_streamed", lambda *a, **k: None)
    store.ingest_files(tmp_path / "m.duckdb", [log, grown])
    assert _dump(tmp_path / "s.duckdb") == _dump(tmp_path / "m.duckdb")


@pytest.mark.parametrize("oddities", [True, False])
def test_read_threads_give_the_serial_read(tmp_path, monkeypatch, oddities):
    """Batches turned into spins on two threads while the next is parsed: the same log (rows,
    rejects with their lines, notes, every per-spin array) as one thread, on hundreds of batches,
    on the compact path and on the exact path it falls back to."""
    log = _write_log(tmp_path / "spins.csv", n=2500, oddities=oddities)
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 700)
    got = {}
    for threads in (1, 2):
        monkeypatch.setattr(csvstream, "read_threads", lambda t=threads: t)
        got[threads] = _snapshot(spinlog.read_spin_log([log], EU))
    assert got[1] == got[2]
    assert (len(got[1][2]) >= 8) == oddities  # the rejects are there (or not) in both


def test_ordered_map_keeps_order_bounds_flight_and_raises_at_its_batch():
    import threading
    import time

    live, peak, lock = [0], [0], threading.Lock()

    def work(i):
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.002 * (i % 3))
        with lock:
            live[0] -= 1
        if i == 7:
            raise ValueError("batch 7")
        return i * i

    seen = []
    assert csvstream.ordered_map(work, [(i,) for i in range(7)], seen.append, threads=2) == [None] * 7
    assert seen == [i * i for i in range(7)] and peak[0] <= 2
    seen.clear()
    with pytest.raises(ValueError, match="batch 7"):
        csvstream.ordered_map(work, [(i,) for i in range(20)], seen.append, threads=2)
    assert seen == [i * i for i in range(7)]  # everything before the failing batch, in order, and nothing after
    assert csvstream.ordered_map(work, [(i,) for i in range(5)], threads=1) == [0, 1, 4, 9, 16]
