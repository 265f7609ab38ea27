"""Independence tests on the sequence of wheel positions.

``positions`` is an (n,) int array of wheel positions 0..k-1 in spin order (void spins removed).
"""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist, arrayops, chunks
from rngcert.stats._validate import _as_counts, _as_probs, _n_resamples_iv, _rng_iv
from rngcert.stats.chunks import count_true, lookup, spans
from rngcert.stats.montecarlo import MonteCarlo, monte_carlo_args
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue, monte_carlo_pvalue

__all__ = ["pair_counts", "serial_pair", "wheel_distance", "serial_correlation", "gap_test"]

_REQ = Requirement.INDEPENDENCE
#: Memory bound (cells) of one permutation batch.
_PERM_BATCH_CELLS = 4_000_000


def _positions_iv(positions, k, name: str, cast: bool = True) -> tuple[np.ndarray, int]:
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise InputError(f"{name}: k must be an integer >= 2, got {k!r}")
    k = int(k)
    pos = np.asarray(positions)
    if pos.ndim != 1:
        raise InputError(f"{name}: positions must be one-dimensional, got shape {pos.shape}")
    if pos.dtype.kind not in "iu":
        raise InputError(f"{name}: positions must be integers, got dtype {pos.dtype}")
    if pos.size and (pos.min() < 0 or pos.max() >= k):
        bad = pos[(pos < 0) | (pos >= k)][0]
        raise InputError(f"{name}: positions must be in 0..{k - 1}, found {bad!r}")
    return (pos.astype(np.int64) if cast else pos), k


def pair_counts(positions, k: int) -> np.ndarray:
    """Counts of consecutive (overlapping) pairs of wheel positions.

    Parameters
    ----------
    positions : (n,) array_like of int
        Wheel positions 0..k-1 in spin order.
    k : int
        Number of wheel positions.

    Returns
    -------
    (k, k) ndarray of int64
        ``out[i, j]`` = number of t with ``positions[t] == i`` and ``positions[t+1] == j``;
        the total is ``n - 1`` (0 if n < 2).

    Examples
    --------
    >>> from rngcert.stats import pair_counts
    >>> pair_counts([0, 1, 1, 2, 0], 3)
    array([[0, 1, 0],
           [0, 1, 1],
           [1, 0, 0]])
    """
    pos, k = _positions_iv(positions, k, "pair_counts")
    if pos.size < 2:
        return np.zeros((k, k), dtype=np.int64)
    return np.bincount(pos[:-1] * k + pos[1:], minlength=k * k).reshape(k, k).astype(np.int64)


def _contingency_x2(tab: np.ndarray) -> np.ndarray:
    """Pearson independence X^2 of (..., r, c) tables (cells with zero margins contribute 0)."""
    tab = tab.astype(float)
    N = tab.sum(axis=(-2, -1), keepdims=True)
    e = tab.sum(axis=-1, keepdims=True) * tab.sum(axis=-2, keepdims=True) / N
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(e > 0, (tab - e) ** 2 / np.where(e > 0, e, 1.0), 0.0)
    return t.sum(axis=(-2, -1))


def _table_chisquare(tab: np.ndarray, rows: np.ndarray, cols: np.ndarray, n: int, method: str):
    """X^2 of ``tab`` on its non-empty ``rows`` and ``cols`` (masks), its df, the expected counts
    of those cells, and ``method`` with "auto" resolved: "permutation" when the expected counts are
    sparse (Cochran's rule: any below 1 or more than 20% below 5), else "asymptotic"."""
    sub = tab[np.ix_(rows, cols)]
    e = sub.sum(axis=1, keepdims=True) * sub.sum(axis=0, keepdims=True) / n
    df = (int(rows.sum()) - 1) * (int(cols.sum()) - 1)
    if method == "auto":
        method = "permutation" if bool(e.min() < 1.0 or np.mean(e < 5.0) > 0.2) else "asymptotic"
    return float(_contingency_x2(sub)), df, e, method


