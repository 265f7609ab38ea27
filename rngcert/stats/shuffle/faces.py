"""Tests on faces or identity without ``perm``: fixed points, position correlation, moments,
adjacency, card orientation."""

from __future__ import annotations

import math

import numpy as np

from rngcert.equipment.cards import RANKS
from rngcert.errors import InputError
from rngcert.stats import _dist  # scipy.stats' distributions without its import (over 0.5 s)
from rngcert.stats.result import NotApplicable, Requirement, TestResult
from rngcert.stats.shuffle.core import _TINY, _alt_iv, _orders_iv, _perm_iv, _positions, _pv
from rngcert.stats.shuffle.order import (
    _pairs_per_shoe,
)


# ----------------------------------------------------------------------------- tests on faces or identity
def _face_counts(before):
    """(faces (m, N), copies of each face per shoe (m, 52 * k)) using identity when codes are unique."""
    b = np.asarray(before).astype(np.int64)
    m, n = b.shape
    k = int(b.max()) + 1 if b.size else 1
    cnt = np.zeros((m, k))
    np.add.at(cnt, (np.repeat(np.arange(m), n), b.ravel()), 1.0)
    return b, cnt


def fixed_points(before, after) -> TestResult:
    """Fixed points: cards (or, with repeated cards, faces) found at the position they had before.

    Uses card **identity** when every code occurs once per shoe, otherwise the **face** (rank and
    suit): the count is then of positions whose card has the same face as the card there before.

    Parameters
    ----------
    before, after : (n_shoes, n_cards) array_like of int
        Codes (or faces) before and after the shuffle; each ``after`` row a rearrangement of its
        ``before`` row.

    Returns
    -------
    TestResult
        statistic = total fixed points; two-sided normal p-value with the exact moments.

    Notes
    -----
    With c_f copies of face f in a shoe of N cards and the shoe uniformly permuted,
    M = #{j : face(after_j) = face(before_j)} has E M = A/N and
    E M^2 = A/N + (B + A^2 - C)/(N(N-1)), where A = sum c_f^2, B = sum (c_f^2 - c_f)^2,
    C = sum c_f^4 (indicator pairs of equal or different faces); with distinct cards E M = Var M = 1
    (the rencontres law, Poisson(1) in the limit; Riordan 1958). Shoes are independent, so
    Z = (sum M - sum E M) / sqrt(sum Var M). Sattolo's algorithm (a uniform n-cycle) leaves no
    card in place [1]_: too few fixed points.

    References
    ----------
    .. [1] Sattolo, S. (1986), Inform. Process. Lett. 22(6), 315-317.
    """
    b, a = _orders_iv(before, after)
    m, n = b.shape
    _, cnt = _face_counts(b)
    M = np.count_nonzero(b == a, axis=1).astype(float)
    A = (cnt ** 2).sum(axis=1)
    B = ((cnt ** 2 - cnt) ** 2).sum(axis=1)
    C = (cnt ** 4).sum(axis=1)
    E = A / n
    V = A / n + (B + A ** 2 - C) / (n * (n - 1.0)) - E ** 2
    z = float((M.sum() - E.sum()) / math.sqrt(max(V.sum(), 1e-300)))
    unique = bool(np.all(cnt <= 1))
    return TestResult(
        "fixed_points", Requirement.INDEPENDENCE, float(M.sum()), None, _pv(2 * _dist.norm_sf(abs(z))), m, "asymptotic (exact moments)",
        {"z": z, "expected": float(E.sum()), "mean_per_shoe": float(M.mean()), "null_mean_per_shoe": float(E.mean()),
         "uses": "identity" if unique else "face"},
    )


