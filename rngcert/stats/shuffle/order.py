"""Tests of the order on ``perm``: rising sequences, adjacent pairs, displacement, rank correlation
(exact or asymptotic laws, and their Monte Carlo versions when repeated cards are matched in order)."""

from __future__ import annotations

import math

import numpy as np

from rngcert.stats import _dist  # scipy.stats' distributions without its import (over 0.5 s)
from rngcert.stats.result import Requirement, TestResult, monte_carlo_pvalue
from rngcert.stats.shuffle.core import _alt_iv, _perm_iv, _positions, _pv, _sum_pvalue, card_permutation
from rngcert.stats.shuffle.laws import (
    _succession_law,
    rising_sequence_law,
)


# ----------------------------------------------------------------------------- per-shoe statistics
def _rising_per_shoe(perm):
    pos = _positions(perm)
    return 1 + np.count_nonzero(pos[:, 1:] < pos[:, :-1], axis=1)


def _pairs_per_shoe(perm):
    pos = _positions(perm)
    return np.count_nonzero(pos[:, 1:] == pos[:, :-1] + 1, axis=1)


def _footrule_per_shoe(perm):
    n = perm.shape[1]
    return np.abs(perm.astype(np.int64) - np.arange(n)).sum(axis=1)


def _spearman_per_shoe(perm):
    n = perm.shape[1]
    d2 = ((perm.astype(np.int64) - np.arange(n)) ** 2).sum(axis=1)
    return 1.0 - 6.0 * d2 / (n * (n * n - 1.0))


# ----------------------------------------------------------------------------- tests on perm
def rising_sequences(perm, *, alternative: str = "two-sided") -> TestResult:
    """Rising-sequence test: number of rising sequences per shoe against its law under uniform.

    Uses card **identity** (the permutation).

    Parameters
    ----------
    perm : (n_shoes, n_cards) array_like of int
        ``perm[i, j]`` = position before the shuffle of the card at position j after it.
    alternative : {"two-sided", "less", "greater"}
        "less": too few rising sequences (riffles leave few); "greater": too many (packet
        reversals such as overhand or strip shuffles).

    Returns
    -------
    TestResult
        statistic = total rising sequences over all shoes; details: histogram, null mean.

    Notes
    -----
    A rising sequence is a maximal run of consecutive original positions k, k+1, ... that
    appear in increasing order after the shuffle; R = 1 + #{k : pos(k+1) < pos(k)}. Under H0,
    ``P(R = r) = A(n, r)/n!`` (Eulerian numbers), mean (n+1)/2, variance (n+1)/12. After k GSR
    riffles R <= 2^k. The sum over shoes is referred to the exact convolution of that law when
    its support is below 4,000 points, otherwise to the normal law with exact moments.

    References
    ----------
    .. [1] Bayer, D. and Diaconis, P. (1992), Ann. Appl. Probab. 2(2), 294-313.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import rising_sequences
    >>> perm = np.argsort(np.random.default_rng(8).random((200, 52)), axis=1)  # 200 uniformly shuffled decks
    >>> res = rising_sequences(perm)
    >>> round(float(res.statistic) / 200, 1), res.pvalue > 0.01
    (26.5, True)
    >>> rising_sequences(np.tile(np.arange(52), (200, 1))).pvalue < 1e-10  # never shuffled: 1 rising sequence each
    True
    """
    perm = _perm_iv(perm)
    alternative = _alt_iv(alternative)
    m, n = perm.shape
    r = _rising_per_shoe(perm)
    pmf = rising_sequence_law(n)
    p, method, mean, var = _sum_pvalue(float(r.sum()), pmf, m, alternative, offset=1)
    hist = np.bincount(r - 1, minlength=n)
    return TestResult(
        "rising_sequences", Requirement.INDEPENDENCE, float(r.sum()), None, p, m, method,
        {"mean_per_shoe": float(r.mean()), "null_mean_per_shoe": (n + 1) / 2, "z": (r.sum() - mean) / math.sqrt(var),
         "histogram": hist, "alternative": alternative, "uses": "identity"},
    )


