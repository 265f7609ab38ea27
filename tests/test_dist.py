"""rngcert.stats._dist gives bit-identical numbers to the scipy.stats calls it replaces."""

import numpy as np
import pytest
from scipy import stats

from rngcert.stats import _dist

N = [1, 2, 37, 1000, 20000, 10**7]
P = [0.0, 1e-9, 1 / 38, 1 / 37, 0.3, 0.5, 0.97, 1.0]


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n", N)
@pytest.mark.parametrize("p", P)
def test_binomial_identical(n, p):
    k = np.unique(np.r_[-3, -1, 0, 1, 2, np.linspace(0, n, 25).round(), n * p, n * p + 0.5, n - 1, n, n + 1, n + 7])
    _same(_dist.binom_sf(k, n, p), stats.binom.sf(k, n, p))
    _same(_dist.binom_cdf(k, n, p), stats.binom.cdf(k, n, p))
    _same(_dist.binom_pmf(k, n, p), stats.binom.pmf(k, n, p))


def test_binomial_broadcast_and_scalars():
    k = np.array([[3], [10]])
    p = np.array([0.1, 0.2, 0.3])
    _same(_dist.binom_sf(k, 50, p), stats.binom.sf(k, 50, p))
    out = _dist.binom_sf(3, 50, 0.1)
    ref = stats.binom.sf(3, 50, 0.1)
    assert type(out) is type(ref) and out == ref


@pytest.mark.parametrize("df", [1, 2, 4, 36, 37 * 36, 1e5])
def test_chi2_identical(df):
    x = np.r_[-1.0, 0.0, 1e-12, np.geomspace(1e-3, 10 * df + 100, 60), np.inf]
    _same(_dist.chi2_sf(x, df), stats.chi2.sf(x, df))
    q = np.r_[0.0, 1e-300, 1e-12, np.geomspace(1e-9, 0.999, 40), 1.0]
    _same(_dist.chi2_isf(q, df), stats.chi2.isf(q, df))
    lam = [0.0, 0.5, 10.0] + ([300.0] if df <= 36 else [])  # Boost overflows (both raise) at 300 for large df
    for nc in lam:
        _same(_dist.ncx2_sf(x[1:-1], df, nc), stats.ncx2.sf(x[1:-1], df, nc))


def test_norm_poisson_beta_identical():
    z = np.r_[-np.inf, -40, np.linspace(-9, 9, 91), 40, np.inf]
    _same(_dist.norm_sf(z), stats.norm.sf(z))
    for mu in (0.5, 37.0, 540.5, 27027.0):
        k = np.r_[-2, -0.5, 0, 1, 2.5, np.arange(0, int(3 * mu) + 5, max(1, int(mu) // 20))]
        _same(_dist.poisson_pmf(k, mu), stats.poisson.pmf(k, mu))
    q = np.r_[0.0, 1e-12, 0.005 / 37, 0.5, 1 - 1e-9, 1.0]
    for a, b in ((1, 10), (540, 19461), (1.5, 3.0), (20000, 3)):
        _same(_dist.beta_ppf(q, a, b), stats.beta.ppf(q, a, b))


def test_binom_test_pvalue_is_scipys_binomtest():
    """The two-level analysis's proportion test without scipy.stats: the same p-value bits as
    ``scipy.stats.binomtest`` over pass counts near and far from the mode, ties, and p at 0 and 1."""
    import scipy.stats

    from rngcert.stats.frequency import binom_test_pvalue

    cases = [(k, n, p) for n in (1, 2, 10, 100, 188, 1000) for p in (0.0, 0.01, 0.5, 0.98, 0.99, 0.9896, 1.0)
             for k in sorted({0, 1, n // 2, int(p * n), min(n, int(p * n) + 1), max(0, n - 3), n})]
    for k, n, p in cases:
        assert binom_test_pvalue(k, n, p) == scipy.stats.binomtest(k, n, p).pvalue, (k, n, p)


def test_fisher_exact_greater_is_scipys():
    """The integrity check's Fisher test (boundary_repeats) without importing scipy.stats (issue 26):
    bit-identical to scipy.stats.fisher_exact(alternative="greater") and hypergeom.cdf."""
    from scipy import stats

    rng = np.random.default_rng(26)
    tables = [rng.integers(0, 60, size=(2, 2)) for _ in range(300)] + [
        np.array([[0, 0], [3, 4]]), np.array([[5, 0], [7, 0]]), np.array([[40, 1960], [1500, 58500]]), np.array([[0, 10], [0, 20]]),
        np.array([[260, 9740], [27000, 973000]])]
    for t in tables:
        assert _dist.fisher_exact_greater(t) == stats.fisher_exact(t, alternative="greater").pvalue, t
    k, M, n, N = np.meshgrid(np.arange(-2, 14), [20, 31], [0, 5, 12, 20], [0, 7, 20], indexing="ij")
    assert np.array_equal(_dist.hypergeom_cdf(k, M, n, N), stats.hypergeom.cdf(k, M, n, N))


def test_shuffle_path_distributions_identical():
    """The shuffle, game and pickup statistics' normal, chi-square, F and t functions without scipy.stats
    (issue 26: its import was the largest serial part of `shuffle certify`): the same bits on grids with the edges,
    nan where scipy's argument checks give nan."""
    z = np.r_[-np.inf, -40, np.linspace(-9, 9, 91), 40, np.inf, np.nan]
    _same(_dist.norm_cdf(z), stats.norm.cdf(z))
    q = np.r_[0.0, 1e-300, 1e-12, np.linspace(0.001, 0.999, 60), 1 - 1e-12, 1.0]
    _same(_dist.norm_isf(q), stats.norm.isf(q))
    with np.errstate(all="ignore"):
        for df in (0.5, 1, 2, 4, 12, 36, 1e5, 0, -1):
            x = np.r_[-1.0, 0.0, 1e-12, np.geomspace(1e-3, 10 * abs(df) + 100, 60), np.inf, np.nan]
            np.testing.assert_array_equal(_dist.chi2_cdf(x, df), stats.chi2.cdf(x, df))
            np.testing.assert_array_equal(_dist.chi2_ppf(np.r_[-0.1, q, 1.1], df), stats.chi2.ppf(np.r_[-0.1, q, 1.1], df))
            t = np.r_[-np.inf, -50, np.linspace(-10, 10, 81), 50, np.inf]
            np.testing.assert_array_equal(_dist.t_sf(t, df), stats.t.sf(t, df))
            for dfd in (1, 5, 100, 1e4, 0):
                np.testing.assert_array_equal(_dist.f_sf(x, df, dfd), stats.f.sf(x, df, dfd))
    assert type(_dist.f_sf(2.0, 3, 40)) is type(stats.f.sf(2.0, 3, 40)) and _dist.t_sf(1.5, 9) == stats.t.sf(1.5, 9)


def test_fftconvolve_is_scipy_signals():
    from scipy.signal import fftconvolve

    from rngcert.stats.shuffle.core import fftconvolve as ours

    rng = np.random.default_rng(26)
    for m, n in [(1, 5000), (5000, 1), (65, 65), (100, 3000), (4097, 4097), (777, 12345), (2, 2), (3, 70000)]:
        a, b = rng.random(m), rng.random(n)
        ref, got = fftconvolve(a, b), ours(a, b)
        assert got.shape == ref.shape
        np.testing.assert_array_equal(got, ref)
