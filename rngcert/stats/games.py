"""Game-level tests of dealt shoes: baccarat outcomes, ten-value clumping, the blackjack dealer.

Inputs are dealt shoes, ``after`` of shape ``(n_shoes, n_cards)`` of card codes
(:mod:`rngcert.equipment.cards`) in dealing order. H0: every shoe is a uniformly random ordering
of a full shoe of ``decks`` decks, independently across shoes.

Hands are played from *fixed* shoe positions (every 6 cards for baccarat coups, every 8 for
dealer hands) rather than as the game strings them together: a hand that starts at a fixed
position is a uniform draw from the full shoe, so its exact law is the full-shoe law computed
by :func:`rngcert.equipment.cards.baccarat_exact` / :func:`~rngcert.equipment.cards.dealer_exact`.
Hands dealt back to back start at stopping times, and the "cut-card effect" then biases their
pooled frequencies away from the full-shoe law. Hands of one shoe are dependent (cards are
drawn without replacement, dealer hands may overlap); the tests therefore use the shoe as the
independent unit (Hotelling's T² on per-shoe residual counts), which is valid whatever the
within-shoe dependence.
"""

from __future__ import annotations

import math

import numpy as np

from rngcert.equipment.cards import (
    BACCARAT_OUTCOMES,
    DEALER_TOTALS,
    baccarat_coup,
    baccarat_exact,
    baccarat_value,
    blackjack_value,
    dealer_exact,
    dealer_play,
    value_composition,
)
from rngcert.errors import InputError
from rngcert.stats import _dist  # scipy.stats' distributions without its import (over 0.5 s)
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue

_TINY = float(np.finfo(float).tiny)


def _pv(p: float) -> float:
    """Clip into [0, 1] and floor at the smallest normal double: an underflowed tail is reported
    as 2.2e-308 ("smaller than this"), never as 0 (TestResult p-values lie in (0, 1])."""
    return max(clip_pvalue(p), _TINY)


__all__ = ["baccarat_outcomes", "ten_clumping", "dealer_totals", "shoe_hotelling"]

_MIN_SHOES = 30


def _after_iv(after, decks):
    a = np.asarray(after)
    if a.ndim != 2 or not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"after must be a 2-D integer array (n_shoes, n_cards), got shape {a.shape}")
    if isinstance(decks, bool) or not isinstance(decks, (int, np.integer)) or not 1 <= decks <= 8:
        raise InputError(f"decks must be an integer in 1..8, got {decks!r}")
    if a.shape[1] > 52 * decks:
        raise InputError(f"shoes have {a.shape[1]} cards, more than {decks} decks hold")
    return a


def _usable_iv(usable, n):
    if usable is None:
        return n
    if isinstance(usable, bool) or not isinstance(usable, (int, np.integer)) or not 1 <= usable <= n:
        raise InputError(f"usable must be an integer in 1..{n}, got {usable!r}")
    return int(usable)


def shoe_hotelling(counts: np.ndarray, probs: np.ndarray):
    """Hotelling T² test that per-shoe category counts have mean ``hands × probs``.

    Parameters
    ----------
    counts : (n_shoes, k) ndarray
        Per-shoe counts of k categories (each shoe the same number of hands h).
    probs : (k,) ndarray
        Null category probabilities.

    Returns
    -------
    (F, df1, df2, pvalue, T2)

    Notes
    -----
    Residuals r_s = counts_s - h·probs of the first k-1 categories (the last is implied);
    T² = S r̄ᵀ C⁻¹ r̄ with C the sample covariance of r_s, and
    F = (S - q) / (q (S - 1)) T² ~ F(q, S - q), q = k - 1 (Hotelling 1931; Anderson,
    *An Introduction to Multivariate Statistical Analysis*, 3rd ed., ch. 5), exact under
    normality and asymptotically χ²(q)/q otherwise. Shoes are independent; hands within a shoe
    may be dependent in any way.
    """
    S, k = counts.shape
    h = counts.sum(axis=1)
    r = (counts - h[:, None] * probs[None, :])[:, : k - 1].astype(float)
    q = k - 1
    rbar = r.mean(axis=0)
    C = np.cov(r, rowvar=False, ddof=1).reshape(q, q)
    try:
        t2 = float(S * rbar @ np.linalg.solve(C, rbar))
    except np.linalg.LinAlgError:
        return None
    F = (S - q) / (q * (S - 1)) * t2
    return F, q, S - q, _pv(_dist.f_sf(F, q, S - q)), t2


