"""Tests of rngcert.stats.frequency: worked examples, scipy cross-checks, exact enumeration, power."""

import itertools

import numpy as np
import pytest
from numpy.random import PCG64, Generator
from scipy import stats
from statsmodels.stats.multitest import multipletests

from rngcert.errors import InputError
from rngcert.stats.frequency import (
    _binom_two_sided,
    category_frequency,
    g_test,
    max_count,
    pocket_binomial,
    pocket_chisquare,
)
from rngcert.stats.result import NotApplicable, Requirement, TestResult

K = 37


def _compositions(n, k):
    """All count vectors of n balls in k cells (small n, k only)."""
    for bars in itertools.combinations(range(n + k - 1), k - 1):
        edges = (-1,) + bars + (n + k - 1,)
        yield np.array([edges[i + 1] - edges[i] - 1 for i in range(k)])


def _exact_tail(counts, p, statfun):
    """P(stat(X) >= stat(counts)) for X ~ multinomial(n, p), by enumeration."""
    n = int(counts.sum())
    obs = statfun(counts)
    tot = 0.0
    for x in _compositions(n, len(p)):
        if statfun(x) >= obs - 1e-9:
            tot += stats.multinomial.pmf(x, n, p)
    return tot


# ---------------------------------------------------------------- worked examples / closed forms
def test_pearson_hand_worked():
    # expected 20 each: X^2 = (100 + 0 + 100) / 20 = 10; chi2(2) sf = exp(-x/2)
    r = pocket_chisquare([10, 20, 30])
    assert isinstance(r, TestResult)
    assert r.statistic == pytest.approx(10.0)
    assert r.df == 2
    assert r.pvalue == pytest.approx(np.exp(-5.0), rel=1e-12)
    assert r.method == "asymptotic"
    assert r.requirement is Requirement.UNIFORMITY


def test_g_hand_worked():
    c = np.array([10, 20, 30])
    g = 2 * (10 * np.log(0.5) + 0 + 30 * np.log(1.5))
    r = g_test(c)
    assert r.statistic == pytest.approx(g)
    assert r.pvalue == pytest.approx(np.exp(-g / 2), rel=1e-12)


# ---------------------------------------------------------------- scipy cross-checks
def test_pearson_and_g_match_scipy_nonuniform_probs():
    rng = Generator(PCG64(11))
    p = rng.dirichlet(np.full(K, 50.0))
    c = rng.multinomial(20_000, p)
    r = pocket_chisquare(c, p)
    ref = stats.chisquare(c, 20_000 * p)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    r = g_test(c, p)
    ref = stats.power_divergence(c, 20_000 * p, lambda_="log-likelihood")
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


@pytest.mark.parametrize("fun", [pocket_chisquare, g_test])
def test_monte_carlo_branch_matches_exact_enumeration(fun):
    # k=4, n=7: every expected count < 5, so "auto" uses Monte Carlo.
    p = np.array([0.1, 0.2, 0.3, 0.4])
    c = np.array([3, 0, 1, 3])
    if fun is pocket_chisquare:
        statfun = lambda x: np.sum((x - 7 * p) ** 2 / (7 * p))  # noqa: E731
    else:
        statfun = lambda x: 2 * np.sum(np.where(x > 0, x * np.log(np.maximum(x, 1) / (7 * p)), 0))  # noqa: E731
    exact = _exact_tail(c, p, statfun)
    r = fun(c, p, rng=Generator(PCG64(3)), n_resamples=9999)
    assert r.method == "monte-carlo, R=9999"
    se = np.sqrt(exact * (1 - exact) / 9999)
    assert abs(r.pvalue - exact) < 4 * se + 1e-4
    assert r.statistic == pytest.approx(statfun(c))


def test_monte_carlo_matches_scipy_monte_carlo_test():
    rng = Generator(PCG64(8))
    p = np.full(K, 1 / K)
    c = rng.multinomial(80, p)
    r = pocket_chisquare(c, rng=Generator(PCG64(9)), n_resamples=4999)
    # scipy.stats.monte_carlo_test on the same statistic, multinomial rvs
    gen = Generator(PCG64(10))

    def rvs(size):
        return gen.multinomial(80, p, size=size[0])

    def stat(x, axis=-1):
        return np.sum((x - 80 * p) ** 2 / (80 * p), axis=axis)

    ref = stats.monte_carlo_test(c, rvs, stat, vectorized=True, n_resamples=4999,
                                 alternative="greater")
    assert ref.statistic == pytest.approx(r.statistic)
    assert abs(ref.pvalue - r.pvalue) < 5 * np.sqrt(r.pvalue * (1 - r.pvalue) / 4999) * 1.5


