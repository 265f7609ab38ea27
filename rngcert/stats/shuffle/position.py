"""Where cards go: position chi-square on ``perm``, and the rank-by-position chi-square on faces."""

from __future__ import annotations

import numpy as np

from rngcert.equipment.cards import RANKS
from rngcert.errors import InputError
from rngcert.stats import _dist  # scipy.stats' distributions without its import (over 0.5 s)
from rngcert.stats.result import NotApplicable, Requirement, TestResult
from rngcert.stats.shuffle.core import _perm_iv, _pv


def _default_bins(m: int, n: int) -> int:
    for b in (8, 6, 4, 3, 2):
        if b <= n and m * n / (b * b) >= 5:
            return b
    return 0


def _binned_table(perm, bins):
    m, n = perm.shape
    zb = (perm.astype(np.int64) * bins) // n  # zone before of the card at each after position
    za = (np.arange(n) * bins) // n
    cells = zb * bins + za[None, :]
    return np.bincount(cells.ravel(), minlength=bins * bins).reshape(bins, bins)


def position_chisquare(perm, *, bins: int | None = None) -> TestResult | NotApplicable:
    """Binned position-to-position chi-square: zone before the shuffle × zone after it.

    Uses card **identity**. The ``bins`` zones are equal slices of the stack (the zones a
    shuffle tracker follows from the discard tray to the shoe).

    Parameters
    ----------
    perm : (n_shoes, n_cards) array_like of int
    bins : int >= 2, optional
        Zones per axis. Default: the largest of 8, 6, 4, 3, 2 with expected counts >= 5.

    Returns
    -------
    TestResult or NotApplicable
        statistic = ((n-1)/n) X², df = (bins - 1)²; details: observed, expected, residuals.
        NotApplicable when an expected count is below 5.

    Notes
    -----
    Every shoe contributes a bins×bins table whose margins are fixed (each zone holds the same
    cards before and after). Under H0 that table is a uniformly random table with those margins,
    for which E X² = n/(n-1) · (bins-1)²; summing independent shoes keeps the cell means and
    variances proportional, so ((n-1)/n) X² of the summed table is asymptotically
    χ²((bins-1)²) (the permutation distribution of Pearson's statistic with fixed margins [1]).

    References
    ----------
    .. [1] Lehmann, E. L. and Romano, J. P. (2005) *Testing Statistical Hypotheses*, 3rd ed.,
       Springer (permutation tests; the fixed-margin law of contingency tables).

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import position_chisquare
    >>> perm = np.argsort(np.random.default_rng(8).random((200, 52)), axis=1)
    >>> res = position_chisquare(perm)
    >>> res.details["bins"], res.pvalue > 0.01
    (8, True)
    """
    perm = _perm_iv(perm)
    m, n = perm.shape
    if bins is None:
        bins = _default_bins(m, n)
        if bins == 0:
            return NotApplicable("position_chisquare", Requirement.INDEPENDENCE, m,
                                 f"{m} shoes of {n} cards give expected counts below 5 even with 2 zones")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 2 <= bins <= n:
        raise InputError(f"bins must be an integer in 2..{n}, got {bins!r}")
    obs = _binned_table(perm, int(bins))
    size = np.bincount((np.arange(n) * bins) // n, minlength=bins).astype(float)
    exp = m * np.outer(size, size) / n
    if exp.min() < 5:
        return NotApplicable("position_chisquare", Requirement.INDEPENDENCE, m,
                             f"smallest expected count {exp.min():.2f} < 5 with {bins} zones")
    x2 = float(((obs - exp) ** 2 / exp).sum())
    stat = x2 * (n - 1) / n
    df = (bins - 1) ** 2
    return TestResult(
        "position_chisquare", Requirement.INDEPENDENCE, stat, df, _pv(_dist.chi2_sf(stat, df)), m, "asymptotic",
        {"bins": int(bins), "observed": obs, "expected": exp, "residuals": (obs - exp) / np.sqrt(exp), "uses": "identity"},
    )


def position_rank_chisquare(after, *, decks: int) -> TestResult | NotApplicable:
    """Per-card-position chi-square across shoes: is each rank equally likely at every position?

    Uses card **rank** (A..K), so it applies to any shoe log, with or without deck serials and
    without the order before the shuffle. This is the "chi-square per card position" of state
    shuffler test rules.

    Parameters
    ----------
    after : (n_shoes, n_cards) array_like of int
        Card codes in dealing order; every shoe a full shoe of ``decks`` decks, or the same
        dealt prefix of one.
    decks : int
        Decks in the shoe (each rank is 4·decks of the 52·decks cards).

    Returns
    -------
    TestResult or NotApplicable
        statistic = ((N-1)/N) X² of the positions × ranks table, df = (n_cards-1)·12 for a full
        shoe; details: per-position X² (12 df each) and the worst position. NotApplicable when
        expected counts n_shoes/13 < 5.

    Notes
    -----
    For a full shoe the per-shoe position × rank table has fixed margins (one card per
    position, 4·decks per rank), so the permutation argument of :func:`position_chisquare`
    gives ((N-1)/N) X² ~ χ²((N-1)·12) with N = 52·decks. For a prefix of n < N positions the
    rank margin is random; then each position is multinomial with the shoe's rank
    probabilities, positions are weakly dependent, and X² is referred to χ²(12 n) (the
    positions' statistics are summed; this is approximate).
    """
    a = np.asarray(after)
    if a.ndim != 2 or not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"after must be a 2-D integer array (n_shoes, n_cards), got shape {a.shape}")
    m, n = a.shape
    N = 52 * int(decks)
    if n > N:
        raise InputError(f"shoe has {n} cards, more than {decks} decks hold ({N})")
    if m / 13 < 5:
        return NotApplicable("position_rank_chisquare", Requirement.UNIFORMITY, m,
                             f"{m} shoes give expected count {m / 13:.2f} < 5 per rank and position (need >= 65 shoes)")
    rank = (a % 13).astype(np.int64)
    obs = np.bincount((np.arange(n)[None, :] * 13 + rank).ravel(), minlength=13 * n).reshape(n, 13)
    exp = m / 13.0
    per_pos = ((obs - exp) ** 2 / exp).sum(axis=1)
    x2 = float(per_pos.sum())
    if n == N:
        stat, df = x2 * (N - 1) / N, (N - 1) * 12
        method = "asymptotic"
    else:
        stat, df = x2, 12 * n
        method = "asymptotic (prefix of shoe)"
    worst = int(np.argmax(per_pos))
    return TestResult(
        "position_rank_chisquare", Requirement.UNIFORMITY, stat, df, _pv(_dist.chi2_sf(stat, df)), m, method,
        {"per_position_chisquare": per_pos, "worst_position": worst + 1,
         "worst_position_pvalue": float(_dist.chi2_sf(per_pos[worst], 12)), "ranks": list(RANKS), "uses": "rank"},
    )