def _fixed_position_test(name, requirement, cats, probs, labels, m, uses, extra):
    """Shared packaging: per-shoe category counts from fixed-position hands → TestResult."""
    k = probs.size
    hands_per_shoe = cats.shape[1]
    counts = np.stack([(cats == c).sum(axis=1) for c in range(k)], axis=1)
    total = counts.sum(axis=0)
    expected = total.sum() * probs
    details = {"categories": list(labels), "observed": total, "expected": expected,
               "probabilities": probs, "hands_per_shoe": int(hands_per_shoe), "uses": uses} | extra
    if hands_per_shoe == 1:
        if expected.min() < 5:
            return NotApplicable(name, requirement, m, f"expected count {expected.min():.2f} < 5 with one hand per shoe")
        x2 = float(((total - expected) ** 2 / expected).sum())
        return TestResult(name, requirement, x2, k - 1, _pv(_dist.chi2_sf(x2, k - 1)), m, "asymptotic", details)
    if m < _MIN_SHOES:
        return NotApplicable(name, requirement, m,
                             f"{m} shoes: the shoe-level test needs >= {_MIN_SHOES} shoes")
    res = shoe_hotelling(counts, probs)
    if res is None:
        return NotApplicable(name, requirement, m, "per-shoe counts have a singular covariance")
    F, d1, d2, p, t2 = res
    details["hotelling_T2"] = t2
    return TestResult(name, requirement, F, float(d1), p, m, f"asymptotic (Hotelling T², F({d1}, {d2}))", details)


def baccarat_outcomes(after, *, decks: int, usable: int | None = None, spacing: int = 6) -> TestResult | NotApplicable:
    """Baccarat banker/player/tie frequencies against the exact probabilities of the shoe.

    Uses **game value** (baccarat values: A = 1, 2-9, T J Q K = 0) and the drawing rules of
    004 §2 rule 3.5.1.

    Parameters
    ----------
    after : (n_shoes, n_cards) array_like of int
        Dealt shoes, card codes in dealing order.
    decks : int
    usable : int, optional
        Positions dealt in every shoe (e.g. cards in front of the cutting card + 6).
    spacing : int >= 6
        Coups start at positions 0, spacing, 2·spacing, ... (each needs up to 6 cards).

    Returns
    -------
    TestResult or NotApplicable
        F statistic of Hotelling's T² on per-shoe (banker, player) counts (tie implied), or
        Pearson X² (df 2) with one coup per shoe.

    Notes
    -----
    Null probabilities: :func:`rngcert.equipment.cards.baccarat_exact` on the full shoe
    (8 decks: banker 0.458597, player 0.446247, tie 0.095156).
    """
    a = _after_iv(after, decks)
    m, n = a.shape
    usable = _usable_iv(usable, n)
    if isinstance(spacing, bool) or not isinstance(spacing, (int, np.integer)) or spacing < 6:
        raise InputError(f"spacing must be an integer >= 6, got {spacing!r}")
    starts = np.arange(0, usable - 5, spacing)
    if starts.size == 0:
        return NotApplicable("baccarat_outcomes", Requirement.UNIFORMITY, m, f"fewer than 6 usable cards ({usable})")
    probs = baccarat_exact(value_composition(decks, "baccarat"))
    vals = baccarat_value(a)
    win = vals[:, starts[:, None] + np.arange(6)[None, :]]  # (m, coups, 6)
    outcome, _ = baccarat_coup(win)
    return _fixed_position_test("baccarat_outcomes", Requirement.UNIFORMITY, outcome, probs, BACCARAT_OUTCOMES, m,
                                "game value", {"spacing": int(spacing)})


