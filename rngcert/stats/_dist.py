"""Distribution functions of the wheel battery's hot path, without importing ``scipy.stats``.

``import scipy.stats`` costs about 1.9 s on the 2-core lab machine (it builds the docstrings of
every distribution at import), more than the whole battery of a 10,000-spin certification. The
functions here evaluate the *same* ufuncs that ``scipy.stats`` evaluates for these distributions
(``scipy.special``: Cephes for chi-square and normal, Boost for the binomial, beta and noncentral
chi-square), with ``scipy.stats``' support conventions (below the support, at and above its top,
integer checks for discrete pmfs), so every p-value is bit-identical to the ``scipy.stats`` call it
replaces (``tests/test_dist.py`` checks that on grids including the edges).

The Boost ufuncs are private to ``scipy.special`` (``scipy.special._ufuncs._binom_sf`` …). If a
scipy release drops one, the function falls back to ``scipy.stats`` (slow to import, same numbers).

All functions but :func:`fisher_exact_greater` (one table, a Python float) broadcast like ufuncs and
return a numpy float64 scalar for scalar input, as ``scipy.stats`` does. Arguments are assumed valid
(n >= 0 integer, 0 <= p <= 1, df > 0): they come from the battery, which checks its inputs. The
variable (x, k, q) may be anything: nan, +/-inf, outside the support or [0, 1] give scipy's numbers
(non-integer k of :func:`hypergeom_cdf`: see there).
"""

from __future__ import annotations

import numpy as np

from rngcert.stats.ufuncs import special, ufuncs  # scipy.special's ufuncs without its array-API layer

# the ufuncs scipy.stats' binom, beta and ncx2 call (scipy >= 1.9), None if a release drops one
_beta_ppf, _binom_cdf, _binom_pmf, _binom_sf, _ncx2_sf = (getattr(ufuncs, n, None) for n in ("_beta_ppf", "_binom_cdf", "_binom_pmf",
                                                                                            "_binom_sf", "_ncx2_sf"))
if None in (_beta_ppf, _binom_cdf, _binom_pmf, _binom_sf, _ncx2_sf):  # pragma: no cover - depends on the scipy release
    _beta_ppf = _binom_cdf = _binom_pmf = _binom_sf = _ncx2_sf = None
_hypergeom_cdf = getattr(ufuncs, "_hypergeom_cdf", None)  # scipy.stats.hypergeom's cdf (Boost)


def _out(x: np.ndarray):
    return np.asarray(x, dtype=float)[()]


def chi2_sf(x, df):
    """``scipy.stats.chi2.sf(x, df)``: P(X > x) for X chi-square with ``df`` degrees of freedom."""
    x, df = np.asarray(x, dtype=float), np.asarray(df, dtype=float)
    with np.errstate(invalid="ignore"):
        v = np.where(x == np.inf, 0.0, np.clip(special.chdtrc(df, np.maximum(x, 0.0)), 0.0, 1.0))  # (0 above the support, as scipy)
        return _out(np.where(x <= 0, 1.0, v))


def chi2_isf(q, df):
    """``scipy.stats.chi2.isf(q, df)``: the x with P(X > x) = q (0 at q = 1, inf at 0, nan for q outside [0, 1])."""
    q, df = np.asarray(q, dtype=float), np.asarray(df, dtype=float)
    with np.errstate(invalid="ignore"):
        inner = np.where(q >= 1, 0.0, np.where(q <= 0, np.inf, special.chdtri(df, np.clip(q, 0.0, 1.0))))
        return _out(np.where((q >= 0) & (q <= 1), inner, np.nan))


def norm_sf(z):
    """``scipy.stats.norm.sf(z)``: P(Z > z) for a standard normal Z."""
    return _out(special.ndtr(-np.asarray(z, dtype=float)))


def norm_cdf(z):
    """``scipy.stats.norm.cdf(z)``: P(Z <= z) for a standard normal Z."""
    return _out(special.ndtr(np.asarray(z, dtype=float)))


def norm_isf(q):
    """``scipy.stats.norm.isf(q)``: the z with P(Z > z) = q (``-ndtri(q)``: +inf at 0, -inf at 1)."""
    return _out(-special.ndtri(np.asarray(q, dtype=float)))


