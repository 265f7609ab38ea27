"""The throughput reformulations of issue 26 item 2 give the numbers of the direct computation:
each fast formula against a per-spin one, on several seeds and edge cases (n = 2, one pocket only,
several tables, tiny spans)."""

from __future__ import annotations

import numpy as np
import pytest

from rngcert.stats import chunks
from rngcert.stats.serial import lag_pair_counts, serial_correlation
from rngcert.stats.tally import SpinTally

SEEDS = (1, 2, 3, 11)


def _direct_lag_pairs(x, k, h):
    out = np.zeros((k, k), dtype=np.int64)
    if x.size > h:
        np.add.at(out, (x[h:], x[:-h]), 1)  # [later, earlier]
    return out.reshape(k * k)


def _sequences(seed, k=37):
    rng = np.random.default_rng(seed)
    walk = (np.cumsum(rng.integers(-1, 2, 5_000)) % k).astype(np.int8)
    return [rng.integers(0, k, 3_001).astype(np.int8), walk, np.full(500, 5, dtype=np.int8),
            np.array([3, 4], dtype=np.int8), np.array([7], dtype=np.int8), np.zeros(0, dtype=np.int8)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("chunk", [None, 1, 7, 4096])
def test_lag_pair_counts_against_direct(seed, chunk, monkeypatch):
    if chunk is not None:
        monkeypatch.setattr(chunks, "CHUNK", chunk)
    k = 37
    for x in _sequences(seed, k):
        lags = [1, 2, 3, 5, 10, 12]
        t = SpinTally.of(x, k)
        for kw in ({}, {"counts": t.counts, "pairs": t.pairs}):
            c, p = lag_pair_counts(x, k, lags, **kw)
            np.testing.assert_array_equal(c, np.bincount(x.astype(np.intp), minlength=k))
            for h in lags:
                np.testing.assert_array_equal(p[h], _direct_lag_pairs(x.astype(np.intp), k, h), err_msg=f"lag {h}, n={x.size}")


@pytest.mark.parametrize("seed", SEEDS)
def test_serial_correlation_with_tally_is_bit_identical(seed):
    for k in (37, 38, 5):
        rng = np.random.default_rng(seed)
        x = (np.cumsum(rng.integers(-1, 2, 20_000)) % k).astype(np.int8)
        x[::4] = rng.integers(0, k, x[::4].size)
        t = SpinTally.of(x, k)
        a = serial_correlation(x, k)
        b = serial_correlation(x, k, counts=t.counts, pairs=t.pairs)
        assert (a.statistic, a.pvalue, a.details) == (b.statistic, b.pvalue, b.details)


def test_lookup_is_a_gather():
    from rngcert.stats.chunks import lookup, narrow

    rng = np.random.default_rng(5)
    for k in (1, 2, 37, 38, 256):
        for table in (rng.integers(-1, 2, k).astype(np.int8), rng.integers(0, 2, k).astype(bool), rng.integers(0, 200, k).astype(np.uint8),
                      rng.integers(-1, 2, k), rng.normal(size=k)):
            for x in (rng.integers(0, k, 1000).astype(np.int8 if k <= 128 else np.uint8), rng.integers(0, k, 1000),
                      np.zeros(0, dtype=np.int8), np.array([k - 1], dtype=np.uint8)):
                got = lookup(table, x)
                assert got.dtype == table.dtype
                np.testing.assert_array_equal(got, table[x])
        nt = narrow(rng.integers(-1, 2, k))
        assert nt.dtype == np.int8
    assert narrow(np.array([0, 300])).dtype != np.int8


def _direct_runs(b):
    b = b[b >= 0]
    if b.size == 0:
        return (0, 0, 0)
    changes = sum(1 for i in range(1, b.size) if b[i] != b[i - 1])
    return (1 + changes, int(np.sum(b == 0)), int(np.sum(b == 1)))


@pytest.mark.parametrize("seed", SEEDS)
def test_tally_of_bytes_equals_tally_of_int64(seed):
    """The 1-byte fast path of SpinTally.of (int32 pair keys, translated partitions) against the intp
    path and a per-spin count of runs, with partitions that leave spins out (-1)."""
    rng = np.random.default_rng(seed)
    k = 37
    parts = {"colour": rng.integers(-1, 2, k), "parity": np.r_[-1, np.arange(1, k) % 2], "one": np.zeros(k, dtype=np.int64)}
    for x in (rng.integers(0, k, 2_000), np.zeros(300, dtype=np.int64), np.array([3, 4]), np.array([0]), np.zeros(0, dtype=np.int64)):
        a = SpinTally.of(x.astype(np.int8), k, partitions=parts)
        b = SpinTally.of(x.astype(np.int64), k, partitions=parts)
        assert a == b
        np.testing.assert_array_equal(a.pairs.ravel(), _direct_lag_pairs(x, k, 1).reshape(k, k).T.ravel())
        for name, part in parts.items():
            rt = a.runs.get(name)
            assert (rt.runs, rt.n0, rt.n1) == _direct_runs(part[x]), name