def dealer_totals(after, *, decks: int, rule: str = "S17", usable: int | None = None, spacing: int = 8) -> TestResult | NotApplicable:
    """Blackjack dealer's final total (17, 18, 19, 20, 21, bust) against its exact law.

    Uses **game value** (blackjack values, ace 1 or 11) and the dealer rule of 003 rule 4.15:
    a) "S17" stand on all 17s, b) "H17" hit soft 17.

    Parameters
    ----------
    after : (n_shoes, n_cards) array_like of int
    decks : int
    rule : {"S17", "H17"}
    usable : int, optional
        Positions dealt in every shoe; a hand is played only if 17 cards (the most a hand can
        need is fewer) fit from its start.
    spacing : int >= 1
        Dealer hands start at positions 0, spacing, 2·spacing, ...; hands may overlap.

    Returns
    -------
    TestResult or NotApplicable
        Hotelling's T² (as F) on per-shoe counts of the six categories.

    Notes
    -----
    Null law: :func:`rngcert.equipment.cards.dealer_exact`, exact enumeration without
    replacement from the full shoe.
    """
    a = _after_iv(after, decks)
    m, n = a.shape
    usable = _usable_iv(usable, n)
    if isinstance(spacing, bool) or not isinstance(spacing, (int, np.integer)) or spacing < 1:
        raise InputError(f"spacing must be an integer >= 1, got {spacing!r}")
    L = 17
    starts = np.arange(0, usable - L + 1, spacing)
    if starts.size == 0:
        return NotApplicable("dealer_totals", Requirement.UNIFORMITY, m, f"fewer than {L} usable cards ({usable})")
    probs = dealer_exact(value_composition(decks, "blackjack"), rule)
    vals = blackjack_value(a)
    win = vals[:, starts[:, None] + np.arange(L)[None, :]].reshape(-1, L)
    cat, _ = dealer_play(win, rule)
    cat = cat.reshape(m, starts.size)
    if np.any(cat < 0):  # cannot happen with 17 cards; guard against silent truncation
        raise InputError("a dealer hand did not finish within 17 cards")
    return _fixed_position_test("dealer_totals", Requirement.UNIFORMITY, cat, probs, DEALER_TOTALS, m,
                                "game value", {"rule": rule.upper(), "spacing": int(spacing)})


def ten_clumping(after, *, alternative: str = "two-sided") -> TestResult | NotApplicable:
    """Clumping of ten-valued cards (T J Q K): Wald–Wolfowitz runs of tens / non-tens per shoe.

    Uses **game value** (ten-valued or not), so it applies with or without deck serials.

    Parameters
    ----------
    after : (n_shoes, n_cards) array_like of int
    alternative : {"two-sided", "less", "greater"}
        "less": too few runs (tens clumped together, what a shuffle tracker exploits).

    Returns
    -------
    TestResult
        statistic = total runs over shoes; Z from the exact conditional moments.

    Notes
    -----
    Given n1 tens and n2 others in a shoe of N = n1 + n2 cards, under H0 the number of runs R
    has E R = 1 + 2 n1 n2 / N and Var R = 2 n1 n2 (2 n1 n2 - N) / (N² (N - 1)) [1]; shoes are
    independent, so Z = (ΣR - ΣE R) / sqrt(Σ Var R) is asymptotically normal.
    ``statsmodels.sandbox.stats.runs.runstest_1samp`` gives the same Z for one shoe.

    References
    ----------
    .. [1] Wald, A. and Wolfowitz, J. (1940) "On a test whether two samples are from the same
       population", Ann. Math. Statist. 11(2), 147-162.
    """
    a = np.asarray(after)
    if a.ndim != 2 or not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"after must be a 2-D integer array (n_shoes, n_cards), got shape {a.shape}")
    if alternative not in ("two-sided", "less", "greater"):
        raise InputError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    m, N = a.shape
    x = (a % 13) >= 9
    n1 = x.sum(axis=1).astype(float)
    n2 = N - n1
    ok = (n1 > 0) & (n2 > 0)
    if not ok.any():
        return NotApplicable("ten_clumping", Requirement.INDEPENDENCE, m, "no shoe holds both ten-valued and other cards")
    runs = 1 + np.count_nonzero(x[:, 1:] != x[:, :-1], axis=1)
    mean = 1 + 2 * n1 * n2 / N
    var = 2 * n1 * n2 * (2 * n1 * n2 - N) / (N * N * (N - 1.0))
    z = float((runs[ok].sum() - mean[ok].sum()) / math.sqrt(var[ok].sum()))
    p = {"greater": _dist.norm_sf(z), "less": _dist.norm_cdf(z), "two-sided": 2 * _dist.norm_sf(abs(z))}[alternative]
    return TestResult("ten_clumping", Requirement.INDEPENDENCE, float(runs[ok].sum()), None, _pv(p), int(ok.sum()),
                      "asymptotic", {"z": z, "expected_runs": float(mean[ok].sum()), "alternative": alternative,
                                     "uses": "game value (ten-valued or not)"})