def chi2_cdf(x, df):
    """``scipy.stats.chi2.cdf(x, df)``: P(X <= x) for X chi-square with ``df`` degrees of freedom."""
    x, df = np.asarray(x, dtype=float), np.asarray(df, dtype=float)
    with np.errstate(invalid="ignore"):
        inner = np.where(x <= 0, 0.0, np.where(x == np.inf, 1.0, special.chdtr(df, np.maximum(x, 0.0))))
        return _out(np.where(df > 0, inner, np.nan))  # (df <= 0: nan, as scipy)


def chi2_ppf(q, df):
    """``scipy.stats.chi2.ppf(q, df)``: the x with P(X <= x) = q (``2 * gammaincinv(df / 2, q)``; 0 at 0, inf at 1)."""
    q, df = np.asarray(q, dtype=float), np.asarray(df, dtype=float)
    with np.errstate(invalid="ignore"):
        inner = np.where(q <= 0, 0.0, np.where(q >= 1, np.inf, 2 * special.gammaincinv(df / 2, np.clip(q, 0.0, 1.0))))
        return _out(np.where((df > 0) & (q >= 0) & (q <= 1), inner, np.nan))


def f_sf(x, dfn, dfd):
    """``scipy.stats.f.sf(x, dfn, dfd)``: P(F > x) for F with ``dfn`` and ``dfd`` degrees of freedom."""
    x, dfn, dfd = np.asarray(x, dtype=float), np.asarray(dfn, dtype=float), np.asarray(dfd, dtype=float)
    with np.errstate(invalid="ignore"):
        return _out(np.where((dfn > 0) & (dfd > 0), np.where(x <= 0, 1.0, special.fdtrc(dfn, dfd, np.maximum(x, 0.0))), np.nan))


def t_sf(x, df):
    """``scipy.stats.t.sf(x, df)``: P(T > x) for Student's T with ``df`` degrees of freedom (``stdtr(df, -x)``)."""
    return _out(special.stdtr(np.asarray(df, dtype=float), -np.asarray(x, dtype=float)))


def _discrete(name: str):
    import scipy.stats  # fallback only: see the module docstring

    return getattr(scipy.stats.binom, name)


def _binom_tail(ufunc, k, n, p, *, below: float, above: float):
    """A binomial tail ufunc on floor(k) inside 0 <= k < n, ``below`` for k < 0, ``above`` for
    k >= n and nan for k nan (scipy.stats' rv_discrete conventions for sf and cdf)."""
    k, n, p = np.broadcast_arrays(np.floor(np.asarray(k, dtype=float)), np.asarray(n, dtype=float), np.asarray(p, dtype=float))
    inside = (k >= 0) & (k < n)
    v = np.where(k < 0, below, np.where(np.isnan(k), np.nan, above))
    v[inside] = np.clip(ufunc(k[inside], n[inside], p[inside]), 0.0, 1.0)  # only where scipy calls it (Boost may raise elsewhere)
    return _out(v)


def binom_sf(k, n, p):
    """``scipy.stats.binom.sf(k, n, p)``: P(X > k) for X ~ Bin(n, p)."""
    if _binom_sf is None:  # pragma: no cover
        return _discrete("sf")(k, n, p)
    return _binom_tail(_binom_sf, k, n, p, below=1.0, above=0.0)


def binom_cdf(k, n, p):
    """``scipy.stats.binom.cdf(k, n, p)``: P(X <= k) for X ~ Bin(n, p)."""
    if _binom_cdf is None:  # pragma: no cover
        return _discrete("cdf")(k, n, p)
    return _binom_tail(_binom_cdf, k, n, p, below=0.0, above=1.0)


def binom_pmf(k, n, p):
    """``scipy.stats.binom.pmf(k, n, p)``: P(X = k) for X ~ Bin(n, p) (0 off the integers 0..n, nan at k nan)."""
    if _binom_pmf is None:  # pragma: no cover
        return _discrete("pmf")(k, n, p)
    k, n, p = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float), np.asarray(p, dtype=float))
    inside = (k >= 0) & (k <= n) & (np.floor(k) == k)
    v = np.where(np.isnan(k), np.nan, 0.0)
    v[inside] = np.clip(_binom_pmf(k[inside], n[inside], p[inside]), 0.0, 1.0)  # (Boost raises at p ~ 1e-308)
    return _out(v)


