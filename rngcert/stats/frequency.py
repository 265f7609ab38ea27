"""Pocket-frequency (uniformity) tests for wheels.

Inputs are pocket counts in wheel order: ``counts[j]`` is the number of spins that landed on wheel
position ``j`` (position 0 is the reference pocket). ``probs`` is the null probability of each
position (default ``1/k``). Every function returns a :class:`~rngcert.stats.result.TestResult` or a
:class:`~rngcert.stats.result.NotApplicable`.

Monte Carlo p-values draw multinomial count vectors (never spin sequences), so their cost does not
grow with the number of spins.
"""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist, arrayops  # scipy.stats' functions without its 1.9 s import
from rngcert.stats._validate import (
    _as_counts,
    _as_probs,
    _method_iv,
    _min_positions,
    _multinomial_batches,
    _n_resamples_iv,
    _rng_iv,
)
from rngcert.stats.montecarlo import MonteCarlo, monte_carlo_args
from rngcert.stats.multiple import holm
from rngcert.stats.params import check_number
from rngcert.stats.result import (
    NotApplicable,
    Requirement,
    TestResult,
    clip_pvalue,
    monte_carlo_pvalue,
)
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer

__all__ = [
    "binom_test_pvalue",
    "pocket_chisquare",
    "g_test",
    "max_count",
    "pocket_binomial",
    "category_frequency",
]



