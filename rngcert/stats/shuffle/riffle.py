"""The riffle model: fit of recorded drops to Gilbert–Shannon–Reeds, and equivalent GSR riffles."""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist  # scipy.stats' distributions without its import (over 0.5 s)
from rngcert.stats.frequency import binom_test_pvalue
from rngcert.stats.result import Requirement, TestResult
from rngcert.stats.shuffle.core import _perm_iv, _pv
from rngcert.stats.shuffle.laws import (
    eulerian_numbers,
    riffle_tv_distance,
)
from rngcert.stats.shuffle.order import (
    _rising_per_shoe,
)
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer


# ----------------------------------------------------------------------------- riffle model fit
def riffle_fit(drops) -> list:
    """Fit recorded riffles (drop sequences) against the Gilbert–Shannon–Reeds model.

    Uses the **packet of origin** of each dropped card (not card identity).

    Parameters
    ----------
    drops : (n_riffles, n_cards) array_like of {0, 1}
        ``drops[i, t]`` = packet of the t-th card dropped in riffle i (e.g. Shinn's data,
        :func:`rngcert.collect.shoelog.read_shinn_riffles`).

    Returns
    -------
    list of TestResult
        ``riffle_cut_binomial``: pooled cut sizes against Binomial(n, 1/2) (exact two-sided
        binomial test, ``scipy.stats.binomtest``); ``riffle_cut_dispersion``: the spread of cut
        sizes, X² = Σ (c_i - n/2)² / (n/4) against χ²(m), two-sided (GSR cuts vary with
        variance n/4; hand cuts are usually far more even); ``riffle_drop_lrt``: likelihood
        ratio of the Markov drop model (switch probability λ, :func:`rngcert.simulate.shufflers.riffle`)
        against GSR (λ = 1/2, i.i.d. fair drops), 2ΔlogL ~ χ²(1), with λ̂ = switches /
        transitions and both AICs in ``details``.

    Notes
    -----
    Under GSR the drop string is uniform on {0,1}^n: cut ~ Binomial(n, 1/2) and every
    interleaving equally likely [1]. The Markov model's likelihood is
    (1/2) λ^k (1-λ)^(n-1-k) for a string with k switches.

    References
    ----------
    .. [1] Bayer, D. and Diaconis, P. (1992), Ann. Appl. Probab. 2(2), 294-313.
    .. [2] Diaconis, P. (1988) *Group Representations in Probability and Statistics*, IMS
       Lecture Notes 11 (the GSR model and real riffles).
    """
    d = np.asarray(drops)
    if d.ndim != 2 or d.shape[1] < 2 or not np.isin(d, (0, 1)).all():
        raise InputError(f"drops must be a 2-D array of 0/1 (riffles, cards), got shape {d.shape}")
    m, n = d.shape
    cuts = d.sum(axis=1)
    bt_p = binom_test_pvalue(int(cuts.sum()), m * n, 0.5)  # scipy.stats.binomtest's p-value, same bits
    x2 = float(((cuts - n / 2) ** 2 / (n / 4)).sum())
    p_disp = 2 * min(_dist.chi2_cdf(x2, m), _dist.chi2_sf(x2, m))
    k = np.count_nonzero(d[:, 1:] != d[:, :-1], axis=1)
    K, T = int(k.sum()), m * (n - 1)
    lam = K / T
    ll_gsr = m * n * math.log(0.5)
    ll_mk = m * math.log(0.5) + (K * math.log(lam) if K else 0.0) + ((T - K) * math.log(1 - lam) if T - K else 0.0)
    lr = max(0.0, 2 * (ll_mk - ll_gsr))
    return [
        TestResult("riffle_cut_binomial", Requirement.UNIFORMITY, float(cuts.sum()), None, _pv(bt_p), m, "exact",
                   {"cuts": cuts, "n_cards": n, "mean_cut_fraction": float(cuts.mean() / n)}),
        TestResult("riffle_cut_dispersion", Requirement.UNIFORMITY, x2, float(m), _pv(p_disp), m, "exact (chi-square law of normal cuts)",
                   {"cut_variance": float(cuts.var(ddof=0)), "gsr_cut_variance": n / 4}),
        TestResult("riffle_drop_lrt", Requirement.INDEPENDENCE, lr, 1.0, _pv(_dist.chi2_sf(lr, 1)), m, "asymptotic",
                   {"switch_hat": lam, "switches": K, "transitions": T, "loglik_gsr": ll_gsr, "loglik_markov": ll_mk,
                    "aic_gsr": -2 * ll_gsr, "aic_markov": 2 - 2 * ll_mk}),
    ]


