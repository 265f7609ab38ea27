"""Review of rngcert.stats._dist against scipy.stats (property tests and hand-picked edges).

``_dist`` claims scipy.stats' numbers, the same bits, for valid arguments (n >= 0 integer,
0 <= p <= 1, df > 0), including the edges of the variable's domain (0, negative, nan, +/-inf,
non-integer k, k outside 0..n, extreme tails) and scipy's output type (a numpy float64 for scalar
input, the broadcast shape for arrays). The hypothesis tests are derandomized and bounded.
"""

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import signal, stats

from rngcert.stats import _dist
from rngcert.stats.frequency import binom_test_pvalue
from rngcert.stats.shuffle.core import fftconvolve

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

# the variable: any double, with the edges drawn often
EDGES = [0.0, -0.0, -1.0, 5e-324, 1e-300, 1e-12, 1.0, 1e300, np.inf, -np.inf, np.nan]
X = st.one_of(st.sampled_from(EDGES), st.floats(allow_nan=True, allow_infinity=True), st.floats(-50, 500))
Q = st.one_of(st.sampled_from([0.0, 5e-324, 1e-300, 1e-17, 0.5, 1 - 2**-53, 1.0, -0.1, 1.1, np.nan]), st.floats(0, 1))
DF = st.one_of(st.sampled_from([1e-300, 0.3, 0.5, 1.0, 1.5, 2.0, 36.0, 1332.0, 1e6, 1e12]), st.floats(1e-3, 1e4),
               st.integers(1, 10**6).map(float))
P = st.one_of(st.sampled_from([0.0, 5e-324, 1e-300, 1e-17, 1 / 38, 1 / 37, 0.5, 1 - 1e-16, 1.0]), st.floats(0, 1))
N = st.one_of(st.sampled_from([0, 1, 2, 37, 10**7]), st.integers(0, 5000))


def _same(got, ref):
    """Same bits (nan where scipy has nan), same shape, and a numpy float64 where scipy gives a scalar."""
    assert np.shape(got) == np.shape(ref)
    assert isinstance(got, np.ndarray) == isinstance(ref, np.ndarray)
    if not isinstance(ref, np.ndarray):
        assert type(got) is type(ref), (type(got), type(ref))
    np.testing.assert_array_equal(got, ref)


