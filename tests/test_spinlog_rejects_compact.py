"""The rows repeated spin ids reject on the compact path are kept compact (issue 26, item 3: a 10^8-spin
log with every 1,000th row twice peaked at 1,507 MB, 101,000 rejects kept as objects with their reasons):
the same rows, reasons and order as the exact path, as a sequence, in under 150 bytes a row."""

from __future__ import annotations

import gc
import pickle
import tracemalloc

import numpy as np

import rngcert.collect.spinlog as spinlog
import rngcert.collect.spinlog.read as spinlog_read
from rngcert.collect.spinlog.rejects import RejectedRows
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")


def _log(path, n=6000, seed=4):
    """Ids in order; every 50th row exported twice, every 700th again with another result, a bad row."""
    rng = np.random.default_rng(seed)
    res = rng.integers(0, 37, n)
    rows = []
    for i in range(n):
        rows.append(f"{1000 + i},{res[i]}")
        if i % 50 == 49:
            rows.append(f"{1000 + i},{res[i]}")
        if i % 700 == 3:
            rows.append(f"{1000 + i},{(res[i] + 1) % 37}")
        if i == 2500:
            rows.append(f"{1000 + i},x")
    path.write_text("spin_id,result\n" + "\n".join(rows) + "\n")


def _exact(*a, **k):
    raise spinlog._NeedExact("forced by the test")


def test_compact_repeat_rejects_equal_the_exact_path(tmp_path, monkeypatch):
    p = tmp_path / "rep.csv"
    _log(p)
    fast = spinlog.read_spin_log([p], EU)
    with monkeypatch.context() as m:
        m.setattr(spinlog_read, "_read_spin_log_compact", _exact)
        slow = spinlog.read_spin_log([p], EU)
    assert isinstance(fast.rejected, RejectedRows) and isinstance(slow.rejected, list)
    assert len(fast.rejected) == len(slow.rejected) == 120 + 2 * 9 + 1
    assert list(fast.rejected) == slow.rejected and fast.rejected == slow.rejected
    assert fast.rejected[:10] == slow.rejected[:10] and fast.rejected[-1] == slow.rejected[-1] and fast.rejected[7] == slow.rejected[7]
    assert fast.rejected[5:-5] == slow.rejected[5:-5] and fast.rejected[::7] == slow.rejected[::7]  # (plain and compact rows mixed)
    assert [r.to_dict() for r in fast.rejected] == [r.to_dict() for r in slow.rejected]
    assert any(r.reason.startswith("conflict:") for r in fast.rejected) and any(r.text == "x" and "result" in r.column for r in fast.rejected)
    assert [s.to_dict() for s in fast.sources] == [s.to_dict() for s in slow.sources]
    assert pickle.loads(pickle.dumps(fast.rejected)) == slow.rejected  # (a log sent to a worker)
    assert fast.rejected + [] == slow.rejected and [] + fast.rejected == slow.rejected


def test_compact_repeat_rejects_are_small(tmp_path):
    """Under 150 bytes a rejected row kept (objects with their reasons took about 340)."""
    p = tmp_path / "rep.csv"
    _log(p, n=60_000)
    tracemalloc.start()
    try:
        log = spinlog.read_spin_log([p], EU)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        n = len(log.rejected)
        log.rejected = None
        gc.collect()
        kept = before - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert n == 1200 + 2 * 86 + 1
    assert kept / n < 150, kept / n