def adjacent_pairs(perm, *, alternative: str = "greater") -> TestResult:
    """Adjacent pairs kept: cards adjacent before the shuffle still adjacent, in order, after it.

    Uses card **identity**.

    Parameters
    ----------
    perm : (n_shoes, n_cards) array_like of int
    alternative : {"greater", "two-sided", "less"}
        Weak shuffles keep too many pairs ("greater", the default).

    Returns
    -------
    TestResult
        statistic = total kept pairs over all shoes.

    Notes
    -----
    K = #{k : pos(k+1) = pos(k) + 1}, the successions of the permutation. Under H0
    ``P(K = k) = C(n-1, k) a(n-k-1) / n!`` with a(m) = m a(m-1) + (m-1) a(m-2), a(0)=a(1)=1
    (OEIS A000255), mean (n-1)/n, close to Poisson(1). Shoes are summed exactly (convolution)
    or by the normal law with exact moments when the sum's support is large.

    References
    ----------
    .. [1] Riordan, J. (1958) *An Introduction to Combinatorial Analysis*, Wiley
       (permutations by successions); OEIS A000255.
    .. [2] Bayer, D. and Diaconis, P. (1992), Ann. Appl. Probab. 2(2), 294-313 (cards that
       started together as a test of riffles).

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import adjacent_pairs
    >>> perm = np.argsort(np.random.default_rng(8).random((200, 52)), axis=1)
    >>> adjacent_pairs(perm).pvalue > 0.01
    True
    >>> cut = np.tile(np.roll(np.arange(52), 20), (200, 1))  # only cut: 50 of 51 pairs kept
    >>> adjacent_pairs(cut).pvalue < 1e-10
    True
    """
    perm = _perm_iv(perm)
    alternative = _alt_iv(alternative)
    m, n = perm.shape
    k = _pairs_per_shoe(perm)
    p, method, mean, var = _sum_pvalue(float(k.sum()), _succession_law(n), m, alternative)
    return TestResult(
        "adjacent_pairs", Requirement.INDEPENDENCE, float(k.sum()), None, p, m, method,
        {"mean_per_shoe": float(k.mean()), "null_mean_per_shoe": (n - 1) / n, "z": (k.sum() - mean) / math.sqrt(var),
         "alternative": alternative, "uses": "identity"},
    )


def displacement(perm, *, alternative: str = "two-sided") -> TestResult:
    """Displacement test: Spearman's footrule, the total distance the cards moved.

    Uses card **identity**.

    Parameters
    ----------
    perm : (n_shoes, n_cards) array_like of int
    alternative : {"two-sided", "less", "greater"}
        "less": cards moved too little (order kept); "greater": too much (e.g. reversal).

    Returns
    -------
    TestResult
        statistic = sum over shoes of D = sum_j |perm[j] - j|; asymptotic normal p-value.

    Notes
    -----
    Under H0, E D = (n² - 1)/3 and Var D = (n + 1)(2n² + 7)/45, and D is asymptotically normal
    [1]; the sum over shoes is referred to the normal law with these moments.

    References
    ----------
    .. [1] Diaconis, P. and Graham, R. L. (1977) "Spearman's footrule as a measure of disarray",
       J. R. Statist. Soc. B 39(2), 262-268.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import displacement
    >>> perm = np.argsort(np.random.default_rng(8).random((200, 52)), axis=1)
    >>> displacement(perm).pvalue > 0.01
    True
    >>> displacement(np.tile(np.arange(52), (200, 1))).pvalue < 1e-10  # no card moved
    True
    """
    perm = _perm_iv(perm)
    alternative = _alt_iv(alternative)
    m, n = perm.shape
    d = _footrule_per_shoe(perm)
    mean = m * (n * n - 1) / 3.0
    var = m * (n + 1) * (2.0 * n * n + 7) / 45.0
    z = (float(d.sum()) - mean) / math.sqrt(var)
    p = {"greater": _dist.norm_sf(z), "less": _dist.norm_cdf(z), "two-sided": 2 * _dist.norm_sf(abs(z))}[alternative]
    return TestResult(
        "displacement", Requirement.INDEPENDENCE, float(d.sum()), None, _pv(p), m, "asymptotic",
        {"mean_per_shoe": float(d.mean()), "null_mean_per_shoe": (n * n - 1) / 3.0, "z": z,
         "mean_abs_displacement": float(d.mean() / n), "alternative": alternative, "uses": "identity"},
    )