def position_correlation(before, after, *, alternative: str = "two-sided") -> TestResult:
    """Linear correlation between a card's position after the shuffle and where its face was before.

    Uses card **identity** when codes are unique (then it is Spearman's rank correlation of the
    permutation) and otherwise the **face**: each card is scored by the mean position of its
    face's copies before the shuffle, so no matching of copies is needed.

    Parameters
    ----------
    before, after : (n_shoes, n_cards) array_like of int
    alternative : {"two-sided", "less", "greater"}

    Returns
    -------
    TestResult
        statistic = mean correlation over shoes; asymptotic normal p-value.

    Notes
    -----
    With a_j = j - (N-1)/2 and b(card) the mean before-position of the card's face, the
    statistic S = sum_j a_j b(after_j) is a linear permutation statistic of a uniform shuffle:
    E S = 0 and Var S = sum_j a_j^2 * sum_i (b(before_i) - b-bar)^2 / (N - 1), and S is
    asymptotically normal (Hoeffding's combinatorial central limit theorem [1]_). Shoes are
    summed. A shuffle that moves cards too little (positive) or a biased algorithm such as the
    naive exchange shuffle [2]_ shows here.

    References
    ----------
    .. [1] Hoeffding, W. (1951) "A combinatorial central limit theorem", Ann. Math. Statist.
       22(4), 558-566.
    .. [2] Robbins, D. P. and Bolker, E. D. (1981), Aequationes Math. 22, 268-292.
    """
    b, a = _orders_iv(before, after)
    alternative = _alt_iv(alternative)
    m, n = b.shape
    codes, cnt = _face_counts(b)
    j = np.arange(n, dtype=float)
    sums = np.zeros_like(cnt)
    np.add.at(sums, (np.repeat(np.arange(m), n), codes.ravel()), np.tile(j, m))
    mean_pos = sums / np.maximum(cnt, 1.0)
    aa = np.clip(np.asarray(a).astype(np.int64), 0, cnt.shape[1] - 1)
    b_after = np.take_along_axis(mean_pos, aa, axis=1)
    b_before = np.take_along_axis(mean_pos, codes, axis=1)
    c = j - j.mean()
    stat = (c[None, :] * b_after).sum(axis=1)
    ss = ((b_before - b_before.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    var = (c ** 2).sum() * ss / (n - 1)
    z = float(stat.sum() / math.sqrt(max(var.sum(), 1e-300)))
    rho = stat / np.sqrt(np.maximum((c ** 2).sum() * ss, 1e-300))
    p = {"greater": _dist.norm_sf(z), "less": _dist.norm_cdf(z), "two-sided": 2 * _dist.norm_sf(abs(z))}[alternative]
    return TestResult(
        "position_correlation", Requirement.INDEPENDENCE, float(rho.mean()), None, _pv(p), m, "asymptotic (Hoeffding)",
        {"z": z, "alternative": alternative, "uses": "identity" if bool(np.all(cnt <= 1)) else "face (mean position of its copies)"},
    )


def shuffle_moments(perm) -> np.ndarray:
    """Per-shoe summaries a shuffle model is fitted to (by simulated moments).

    Uses card **identity** (the permutation; repeated cards matched in order).

    Returns
    -------
    (n_shoes, 2) ndarray of float
        column 0: share of the N-1 neighbouring pairs still neighbours, in order, after the
        shuffle (what a clumpy wash keeps); column 1: mean circular distance after the shuffle
        between cards that were neighbours before it, as a share of the shoe (what the travel of
        a wash spreads; 1/4 under a uniform shuffle). Both are unchanged by a cut.
    """
    perm = _perm_iv(perm)
    m, n = perm.shape
    pos = _positions(perm).astype(np.int64)
    d = (pos[:, 1:] - pos[:, :-1]) % n
    kept = np.count_nonzero(d == 1, axis=1) / (n - 1)
    circ = np.minimum(d, n - d).mean(axis=1) / n
    return np.stack([kept, circ], axis=1)


def adjacency_share(perm) -> dict:
    """Descriptive: share of neighbouring pairs kept together, in order, beyond chance.

    Returns ``{"kept_per_shoe", "chance_per_shoe", "share_kept", "share_beyond_chance"}`` where a
    shoe has N-1 neighbouring pairs and a uniform shuffle keeps (N-1)/N of them on average.
    """
    perm = _perm_iv(perm)
    m, n = perm.shape
    k = _pairs_per_shoe(perm)
    chance = (n - 1) / n
    return {"kept_per_shoe": float(k.mean()), "chance_per_shoe": chance, "share_kept": float(k.mean() / (n - 1)),
            "share_beyond_chance": float((k.mean() - chance) / (n - 1 - chance))}


def orientation_share(rotated, *, expected: float = 0.5) -> TestResult | NotApplicable:
    """Share of cards dealt turned end for end (the ``rotated`` column of a scanner log).

    Uses **orientation** only. A wash turns clumps at random, so about half the cards should be
    turned; a shoe where almost none (or all) are turned keeps any orientation a player gave the
    cards (edge sorting, 004 §2 rule 3.1: cards inspected for flaws and markings).

    Parameters
    ----------
    rotated : (n_shoes, L) array_like of {0, 1}, or -1 where unknown
    expected : float
        Share under a thorough wash (1/2).

    Returns
    -------
    TestResult or NotApplicable
        statistic = share rotated; two-sided test of the per-shoe shares against ``expected``
        by the shoe-level t statistic (cards of a shoe are turned in clumps, so shoes are the
        unit). NotApplicable with fewer than 10 shoes or no orientation at all.
    """
    r = np.asarray(rotated)
    ok = r >= 0
    m = r.shape[0]
    per = np.where(ok.sum(axis=1) > 0, (r * ok).sum(axis=1) / np.maximum(ok.sum(axis=1), 1), np.nan)
    per = per[np.isfinite(per)]
    if per.size < 10:
        return NotApplicable("orientation_share", Requirement.UNPREDICTABILITY, m, f"orientation known in {per.size} shoe(s); need >= 10")
    sd = float(per.std(ddof=1))
    share = float((r * ok).sum() / ok.sum())
    if sd == 0:
        # every shoe has the same share: exact when it is 0 or 1 (no card ever turned, or all)
        p = _TINY if share != expected else 1.0
        return TestResult("orientation_share", Requirement.UNPREDICTABILITY, share, None, max(p, _TINY), int(per.size),
                          "degenerate (no spread between shoes)", {"expected": expected, "uses": "orientation"})
    t = (per.mean() - expected) / (sd / math.sqrt(per.size))
    p = 2 * _dist.t_sf(abs(t), per.size - 1)
    return TestResult("orientation_share", Requirement.UNPREDICTABILITY, share, float(per.size - 1), _pv(p), int(per.size),
                      "asymptotic (t over shoes)", {"expected": expected, "t": float(t), "uses": "orientation"})


def orientation_rank(rotated, after) -> TestResult | NotApplicable:
    """Independence of a card's orientation from its rank (edge sorting).

    Uses **orientation** and **rank**. If a player can tell high cards from low ones by the way
    they lie in the shoe, orientation and rank are associated.

    Parameters
    ----------
    rotated : (n_shoes, L) array_like of {0, 1}, or -1 where unknown
    after : (n_shoes, L) array_like of int
        Card codes in dealing order.

    Returns
    -------
    TestResult or NotApplicable
        Hotelling's T² (as F) that the per-shoe excess share of turned cards of ranks A..Q over
        the shoe's own share has mean zero (the king is implied). NotApplicable with fewer than
        30 shoes, or when no card (or every card) is turned.

    Notes
    -----
    The shoe is the unit (cards are turned in clumps, so cards of a shoe are dependent): for
    shoe s, x_s[r] = (turned cards of rank r)/(cards of rank r) - (turned cards)/(cards), r = A..Q;
    T² = S x̄' C⁻¹ x̄ with C the sample covariance, F = (S - 12)/(12 (S - 1)) T² ~ F(12, S - 12)
    (Hotelling 1931). A plain 13 × 2 chi-square would ignore the clumping.
    """
    r = np.asarray(rotated)
    a = np.asarray(after)
    if r.shape != a.shape:
        raise InputError(f"rotated and after must have the same shape, got {r.shape} and {a.shape}")
    ok = r >= 0
    m = r.shape[0]
    if not (r[ok] > 0).any() or (r[ok] > 0).all():
        return NotApplicable("orientation_rank", Requirement.UNPREDICTABILITY, m, "no card (or every card) is turned: nothing to associate")
    rk = (a % 13).astype(np.int64)
    tot = np.stack([((rk == k) & ok).sum(axis=1) for k in range(13)], axis=1).astype(float)
    turned = np.stack([((rk == k) & ok & (r > 0)).sum(axis=1) for k in range(13)], axis=1).astype(float)
    use = tot.min(axis=1) > 0
    S = int(use.sum())
    if S < 30:
        return NotApplicable("orientation_rank", Requirement.UNPREDICTABILITY, m, f"{S} shoe(s) with every rank seen; need >= 30")
    share = turned[use].sum(axis=1) / tot[use].sum(axis=1)
    x = (turned[use] / tot[use] - share[:, None])[:, :12]
    q = 12
    xbar = x.mean(axis=0)
    # a tiny ridge keeps the form defined when every shoe shows the same association (no spread)
    C = np.cov(x, rowvar=False, ddof=1) + 1e-12 * np.eye(q)
    t2 = float(S * xbar @ np.linalg.solve(C, xbar))
    F = (S - q) / (q * (S - 1)) * t2
    table = np.stack([tot.sum(axis=0) - turned.sum(axis=0), turned.sum(axis=0)], axis=1)
    return TestResult("orientation_rank", Requirement.UNPREDICTABILITY, F, float(q), _pv(_dist.f_sf(F, q, S - q)), S,
                      f"asymptotic (Hotelling T², F({q}, {S - q}))", {"table": table, "hotelling_T2": t2, "ranks": list(RANKS),
                                                                        "uses": "orientation and rank"})