# ---------------------------------------------------------------- max_count
@pytest.mark.parametrize(
    "counts, p",
    [
        (np.array([4, 1, 1, 2]), np.full(4, 0.25)),
        (np.array([0, 5, 1, 2]), np.array([0.1, 0.2, 0.3, 0.4])),
        (np.array([2, 2, 2, 2]), np.full(4, 0.25)),
        (np.array([1, 1, 3, 0, 4]), np.array([0.3, 0.1, 0.2, 0.25, 0.15])),
    ],
)
def test_max_count_exact_matches_enumeration(counts, p):
    n = counts.sum()
    z = lambda x: np.max((x - n * p) / np.sqrt(n * p * (1 - p)))  # noqa: E731
    exact = _exact_tail(counts, p, z)
    r = max_count(counts, p)
    assert r.method == "exact (Levin 1981)"
    assert r.pvalue == pytest.approx(exact, abs=1e-10)
    assert r.statistic == pytest.approx(z(counts))


def test_max_count_levin_against_simulation_k37():
    rng = Generator(PCG64(21))
    c = np.full(K, 13)
    c[5] = 24
    c[6] = 13 - (c.sum() - 13 * K)  # keep n = 481
    n = c.sum()
    r = max_count(c)
    sims = rng.multinomial(n, np.full(K, 1 / K), size=200_000).max(axis=1)
    mc = np.mean(sims >= c.max())
    assert r.pvalue == pytest.approx(mc, abs=4 * np.sqrt(mc * (1 - mc) / 200_000))
    assert r.details["position"] == 5 and r.details["count"] == 24


def test_max_count_power_one_pocket_plus_20_percent():
    rng = Generator(PCG64(2024))
    w = np.ones(K)
    w[17] = 1.2
    c = rng.multinomial(50_000, w / w.sum())
    r = max_count(c)
    assert r.pvalue < 0.01
    assert r.details["position"] == 17
    assert pocket_chisquare(c).pvalue < 0.01


# ---------------------------------------------------------------- pocket binomial / Holm
def test_pocket_binomial_matches_scipy_and_statsmodels():
    rng = Generator(PCG64(4))
    c = rng.multinomial(3700, np.full(K, 1 / K))
    c[3] += 60
    r = pocket_binomial(c, alpha=0.01)
    n = c.sum()
    raw = np.array([stats.binomtest(int(x), n, 1 / K).pvalue for x in c])
    _, adj, _, _ = multipletests(raw, method="holm")
    np.testing.assert_allclose(r.details["raw_pvalues"], raw)
    np.testing.assert_allclose(r.details["adjusted_pvalues"], adj)
    assert r.pvalue == pytest.approx(adj.min())
    assert 3 in list(r.details["rejected_positions"])


# ---------------------------------------------------------------- categories
def test_category_frequency_red_black_zero_and_low_high():
    rng = Generator(PCG64(6))
    c = rng.multinomial(3700, np.full(K, 1 / K))
    red = np.zeros(K, dtype=int)
    red[[1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]] = 1
    # here categories are by pocket number == position, fine for the test
    rbz = np.where(np.arange(K) == 0, 0, np.where(red == 1, 1, 2))
    r = category_frequency(c, rbz, name="red_black_zero")
    obs = np.array([c[0], c[red == 1].sum(), c[(red == 0) & (np.arange(K) > 0)].sum()])
    ref = stats.chisquare(obs, 3700 * np.array([1, 18, 18]) / 37)
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.pvalue == pytest.approx(ref.pvalue)
    assert r.df == 2
    # low/high: zero excluded from the test and from n
    lh = np.where(np.arange(K) == 0, -1, np.where(np.arange(K) <= 18, 0, 1))
    r = category_frequency(c, lh, name="low_high")
    obs = np.array([c[1:19].sum(), c[19:].sum()])
    ref = stats.chisquare(obs)
    assert r.n == 3700 - c[0]
    assert r.details["excluded_spins"] == c[0]
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.pvalue == pytest.approx(ref.pvalue)