# ----------------------------------------------------------------------------------------------
# goodness-of-fit statistics
# ----------------------------------------------------------------------------------------------
def _pearson(obs: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Pearson X^2 along the last axis."""
    return np.sum((obs - expected) ** 2 / expected, axis=-1)


def _g_stat(obs: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Likelihood-ratio G = 2 sum O log(O/E) along the last axis (0 log 0 = 0)."""
    obs = np.asarray(obs, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(obs > 0, obs * np.log(obs / expected), 0.0)
    return 2.0 * np.sum(terms, axis=-1)


def _gof(
    counts: np.ndarray,
    p: np.ndarray,
    statfun,
    method: str,
    n_resamples: int,
    rng,
    name: str,
    requirement: Requirement,
    details: dict,
    batch: int | None = None,
) -> TestResult | NotApplicable:
    """Common body of the Pearson/G tests of a multinomial with known cell probabilities."""
    n = int(counts.sum())
    k = counts.size
    if n == 0:
        return NotApplicable(name, requirement, 0, "no observations (all counts are 0)")
    expected = n * p
    stat = float(statfun(counts.astype(float), expected))
    df = k - 1
    sparse = bool(np.min(expected) < 5.0)
    if method == "auto":
        method = "monte-carlo" if sparse else "asymptotic"
    details = dict(details)
    details.update(
        observed=counts,
        expected=expected,
        residuals=(counts - expected) / np.sqrt(expected),
        min_expected=float(np.min(expected)),
    )
    if method == "asymptotic":
        pvalue = clip_pvalue(_dist.chi2_sf(stat, df))
        mlabel = "asymptotic"
        if sparse:
            details["warning"] = "some expected counts < 5; the chi-square approximation is rough"
    else:
        rng = _rng_iv(rng, name)
        null = np.concatenate(
            [statfun(x.astype(float), expected) for x in _multinomial_batches(n, p, n_resamples, rng, batch)]
        )
        pvalue = monte_carlo_pvalue(stat, null)
        mlabel = f"monte-carlo, R={n_resamples}"
    return TestResult(name, requirement, stat, df, pvalue, n, mlabel, details)


def _gof_test(counts, probs, statfun, method, n_resamples, rng, name: str) -> TestResult | NotApplicable:
    """The arguments of a goodness-of-fit test checked, then :func:`_gof` (pocket chi-square, G test)."""
    method, n_resamples, rng, batch = monte_carlo_args(method, n_resamples, rng, name, default_n=9999)
    counts = _as_counts(counts, name)
    p = _as_probs(probs, counts.size, name)
    method = _method_iv(method, name)
    n_resamples = _n_resamples_iv(n_resamples, name)
    return _gof(counts, p, statfun, method, n_resamples, rng, name, Requirement.UNIFORMITY, {}, batch)


def pocket_chisquare(
    counts,
    probs=None,
    *,
    method: str | MonteCarlo = "auto",
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
    name: str = "pocket_chisquare",
) -> TestResult | NotApplicable:
    r"""Pearson chi-square test that the pockets follow their null probabilities.

    Parameters
    ----------
    counts : (k,) array_like of int
        Spins per wheel position, in wheel order; void spins already excluded.
    probs : (k,) array_like of float, optional
        Null probability of each position (all > 0, summing to 1). Default ``1/k``.
    method : {"auto", "asymptotic", "monte-carlo"}
        ``"auto"`` uses the chi-square law with ``k - 1`` degrees of freedom when every expected
        count is at least 5 and a Monte Carlo p-value otherwise.
        ``method=MonteCarlo(n_resamples, batch, rng)`` (:class:`rngcert.stats.MonteCarlo`) is
        ``"monte-carlo"`` with its options in one object, as scipy's ``MonteCarloMethod``; the
        keywords below then stay unset.
    n_resamples : int
        Monte Carlo replicates R (multinomial count vectors drawn under H0).
    rng : numpy.random.Generator, optional
        For the Monte Carlo p-value. Default: the fixed-seed stream
        :func:`rngcert.seeding.default_stream` of ``name`` (the same p-value on every call);
        pass ``rngcert.seeding.stream(seed, ...)`` for a stream of your own.
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` is :math:`X^2`, ``df = k - 1``; ``details`` has observed, expected, Pearson
        residuals and the smallest expected count. NotApplicable when there are no spins.

    Raises
    ------
    InputError
        Negative or non-integer counts, bad probs, unknown method, missing rng for Monte Carlo.

    Notes
    -----
    H0: the counts are multinomial(n, probs). Statistic
    :math:`X^2 = \sum_j (O_j - n p_j)^2 / (n p_j)`, asymptotically :math:`\chi^2_{k-1}` [1]_.
    The Monte Carlo p-value is :math:`(b+1)/(R+1)` over R multinomial samples [2]_.

    References
    ----------
    .. [1] Pearson, K. (1900), Phil. Mag. (5) 50, 157-175; Cochran, W. G. (1954) Biometrics 10,
           417-451 (the "expected >= 5" rule).
    .. [2] Davison, A. C. & Hinkley, D. V. (1997), *Bootstrap Methods and their Application*,
           eq. (4.11).

    Examples
    --------
    Five outcomes, 50 spins: :math:`X^2 = (0 + 4 + 1 + 1 + 4)/10 = 1` on 4 df (the same as
    ``scipy.stats.chisquare``):

    >>> from rngcert.stats import pocket_chisquare
    >>> stat, p = pocket_chisquare([10, 12, 9, 11, 8])
    >>> print(f"{stat:.1f} {p:.4f}")
    1.0 0.9098

    A p-value this large is what a fair wheel gives: no evidence against equal pockets.
    """
    return _gof_test(counts, probs, _pearson, method, n_resamples, rng, name)


def g_test(counts, probs=None, *, method: str | MonteCarlo = "auto", n_resamples: int = 9999,
           rng: np.random.Generator | None = None, name: str = "g_test") -> TestResult | NotApplicable:
    r"""Likelihood-ratio (G) test that the pockets follow their null probabilities.

    Parameters
    ----------
    counts, probs, method, n_resamples, rng, name
        As :func:`pocket_chisquare`.

    Returns
    -------
    TestResult or NotApplicable
        As :func:`pocket_chisquare`, with ``statistic`` = G.

    Raises
    ------
    rngcert.errors.InputError
        As :func:`pocket_chisquare`: counts not whole numbers >= 0, ``probs`` of another shape or
        not summing to 1, an unknown ``method``, ``n_resamples`` < 1.

    Notes
    -----
    :math:`G = 2 \sum_j O_j \log(O_j / (n p_j))` (terms with :math:`O_j = 0` are 0),
    asymptotically :math:`\chi^2_{k-1}` under H0 (Wilks 1938); it is the Cressie-Read power
    divergence with :math:`\lambda = 0` [1]_ (``scipy.stats.power_divergence``,
    ``lambda_="log-likelihood"``). Monte Carlo branch as in :func:`pocket_chisquare`.

    References
    ----------
    .. [1] Cressie, N. & Read, T. R. C. (1984), JRSS B 46, 440-464, eq. (2.1) with lambda = 0.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import g_test
    >>> counts = np.full(37, 100)
    >>> counts[17] = 160  # position 17 came up 60% more often than the others
    >>> res = g_test(counts)  # an omnibus test spreads one excess over 36 df: max_count is the test for it
    >>> print(f"G = {res.statistic:.1f}, df = {res.df}, p = {res.pvalue:.2g}")
    G = 29.4, df = 36, p = 0.77
    >>> g_test(np.full(37, 100)).pvalue
    1.0
    """
    return _gof_test(counts, probs, _g_stat, method, n_resamples, rng, name)


# ----------------------------------------------------------------------------------------------
# maximum count
# ----------------------------------------------------------------------------------------------
#: Lower cut of the Poisson pmfs in Levin's representation, in standard deviations; the mass
#: below it is < 1e-30 and does not affect the result.
_LEVIN_LOW_SD = 13.0
#: Above this FFT length the exact computation is replaced by Monte Carlo.
_LEVIN_MAX_LEN = 4_000_000


def _search_for_binom_tst(a, d: float, lo, hi):
    """The index i in [lo, hi] with a(i) <= d < a(i + 1), by bisection over an ordered side of
    the mode (scipy.stats' private helper of ``binomtest``, step for step)."""
    while lo < hi:
        mid = lo + (hi - lo) // 2
        midval = a(mid)
        if midval < d:
            lo = mid + 1
        elif midval > d:
            hi = mid - 1
        else:
            return mid
    return lo if a(lo) <= d else lo - 1


def binom_test_pvalue(k: int, n: int, p: float) -> float:
    """``scipy.stats.binomtest(k, n, p).pvalue`` (two-sided): the probability of the outcomes no
    more likely than k under Bin(n, p), with scipy's relative tolerance 1e-7 for ties.

    The same steps as scipy's (the two-sided p-value that sums the outcomes whose probability
    is at most that of k; scipy cites Zar, *Biostatistical Analysis*, 5th ed., 2010, p. 533), on
    this module's binomial functions (the same ufuncs as scipy.stats'), so the same bits, without
    importing scipy.stats (over 1 s).

    Parameters
    ----------
    k, n : int
        Successes and trials, 0 <= k <= n, n >= 1.
    p : float
        Success probability under H0, in [0, 1].

    Returns
    -------
    float
        The two-sided p-value.

    Raises
    ------
    InputError
        Arguments out of range.

    Examples
    --------
    >>> from rngcert.stats.frequency import binom_test_pvalue
    >>> round(binom_test_pvalue(3, 20, 0.5), 6)
    0.002577
    """
    k, n, p = int(k), int(n), float(p)
    if n < 1 or not 0 <= k <= n or not 0.0 <= p <= 1.0:
        raise InputError(f"binom_test_pvalue needs 0 <= k <= n, n >= 1 and 0 <= p <= 1, got k={k}, n={n}, p={p}")
    pmf = lambda x: float(_dist.binom_pmf(x, n, p))  # noqa: E731
    d = pmf(k)
    rerr = 1 + 1e-7
    if k == p * n:
        return 1.0
    if k < p * n:
        ix = _search_for_binom_tst(lambda x: -pmf(x), -d * rerr, np.ceil(p * n), n)
        y = n - ix + int(d * rerr == pmf(ix))
        pval = float(_dist.binom_cdf(k, n, p)) + float(_dist.binom_sf(n - y, n, p))
    else:
        ix = _search_for_binom_tst(pmf, d * rerr, 0, np.floor(p * n))
        y = ix + 1
        pval = float(_dist.binom_cdf(y - 1, n, p)) + float(_dist.binom_sf(k - 1, n, p))
    return min(1.0, pval)


def _fast_len(m: int) -> int:
    """Smallest 2^i 3^j 5^l >= m: a fast FFT length (the same as ``scipy.fft.next_fast_len(m,
    real=True)``, without importing scipy.fft, about 0.2 s)."""
    best = 1 << max(0, (m - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            v = p35
            while v < m:
                v *= 2
            best = min(best, v)
            p35 *= 3
        p5 *= 5
    return best


def _levin_cdf(n: int, p: np.ndarray, a: np.ndarray) -> float | None:
    """P(N_j <= a_j for all j) for (N_j) ~ multinomial(n, p), by Levin's (1981) formula.

    ``P = n! / (s^n e^{-s}) * P(X_1 <= a_1, ..., X_k <= a_k, sum X = n)`` with independent
    ``X_j ~ Poisson(s p_j)`` and ``s = n``; the last factor is the convolution of the Poisson pmfs
    restricted to ``[lo_j, a_j]``, evaluated at ``n``. Returns None if the FFT would be too long.
    """
    if np.any(a < 0):
        return 0.0
    a = np.minimum(a, n)
    if int(a.sum()) < n:
        return 0.0
    mu = n * p
    lo = np.maximum(0, np.floor(mu - _LEVIN_LOW_SD * np.sqrt(mu) - 1)).astype(np.int64)
    lo = np.minimum(lo, a)
    target = n - int(lo.sum())
    if target < 0:
        return 0.0
    lengths = a - lo + 1
    total = int(lengths.sum() - lengths.size + 1)
    if total > _LEVIN_MAX_LEN:
        return None
    nfft = _fast_len(total)
    prod = None
    done: dict[tuple, np.ndarray] = {}  # pockets of the same (lo, a, mu) have the same transform: computed once (equal probabilities: all)
    for j in range(p.size):  # loop over pockets (k <= a few dozen)
        key = (int(lo[j]), int(a[j]), float(mu[j]))
        f = done.get(key)
        if f is None:
            x = np.arange(lo[j], a[j] + 1)
            pmf = _dist.poisson_pmf(x, mu[j])
            f = done[key] = np.fft.rfft(pmf, nfft)  # numpy's pocketfft: the same bits as scipy.fft's
        prod = f if prod is None else prod * f  # (in pocket order, as before: the same bits)
    conv = np.fft.irfft(prod, nfft)
    pw = max(float(conv[target]), 0.0)
    # n! / (n^n e^{-n}) computed in logs
    log_norm = special.gammaln(n + 1) - n * math.log(n) + n if n > 0 else 0.0
    return min(1.0, pw * math.exp(log_norm))


def max_count(
    counts,
    probs=None,
    *,
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
    name: str = "max_count",
    method: MonteCarlo | None = None,
) -> TestResult | NotApplicable:
    r"""Maximum-count ("favourable number") test: is one pocket coming up too often?

    Parameters
    ----------
    counts : (k,) array_like of int
        Spins per wheel position, in wheel order.
    probs : (k,) array_like of float, optional
        Null probability of each position; default ``1/k``.
    n_resamples : int
        Monte Carlo replicates, used only when the exact computation would be too large
        (FFT length above 4 million, i.e. hundreds of millions of spins).
    rng : numpy.random.Generator, optional
        For the Monte Carlo p-value. Default: the fixed-seed stream
        :func:`rngcert.seeding.default_stream` of ``name`` (the same p-value on every call);
        pass ``rngcert.seeding.stream(seed, ...)`` for a stream of your own.
    name : str
        Identifier carried by the result.
    method : MonteCarlo, optional
        The fallback's ``n_resamples``, ``batch`` and ``rng`` in one object
        (:class:`rngcert.stats.MonteCarlo`) instead of the keywords; the exact law is still used
        wherever it can be computed.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` is :math:`\max_j z_j`; ``df`` is None; ``method`` is ``"exact (Levin 1981)"``
        or ``"monte-carlo, R=…"``. ``details``: the position, its count and expectation, and all
        z-scores.

    Raises
    ------
    rngcert.errors.InputError
        (a ``ValueError``) counts not whole numbers >= 0 or not one-dimensional, fewer than two
        positions, ``probs`` of another shape or not summing to 1.

    Notes
    -----
    H0: counts are multinomial(n, probs). With :math:`e_j = n p_j` the standardized excess is
    :math:`z_j = (O_j - e_j)/\sqrt{e_j (1-p_j)}` and the statistic is :math:`M = \max_j z_j`
    (one-sided: only an excess is a favourable number). For equal probabilities this orders
    samples exactly like the maximum count. The p-value
    :math:`P(M \ge m) = 1 - P(O_j < e_j + m\,\mathrm{sd}_j\ \forall j)` is exact, from Levin's
    representation of a multinomial rectangle probability as a conditional Poisson probability
    [1]_ eq. (1), the convolution evaluated by FFT. Because the subtraction can lose relative
    precision for tiny p-values, the reported p-value is the maximum of that value and the exact
    single-pocket tail :math:`\max_j P(O_j \ge \lceil e_j + m\,\mathrm{sd}_j \rceil)`, which is a
    lower bound of the true p-value.

    References
    ----------
    .. [1] Levin, B. (1981), "A representation for multinomial cumulative distribution
           functions", Ann. Statist. 9, 1123-1126.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import max_count
    >>> counts = np.full(37, 100)
    >>> counts[17] = 160
    >>> res = max_count(counts)
    >>> res.details["position"], res.details["count"], round(res.statistic, 2), res.pvalue < 1e-4
    (17, 160, 5.87, True)
    >>> res.method
    'exact (Levin 1981)'
    """
    if method is not None and not isinstance(method, MonteCarlo):
        raise InputError(f"{name}: method must be a MonteCarlo(...) or None, got {method!r}")
    _, n_resamples, rng, batch = monte_carlo_args(method, n_resamples, rng, name, default_n=9999, mc_method=None)
    counts = _as_counts(counts, name)
    k = counts.size
    _min_positions(k, 2, name)  # one position: sd = 0, and z was 0/0 (statistic nan, p-value 2.2e-16)
    p = _as_probs(probs, k, name)
    n_resamples = _n_resamples_iv(n_resamples, name)
    n = int(counts.sum())
    req = Requirement.UNIFORMITY
    if n == 0:
        return NotApplicable(name, req, 0, "no observations (all counts are 0)")
    e = n * p
    sd = np.sqrt(e * (1.0 - p))
    z = (counts - e) / sd
    j = int(np.argmax(z))
    m = float(z[j])
    # thresholds: pocket j "exceeds" iff O_j >= e_j + m sd_j (with a small tolerance for ties)
    tol = 1e-9 * max(1.0, abs(m))
    thr = e + (m - tol) * sd
    a = np.ceil(thr).astype(np.int64) - 1  # O_j <= a_j  <=>  O_j < thr_j
    cdf = _levin_cdf(n, p, a)
    details = dict(
        position=j,
        count=int(counts[j]),
        expected=float(e[j]),
        relative_excess=float(counts[j] / e[j] - 1.0),
        z=z,
    )
    if cdf is not None:
        single = float(np.max(_dist.binom_sf(a, n, p)))  # P(O_j >= a_j + 1)
        pvalue = clip_pvalue(max(1.0 - cdf, single))
        mlabel = "exact (Levin 1981)"
    else:
        rng = _rng_iv(rng, name)
        null = np.concatenate(
            [np.max((x - e) / sd, axis=1) for x in _multinomial_batches(n, p, n_resamples, rng, batch)]
        )
        pvalue = monte_carlo_pvalue(m, null)
        mlabel = f"monte-carlo, R={n_resamples}"
    return TestResult(name, req, m, None, pvalue, n, mlabel, details)


# ----------------------------------------------------------------------------------------------
# per-pocket binomial tests with Holm
# ----------------------------------------------------------------------------------------------
def _binom_two_sided(k: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    """Vectorised two-sided exact binomial p-values, the "minimum likelihood" rule of
    ``scipy.stats.binomtest`` (sum of pmf(i) over all i with pmf(i) <= pmf(k) (1 + 1e-7)).

    The pmf is non-increasing on [ceil(np), n] and non-decreasing on [0, floor(np)], so the other
    tail's boundary is found by a binary search run for all pockets at once.
    """
    k = np.asarray(k, dtype=np.int64)
    p = np.asarray(p, dtype=float)
    thr = _dist.binom_pmf(k, n, p) * (1 + 1e-7)
    mean = n * p
    out = np.ones(k.shape)
    left = k < mean
    right = k > mean
    if np.any(left):
        # smallest b in [ceil(np), n] with pmf(b) <= thr (n + 1 if none)
        lo = np.ceil(mean[left]).astype(np.int64)
        hi = np.full(lo.shape, n + 1, dtype=np.int64)
        while np.any(lo < hi):  # O(log n) iterations
            mid = (lo + hi) // 2
            cond = _dist.binom_pmf(mid, n, p[left]) <= thr[left]
            act = lo < hi
            hi = np.where(act & cond, mid, hi)
            lo = np.where(act & ~cond, mid + 1, lo)
        out[left] = _dist.binom_cdf(k[left], n, p[left]) + _dist.binom_sf(lo - 1, n, p[left])
    if np.any(right):
        # largest a in [0, floor(np)] with pmf(a) <= thr (-1 if none)
        lo = np.full(int(right.sum()), -1, dtype=np.int64)
        hi = np.floor(mean[right]).astype(np.int64)
        while np.any(lo < hi):
            mid = (lo + hi + 1) // 2
            cond = _dist.binom_pmf(mid, n, p[right]) <= thr[right]
            act = lo < hi
            lo = np.where(act & cond, mid, lo)
            hi = np.where(act & ~cond, mid - 1, hi)
        out[right] = _dist.binom_cdf(lo, n, p[right]) + _dist.binom_sf(k[right] - 1, n, p[right])
    return np.clip(out, 0.0, 1.0)


def pocket_binomial(
    counts,
    probs=None,
    *,
    alpha: float = 0.01,
    name: str = "pocket_binomial_holm",
) -> TestResult | NotApplicable:
    r"""Two-sided exact binomial test per pocket, Holm-adjusted across pockets.

    Parameters
    ----------
    counts : (k,) array_like of int
        Spins per wheel position, in wheel order.
    probs : (k,) array_like of float, optional
        Null probability of each position; default ``1/k``.
    alpha : float
        Family-wise level at which positions are listed as rejected (0 < alpha < 1).
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` and ``pvalue`` are the smallest Holm-adjusted p-value (a valid p-value of the
        global null); ``details``: raw and adjusted p per position, positions rejected at ``alpha``.

    Notes
    -----
    H0 for position j: :math:`O_j \sim \mathrm{Bin}(n, p_j)`; the two-sided p-value is the
    "minimum likelihood" one of ``scipy.stats.binomtest`` [2]_ (computed for all pockets
    at once with the same rule and tolerance). Holm's step-down procedure [1]_
    controls the family-wise error rate, so the smallest adjusted p-value is a p-value for the
    intersection (global) null.

    References
    ----------
    .. [1] Holm, S. (1979), Scand. J. Statist. 6, 65-70.
    .. [2] scipy.stats.binomtest; Clopper, C. J. & Pearson, E. S. (1934), Biometrika 26, 404-413.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import pocket_binomial
    >>> counts = np.full(37, 100)
    >>> counts[17] = 160
    >>> res = pocket_binomial(counts)
    >>> res.pvalue < 0.01, sorted(res.details)
    (True, ['adjusted_pvalues', 'alpha', 'expected', 'observed', 'raw_pvalues', 'rejected_positions'])
    """
    counts = _as_counts(counts, name)
    k = counts.size
    p = _as_probs(probs, k, name)
    check_number(alpha, f"{name}: alpha", low=0, high=1, low_open=True, high_open=True)
    n = int(counts.sum())
    req = Requirement.UNIFORMITY
    if n == 0:
        return NotApplicable(name, req, 0, "no observations (all counts are 0)")
    raw = _binom_two_sided(counts, n, p)
    reject, adjusted = holm(raw, alpha)
    pmin = clip_pvalue(float(np.min(adjusted)))
    details = dict(
        raw_pvalues=raw,
        adjusted_pvalues=adjusted,
        rejected_positions=np.flatnonzero(reject),
        alpha=float(alpha),
        observed=counts,
        expected=n * p,
    )
    return TestResult(name, req, pmin, None, pmin, n, "exact binomial, Holm", details)


# ----------------------------------------------------------------------------------------------
# category (outside-bet / symbol) frequencies
# ----------------------------------------------------------------------------------------------
def category_frequency(
    counts,
    categories,
    probs=None,
    *,
    name: str,
    method: str | MonteCarlo = "auto",
    n_resamples: int = 9999,
    rng: np.random.Generator | None = None,
    requirement: Requirement = Requirement.UNIFORMITY,
) -> TestResult | NotApplicable:
    r"""Pearson chi-square test of category frequencies (colours, parity, dozens, symbols).

    Parameters
    ----------
    counts : (k,) array_like of int
        Spins per wheel position, in wheel order.
    categories : (k,) array_like of int
        Category id of each position (ids >= 0); -1 marks a position that belongs to no category
        (e.g. zero for low/high): it is excluded from the test and from n.
    probs : (k,) array_like of float, optional
        Null probability of each position; default ``1/k``. Renormalised over included positions.
    name : str
        Identifier carried by the result (e.g. ``"red_black"``, ``"dozens"``).
    method, n_resamples, rng
        As in :func:`pocket_chisquare` (Monte Carlo when an expected category count is < 5).
    requirement : Requirement
        Defaults to UNIFORMITY.

    Returns
    -------
    TestResult or NotApplicable
        ``df`` = number of categories - 1; ``details`` has ``category_ids``, observed and expected
        per category and the number of excluded spins.

    Notes
    -----
    H0: the category counts, given n, are multinomial with
    :math:`\pi_c = \sum_{j \in c} p_j / \sum_{j: c_j \ge 0} p_j`. Pearson's statistic is
    asymptotically :math:`\chi^2_{m-1}` with m categories [1]_.

    References
    ----------
    .. [1] Pearson, K. (1900), Phil. Mag. (5) 50, 157-175.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import category_frequency
    >>> counts = np.array([12, 30, 20, 30, 20])  # position 0 is zero: in no category (-1)
    >>> res = category_frequency(counts, [-1, 0, 1, 0, 1], name="red_black")
    >>> res.n, res.df, round(res.statistic, 2), round(res.pvalue, 4)
    (100, 1, 4.0, 0.0455)
    """
    method, n_resamples, rng, batch = monte_carlo_args(method, n_resamples, rng, name, default_n=9999)
    counts = _as_counts(counts, name)
    k = counts.size
    p = _as_probs(probs, k, name)
    method = _method_iv(method, name)
    n_resamples = _n_resamples_iv(n_resamples, name)
    cat = np.asarray(categories)
    if cat.shape != (k,):
        raise InputError(f"{name}: categories must have shape ({k},), got {cat.shape}")
    if cat.dtype.kind not in "iu":
        raise InputError(f"{name}: categories must be integer ids, got dtype {cat.dtype}")
    if np.any(cat < -1):
        raise InputError(
            f"{name}: category ids must be >= 0 or -1 (no category), found {cat[cat < -1][0]!r}"
        )
    incl = cat >= 0
    ids = arrayops.unique(cat[incl])
    if ids.size < 2:
        return NotApplicable(name, requirement, int(counts.sum()), f"the wheel has {ids.size} category of this kind (ids {ids.tolist()}); at least 2 are needed")
    idx = np.searchsorted(ids, cat[incl])
    obs = np.bincount(idx, weights=counts[incl], minlength=ids.size).astype(np.int64)
    pi = np.bincount(idx, weights=p[incl], minlength=ids.size)
    pi = pi / pi.sum()
    excluded = int(counts[~incl].sum())
    res = _gof(
        obs,
        pi,
        _pearson,
        method,
        n_resamples,
        rng,
        name,
        requirement,
        dict(category_ids=ids, excluded_spins=excluded, category_probs=pi),
        batch,
    )
    return res