def _outcome(fun, *args):
    """The value, or the type of the exception raised (Boost's overflow errors raise in both)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fun(*args)
        except (OverflowError, FloatingPointError, ValueError, SystemError) as e:  # (SystemError: a Boost warning, both)
            return type(e)


def _both(fun, ref, *args):
    got, want = _outcome(fun, *args), _outcome(ref, *args)
    if isinstance(want, type) or isinstance(got, type):
        assert got is want, (args, got, want)
    else:
        _same(got, want)


@SETTINGS
@given(X, DF)
def test_chi2_and_normal_laws(x, df):
    _both(_dist.chi2_sf, stats.chi2.sf, x, df)
    _both(_dist.chi2_cdf, stats.chi2.cdf, x, df)
    _both(_dist.t_sf, stats.t.sf, x, df)
    _both(_dist.norm_sf, stats.norm.sf, x)
    _both(_dist.norm_cdf, stats.norm.cdf, x)


@SETTINGS
@given(Q, DF)
def test_quantiles(q, df):
    _both(_dist.chi2_ppf, stats.chi2.ppf, q, df)
    _both(_dist.norm_isf, stats.norm.isf, q)
    _both(_dist.chi2_isf, stats.chi2.isf, q, df)


@SETTINGS
@given(X, DF, DF)
def test_f_law(x, dfn, dfd):
    _both(_dist.f_sf, stats.f.sf, x, dfn, dfd)


@SETTINGS
@given(X, DF, st.one_of(st.sampled_from([0.0, 1e-300, 0.5, 10.0, 300.0]), st.floats(0, 200)))
def test_noncentral_chi2(x, df, nc):
    _both(_dist.ncx2_sf, stats.ncx2.sf, x, df, nc)


def test_noncentral_chi2_at_infinity_and_nan():
    """scipy.stats' continuous sf is 0 above the support (x = +inf) and nan at x = nan without
    calling the law's ufunc; Boost's ncx2 sf at x = +inf is nan."""
    x = np.array([np.inf, np.nan, -np.inf, 0.0, 3.0])
    for df, nc in ((1.0, 0.5), (36.0, 10.0), (2.0, 0.0)):
        _both(_dist.ncx2_sf, stats.ncx2.sf, x, df, nc)
        _both(_dist.ncx2_sf, stats.ncx2.sf, np.inf, df, nc)
        _both(_dist.ncx2_sf, stats.ncx2.sf, np.nan, df, nc)


K = st.one_of(st.sampled_from([-np.inf, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, np.inf, np.nan]), st.floats(-5, 5100),
              st.integers(-5, 5100).map(float))


@SETTINGS
@given(K, N, P)
def test_binomial_laws(k, n, p):
    _both(_dist.binom_sf, stats.binom.sf, k, n, p)
    _both(_dist.binom_cdf, stats.binom.cdf, k, n, p)
    _both(_dist.binom_pmf, stats.binom.pmf, k, n, p)
    kk = np.array([k, np.floor(n * p), n * p, n - 1.0, n, n + 1.0])  # around the mode and the top
    _both(_dist.binom_sf, stats.binom.sf, kk, n, p)
    _both(_dist.binom_cdf, stats.binom.cdf, kk[:, None], n, np.array([p, 1 - p]))


@SETTINGS
@given(K, st.one_of(st.sampled_from([0.0, 1e-300, 0.5, 37.0, 1e6]), st.floats(0, 1e4)))
def test_poisson_pmf(k, mu):
    _both(_dist.poisson_pmf, stats.poisson.pmf, k, mu)


AB = st.one_of(st.sampled_from([1e-3, 0.5, 1.0, 3.0, 540.0, 19461.0, 1e6]), st.floats(1e-2, 1e5))


@SETTINGS
@given(Q, AB, AB)
def test_beta_ppf(q, a, b):
    _both(_dist.beta_ppf, stats.beta.ppf, q, a, b)


@st.composite
def _test_case(draw):
    """(k, n, p) of a binomial test: p often a fraction j/m so that k == n p and near-ties happen."""
    n = draw(st.one_of(st.integers(1, 60), st.integers(1, 5000), st.sampled_from([1, 2, 37 * 38, 10**6])))
    p = draw(st.one_of(P, st.tuples(st.integers(0, 40), st.integers(1, 40)).map(lambda t: min(t) / max(t))))
    mode = int(n * p)
    k = draw(st.one_of(st.integers(0, n), st.sampled_from(sorted({0, n, mode, min(n, mode + 1), max(0, mode - 1)}))))
    return k, n, p


@SETTINGS
@given(_test_case())
def test_binom_test_pvalue_is_binomtest(case):
    got, want = _outcome(binom_test_pvalue, *case), _outcome(lambda *a: stats.binomtest(*a).pvalue, *case)
    assert got == want, (case, got, want)  # (p near 2.2e-308: Boost's pmf overflows, an OverflowError in both)


def test_binom_test_pvalue_riffle_sizes():
    """The riffle test's cut count over m shoes of n cards at p = 1/2 (the mode and its neighbours,
    far tails), and two-level pass counts at p near 1."""
    for n in (51, 52 * 8 - 1, 200 * 415):
        for k in {0, 1, n // 2 - 1, n // 2, (n + 1) // 2, n // 2 + 1, n - 1, n, n // 3}:
            assert binom_test_pvalue(k, n, 0.5) == stats.binomtest(k, n, 0.5).pvalue, (k, n)
    for n, p in ((100, 0.99), (1000, 0.9896), (188, 1 - 1e-9), (50, 1e-12)):
        for k in range(max(0, n - 15), n + 1):
            assert binom_test_pvalue(k, n, p) == stats.binomtest(k, n, p).pvalue, (k, n, p)


TABLE = st.lists(st.one_of(st.integers(0, 5), st.integers(0, 3000)), min_size=4, max_size=4).map(lambda v: np.reshape(v, (2, 2)))


@SETTINGS
@given(TABLE)
def test_fisher_exact_greater(table):
    assert _dist.fisher_exact_greater(table) == stats.fisher_exact(table, alternative="greater").pvalue, table


@SETTINGS
@given(st.integers(-2, 40), st.integers(1, 40), st.integers(0, 40), st.integers(0, 40))
def test_hypergeom_cdf(k, M, n, N):
    n, N = min(n, M), min(N, M)
    _both(_dist.hypergeom_cdf, stats.hypergeom.cdf, k, M, n, N)


def test_scalar_and_broadcast_outputs():
    """A numpy float64 for scalar input (0-d arrays too), the broadcast shape for arrays, empty in, empty out."""
    for fun, ref, args in ((_dist.chi2_sf, stats.chi2.sf, (3.0, 2)), (_dist.norm_sf, stats.norm.sf, (1.5,)),
                           (_dist.binom_sf, stats.binom.sf, (3, 50, 0.1)), (_dist.binom_pmf, stats.binom.pmf, (3, 50, 0.1)),
                           (_dist.poisson_pmf, stats.poisson.pmf, (3, 2.5)), (_dist.beta_ppf, stats.beta.ppf, (0.3, 2, 5)),
                           (_dist.ncx2_sf, stats.ncx2.sf, (3.0, 2, 1.5)), (_dist.hypergeom_cdf, stats.hypergeom.cdf, (2, 20, 7, 12)),
                           (_dist.f_sf, stats.f.sf, (2.0, 3, 40)), (_dist.chi2_isf, stats.chi2.isf, (0.05, 3))):
        _both(fun, ref, *args)
        _both(fun, ref, *(np.asarray(a) for a in args))
        _both(fun, ref, np.array([[args[0]], [args[0]]]), *args[1:])
        _both(fun, ref, np.array([], dtype=float), *args[1:])
    _both(_dist.binom_cdf, stats.binom.cdf, np.array([[3], [10]]), np.array([20, 50, 70]), np.array([0.1, 0.2, 0.3]))
    _both(_dist.chi2_sf, stats.chi2.sf, np.float32(3.5), np.int64(2))


@SETTINGS
@given(st.integers(1, 3000), st.integers(1, 3000), st.booleans(), st.integers(0, 2**32 - 1))
def test_fftconvolve_is_scipy_signals(m, n, ints, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.integers(0, 1000, m), rng.integers(0, 1000, n)) if ints else (rng.random(m), rng.random(n))
    ref, got = signal.fftconvolve(a, b), fftconvolve(a, b)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


def test_fftconvolve_short_and_long():
    rng = np.random.default_rng(27)
    for m, n in ((1, 1), (1, 2), (2, 1), (2, 2), (3, 3), (2, 9999), (4099, 3), (65537, 1), (65536, 65536)):
        a, b = rng.random(m), rng.random(n)
        np.testing.assert_array_equal(fftconvolve(a, b), signal.fftconvolve(a, b))


def test_nan_and_infinite_variable_edges():
    """The variable at nan (nan, as scipy) and at +inf with an infinite df (0 or 1 above the support, as
    scipy, where the Cephes ufuncs give nan), and quantiles outside [0, 1] (nan, as scipy)."""
    _both(_dist.chi2_sf, stats.chi2.sf, np.array([np.inf, 5.0, np.nan]), np.inf)
    _both(_dist.chi2_cdf, stats.chi2.cdf, np.array([np.inf, 5.0, np.nan]), np.inf)
    k = np.array([np.nan, -1.0, 0.0, 3.0, 2.5, 50.0, np.inf])
    for fun, ref in ((_dist.binom_sf, stats.binom.sf), (_dist.binom_cdf, stats.binom.cdf), (_dist.binom_pmf, stats.binom.pmf)):
        _both(fun, ref, k, 20, 0.3)
        _both(fun, ref, np.nan, 20, 0.3)
    _both(_dist.poisson_pmf, stats.poisson.pmf, k, 2.5)
    _both(_dist.hypergeom_cdf, stats.hypergeom.cdf, np.delete(k, 4), 20, 7, 12)
    q = np.array([np.nan, -0.1, 0.0, 0.3, 1.0, 1.1])
    _both(_dist.beta_ppf, stats.beta.ppf, q, 2.0, 5.0)
    _both(_dist.chi2_isf, stats.chi2.isf, q, 3.0)


def test_hypergeom_cdf_non_integer_k_is_documented():
    """A non-integer k inside the support: P(X <= floor(k)) (documented), where scipy gives nan."""
    assert _dist.hypergeom_cdf(2.5, 20, 7, 12) == stats.hypergeom.cdf(2, 20, 7, 12)
    assert np.isnan(stats.hypergeom.cdf(2.5, 20, 7, 12))
    assert "floor(k)" in _dist.hypergeom_cdf.__doc__


def test_binomial_ufunc_only_inside_the_support():
    """Boost's binomial pmf raises OverflowError at p near 2.2e-308; scipy.stats calls it only inside the
    support, so k outside it gives 0 (or 1), not the exception."""
    p = 2.2250738585072014e-308
    for fun, ref in ((_dist.binom_pmf, stats.binom.pmf), (_dist.binom_sf, stats.binom.sf), (_dist.binom_cdf, stats.binom.cdf)):
        _both(fun, ref, -1, 37, p)
        _both(fun, ref, np.array([-np.inf, -1.0, 38.0, 40.0]), 37, p)
    _both(_dist.binom_pmf, stats.binom.pmf, 3, 37, p)  # inside: both raise