def poisson_pmf(k, mu):
    """``scipy.stats.poisson.pmf(k, mu)``: ``exp(xlogy(k, mu) - gammaln(k + 1) - mu)`` on the
    non-negative integers, 0 elsewhere, nan at k nan (scipy's own formula)."""
    k, mu = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(mu, dtype=float))
    inside = (k >= 0) & (np.floor(k) == k)
    kk = np.where(inside, k, 0.0)
    v = np.clip(np.exp(special.xlogy(kk, mu) - special.gammaln(kk + 1) - mu), 0.0, 1.0)
    return _out(np.where(inside, v, np.where(np.isnan(k), np.nan, 0.0)))


def beta_ppf(q, a, b):
    """``scipy.stats.beta.ppf(q, a, b)``: the q-quantile of Beta(a, b) (0 at q = 0, 1 at q = 1, nan for q outside [0, 1])."""
    if _beta_ppf is None:  # pragma: no cover
        import scipy.stats

        return scipy.stats.beta.ppf(q, a, b)
    q, a, b = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    inside = (q > 0) & (q < 1)
    v = np.where(q == 0, 0.0, np.where(q == 1, 1.0, np.nan))
    v[inside] = _beta_ppf(q[inside], a[inside], b[inside])
    return _out(v)


def ncx2_sf(x, df, nc):
    """``scipy.stats.ncx2.sf(x, df, nc)``: P(X > x) for X noncentral chi-square (``nc`` >= 0; 1 at x <= 0,
    0 at x = inf, nan at x nan, as scipy: Boost's sf is nan at inf)."""
    if _ncx2_sf is None:  # pragma: no cover
        import scipy.stats

        return scipy.stats.ncx2.sf(x, df, nc)
    x, df, nc = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(df, dtype=float), np.asarray(nc, dtype=float))
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.where(np.isnan(x), np.nan, np.where(x == np.inf, 0.0, 1.0))  # 1 at and below the support's start, x <= 0
        central = (nc == 0) & (x > 0) & (x < np.inf)
        other = (nc != 0) & (x > 0) & (x < np.inf)  # Boost only where scipy calls it
        v[central] = special.chdtrc(df[central], x[central])
        v[other] = _ncx2_sf(x[other], df[other], nc[other])
    return _out(np.clip(v, 0.0, 1.0))


def hypergeom_cdf(k, M, n, N):
    """``scipy.stats.hypergeom.cdf(k, M, n, N)``: P(X <= k) for X the marked items among N drawn
    without replacement from M items of which n are marked (0 below the support
    ``max(0, N - (M - n))``, 1 at and above its top ``min(n, N)``, nan at k nan). A non-integer k
    inside the support gives P(X <= floor(k)), where ``scipy.stats.hypergeom.cdf`` gives nan (it
    passes k to Boost unfloored, unlike ``binom.cdf``)."""
    if _hypergeom_cdf is None:  # pragma: no cover
        import scipy.stats

        return scipy.stats.hypergeom.cdf(k, M, n, N)
    k, M, n, N = np.broadcast_arrays(np.floor(np.asarray(k, dtype=float)), *(np.asarray(a, dtype=float) for a in (M, n, N)))
    lo, hi = np.maximum(N - (M - n), 0), np.minimum(n, N)
    inside = (k >= lo) & (k < hi)
    v = np.where(k < lo, 0.0, np.where(np.isnan(k), np.nan, 1.0))
    v[inside] = np.clip(_hypergeom_cdf(k[inside], n[inside], N[inside], M[inside]), 0.0, 1.0)
    return _out(v)


def fisher_exact_greater(table) -> float:
    """``scipy.stats.fisher_exact(table, alternative="greater").pvalue`` of a 2 x 2 table of
    non-negative counts: 1 when a row or column sums to 0, else
    ``hypergeom.cdf(c01, n1 + n2, n1, c01 + c11)`` (scipy's formula)."""
    c = np.asarray(table, dtype=np.int64)
    if 0 in c.sum(axis=0) or 0 in c.sum(axis=1):
        return 1.0
    n1, n2 = int(c[0, 0] + c[0, 1]), int(c[1, 0] + c[1, 1])
    return float(hypergeom_cdf(int(c[0, 1]), n1 + n2, n1, int(c[0, 1] + c[1, 1])))
