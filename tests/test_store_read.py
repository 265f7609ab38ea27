"""Store.spins reads a window in record batches into compact arrays (issue 11, item 1): the same
spins, order, dealer codes and window whatever the batch size, with int8/int16 per-spin columns."""

from __future__ import annotations

import numpy as np
import pytest

import rngcert.collect.store as store
from rngcert.collect.store import Store
from rngcert.pipeline.audit import prepare_audit


def _log(path, n, *, labels=False, disorder=False, seed=0):
    rng = np.random.default_rng(seed)
    lines = ["spin_id,timestamp,table,dealer,direction,release_pocket,void,result"]
    for i in range(n):
        sid = f"S{(i * 7919) % n:06d}" if labels else str(i + 1)
        t = i - 3 if disorder and i % 50 == 0 else i
        ts = f"2026-01-01T{(t // 3600) % 24:02d}:{(t // 60) % 60:02d}:{t % 60:02d}Z"
        d = "" if i % 7 == 0 else ["ann", "bob", "cy"][rng.integers(3)]
        dr = ["cw", "ccw", ""][rng.integers(3)]
        rel = "" if rng.random() < 0.3 else str(rng.integers(37))
        lines.append(f"{sid},{ts},T1,{d},{dr},{rel},{int(rng.random() < 0.03)},{rng.integers(37)}")
    path.write_text("\n".join(lines) + "\n")


def _read(db, **kw):
    with Store(db, read_only=True) as st:
        s = st.spins("T1", **kw)
        t = prepare_audit(st, "T1")["log"].tables["T1"]
    arrays = {k: None if v is None else np.asarray(v).copy() for k, v in vars(s).items() if isinstance(v, np.ndarray) or v is None}
    return s, arrays, t


@pytest.mark.parametrize("kind", ["plain", "labels", "disorder", "labels-disorder"])
def test_spins_in_batches_of_any_size(tmp_path, monkeypatch, kind):
    log = tmp_path / "log.csv"
    _log(log, 700, labels="labels" in kind, disorder="disorder" in kind)
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([log])
    for kw in ({}, {"last": 200}, {"with_ids": False}, {"after_seq": 50, "before_seq": 600}):
        s1, a1, t1 = _read(db, **kw)
        monkeypatch.setattr(store.queries, "READ_BATCH", 7)
        s2, a2, t2 = _read(db, **kw)
        monkeypatch.setattr(store.queries, "READ_BATCH", 1 << 20)
        assert a1.keys() == a2.keys()
        for k in a1:
            assert (a1[k] is None and a2[k] is None) or np.array_equal(a1[k], a2[k]), k
        assert s1.dealer_labels == s2.dealer_labels and s1.source_ids == s2.source_ids
        assert s1.spin_id.to_pylist() == s2.spin_id.to_pylist()
        assert (s1.pos.dtype, s1.release.dtype, s1.direction.dtype, s1.dealer.dtype) == (np.int16, np.int16, np.int8, np.int8)
        for name in ("outcomes", "release", "dealer", "direction"):
            assert np.array_equal(getattr(t1, name), getattr(t2, name)) and getattr(t1, name).dtype == np.int8
        if kw.get("with_ids", True):
            assert len(s1.spin_id) == s1.n
        if kind == "labels-disorder" and not kw:
            assert np.any(np.diff(s1.seq) < 0)  # text ids: reordered by timestamp
        if kind == "disorder" and not kw:  # whole-number ids: spin-id order, as certify (c18); the time going back is its finding
            assert np.all(np.diff(s1.seq) > 0) and s1.order_finding["evidence"]["backward_steps"] == 14


@pytest.mark.parametrize("kind", ["plain", "labels", "disorder"])
def test_audit_read_without_per_spin_keys_is_the_same_window(tmp_path, monkeypatch, kind):
    """An audit reads its window with keys=False: no seq or ts per spin (16 bytes a spin), only
    their ranges. Every other column, the order (sorted by timestamp when out of order) and the
    ranges are those of the read with keys, in batches of any size."""
    log = tmp_path / "log.csv"
    _log(log, 700, labels=kind == "labels", disorder=kind == "disorder")
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        st.ingest([log])
    for batch in (1 << 20, 7):
        monkeypatch.setattr(store.queries, "READ_BATCH", batch)
        for kw in ({}, {"last": 200}, {"after_seq": 50, "before_seq": 600}):
            with Store(db, read_only=True) as st:
                full, lean = st.spins("T1", with_ids=False, **kw), st.spins("T1", with_ids=False, keys=False, **kw)
            for name in ("pos", "sym", "release", "direction", "dealer", "void"):
                assert np.array_equal(getattr(full, name), getattr(lean, name)), name
            assert lean.n == full.n and lean.dealer_labels == full.dealer_labels and lean.source_ids == full.source_ids
            assert full.seq_range == lean.seq_range == (int(full.seq.min()), int(full.seq.max()))
            assert full.ts_range == lean.ts_range == (int(full.ts.min()), int(full.ts.max()))
            if "last" in kw:
                assert lean.seq is not None  # a window cut by `last` keeps its keys (its ranges are the kept spins')
            else:
                assert lean.seq is None and lean.ts is None
