"""Tests of rngcert.stats.sector: sector scan and first harmonic."""

import numpy as np
import pytest
from numpy.random import PCG64, Generator
from scipy import stats

from rngcert.errors import InputError
from rngcert.stats.result import NotApplicable, Requirement
from rngcert.stats.sector import first_harmonic, sector_scan

K = 37


def _brute_scan(counts, p, lengths):
    """Max |z| by explicit loops over starts and lengths (reference implementation)."""
    k = len(counts)
    n = counts.sum()
    best = (-1, None)
    for L in lengths:
        for s in range(k):
            idx = [(s + i) % k for i in range(L)]
            o = counts[idx].sum()
            pa = p[idx].sum()
            z = (o - n * pa) / np.sqrt(n * pa * (1 - pa))
            if abs(z) > best[0]:
                best = (abs(z), (s, L, o, n * pa, z))
    return best


def test_sector_scan_statistic_matches_brute_force_nonuniform():
    rng = Generator(PCG64(1))
    p = rng.dirichlet(np.full(K, 30.0))
    c = rng.multinomial(3000, p)
    r = sector_scan(c, p, min_len=1, max_len=20, n_resamples=99, rng=Generator(PCG64(2)))
    ref, (s, L, o, e, z) = _brute_scan(c, p, range(1, 21))
    assert r.statistic == pytest.approx(ref)
    b = r.details["best_arc"]
    assert (b["start"], b["length"], b["observed"]) == (s, L, o)
    assert b["expected"] == pytest.approx(e)
    assert b["z"] == pytest.approx(z)


def test_sector_scan_wraps_around_zero():
    c = np.full(K, 100)
    c[[35, 36, 0, 1]] += 40  # arc crossing position 0
    r = sector_scan(c, min_len=2, max_len=10, n_resamples=199, rng=Generator(PCG64(3)))
    b = r.details["best_arc"]
    assert (b["start"], b["length"]) == (35, 4)
    assert list(b["positions"]) == [35, 36, 0, 1]


def test_sector_scan_single_arc_null_is_binomial_when_one_length_one_start():
    # k=3, min_len=max_len=1: statistic = max over 3 pockets of |z|; compare MC p with enumeration
    p = np.array([0.2, 0.3, 0.5])
    c = np.array([4, 1, 5])
    n = c.sum()
    obs = sector_scan(c, p, min_len=1, max_len=1, n_resamples=19999, rng=Generator(PCG64(4)))
    tot = 0.0
    for a in range(n + 1):
        for b in range(n + 1 - a):
            x = np.array([a, b, n - a - b])
            zmax = np.max(np.abs((x - n * p) / np.sqrt(n * p * (1 - p))))
            if zmax >= obs.statistic - 1e-9:
                tot += stats.multinomial.pmf(x, n, p)
    assert abs(obs.pvalue - tot) < 4 * np.sqrt(tot * (1 - tot) / 19999) + 1e-4


def test_sector_scan_groups():
    rng = Generator(PCG64(5))
    # (3, k) counts, unequal n per group
    c = np.stack([rng.multinomial(m, np.full(K, 1 / K)) for m in (500, 2000, 50)])
    c[1, 10:15] += 60
    r = sector_scan(c, n_resamples=499, rng=Generator(PCG64(6)))
    assert r.n == c.sum()
    assert r.details["best_arc"]["group"] == 1
    assert len(r.details["groups"]) == 3
    assert r.pvalue < 0.01
    # a group with no spins is skipped, all-empty is not applicable
    c2 = c.copy()
    c2[2] = 0
    r2 = sector_scan(c2, n_resamples=99, rng=Generator(PCG64(6)))
    assert [g["group"] for g in r2.details["groups"]] == [0, 1]
    assert isinstance(sector_scan(np.zeros((2, K), int), rng=Generator(PCG64(1))), NotApplicable)


def test_sector_scan_power_five_pocket_sector_plus_10_percent():
    rng = Generator(PCG64(77))
    w = np.ones(K)
    w[20:25] = 1.1
    c = rng.multinomial(50_000, w / w.sum())
    r = sector_scan(c, n_resamples=999, rng=Generator(PCG64(78)))
    assert r.pvalue < 0.01
    b = r.details["best_arc"]
    assert set(b["positions"]) & set(range(20, 25))
    assert r.requirement is Requirement.UNIFORMITY


