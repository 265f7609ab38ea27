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


def _colour_cases(seed):
    rng = np.random.default_rng(seed)
    p = [1 / 37, 18 / 37, 18 / 37]
    return [rng.choice(3, size=4_000, p=p), rng.choice(3, size=1_000, p=[0.3, 0.35, 0.35]), np.array([1, 1]), np.array([1, 2]), np.array([0, 0]),
            np.array([2]), np.zeros(0, dtype=np.int64), np.full(300, 1), np.r_[np.full(40, 2), 0, np.full(50, 1)], np.r_[0, np.full(20, 1), 0]]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("chunk", [None, 1, 5, 64])
def test_colour_runs_equal_rage_rounds_and_longest_run(seed, chunk, monkeypatch):
    """ColourRuns, read span by span, against rage_rounds (whole sequence) and the longest-run scan."""
    from rngcert.stats.rage import rage_rounds
    from rngcert.stats.runs import _longest_colour_run, colour_runs

    if chunk is not None:
        monkeypatch.setattr(chunks, "CHUNK", chunk)
    colour = np.array([2, 0, 1])  # position 0 zero, 1 red, 2 black: positions are the 3-class codes
    for seq3 in _colour_cases(seed):
        x = seq3.astype(np.int8)
        cr = colour_runs(x, colour)
        rr = rage_rounds(colour[x])
        assert cr.n == x.size
        np.testing.assert_array_equal(cr.round_counts, np.bincount(rr["run_lengths"], minlength=15))
        assert (cr.red, cr.black) == (rr["by_colour"]["red"], rr["by_colour"]["black"])
        assert (cr.censored, cr.first_run) == (rr["censored"], rr["first_run"])
        assert (cr.longest, cr.colour, cr.start) == _longest_colour_run([x])


@pytest.mark.parametrize("seed", SEEDS)
def test_rage_tests_on_counts_are_bit_identical(seed):
    from rngcert.equipment.paytables import rage_run_length_law
    from rngcert.stats.rage import rage_returns, rage_returns_counts, rage_rounds, rage_run_length_test, rage_run_length_test_counts

    law = np.asarray(rage_run_length_law(18 / 37, 14), dtype=float)
    nets = {"a": np.r_[np.full(4, -1.0), np.arange(4, 15) * 0.5], "b": np.r_[np.full(6, -1.0), np.full(9, 3.0)]}
    rng = np.random.default_rng(seed)
    for n in (3, 40, 5_000):
        L = rage_rounds(np.random.default_rng(seed + n).choice(3, size=n, p=[18 / 37, 18 / 37, 1 / 37]))["run_lengths"]
        counts = np.bincount(L, minlength=15)
        s = int(rng.integers(1 << 30))
        a = rage_run_length_test(L, law, n_resamples=99, rng=np.random.default_rng(s))
        b = rage_run_length_test_counts(counts, law, n_resamples=99, rng=np.random.default_rng(s))
        assert a.to_dict() == b.to_dict() if hasattr(a, "to_dict") else a == b
        ra = rage_returns(L, law, nets, n_resamples=99, rng=np.random.default_rng(s))
        rb = rage_returns_counts(counts, law, nets, n_resamples=99, rng=np.random.default_rng(s))
        for k in nets:
            assert {x: np.asarray(v).tolist() for x, v in ra[k].items()} == {x: np.asarray(v).tolist() for x, v in rb[k].items()}


def _levin_cdf_per_pocket(n, p, a):
    """The Levin rectangle probability with one FFT per pocket (the formula before the transforms
    were shared between pockets of equal parameters)."""
    import math

    from rngcert.stats import _dist, frequency

    a = np.minimum(a, n)
    mu = n * p
    lo = np.minimum(np.maximum(0, np.floor(mu - frequency._LEVIN_LOW_SD * np.sqrt(mu) - 1)).astype(np.int64), a)
    target = n - int(lo.sum())
    lengths = a - lo + 1
    nfft = frequency._fast_len(int(lengths.sum() - lengths.size + 1))
    prod = None
    for j in range(p.size):
        f = np.fft.rfft(_dist.poisson_pmf(np.arange(lo[j], a[j] + 1), mu[j]), nfft)
        prod = f if prod is None else prod * f
    pw = max(float(np.fft.irfft(prod, nfft)[target]), 0.0)
    return min(1.0, pw * math.exp(frequency.special.gammaln(n + 1) - n * math.log(n) + n))


@pytest.mark.parametrize("seed", SEEDS)
def test_levin_cdf_shared_transforms_bit_identical(seed):
    from rngcert.stats.frequency import _levin_cdf

    rng = np.random.default_rng(seed)
    for k, n in ((37, 10_000), (37, 100_003), (38, 20_000), (5, 777), (2, 2)):
        for p in (np.full(k, 1.0 / k), rng.dirichlet(np.full(k, 50.0)), np.r_[np.full(k - 1, 1.0 / k), 1.0 / k]):
            mu = n * p
            for z in (0.5, 2.0, 3.5):
                a = np.floor(mu + z * np.sqrt(mu * (1 - p))).astype(np.int64)
                a[rng.integers(k)] += int(rng.integers(0, 3))  # one pocket with other parameters
                if int(a.sum()) < n:
                    continue
                assert _levin_cdf(n, p, a) == _levin_cdf_per_pocket(n, p, a)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("chunk", [7, 64, 8 << 20])
def test_csv_scan_blank_lines_against_per_line(seed, chunk, monkeypatch):
    """The line scan's blank lines (empty or a lone CR) against a per-line reading, with one-byte
    lines (a width of 1 that is not a CR) and chunk ends anywhere."""
    import io

    from rngcert.collect import csvstream

    monkeypatch.setattr(csvstream, "_CHUNK", chunk)
    rng = np.random.default_rng(seed)
    kinds = [b"", b"\r", b"7", b"a,b,c", b"12,2026-01-01T00:00:00Z,T1,17", b" ", b"\r\r"]
    lines = [b"id,result"] + [kinds[i] for i in rng.integers(0, len(kinds), 300)]
    data = b"\n".join(lines) + (b"\n" if seed % 2 else b"")
    scan = csvstream.scan_lines(io.BytesIO(data))
    phys = data.split(b"\n")
    if phys and phys[-1] == b"":
        phys = phys[:-1]
    expect = [i + 1 for i, ln in enumerate(phys) if ln in (b"", b"\r")]
    assert scan.blank_lines.tolist() == expect
    assert scan.n_lines == len(phys)


@pytest.mark.parametrize("seed", SEEDS)
def test_gap_test_translated_target_against_gather(seed, monkeypatch):
    """gap_test with the target looked up by bytes.translate (1-byte positions) equals the run on
    int64 positions (numpy's gather), for tiny spans too."""
    from rngcert.stats.serial import gap_test

    rng = np.random.default_rng(seed)
    target = np.zeros(37, dtype=bool)
    target[rng.choice(37, 18, replace=False)] = True
    x = rng.integers(0, 37, 20_000)
    ref = gap_test(x.astype(np.int64), target)
    for chunk in (None, 3, 1000):
        if chunk is not None:
            monkeypatch.setattr(chunks, "CHUNK", chunk)
        got = gap_test(x.astype(np.int8), target)
        assert (got.statistic, got.pvalue, got.df) == (ref.statistic, ref.pvalue, ref.df)
        np.testing.assert_array_equal(got.details["observed"], ref.details["observed"])