def rank_correlation(perm, *, alternative: str = "two-sided") -> TestResult:
    """Spearman rank correlation between positions before and after the shuffle.

    Uses card **identity**.

    Parameters
    ----------
    perm : (n_shoes, n_cards) array_like of int
    alternative : {"two-sided", "less", "greater"}

    Returns
    -------
    TestResult
        statistic = mean Spearman rho over shoes; asymptotic normal p-value of the sum.

    Notes
    -----
    rho = 1 - 6 sum d² / (n(n² - 1)); under H0 E rho = 0, Var rho = 1/(n - 1) exactly
    [1], so Z = sum_i rho_i sqrt((n - 1)/n_shoes). The per-shoe rho equals
    ``scipy.stats.spearmanr(arange(n), perm[i]).statistic``.

    References
    ----------
    .. [1] Kendall, M. G. (1970) *Rank Correlation Methods*, 4th ed., Griffin, ch. 2 and 4.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import rank_correlation
    >>> perm = np.argsort(np.random.default_rng(8).random((200, 52)), axis=1)
    >>> res = rank_correlation(perm)
    >>> abs(float(res.statistic)) < 0.05, res.pvalue > 0.01
    (True, True)
    """
    perm = _perm_iv(perm)
    alternative = _alt_iv(alternative)
    m, n = perm.shape
    rho = _spearman_per_shoe(perm)
    z = float(rho.sum()) * math.sqrt((n - 1) / m)
    p = {"greater": _dist.norm_sf(z), "less": _dist.norm_cdf(z), "two-sided": 2 * _dist.norm_sf(abs(z))}[alternative]
    return TestResult(
        "rank_correlation", Requirement.INDEPENDENCE, float(rho.mean()), None, _pv(p), m, "asymptotic",
        {"z": z, "alternative": alternative, "uses": "identity"},
    )



# ----------------------------------------------------------------------------- battery
_PERM_TESTS = {
    "rising_sequences": (rising_sequences, lambda perm: float(_rising_per_shoe(perm).sum()), "two-sided", Requirement.INDEPENDENCE),
    "adjacent_pairs": (adjacent_pairs, lambda perm: float(_pairs_per_shoe(perm).sum()), "greater", Requirement.INDEPENDENCE),
    "displacement": (displacement, lambda perm: float(_footrule_per_shoe(perm).sum()), "two-sided", Requirement.INDEPENDENCE),
    "rank_correlation": (rank_correlation, lambda perm: float(_spearman_per_shoe(perm).sum()), "two-sided", Requirement.INDEPENDENCE),
}


def _null_perm_stats(b):
    """The statistics of ``_PERM_TESTS`` for rearrangements of the orders ``b`` → a function of
    ``a`` (a row-wise rearrangement of ``b``) returning {name: value}, the values
    ``_PERM_TESTS[name][1](card_permutation(b, a)[0])`` exactly (equal integers; the same float
    array summed for the rank correlation).

    ``b``'s stable order is taken once; for each ``a`` one stable sort gives the positions after
    the shuffle of the cards before it (``_positions`` of the permutation: the k-th copy before
    matched to the k-th copy after), and the four statistics are read from them (the footrule
    and the squared displacements are sums over the same pairs (j, perm[j]) = (pos[k], k)).
    """
    m, n = b.shape
    ob = (np.argsort(b, axis=1, kind="stable") + np.arange(m)[:, None] * n).ravel()
    k = np.arange(n)
    spearman_scale = n * (n * n - 1.0)
    flat = np.empty(m * n, dtype=np.int64)  # reused by every replicate
    pos = flat.reshape(m, n)

    def stats(a):
        flat[ob] = np.argsort(a, axis=1, kind="stable").ravel()
        d = pos - k
        # integer totals over all shoes (equal to the sums of the per-shoe counts); the rank
        # correlation is a sum of per-shoe floats, summed as _spearman_per_shoe's array is
        return {"rising_sequences": float(m + np.count_nonzero(pos[:, 1:] < pos[:, :-1])),
                "adjacent_pairs": float(np.count_nonzero(pos[:, 1:] == pos[:, :-1] + 1)),
                "displacement": float(np.abs(d).sum()),
                "rank_correlation": float((1.0 - 6.0 * (d * d).sum(axis=1) / spearman_scale).sum())}

    return stats


def _mc_perm_tests(before, after, rng, n_resamples, max_shoes):
    """Monte Carlo versions of the identity tests when repeated cards are matched in order."""
    b = before[:max_shoes]
    a = after[:max_shoes]
    perm, _ = card_permutation(b, a)
    obs = {k: f[1](perm) for k, f in _PERM_TESTS.items()}
    null = {k: np.empty(n_resamples) for k in _PERM_TESTS}
    null_stats = _null_perm_stats(b)
    for r in range(n_resamples):  # loop over Monte Carlo replicates, vectorised over shoes
        for k, v in null_stats(rng.permuted(b, axis=1)).items():
            null[k][r] = v
    out = []
    for k, (_, _, alt, req) in _PERM_TESTS.items():
        centre = float(np.mean(null[k]))
        if alt == "two-sided":
            p = monte_carlo_pvalue(abs(obs[k] - centre), np.abs(null[k] - centre))
        else:
            p = monte_carlo_pvalue(obs[k], null[k])
        out.append(TestResult(k, req, obs[k], None, p, b.shape[0], f"monte-carlo, R={n_resamples}",
                              {"null_mean": centre, "alternative": alt, "shoes_used": int(b.shape[0]),
                               "uses": "identity (repeated cards matched in order)"}))
    return out