def test_sector_scan_invalid():
    with pytest.raises(InputError, match="rng"):
        sector_scan(np.ones(K, int), rng=1)  # rng=None is the fixed default stream (tests/test_stats_doctests.py)
    with pytest.raises(InputError, match="max_len"):
        sector_scan(np.ones(K, int), max_len=37, rng=Generator(PCG64(1)))


# ---------------------------------------------------------------- first harmonic
def test_first_harmonic_closed_form_uniform():
    # all spins on pocket 0: sum e^{i theta} = n, statistic = 2 n
    k, n = 8, 40
    c = np.zeros(k, int)
    c[0] = n
    r = first_harmonic(c)
    assert r.statistic == pytest.approx(2 * n)
    assert r.details["mean_resultant_length"] == pytest.approx(1.0)
    # hand example on k=4: 6 spins at position 0 (angle 0), 4 at position 3 (angle 3pi/2)
    c = np.array([6, 0, 0, 4])
    S = 6 * 1 + 4 * (-1j)
    r = first_harmonic(c)
    assert r.statistic == pytest.approx(2 * abs(S) ** 2 / 10)
    assert r.pvalue == pytest.approx(np.exp(-r.statistic / 2))


def test_first_harmonic_nonuniform_reduces_and_matches_hotelling():
    rng = Generator(PCG64(9))
    c = rng.multinomial(5000, np.full(K, 1 / K))
    a = first_harmonic(c)
    b = first_harmonic(c, np.full(K, 1 / K))
    assert a.statistic == pytest.approx(b.statistic)
    # non-uniform probs: compare with an explicit Hotelling form computed from simulated moments
    p = rng.dirichlet(np.full(K, 20.0))
    c = rng.multinomial(5000, p)
    th = 2 * np.pi * np.arange(K) / K
    V = np.c_[np.cos(th), np.sin(th)]
    mu = p @ V
    cov = (V - mu).T @ ((V - mu) * p[:, None])
    d = c @ V / 5000 - mu
    assert first_harmonic(c, p).statistic == pytest.approx(5000 * d @ np.linalg.solve(cov, d))


def test_first_harmonic_detects_cosine_bias_and_estimates_it():
    rng = Generator(PCG64(10))
    th = 2 * np.pi * np.arange(K) / K
    phi_pockets = 9.0
    w = 1 + 0.1 * np.cos(th - 2 * np.pi * phi_pockets / K)
    c = rng.multinomial(200_000, w / w.sum())
    r = first_harmonic(c)
    assert r.pvalue < 1e-6
    assert r.details["amplitude"] == pytest.approx(0.1, abs=0.015)
    assert r.details["phase_position"] == pytest.approx(phi_pockets, abs=0.5)


def test_first_harmonic_small_n_not_applicable():
    assert isinstance(first_harmonic(np.r_[3, np.zeros(K - 1, int)]), NotApplicable)


def test_results_serialise_to_json():
    import json

    rng = Generator(PCG64(12))
    c = np.stack([rng.multinomial(400, np.full(K, 1 / K)) for _ in range(2)])
    for r in (sector_scan(c, n_resamples=99, rng=rng), first_harmonic(c[0])):
        d = json.loads(json.dumps(r.to_dict()))
        assert d["pvalue"] == r.pvalue and d["name"] == r.name


def test_monte_carlo_kernel_is_bit_identical_to_the_per_length_scan():
    """The replicate kernel (_scan_max, position-major) does the per-length scan's arithmetic."""
    from rngcert.stats._arcs import _arc_tables, _flat_arcs, _scan, _scan_max

    rng = np.random.default_rng(3)
    for k, g in ((37, 1), (38, 3), (54, 2), (5, 1)):
        p = rng.dirichlet(np.full(k, 50.0), size=g)
        p[0, 2] = 0.0  # a pocket of probability 0: arcs of length 1 there have SD 0, z 0
        p[0] /= p[0].sum()
        n = np.array([9920.0, 2000.0, 3.0][:g])
        lengths = list(range(1, k // 2 + 1))
        tables = _arc_tables(p, n, lengths)
        for a in range(g):
            x = rng.multinomial(int(n[a]), p[a], size=300)
            want = np.zeros(300)
            for z in _scan(x[:, None, :], [(pa[a : a + 1], e[a : a + 1], sd[a : a + 1]) for pa, e, sd in tables], lengths):
                np.maximum(want, np.abs(z).max(axis=(-2, -1)), out=want)
            assert np.array_equal(_scan_max(x, _flat_arcs(tables, lengths, k, a)), want)