def test_category_frequency_money_wheel_symbols():
    # 52 sections, symbols with 24/12/8/4/2/1/1 sections; each section 1/52
    sym = np.repeat(np.arange(7), [24, 12, 8, 4, 2, 1, 1])
    rng = Generator(PCG64(7))
    c = rng.multinomial(5200, np.full(52, 1 / 52))
    r = category_frequency(c, sym, name="symbols", rng=Generator(PCG64(1)), n_resamples=999)
    np.testing.assert_allclose(r.details["category_probs"], np.array([24, 12, 8, 4, 2, 1, 1]) / 52)
    obs = np.bincount(sym, weights=c).astype(int)
    ref = stats.chisquare(obs, 5200 * np.array([24, 12, 8, 4, 2, 1, 1]) / 52)
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.method == "asymptotic"  # expected 100 for the rarest symbol


# ---------------------------------------------------------------- input validation / NA
def test_invalid_inputs_raise():
    with pytest.raises(InputError, match="-1"):
        pocket_chisquare([1, -1, 3])
    with pytest.raises(InputError, match="sum to 1"):
        pocket_chisquare([1, 2, 3], [0.2, 0.2, 0.2])
    with pytest.raises(InputError, match="method"):
        g_test([1, 2, 3], method="exactish")
    with pytest.raises(InputError, match="rng"):
        pocket_chisquare([1, 2, 3], rng=3)  # sparse -> Monte Carlo needs a stream, not a seed (None: the fixed default stream)
    with pytest.raises(InputError, match="categories"):
        category_frequency([5, 5, 5], [0, 1], name="x")
    with pytest.raises(InputError, match="whole"):
        max_count([1.5, 2, 3])


def test_no_data_is_not_applicable():
    for f in (pocket_chisquare, g_test, max_count, pocket_binomial):
        r = f(np.zeros(K, dtype=int))
        assert isinstance(r, NotApplicable)
        assert r.pvalue is None


def test_inputs_not_modified():
    c = np.arange(K)
    p = np.full(K, 1 / K)
    c0, p0 = c.copy(), p.copy()
    pocket_chisquare(c, p)
    max_count(c, p)
    np.testing.assert_array_equal(c, c0)
    np.testing.assert_array_equal(p, p0)


def test_vectorised_binomial_matches_scipy_binomtest():
    rng = Generator(PCG64(31))
    for _ in range(200):
        n = int(rng.integers(1, 2000))
        p = rng.uniform(0.001, 0.999, 4)
        k = np.clip(np.round(n * p + rng.normal(0, 3, 4) * np.sqrt(n * p * (1 - p) + 1)), 0, n).astype(int)
        ref = [stats.binomtest(int(a), n, float(b)).pvalue for a, b in zip(k, p)]
        np.testing.assert_allclose(_binom_two_sided(k, n, p), ref, rtol=1e-10, atol=0)


def test_max_count_monte_carlo_fallback_agrees_with_exact(monkeypatch):
    import rngcert.stats.frequency as freq

    rng = Generator(PCG64(41))
    c = rng.multinomial(2000, np.full(K, 1 / K))
    exact = max_count(c)
    monkeypatch.setattr(freq, "_LEVIN_MAX_LEN", 10)  # force the Monte Carlo branch
    mc = max_count(c, rng=Generator(PCG64(42)), n_resamples=9999)
    assert mc.method == "monte-carlo, R=9999" and exact.method.startswith("exact")
    assert abs(mc.pvalue - exact.pvalue) < 4 * np.sqrt(exact.pvalue * (1 - exact.pvalue) / 9999)
    assert max_count(c).pvalue == max_count(c).pvalue  # without rng: the fixed default stream
    with pytest.raises(InputError, match="rng"):
        max_count(c, rng=42)


def test_levin_fft_is_numpys_with_scipys_bits():
    """The max-count test's exact law (Levin's convolution) uses numpy.fft, not scipy.fft (whose
    import costs about 0.1-0.2 s): both are pocketfft (bit-identical with numpy 2.4 and scipy 1.17
    here; checked to 1e-13 so that another release's last bits cannot fail the suite)."""
    import scipy.fft as sf

    from rngcert.stats.frequency import _fast_len

    rng = np.random.default_rng(0)
    for m in (100, 999, 3375, 14580, 65537, 250_001, 1_000_003):
        assert _fast_len(m) == sf.next_fast_len(m, real=True)
        n = _fast_len(m)
        x = rng.random(m)
        a, b = sf.rfft(x, n), np.fft.rfft(x, n)
        assert np.allclose(a, b, rtol=1e-13, atol=1e-13 * np.abs(a).max())
        A, B = sf.irfft(a * a, n), np.fft.irfft(b * b, n)
        assert np.allclose(A, B, rtol=1e-13, atol=1e-13 * np.abs(A).max())