# long: numpydoc docstring, then the asymptotic test and its permutation fallback for sparse tables
def serial_pair(
    pair_counts,
    *,
    method: str | MonteCarlo = "auto",
    n_resamples: int = 999,
    rng: np.random.Generator | None = None,
    positions=None,
    name: str = "serial_pair",
) -> TestResult | NotApplicable:
    r"""Transition (serial-pair) chi-square test: independence against a first-order Markov chain.

    Parameters
    ----------
    pair_counts : (k, k) array_like of int
        Counts of consecutive pairs (from :func:`pair_counts`), row = earlier result.
    method : {"auto", "asymptotic", "permutation"}
        ``"auto"`` uses the chi-square law unless the expected counts are sparse (Cochran's rule:
        any expected count < 1, or more than 20% of them < 5), then a permutation p-value.
        ``method=MonteCarlo(n_resamples, batch, rng)`` (:class:`rngcert.stats.MonteCarlo`) is
        ``"permutation"`` with its options in one object.
    n_resamples : int
        Permutations R for the permutation p-value.
    rng : numpy.random.Generator, optional
        For the Monte Carlo p-value. Default: the fixed-seed stream
        :func:`rngcert.seeding.default_stream` of ``name`` (the same p-value on every call);
        pass ``rngcert.seeding.stream(seed, ...)`` for a stream of your own.
    positions : (n,) array_like of int, optional
        The sequence the pair counts come from; required for the permutation p-value (it is checked
        against ``pair_counts``).
    name : str
        Identifier carried by the result.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` :math:`X^2`, ``df = (r-1)(c-1)`` with r, c the non-empty rows/columns.
        NotApplicable when fewer than 2 rows or columns are non-empty, or when the counts are
        sparse and ``positions`` were not given.

    Notes
    -----
    H0: the results are i.i.d. Anderson & Goodman's statistic for order 0 against order 1 [1]_
    eq. (3.6), :math:`\sum_{i,j} n_{i\cdot}(\hat p_{ij} - \hat p_{\cdot j})^2/\hat p_{\cdot j}`
    with :math:`\hat p_{ij} = n_{ij}/n_{i\cdot}`, :math:`\hat p_{\cdot j} = n_{\cdot j}/N`, is the
    Pearson independence statistic of the pair table and is asymptotically
    :math:`\chi^2_{(k-1)^2}` although the pairs overlap ([1]_ §3.3; Billingsley 1961). The
    permutation p-value :math:`(b+1)/(R+1)` permutes the sequence, which keeps the marginal counts
    exactly and is exact for any n under exchangeability (implied by i.i.d.).

    References
    ----------
    .. [1] Anderson, T. W. & Goodman, L. A. (1957), "Statistical inference about Markov chains",
           Ann. Math. Statist. 28, 89-110.
    .. [2] Cochran, W. G. (1954), Biometrics 10, 417-451.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import pair_counts, serial_pair
    >>> rolls = np.random.default_rng(2).integers(0, 6, 1200)  # a die: 36 pair cells, 33 expected each
    >>> res = serial_pair(pair_counts(rolls, 6))
    >>> res.df, res.method, res.pvalue > 0.01
    (25, 'asymptotic', True)
    >>> sticky = np.repeat(rolls[:600], 2)  # every result repeated once: strongly dependent
    >>> serial_pair(pair_counts(sticky, 6)).pvalue < 1e-10
    True
    """
    tab = _as_counts(pair_counts, name, ndim=(2,))
    if tab.shape[0] != tab.shape[1]:
        raise InputError(f"{name}: pair_counts must be square (k, k), got shape {tab.shape}")
    k = tab.shape[0]
    method, n_resamples, rng, batch = monte_carlo_args(method, n_resamples, rng, name, default_n=999, mc_method="permutation")
    if method not in ("auto", "asymptotic", "permutation"):
        raise InputError(
            f"{name}: method {method!r} is not one of ('auto', 'asymptotic', 'permutation')"
        )
    n_resamples = _n_resamples_iv(n_resamples, name)
    N = int(tab.sum())
    rows = tab.sum(axis=1) > 0
    cols = tab.sum(axis=0) > 0
    r, c = int(rows.sum()), int(cols.sum())
    if r < 2 or c < 2:
        return NotApplicable(name, _REQ, N, f"only {r} non-empty rows and {c} non-empty columns")
    stat, df, e, method = _table_chisquare(tab, rows, cols, N, method)
    details = dict(min_expected=float(e.min()), frac_expected_below_5=float(np.mean(e < 5.0)),
                   nonempty_rows=r, nonempty_cols=c)
    if method == "asymptotic":
        pvalue = clip_pvalue(_dist.chi2_sf(stat, df))
        return TestResult(name, _REQ, stat, df, pvalue, N, "asymptotic", details)
    if positions is None:
        return NotApplicable(
            name, _REQ, N,
            "expected pair counts are sparse (Cochran's rule) and no positions were given for "
            "the permutation p-value",
        )
    rng = _rng_iv(rng, name)
    pos, _ = _positions_iv(positions, k, name)
    if not np.array_equal(pair_counts_fn(pos, k), tab):
        raise InputError(f"{name}: positions do not reproduce the given pair_counts")
    n = pos.size
    batch = batch or max(1, _PERM_BATCH_CELLS // max(n, k * k))
    null = np.empty(n_resamples)
    done = 0
    while done < n_resamples:
        b = min(batch, n_resamples - done)
        perm = rng.permuted(np.broadcast_to(pos, (b, n)), axis=1)
        codes = perm[:, :-1] * k + perm[:, 1:] + (np.arange(b) * k * k)[:, None]
        tabs = np.bincount(codes.ravel(), minlength=b * k * k).reshape(b, k, k)
        null[done : done + b] = _contingency_x2(tabs)
        done += b
    pvalue = monte_carlo_pvalue(stat, null)
    return TestResult(name, _REQ, stat, df, pvalue, N, f"permutation, R={n_resamples}", details)


pair_counts_fn = pair_counts


def _distance_law(p: np.ndarray) -> np.ndarray:
    """q_d = sum_j p_j p_{(j+d) mod k}: the law of (X' - X) mod k for i.i.d. X, X' ~ p."""
    k = p.size
    idx = (np.arange(k)[:, None] + np.arange(k)[None, :]) % k  # [j, d] -> j + d
    return (p[:, None] * p[idx]).sum(axis=0)


# long: numpydoc docstring, then the distance law under non-uniform probabilities and the pair mask
def wheel_distance(
    positions,
    k: int,
    *,
    lag: int = 1,
    probs=None,
    name: str = "wheel_distance",
    pair_mask=None,
    observed=None,
) -> TestResult | NotApplicable:
    r"""Chi-square test of the wheel distance between results ``lag`` spins apart.

    Parameters
    ----------
    positions : (n,) array_like of int
        Wheel positions in spin order.
    k : int
        Number of wheel positions.
    lag : int
        Distance in spins (>= 1).
    probs : (k,) array_like of float, optional
        Null probability per position; default ``1/k``.
    name : str
        Identifier carried by the result.
    pair_mask : (n - lag,) array_like of bool, optional
        Distances to use (default all): a data-integrity check can exclude the pairs that
        straddle the lines of a transcribed list. Any subset of the distances of an i.i.d.
        sequence has the same law, so the test stays exact in form; the dependence term below
        counts only the adjacent distances that are both kept.
    observed : (k,) array_like of int, optional
        The counts of the distances 0..k-1 when already known (with ``lag`` 1 and no ``pair_mask``:
        :meth:`rngcert.stats.tally.SpinTally.distance_counts`); not counted again from ``positions``.

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` as below, ``df = k - 1``; details: observed and expected counts of each
        distance 0..k-1. NotApplicable when an expected count is below 5.

    Notes
    -----
    :math:`d_t = (x_{t+\ell} - x_t) \bmod k`, :math:`t = 1..N`, :math:`N = n - \ell`. H0: the
    results are i.i.d. with law p; then :math:`P(d = a) = q_a = \sum_j p_j p_{j+a}` (circular
    autoconvolution). With uniform p the map from :math:`(x_1..x_\ell, d_1..d_N)` to the sequence
    is a bijection, so the :math:`d_t` are i.i.d. uniform and Pearson's
    :math:`X^2 = \sum_a (O_a - N/k)^2/(N/k) \sim \chi^2_{k-1}` asymptotically [1]_. With
    non-uniform p, :math:`d_t` and :math:`d_{t+\ell}` share :math:`x_{t+\ell}` and are dependent,
    which inflates the variance of Pearson's statistic; we then use the Wald form
    :math:`(O - Nq)^T V^{-} (O - Nq)` (any generalised inverse; computed by dropping the last
    class) with the exact covariance
    :math:`V = N(\mathrm{diag}(q) - qq^T) + (N-\ell)(C + C^T)`,
    :math:`C_{ab} = \sum_x p_{x-a} p_x p_{x+b} - q_a q_b`, and df = rank V = k - 1. It equals
    Pearson's statistic when p is uniform (C = 0).

    References
    ----------
    .. [1] Pearson, K. (1900), Phil. Mag. (5) 50, 157-175. For the Wald form with a generalised
           inverse: Moore, D. S. (1977), "Generalized inverses, Wald's method, and the
           construction of chi-squared tests of fit", JASA 72, 131-137.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import wheel_distance
    >>> positions = np.random.default_rng(4).integers(0, 37, 5000)
    >>> res = wheel_distance(positions, 37)
    >>> res.df, res.n, res.pvalue > 0.01
    (36, 4999, True)
    >>> drift = np.cumsum(np.random.default_rng(4).integers(0, 3, 5000)) % 37  # each result 0-2 pockets after the last
    >>> wheel_distance(drift, 37).pvalue < 1e-10
    True
    """
    pos, k = _positions_iv(positions, k, name, cast=False)
    if isinstance(lag, bool) or int(lag) != lag or lag < 1:
        raise InputError(f"{name}: lag must be an integer >= 1, got {lag!r}")
    lag = int(lag)
    p = _as_probs(probs, k, name)
    N = pos.size - lag
    if N < 1:
        return NotApplicable(name, _REQ, max(N, 0), f"n={pos.size} spins is not more than lag={lag}")
    n_overlap = max(N - lag, 0)
    mask = None
    if pair_mask is not None:
        mask = np.asarray(pair_mask, dtype=bool)
        if mask.shape != (N,):
            raise InputError(f"{name}: pair_mask must have n - lag = {N} entries, got shape {mask.shape}")
        n_overlap = sum(int(np.count_nonzero(mask[lo + lag : hi + lag] & mask[lo:hi])) for lo, hi in spans(N - lag))
        N = count_true(mask)
        if N < 1:
            return NotApplicable(name, _REQ, 0, "no distance left after the excluded pairs")
    if observed is not None and (lag != 1 or mask is not None):
        raise InputError(f"{name}: observed counts are taken only for lag 1 over every pair")
    obs = np.zeros(k, dtype=np.int64) if observed is None else np.asarray(observed, dtype=np.int64).copy()
    for lo, hi in spans(pos.size - lag) if observed is None else ():  # loop over spans: d_t = (x_{t+lag} - x_t) mod k
        d = pos[lo + lag : hi + lag].astype(np.int32)
        d -= pos[lo:hi]
        d[d < 0] += k
        obs += np.bincount(d if mask is None else d[mask[lo:hi]], minlength=k)
    q = _distance_law(p)
    e = N * q
    if e.min() < 5.0:
        return NotApplicable(
            name, _REQ, N, f"smallest expected distance count {e.min():.3g} < 5 (N={N} distances)"
        )
    uniform = bool(np.allclose(p, 1.0 / k, rtol=0, atol=1e-15))
    details = dict(observed=obs, expected=e, lag=lag)
    if uniform:
        stat = float(np.sum((obs - e) ** 2 / e))
        mlabel = "asymptotic"
    else:
        j = np.arange(k)
        # triple[a, b] = sum_x p[x-a] p[x] p[x+b]
        pa = p[(j[None, :] - j[:, None]) % k]  # [a, x] -> p[x - a]
        pb = p[(j[:, None] + j[None, :]) % k]  # [x, b] -> p[x + b]
        C = (pa * p[None, :]) @ pb - np.outer(q, q)
        V = N * (np.diag(q) - np.outer(q, q)) + n_overlap * (C + C.T)
        r = obs - e
        # r lies in the column space of V (sum r = 0, V 1 = 0), so any generalised inverse gives
        # the same form; dropping the last class and solving the (k-1) system is one of them.
        stat = float(r[:-1] @ np.linalg.solve(V[:-1, :-1], r[:-1]))
        mlabel = "asymptotic (Wald, dependence-corrected)"
    pvalue = clip_pvalue(_dist.chi2_sf(stat, k - 1))
    return TestResult(name, _REQ, stat, k - 1, pvalue, N, mlabel, details)


def _lag_triples(lags) -> list[tuple[int, int]]:
    """As many disjoint triples ``{a, c, a + c}`` of ``lags`` as can be found, as ``(a, a + c)``: one count of
    the spin triples ``(x_t, x_{t+a}, x_{t+a+c})`` gives the lag-pair tables of all three lags (lags 2..10:
    {2, 7, 9}, {3, 5, 8}, {4, 6, 10}, three passes instead of nine). An exhaustive search over a handful of lags."""
    best: list[tuple[int, int]] = []

    def search(rem: tuple, cur: list) -> None:
        nonlocal best
        if len(cur) > len(best):
            best = list(cur)
        if len(cur) + len(rem) // 3 <= len(best) or len(rem) < 3:
            return
        z = rem[-1]  # the largest left is the sum of two others, or in no triple
        for a in rem[:-1]:
            c = z - a
            if a < c and c in rem:
                search(tuple(h for h in rem if h not in (a, c, z)), cur + [(a, z)])
        search(rem[:-1], cur)

    if len(lags) <= 16:  # (the battery's 9; a longer list is counted lag by lag)
        search(tuple(sorted(lags)), [])
    return best


# long: one span loop counts the pocket counts, the triple tables and the lone lags together (a second loop reads the spins again)
def lag_pair_counts(pos: np.ndarray, k: int, lags, *, counts=None, pairs=None) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Pocket counts and, per lag h, the flat (k * k,) int64 counts ``C_h[a * k + b]`` of
    ``#{t : x_{t+h} = a, x_t = b}`` (the later spin first), counted span by span.

    Parameters
    ----------
    pos : (n,) int array
        Positions 0..k-1 (checked by the caller).
    k : int
    lags : list of int
        Distinct lags >= 1.
    counts, pairs : optional
        A tally's pocket counts and (k, k) pair table (``pairs[i, j]``: i then j) of ``pos``:
        taken for the counts and for lag 1 instead of counting them again.

    Returns
    -------
    counts : (k,) int64
    pairs : dict of int to (k * k,) int64

    Notes
    -----
    Where three lags satisfy ``a + c = b`` (and ``k**3`` is small), one count of the triples
    ``T[x_{t+b}, x_{t+a}, x_t]`` over ``t < n - b`` gives all three tables as its margins: ``C_b`` summed
    over the middle spin, ``C_a`` over the latest, ``C_c`` over the earliest, plus the few pairs the
    triples miss (the last ``c`` pairs of lag a, the first ``a`` pairs of lag c), counted directly. The
    counts are integers, so they are those of the pair-by-pair count exactly.
    """
    N = pos.size
    out = {h: np.zeros(k * k, dtype=np.int64) for h in lags}
    if pairs is not None and 1 in out:
        out[1] = np.ascontiguousarray(np.asarray(pairs, dtype=np.int64).T).reshape(k * k)  # C_1[a, b] = pairs[b, a]
    todo = [h for h in lags if not (h == 1 and pairs is not None) and h < N]
    triples = _lag_triples(todo) if k**3 <= 1 << 18 else []
    tri = {h for a, b in triples for h in (a, b - a, b)}
    todo = [h for h in todo if h not in tri]
    tcount = [np.zeros(k**3, dtype=np.int64) for _ in triples]
    c = np.zeros(k, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64).copy()
    # keys later * k + earlier in int32 where k * k fits (half the bytes of intp; np.bincount reads int32 as it is)
    dt = np.int32 if k * k < 2**31 else np.int64
    # triple keys x_{t+b} k^2 + x_{t+a} k + x_t as the sum of three per-span arrays (x k^2, x k and x, made once for
    # every triple) in uint16 where k^3 fits (37^3 = 50,653), else int32; spans of 4 CHUNKs: a quarter of the
    # bincount tables (k^3 int64, zeroed by each call) and of their sums into the totals
    tdt = np.uint16 if k**3 <= 1 << 16 else np.int32
    hmax = max(todo + [b for _, b in triples], default=0)
    for lo, hi in spans(N, 4 * chunks.CHUNK):  # loop over spans, not spins
        b0 = max(lo - hmax, 0)
        w = pos[b0:hi].astype(dt) if counts is None or todo else None  # the span and the hmax spins before it
        if counts is None:
            c += np.bincount(w[lo - b0:], minlength=k)
        if triples:
            w1 = pos[b0:hi].astype(tdt)
            wk = w1 * tdt(k)
            wkk = wk * tdt(k)
            tkey = np.empty(hi - lo, dtype=tdt)
        for (a, b), tc in zip(triples, tcount):  # triples (t, t + a, t + b) whose latest spin t + b lies in this span
            a0 = max(lo, b)
            if a0 >= hi:
                continue
            key = tkey[: hi - a0]
            np.add(wkk[a0 - b0 :], wk[a0 - (b - a) - b0 : hi - (b - a) - b0], out=key)  # x_{t+a}, b - a before the latest
            key += w1[a0 - b - b0 : hi - b - b0]
            tc += np.bincount(key, minlength=k**3)
        if not todo:
            continue
        xk = w[lo - b0:] * dt(k)  # later * k for every later spin of the span
        key = np.empty(hi - lo, dtype=dt)
        for h in todo:  # a handful of lags
            # pairs (t + h, t) whose later spin t + h lies in this span: t + h from max(lo, h)
            a0 = max(lo, h)
            if a0 >= hi:
                continue
            m = hi - a0
            np.add(xk[a0 - lo:], w[a0 - h - b0:a0 - h - b0 + m], out=key[:m])
            out[h] += np.bincount(key[:m], minlength=k * k)
    for (a, b), tc in zip(triples, tcount):
        t3 = tc.reshape(k, k, k)  # [x_{t+b}, x_{t+a}, x_t]
        cc = b - a
        out[b] += t3.sum(axis=1).reshape(k * k)
        out[a] += t3.sum(axis=0).reshape(k * k)
        out[cc] += t3.sum(axis=2).reshape(k * k)
        # the pairs the triples miss: lag a with its later spin in the last cc, lag cc with its earlier spin in the first a
        out[a] += np.bincount(pos[N - cc :].astype(np.intp) * k + pos[N - b : N - a], minlength=k * k)
        out[cc] += np.bincount(pos[cc:b].astype(np.intp) * k + pos[:a], minlength=k * k)
    return c, out


# long: numpydoc docstring, then the lagged correlation with its exact null moments and the pair mask
def serial_correlation(
    positions,
    k: int,
    *,
    lags=range(1, 11),
    name: str = "serial_correlation",
    counts=None,
    pairs=None,
) -> TestResult | NotApplicable:
    r"""Circular serial correlation of the pocket angle at several lags (portmanteau test).

    Parameters
    ----------
    positions : (n,) array_like of int
        Wheel positions in spin order.
    k : int
        Number of wheel positions (>= 3).
    lags : iterable of int
        Lags h >= 1 (default 1..10).
    name : str
        Identifier carried by the result.
    counts, pairs : (k,) and (k, k) int arrays, optional
        The pocket counts and the consecutive-pair table (``pairs[i, j]``: i then j) of these
        positions when already tallied (:class:`rngcert.stats.tally.SpinTally`): lag 1 is then
        not counted again. They must be those of ``positions`` (the statistic is the same).

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` Q ~ :math:`\chi^2_{4L}` with L lags; ``details`` per lag: the statistic
        (4 df), its p-value and the complex lag correlation
        :math:`\rho_h = \sum w_{t+h}\bar w_t / \sum |w_t|^2`. NotApplicable when n < 10·max lag + 10
        or when the positions observed lie on a line (degenerate covariance).

    Notes
    -----
    Each result is represented by the unit vector :math:`u_t = (\cos\theta_t, \sin\theta_t)`,
    :math:`\theta_t = 2\pi x_t/k` (the circular time-series representation of Fisher & Lee [2]_),
    centred by the sample mean. With :math:`\hat\Gamma_h = N^{-1}\sum_t u_{t+h} u_t^T` (2x2),
    H0 (i.i.d. results, any marginal law with non-degenerate covariance) gives
    :math:`\sqrt{N}\,\mathrm{vec}\,\hat\Gamma_h \to N(0, \Gamma_0 \otimes \Gamma_0)`, independently
    over lags, so the multivariate portmanteau statistic of Hosking [1]_ eq. (2.5), in its
    Ljung–Box-weighted form,

    .. math:: Q = N^2 \sum_{h} \frac{1}{N-h}
              \mathrm{tr}(\hat\Gamma_h^T \hat\Gamma_0^{-1} \hat\Gamma_h \hat\Gamma_0^{-1})

    is asymptotically :math:`\chi^2` with 4 df per lag. The 4 components per lag cover both the
    rotational (:math:`\theta_{t+h} - \theta_t`) and reflectional (:math:`\theta_{t+h} +
    \theta_t`) circular correlation of Fisher & Lee; centring by the sample mean and scaling by
    :math:`\hat\Gamma_0^{-1}` keep the test calibrated when the marginal law is not uniform.

    References
    ----------
    .. [1] Hosking, J. R. M. (1980), "The multivariate portmanteau statistic", JASA 75, 602-608.
    .. [2] Fisher, N. I. & Lee, A. J. (1994), "Time series analysis of circular data", JRSS B 56,
           327-339.
    .. [3] Mardia, K. V. & Jupp, P. E. (2000), *Directional Statistics*, §11.5.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import serial_correlation
    >>> positions = np.random.default_rng(3).integers(0, 37, 5000)
    >>> res = serial_correlation(positions, 37, lags=range(1, 6))
    >>> res.df, res.pvalue > 0.01
    (20, True)
    """
    pos, k = _positions_iv(positions, k, name, cast=False)
    if k < 3:
        raise InputError(f"{name}: needs k >= 3 positions, got k={k}")
    lag_arr = np.asarray(list(lags))
    if lag_arr.ndim != 1 or lag_arr.size == 0 or lag_arr.dtype.kind not in "iu" or lag_arr.min() < 1:
        raise InputError(f"{name}: lags must be a non-empty list of integers >= 1, got {list(lags)!r}")
    if arrayops.unique(lag_arr).size != lag_arr.size:
        raise InputError(f"{name}: lags must be distinct, got {lag_arr.tolist()}")
    N = pos.size
    hmax = int(lag_arr.max())
    if N < 10 * hmax + 10:
        return NotApplicable(name, _REQ, N, f"n={N} spins; need at least {10 * hmax + 10} for lag {hmax}")
    ang = 2.0 * np.pi * np.arange(k) / k
    # Every sum over spins is a sum over pockets of exact integer counts: the pocket counts n_a and,
    # per lag, the lag-pair counts C_h[a, b] = #{t : x_{t+h} = a, x_t = b}, counted span by span
    # (int64, k*k per lag). The centred components of pocket a are u(a) = (cos, sin)(angle a) - mean,
    # so N G0 = sum_a n_a u(a) u(a)^T and N Gh = sum_{a,b} C_h[a, b] u(a) u(b)^T: k or k*k terms in a
    # fixed order, not N, so the statistic needs no per-spin array and does not depend on the span
    # length, on BLAS or on its threads.
    counts, pairs = lag_pair_counts(pos, k, lag_arr.tolist(), counts=counts, pairs=pairs)
    U = np.stack([np.cos(ang), np.sin(ang)], axis=1)  # (k, 2)
    U = U - (counts @ U) / N  # centred by the sample mean (integer weights)
    G0 = (U.T * counts) @ U / N
    if np.linalg.cond(G0) > 1e8:
        return NotApplicable(name, _REQ, N, "positions lie on a line through the centre; covariance is singular")
    G0inv = np.linalg.inv(G0)
    denom = float(np.trace(G0)) * N
    per_lag = []
    Q = 0.0
    for h in lag_arr.tolist():  # loop over a handful of lags
        # Gh[i, j] = N^-1 sum_t u_{t+h, i} u_{t, j} = N^-1 sum_{a,b} C_h[a, b] u_i(a) u_j(b)
        Gh = U.T @ pairs[h].reshape(k, k) @ U / N
        qh = float(N * N / (N - h) * np.trace(Gh.T @ G0inv @ Gh @ G0inv))
        # complex lag correlation sum w_{t+h} conj(w_t) / sum |w_t|^2, w = cos + i sin
        rho = complex(Gh[0, 0] + Gh[1, 1], Gh[1, 0] - Gh[0, 1]) * N / denom
        per_lag.append(
            dict(lag=int(h), statistic=qh, df=4, pvalue=clip_pvalue(_dist.chi2_sf(qh, 4)),
                 rho_abs=float(abs(rho)), rho_arg_position=float((np.angle(rho) / (2 * np.pi) * k) % k))
        )
        Q += qh
    df = 4 * lag_arr.size
    pvalue = clip_pvalue(_dist.chi2_sf(Q, df))
    return TestResult(name, _REQ, Q, df, pvalue, N, "asymptotic", dict(lags=per_lag))


# long: numpydoc docstring, then the gap classes chosen by the expected-count rule (Knuth's gap test)
def gap_test(
    positions,
    target,
    *,
    max_gap: int | None = None,
    probs=None,
    name: str = "gap_test",
    counts=None,
) -> TestResult | NotApplicable:
    r"""Knuth's gap test: are the gaps between hits of a target set geometric?

    Parameters
    ----------
    positions : (n,) array_like of int
        Wheel positions in spin order.
    target : (k,) array_like of bool
        Target set over wheel positions (e.g. the red pockets, or a single pocket); k = its length.
    max_gap : int, optional
        Upper bound on t (the last class is "gap >= t"); default: as large as the expected-count
        rule allows.
    probs : (k,) array_like of float, optional
        Null probability per position; default ``1/k``.
    name : str
        Identifier carried by the result.
    counts : (k,) int array, optional
        The pocket counts of these positions when already tallied: the hits are counted from them
        instead of from the positions (the same number; they must be those of ``positions``).

    Returns
    -------
    TestResult or NotApplicable
        ``statistic`` Pearson :math:`X^2`, ``df = t``; details: t, hit probability, observed and
        expected counts per class. NotApplicable when fewer than 2 classes have expected count
        >= 5.

    Notes
    -----
    H0: i.i.d. results. Let :math:`\pi = P(\text{target})`. The gap after a hit is the number of
    non-target results before the next hit; gaps between successive hits are i.i.d. geometric,
    :math:`P(r) = \pi(1-\pi)^r` [1]_ §3.3.2 D. Classes 0..t-1 and ">= t" (probability
    :math:`(1-\pi)^t`), with t the largest value for which every expected count is >= 5.
    Pearson's statistic is asymptotically :math:`\chi^2_t`. Only complete gaps (between two hits)
    are used; the incomplete ones before the first and after the last hit are dropped.

    References
    ----------
    .. [1] Knuth, D. E. (1997), *The Art of Computer Programming*, vol. 2, 3rd ed., §3.3.2 D.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import gap_test
    >>> positions = np.random.default_rng(1).integers(0, 37, 3700)
    >>> target = np.zeros(37, dtype=bool)
    >>> target[[0, 1, 2]] = True  # three neighbouring positions
    >>> res = gap_test(positions, target)
    >>> res.applicable, res.pvalue > 0.01
    (True, True)
    """
    tgt = np.asarray(target)
    if tgt.ndim != 1 or tgt.dtype.kind != "b":
        raise InputError(f"{name}: target must be a (k,) boolean mask, got dtype {tgt.dtype} shape {tgt.shape}")
    k = tgt.size
    pos, k = _positions_iv(positions, k, name, cast=False)
    p = _as_probs(probs, k, name)
    pi = float(p[tgt].sum())
    if tgt.all() or not tgt.any():
        raise InputError(f"{name}: target must contain some but not all positions (P(target)={pi})")
    if max_gap is not None and (isinstance(max_gap, bool) or int(max_gap) != max_gap or max_gap < 1):
        raise InputError(f"{name}: max_gap must be an integer >= 1, got {max_gap!r}")
    if counts is not None:
        n_hits = int(np.asarray(counts, dtype=np.int64)[tgt].sum())
    else:
        n_hits = sum(int(np.count_nonzero(lookup(tgt, pos[lo:hi]))) for lo, hi in spans(pos.size))  # (tgt[pos], translated)
    m = max(n_hits - 1, 0)
    if m == 0:
        return NotApplicable(name, _REQ, 0, f"{n_hits} target hits; no complete gap")
    q = 1.0 - pi
    # largest t with m*pi*q^(t-1) >= 5 and m*q^t >= 5
    t = 0
    while True:  # at most a few hundred steps (geometric decay)
        t1 = t + 1
        if m * pi * q ** (t1 - 1) >= 5.0 and m * q**t1 >= 5.0 and (max_gap is None or t1 <= max_gap):
            t = t1
        else:
            break
    if t < 1:
        return NotApplicable(name, _REQ, m, f"{m} gaps are too few for two classes with expected count >= 5")
    # counted as steps between hits (gap + 1), capped at t + 1: bins 1..t + 1 are the classes 0..t
    steps = np.zeros(t + 2, dtype=np.int64)
    last = -1  # the last hit before the span (its index), carried across spans
    for lo, hi in spans(pos.size, 4 * chunks.CHUNK):  # loop over spans (of 256 Ki spins: a quarter of the numpy calls)
        h = np.flatnonzero(lookup(tgt, pos[lo:hi]))  # (indices in the span)
        if h.size == 0:
            continue
        if last >= 0:  # the gap across the span's start
            steps[min(int(h[0]) + lo - last, t + 1)] += 1
        d = np.diff(h)
        np.minimum(d, t + 1, out=d)
        steps += np.bincount(d, minlength=t + 2)
        last = int(h[-1]) + lo
    obs = steps[1:]
    probs_cls = np.append(pi * q ** np.arange(t), q**t)
    e = m * probs_cls
    stat = float(np.sum((obs - e) ** 2 / e))
    pvalue = clip_pvalue(_dist.chi2_sf(stat, t))
    details = dict(t=t, hit_probability=pi, observed=obs, expected=e, n_hits=n_hits)
    return TestResult(name, _REQ, stat, t, pvalue, m, "asymptotic", details)