def _a_shuffle_law(n: int, a: float) -> np.ndarray:
    """P(R = r), r = 1..n, after an a-shuffle of n cards (Bayer–Diaconis Thm 1), in logs for any integer a >= 1."""
    A = eulerian_numbers(n)
    r = np.arange(1, n + 1)
    logA = np.array([math.log(x) if x > 0 else -np.inf for x in A])
    top = a + n - r  # C(a + n - r, n) = 0 when a + n - r < n, i.e. r > a
    with np.errstate(invalid="ignore"):
        logC = np.where(top >= n, special.gammaln(top + 1.0) - special.gammaln(n + 1.0) - special.gammaln(np.maximum(top - n, 0) + 1.0), -np.inf)
    lp = logA + logC - n * math.log(a)
    p = np.exp(lp - lp.max())
    return p / p.sum()


def gsr_law_check(perm, a: float, *, level: float = 0.01) -> dict:
    """Do these shoes follow the law of an a-shuffle (GSR riffles) at all?

    Two checks of the fitted a-shuffle, on card identity:

    * **repeated orders**: under an a-shuffle no order has probability above that of the identity,
      ``p_max = C(a + n - 1, n) / a^n``, so the expected number of pairs of equal shoes is at most
      ``C(m, 2) p_max`` and, by Markov's inequality, P(any pair) <= that bound: the p-value when a
      pair is seen (7 perfectly alternating riffles of 52 cards give 128 orders, and repeat);
    * **the law of the rising sequences**: Pearson's X² of the per-shoe counts R against the
      a-shuffle law, bins pooled left to right to expected counts >= 5, df = bins - 2 (a fitted).

    Parameters
    ----------
    perm : (m, n) array_like of int
        Permutations (card identity).
    a : float
        The fitted a (:func:`gsr_equivalent_riffles`).
    level : float
        Level at which either check rejects the GSR law.

    Returns
    -------
    dict
        ``rejects`` (bool), ``repeated_pairs``, ``p_repeats``, ``x2``, ``df``, ``p_rising``,
        ``reason`` (None when GSR is not rejected).
    """
    perm = np.asarray(perm)
    m, n = perm.shape
    _, counts = np.unique(perm, axis=0, return_counts=True)
    pairs = int((counts * (counts - 1) // 2).sum())
    log_pmax = float(special.gammaln(a + n) - special.gammaln(n + 1.0) - special.gammaln(a) - n * math.log(a))
    bound = math.exp(min(0.0, math.log(m * (m - 1) / 2) + log_pmax)) if m > 1 else 1.0
    p_rep = bound if pairs else 1.0
    law = _a_shuffle_law(n, a)
    r = _rising_per_shoe(perm)
    obs = np.bincount(r - 1, minlength=n).astype(float)
    exp = m * law
    ob, eb, o_acc, e_acc = [], [], 0.0, 0.0
    for o_, e_ in zip(obs, exp):  # at most n bins
        o_acc += o_
        e_acc += e_
        if e_acc >= 5:
            ob.append(o_acc)
            eb.append(e_acc)
            o_acc = e_acc = 0.0
    if ob and e_acc > 0:
        ob[-1] += o_acc
        eb[-1] += e_acc
    df = len(ob) - 2
    if df >= 1:
        ob_, eb_ = np.array(ob), np.array(eb)
        x2 = float(((ob_ - eb_) ** 2 / eb_).sum())
        p_r = float(_dist.chi2_sf(x2, df))
    else:
        x2, p_r = None, None
    reasons = []
    if p_rep <= level:
        reasons.append(f"{pairs} pair(s) of shoes came out in the same order, which GSR riffles of {n} cards make at most "
                       f"{bound:.2g} likely (a shuffle with few possible orders, such as perfectly alternating riffles)")
    if p_r is not None and p_r <= level:
        reasons.append(f"the numbers of rising sequences do not follow the law of GSR riffles (X² = {x2:.1f}, df {df}, p = {p_r:.2g})")
    return {"rejects": bool(reasons), "repeated_pairs": pairs, "p_repeats": p_rep, "x2": x2, "df": df, "p_rising": p_r,
            "level": level, "reason": "; ".join(reasons) or None}


def gsr_equivalent_riffles(perm, *, drop_law: str | None = None, level: float = 0.01) -> dict:
    """Descriptive: how many GSR riffles leave as many rising sequences as these shoes?

    Uses card **identity**. Maximum-likelihood a of the Bayer–Diaconis a-shuffle law of the
    number of rising sequences, ``P(R = r) = A(n, r) C(a + n - r, n) / a^n`` ([1] Thm 1),
    fitted to the per-shoe counts R over integer a >= max R on a grid; ``log2(a)`` is the
    equivalent number of GSR riffles (an a-shuffle is log2(a) riffles). Not a test: it puts a
    procedure on the scale of the "seven riffles" table (a large value means the rising
    sequences look uniform; ``at_grid_limit`` says the fit hit the grid's top, 2^60).

    The figure means something only for GSR riffles: it is **withheld** (``riffles`` None, with
    ``withheld`` the reason and ``riffles_if_gsr`` the value) when the drop law is known not to be
    GSR (``drop_law``: a recorded or declared law, e.g. a riffle step with switch probability 1),
    or when the shoes themselves reject the a-shuffle law (:func:`gsr_law_check` at ``level``).
    Seven perfectly alternating riffles (128 possible orders) fit a = 2^7 and would otherwise
    read as the "random enough" seven.

    Parameters
    ----------
    perm : (m, n) array_like of int
    drop_law : str, optional
        Why the drop law is known not to be GSR (withholds the figure).
    level : float
        Level of :func:`gsr_law_check`.

    Returns
    -------
    dict
        ``a_hat``, ``riffles`` (= log2 a_hat, or None when withheld), ``tv_distance`` (exact TV
        after that many riffles when a_hat is a power of two and n <= 1000, else None),
        ``at_grid_limit``, ``gsr_check``, and when withheld ``withheld`` and ``riffles_if_gsr``.

    References
    ----------
    .. [1] Bayer, D. and Diaconis, P. (1992), Ann. Appl. Probab. 2(2), 294-313.
    """
    perm = _perm_iv(perm)
    m, n = perm.shape
    r = _rising_per_shoe(perm)
    h = np.bincount(r, minlength=n + 1).astype(float)
    rs = np.flatnonzero(h)
    rmax = int(rs.max())
    grid = np.unique(np.round(2.0 ** np.arange(0, 60.01, 1 / 16)).astype(np.int64))
    grid = grid[grid >= rmax].astype(float)
    # a-dependent part of log P(R = r): log C(a+n-r, n) - n log a + log n! = sum_{i=1..n} log1p((i-r)/a);
    # F[:, t] = cumulative sums over j = i - r from -(n-1) upward, so each r is a difference of two
    j = np.arange(-(n - 1), n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = np.log1p(j[None, :] / grid[:, None])
    F = np.concatenate([np.zeros((grid.size, 1)), np.cumsum(np.nan_to_num(terms, nan=0.0, neginf=0.0), axis=1)], axis=1)
    ll = np.zeros(grid.size)
    for rv in rs:  # at most n distinct counts
        lo, hi = (1 - rv) + (n - 1), (n - rv) + (n - 1)  # column indices of j = 1-r .. n-r
        ll += h[rv] * (F[:, hi + 1] - F[:, lo])
    i = int(np.argmax(ll))
    a = float(grid[i])
    k = math.log2(a)
    tv = riffle_tv_distance(n, int(round(k))) if n <= 1000 and abs(k - round(k)) < 1e-9 and k <= 60 else None
    out = {"a_hat": a, "riffles": k, "tv_distance": tv, "at_grid_limit": i == grid.size - 1, "n_shoes": m}
    check = gsr_law_check(perm, a, level=level)
    out["gsr_check"] = check
    why = drop_law or check["reason"]
    if why:
        out |= {"riffles": None, "tv_distance": None, "riffles_if_gsr": k,
                "withheld": f"equivalent GSR riffles withheld: {why}; the figure counts GSR riffles and does not describe this shuffle"}
    return out
