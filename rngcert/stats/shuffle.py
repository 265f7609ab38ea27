"""Shuffle-quality tests: does the order after a shuffle still remember the order before it?

Inputs are card orders of many shoes at once: ``before`` and ``after``, integer arrays of shape
``(n_shoes, n_cards)`` of card codes (:mod:`rngcert.equipment.cards`), position 0 = top = first
card dealt. Most tests work on the *permutation* ``perm`` of shape ``(n_shoes, n_cards)``:
``perm[i, j]`` is the position before the shuffle of the card found at position ``j`` after it
(:func:`card_permutation`). H0 throughout: every shoe's ``after`` order is a uniformly random
permutation of its ``before`` order, independently across shoes (a Fisher–Yates shuffle).

Card identity, rank or game value
---------------------------------
Each docstring says which one a test uses. Tests on ``perm`` need card *identity*: with a
single deck, or serialised multi-deck test decks (``QH#3``), identity is unique and the exact
null laws below apply. In a multi-deck shoe without serials a card's identity is ambiguous; the
k-th copy of a card after the shuffle is then matched to the k-th copy before it, and because
that matching changes the null law the battery switches those tests to Monte Carlo p-values
under the same matching (:mod:`rngcert.battery.shuffle`).

Nothing here does I/O; randomness (Monte Carlo) comes only from the ``rng`` argument.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from scipy import special
from scipy import stats as sps

from rngcert.equipment.cards import RANKS
from rngcert.errors import InputError
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue, monte_carlo_pvalue

_TINY = float(np.finfo(float).tiny)


def _pv(p: float) -> float:
    """Clip into [0, 1] and floor at the smallest normal double: an underflowed tail is reported
    as 2.2e-308 ("smaller than this"), never as 0 (TestResult p-values lie in (0, 1])."""
    return max(clip_pvalue(p), _TINY)


__all__ = [
    "card_permutation", "eulerian_numbers", "rising_sequence_law", "riffle_tv_distance", "riffle_tv_table",
    "rising_sequences", "adjacent_pairs", "displacement", "position_chisquare", "rank_correlation",
    "position_rank_chisquare", "guessing_test", "guess_count", "guessing_law",
    "shuffle_plot_data", "riffle_fit", "gsr_equivalent_riffles", "gsr_law_check", "fixed_points", "position_correlation",
    "orientation_share", "orientation_rank", "adjacency_share", "shuffle_moments",
]

# Exact convolution of per-shoe laws is used while the support of the sum stays below this.
_EXACT_SUPPORT = 4_000


# ----------------------------------------------------------------------------- inputs
def _orders_iv(before, after):
    b = np.asarray(before)
    a = np.asarray(after)
    if a.ndim != 2 or b.shape != a.shape:
        raise InputError(f"before and after must be 2-D arrays of equal shape (n_shoes, n_cards), got {b.shape} and {a.shape}")
    if a.shape[0] < 1 or a.shape[1] < 2:
        raise InputError(f"need at least one shoe of at least 2 cards, got shape {a.shape}")
    if not (np.issubdtype(a.dtype, np.integer) and np.issubdtype(b.dtype, np.integer)):
        raise InputError(f"card orders must be integer card codes, got dtypes {b.dtype} and {a.dtype}")
    return b, a


def _perm_iv(perm) -> np.ndarray:
    p = np.asarray(perm)
    if p.ndim == 1:
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] < 2 or not np.issubdtype(p.dtype, np.integer):
        raise InputError(f"perm must be an integer array (n_shoes, n_cards >= 2), got shape {p.shape}, dtype {p.dtype}")
    n = p.shape[1]
    s = np.sort(p, axis=1)
    if not np.array_equal(s, np.broadcast_to(np.arange(n), p.shape)):
        bad = int(np.nonzero(~np.all(s == np.arange(n), axis=1))[0][0])
        raise InputError(f"perm row {bad} is not a permutation of 0..{n - 1}")
    return p


def card_permutation(before, after) -> tuple[np.ndarray, bool]:
    """Permutation taking each shoe's ``before`` order to its ``after`` order.

    Parameters
    ----------
    before, after : (n_shoes, n_cards) array_like of int
        Card codes before and after the shuffle. Each ``after`` row must hold the same multiset
        of codes as its ``before`` row.

    Returns
    -------
    perm : (n_shoes, n_cards) ndarray of int32
        ``perm[i, j]`` = position in ``before[i]`` of the card at position ``j`` of ``after[i]``.
    unique : bool
        True when every code occurs once per shoe (card identity is unambiguous). Otherwise
        repeated codes were matched in order: the k-th copy after to the k-th copy before.

    Raises
    ------
    InputError
        Shapes differ, or a shoe's ``after`` is not a rearrangement of its ``before``
        (quoting the shoe index).
    """
    b, a = _orders_iv(before, after)
    m, n = a.shape
    ob = np.argsort(b, axis=1, kind="stable")
    oa = np.argsort(a, axis=1, kind="stable")
    sb = np.take_along_axis(b, ob, axis=1)
    sa = np.take_along_axis(a, oa, axis=1)
    diff = np.any(sb != sa, axis=1)
    if diff.any():
        i = int(np.nonzero(diff)[0][0])
        raise InputError(f"shoe {i}: the cards after the shuffle are not the cards before it")
    unique = bool(np.all(sb[:, 1:] != sb[:, :-1]))
    perm = np.empty((m, n), dtype=np.int32)
    np.put_along_axis(perm, oa, ob.astype(np.int32), axis=1)
    return perm, unique


def _positions(perm: np.ndarray) -> np.ndarray:
    """pos[i, k] = position after the shuffle of the card that was at position k before."""
    pos = np.empty_like(perm)
    np.put_along_axis(pos, perm.astype(np.intp), np.broadcast_to(np.arange(perm.shape[1], dtype=perm.dtype), perm.shape), axis=1)
    return pos


# ----------------------------------------------------------------------------- exact laws
@lru_cache(maxsize=64)
def eulerian_numbers(n: int) -> tuple[int, ...]:
    """Eulerian numbers A(n, r), r = 1..n: permutations of n cards with exactly r rising sequences.

    Exact Python integers from ``A(m, r) = r A(m-1, r) + (m - r + 1) A(m-1, r-1)``
    (Bayer & Diaconis 1992; Knuth, TAOCP vol. 3, §5.1.3). ``sum_r A(n, r) = n!``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"n must be an integer >= 1, got {n!r}")
    row = [1]
    for m in range(2, int(n) + 1):
        new = [0] * m
        for r in range(1, m + 1):
            a = r * row[r - 1] if r <= m - 1 else 0
            b = (m - r + 1) * row[r - 2] if r >= 2 else 0
            new[r - 1] = a + b
        row = new
    return tuple(row)


def rising_sequence_law(n: int, riffles: int | None = None) -> np.ndarray:
    """Law of the number of rising sequences R of an n-card deck.

    Parameters
    ----------
    n : int >= 1
    riffles : int >= 0 or None
        None: a uniformly random deck, ``P(R = r) = A(n, r) / n!``. k: an ordered deck after k
        GSR riffles, ``P(R = r) = A(n, r) C(2^k + n - r, n) / 2^(kn)`` ([1] Thm 1, with a = 2^k).

    Returns
    -------
    (n,) ndarray of float
        Probabilities for r = 1..n (computed exactly with rationals, then rounded).

    References
    ----------
    .. [1] Bayer, D. and Diaconis, P. (1992) "Trailing the dovetail shuffle to its lair",
       Ann. Appl. Probab. 2(2), 294-313, Theorem 1.
    """
    if riffles is not None and (isinstance(riffles, bool) or not isinstance(riffles, (int, np.integer)) or riffles < 0):
        raise InputError(f"riffles must be an integer >= 0, got {riffles!r}")
    return np.array(_rising_law(int(n), None if riffles is None else int(riffles)))


@lru_cache(maxsize=64)
def _rising_law(n: int, riffles: int | None) -> tuple[float, ...]:
    A = eulerian_numbers(n)
    if riffles is None:
        f = math.factorial(n)
        return tuple(float(Fraction(x, f)) for x in A)
    a = 2**riffles
    den = a**n
    return tuple(float(Fraction(A[r - 1] * math.comb(a + n - r, n), den)) for r in range(1, n + 1))


def riffle_tv_distance(n: int, riffles: int) -> float:
    """Exact total-variation distance from uniform of an n-card deck after ``riffles`` GSR riffles.

    .. math:: TV_k = \\frac12 \\sum_{r=1}^{n} A(n,r) \\left| \\binom{2^k+n-r}{n} 2^{-kn} - \\frac{1}{n!} \\right|

    computed in exact rational arithmetic; Bayer & Diaconis (1992), Ann. Appl. Probab. 2(2),
    294-313, Theorem 1 and its table for n = 52 ( 1.000 1.000 1.000 1.000 0.924 0.614 0.334
    0.167 0.085 0.043 for k = 1..10).

    Examples
    --------
    >>> from rngcert.stats import riffle_tv_distance
    >>> [round(riffle_tv_distance(52, k), 3) for k in (5, 6, 7, 8)]  # Bayer & Diaconis (1992): seven riffles
    [0.924, 0.614, 0.334, 0.167]
    """
    if isinstance(riffles, bool) or not isinstance(riffles, (int, np.integer)) or riffles < 0:
        raise InputError(f"riffles must be an integer >= 0, got {riffles!r}")
    A = eulerian_numbers(n)
    a = 2 ** int(riffles)
    den = a**n
    fact = math.factorial(n)
    tot = Fraction(0)
    for r in range(1, n + 1):
        tot += A[r - 1] * abs(Fraction(math.comb(a + n - r, n), den) - Fraction(1, fact))
    return float(tot / 2)


def riffle_tv_table(n: int = 52, riffles=range(1, 11)) -> list[dict]:
    """Exact TV distance table for the ``rngcert shuffle riffles --cards n`` command.

    Returns
    -------
    list of dict
        ``{"riffles": k, "tv": float}`` for each k.
    """
    return [{"riffles": int(k), "tv": riffle_tv_distance(n, int(k))} for k in riffles]


@lru_cache(maxsize=64)
def _succession_law(n: int) -> np.ndarray:
    """P(K = k), k = 0..n-1: successions (i immediately followed by i+1) of a uniform permutation.

    Number of permutations of n with k successions is C(n-1, k) a(n-k-1) with
    a(m) = m a(m-1) + (m-1) a(m-2), a(0) = a(1) = 1 (OEIS A000255; Riordan, *An Introduction to
    Combinatorial Analysis*, 1958). With b(m) = a(m)/m!: b(m) = b(m-1) + b(m-2)/m and
    P(K = k) = b(n-k-1) / (k! n).
    """
    b = np.ones(max(n, 2))
    for m in range(2, n):
        b[m] = b[m - 1] + b[m - 2] / m
    k = np.arange(n)
    logp = np.log(b[n - k - 1]) - special.gammaln(k + 1) - math.log(n)
    p = np.exp(logp)
    return p / p.sum()


@lru_cache(maxsize=64)
def guessing_law(n: int) -> np.ndarray:
    """Law of the number of correct guesses, with feedback, through a uniformly random n-card deck.

    Whatever strategy is used (each guess an unseen card chosen from what was seen), the t-th
    guess is right with probability 1/(n - t + 1) independently of the past, so the count is a
    sum of independent Bernoulli(1/m), m = 1..n, with mean H_n (H_52 = 4.538).

    Returns
    -------
    (n+1,) ndarray of float
        P(correct = c), c = 0..n.

    References
    ----------
    .. [1] Diaconis, P. and Graham, R. (1981) "The analysis of sequential experiments with
       feedback to subjects", Ann. Statist. 9(1), 3-23.
    """
    pmf = np.zeros(n + 1)
    pmf[0] = 1.0
    for m in range(1, n + 1):
        q = 1.0 / m
        pmf[1:] = pmf[1:] * (1 - q) + pmf[:-1] * q
        pmf[0] *= 1 - q
    return pmf


# ----------------------------------------------------------------------------- sums over shoes
def _sum_pvalue(total: float, pmf: np.ndarray, n_shoes: int, alternative: str, offset: int = 0):
    """P-value of the sum of n_shoes i.i.d. lattice variables with law ``pmf`` (support offset+0..).

    Exact (up to float rounding, ~1e-15 absolute): the law is trimmed to the support where it
    exceeds 1e-22 of its mode (the rest is far below any p-value of interest) and raised to the
    n-th convolution power by repeated squaring with FFT convolution; the normal law with the
    exact moments is used only beyond 4 million support points. The normal tail is not used
    for small sums: the sum of ~Poisson(1) succession counts over a few dozen shoes is visibly
    skewed in the upper tail. Returns (pvalue, method, mean, var).
    """
    from scipy.signal import fftconvolve

    support = np.arange(pmf.size) + offset
    mu1 = float(np.dot(support, pmf))
    var1 = float(np.dot((support - mu1) ** 2, pmf))
    mean, var = n_shoes * mu1, n_shoes * var1
    keep = np.flatnonzero(pmf > pmf.max() * 1e-22)
    lo_i, hi_i = int(keep.min()), int(keep.max())
    core = pmf[lo_i:hi_i + 1] / pmf[lo_i:hi_i + 1].sum()
    off = offset + lo_i
    if n_shoes * (core.size - 1) + 1 <= 4_000_000:
        law = np.array([1.0])
        base = core
        k = n_shoes
        while k:  # repeated squaring; every product is a law, clipped at 0 against FFT round-off
            if k & 1:
                law = np.maximum(fftconvolve(law, base) if law.size * base.size > 4096 else np.convolve(law, base), 0.0)
            k >>= 1
            if k:
                base = np.maximum(fftconvolve(base, base) if base.size > 64 else np.convolve(base, base), 0.0)
        law /= law.sum()
        t = int(round(total)) - n_shoes * off
        upper = float(law[max(t, 0):].sum()) if t < law.size else 0.0
        lower = float(law[: t + 1].sum()) if t >= 0 else 0.0
        method = "exact"
    else:
        sd = math.sqrt(var)
        upper = float(sps.norm.sf((total - 0.5 - mean) / sd))
        lower = float(sps.norm.cdf((total + 0.5 - mean) / sd))
        method = "asymptotic"
    if alternative == "greater":
        p = upper
    elif alternative == "less":
        p = lower
    else:
        p = 2 * min(upper, lower)
    return _pv(p), method, mean, var


def _alt_iv(alternative):
    if alternative not in ("two-sided", "less", "greater"):
        raise InputError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    return alternative


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
    p = {"greater": sps.norm.sf(z), "less": sps.norm.cdf(z), "two-sided": 2 * sps.norm.sf(abs(z))}[alternative]
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
    p = {"greater": sps.norm.sf(z), "less": sps.norm.cdf(z), "two-sided": 2 * sps.norm.sf(abs(z))}[alternative]
    return TestResult(
        "rank_correlation", Requirement.INDEPENDENCE, float(rho.mean()), None, _pv(p), m, "asymptotic",
        {"z": z, "alternative": alternative, "uses": "identity"},
    )


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
        "position_chisquare", Requirement.INDEPENDENCE, stat, df, _pv(sps.chi2.sf(stat, df)), m, "asymptotic",
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
        "position_rank_chisquare", Requirement.UNIFORMITY, stat, df, _pv(sps.chi2.sf(stat, df)), m, method,
        {"per_position_chisquare": per_pos, "worst_position": worst + 1,
         "worst_position_pvalue": float(sps.chi2.sf(per_pos[worst], 12)), "ranks": list(RANKS), "uses": "rank"},
    )


def guess_count(perm) -> np.ndarray:
    """Correct guesses per shoe of the direction-following guesser, with full feedback.

    Uses card **identity**. The guesser knows the order before the shuffle and sees every card
    after guessing it. First guess: the original top card. Then, with c the last card seen
    (by original position): if the last two cards seen went down (c below its predecessor)
    guess the nearest unseen card below c, else the nearest unseen card above c; when there is
    none on that side, the nearest on the other. This follows rising sequences after riffles
    [1] and the up-then-down piles of a shelf shuffler [2]. The nearest unseen cards come from a
    doubly linked list of the unseen positions (a seen card is unlinked; the last card seen keeps
    the links it had when it was unlinked, which are its nearest unseen neighbours): O(n) per shoe,
    vectorised over shoes.

    Returns
    -------
    (n_shoes,) ndarray of int

    References
    ----------
    .. [1] Bayer, D. and Diaconis, P. (1992), Ann. Appl. Probab. 2(2), 294-313.
    .. [2] Diaconis, P., Fulman, J. and Holmes, S. (2013), Ann. Appl. Probab. 23(4), 1692-1720.
    """
    perm = _perm_iv(perm)
    m, n = perm.shape
    # slot i holds position i - 1; slot 0 (position -1) and slot n + 1 (position n) are sentinels
    nxt = np.broadcast_to(np.arange(1, n + 3, dtype=np.int32), (m, n + 2)).copy()
    prv = np.broadcast_to(np.arange(-1, n + 1, dtype=np.int32), (m, n + 2)).copy()
    correct = np.zeros(m, dtype=np.int64)
    prev = np.full(m, -1)
    prev2 = np.full(m, -1)
    rows = np.arange(m)
    for t in range(n):  # one step per card position, vectorised over shoes
        slot = prev + 1
        above = nxt[rows, slot] - 1  # n: no unseen card above
        below = prv[rows, slot] - 1  # -1: none below
        down = (prev2 > prev) & (prev >= 0)
        g = np.where(down, np.where(below >= 0, below, above), np.where(above < n, above, below))
        g = np.where(prev < 0, 0, g)
        card = perm[:, t]
        correct += g == card
        j = card + 1
        p, q = prv[rows, j], nxt[rows, j]
        nxt[rows, p] = q
        prv[rows, q] = p
        prev2, prev = prev, card
    return correct


def _guess_count_quadratic(perm) -> np.ndarray:
    """:func:`guess_count` by scanning every unseen card at each step (O(n²) per shoe): the
    reference the linked-list version is tested against."""
    perm = _perm_iv(perm)
    m, n = perm.shape
    seen = np.zeros((m, n), dtype=bool)
    lab = np.arange(n)
    correct = np.zeros(m, dtype=np.int64)
    prev = np.full(m, -1)
    prev2 = np.full(m, -1)
    rows = np.arange(m)
    for t in range(n):
        unseen = ~seen
        above = np.where(unseen & (lab[None, :] > prev[:, None]), lab[None, :], n).min(axis=1)
        below = np.where(unseen & (lab[None, :] < prev[:, None]), lab[None, :], -1).max(axis=1)
        down = (prev2 > prev) & (prev >= 0)
        g = np.where(down, np.where(below >= 0, below, above), np.where(above < n, above, below))
        g = np.where(prev < 0, 0, g)
        card = perm[:, t]
        correct += g == card
        seen[rows, card] = True
        prev2, prev = prev, card
    return correct


def guessing_test(perm, *, max_shoes: int = 2000) -> TestResult:
    """Guess-the-next-card test with feedback: too many correct guesses means predictable.

    Uses card **identity**.

    Parameters
    ----------
    perm : (n_shoes, n_cards) array_like of int
    max_shoes : int
        Only the first ``max_shoes`` shoes are played (the guesser costs O(n²) per shoe).

    Returns
    -------
    TestResult
        statistic = total correct guesses; one-sided (greater) p-value from the exact null law
        (:func:`guessing_law`, convolved over shoes) or its normal approximation.

    Notes
    -----
    Under H0 the number of correct guesses of *any* guesser with feedback is a sum of
    independent Bernoulli(1/m), m = 1..n, mean H_n (4.538 for 52 cards) [1]. The guesser is
    :func:`guess_count`; one pass of a 10-shelf shuffler gets ≈ 9.3 on 52 cards (DFH's own
    conjectured-optimal strategy reports about 9.5 [2]).

    References
    ----------
    .. [1] Diaconis, P. and Graham, R. (1981), Ann. Statist. 9(1), 3-23.
    .. [2] Diaconis, P., Fulman, J. and Holmes, S. (2013), Ann. Appl. Probab. 23(4), 1692-1720.

    Examples
    --------
    >>> import numpy as np
    >>> from rngcert.stats import guessing_test
    >>> perm = np.argsort(np.random.default_rng(8).random((50, 52)), axis=1)
    >>> guessing_test(perm).pvalue > 0.01
    True
    >>> guessing_test(np.tile(np.arange(52), (50, 1))).pvalue < 1e-10  # the order is known: every guess right
    True
    """
    perm = _perm_iv(perm)
    max_shoes = int(max_shoes)
    if max_shoes < 1:
        raise InputError(f"max_shoes must be >= 1, got {max_shoes!r}")
    use = perm[:max_shoes]
    m, n = use.shape
    c = guess_count(use)
    p, method, mean, var = _sum_pvalue(float(c.sum()), guessing_law(n), m, "greater")
    return TestResult(
        "guessing", Requirement.UNPREDICTABILITY, float(c.sum()), None, p, m, method,
        {"mean_correct_per_shoe": float(c.mean()), "null_mean_per_shoe": float(np.sum(1.0 / np.arange(1, n + 1))),
         "shoes_used": m, "shoes_given": int(perm.shape[0]), "histogram": np.bincount(c, minlength=n + 1),
         "z": (c.sum() - mean) / math.sqrt(var), "uses": "identity"},
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
        "fixed_points", Requirement.INDEPENDENCE, float(M.sum()), None, _pv(2 * sps.norm.sf(abs(z))), m, "asymptotic (exact moments)",
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
    p = {"greater": sps.norm.sf(z), "less": sps.norm.cdf(z), "two-sided": 2 * sps.norm.sf(abs(z))}[alternative]
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
    p = 2 * sps.t.sf(abs(t), per.size - 1)
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
    return TestResult("orientation_rank", Requirement.UNPREDICTABILITY, F, float(q), _pv(sps.f.sf(F, q, S - q)), S,
                      f"asymptotic (Hotelling T², F({q}, {S - q}))", {"table": table, "hotelling_T2": t2, "ranks": list(RANKS),
                                                                        "uses": "orientation and rank"})


# ----------------------------------------------------------------------------- battery
_PERM_TESTS = {
    "rising_sequences": (rising_sequences, lambda perm: float(_rising_per_shoe(perm).sum()), "two-sided", Requirement.INDEPENDENCE),
    "adjacent_pairs": (adjacent_pairs, lambda perm: float(_pairs_per_shoe(perm).sum()), "greater", Requirement.INDEPENDENCE),
    "displacement": (displacement, lambda perm: float(_footrule_per_shoe(perm).sum()), "two-sided", Requirement.INDEPENDENCE),
    "rank_correlation": (rank_correlation, lambda perm: float(_spearman_per_shoe(perm).sum()), "two-sided", Requirement.INDEPENDENCE),
}


def _mc_perm_tests(before, after, rng, n_resamples, max_shoes):
    """Monte Carlo versions of the identity tests when repeated cards are matched in order."""
    b = before[:max_shoes]
    a = after[:max_shoes]
    perm, _ = card_permutation(b, a)
    obs = {k: f[1](perm) for k, f in _PERM_TESTS.items()}
    null = {k: np.empty(n_resamples) for k in _PERM_TESTS}
    for r in range(n_resamples):  # loop over Monte Carlo replicates, vectorised over shoes
        pr, _ = card_permutation(b, rng.permuted(b, axis=1))
        for k, f in _PERM_TESTS.items():
            null[k][r] = f[1](pr)
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


def shuffle_plot_data(before, after, *, bins: int = 8, guess_shoes: int = 2000) -> dict:
    """Plot-ready numbers for the shuffle report (no plotting here).

    Parameters
    ----------
    before, after : (n_shoes, n_cards) array_like of int
        Orders before and after the shuffle (identity matched in order for repeated cards).
    bins : int
        Zones per axis of the heat map.
    guess_shoes : int
        Shoes played for the guessing distribution.

    Returns
    -------
    dict
        ``heatmap``: {"bins", "observed_over_expected" (bins×bins, rows = zone before,
        columns = zone after), "observed", "expected"};
        ``rising``: {"r" (1..n), "observed" (shoe counts), "null" (expected shoe counts under
        uniform), "gsr" {k: expected counts after k GSR riffles} for k = 1..4};
        ``guessing``: {"correct" (0..n), "observed", "null"};
        ``gsr_equivalent``: :func:`gsr_equivalent_riffles`.
    """
    perm, _ = card_permutation(before, after)
    m, n = perm.shape
    bins = int(min(bins, n))
    obs = _binned_table(perm, bins)
    size = np.bincount((np.arange(n) * bins) // n, minlength=bins).astype(float)
    exp = m * np.outer(size, size) / n
    r = _rising_per_shoe(perm)
    gsr = {k: (m * rising_sequence_law(n, k)) for k in range(1, 5)} if n <= 520 else {}
    c = guess_count(perm[:guess_shoes])
    return {
        "heatmap": {"bins": bins, "observed_over_expected": obs / exp, "observed": obs, "expected": exp},
        "rising": {"r": np.arange(1, n + 1), "observed": np.bincount(r - 1, minlength=n), "null": m * rising_sequence_law(n), "gsr": gsr},
        "guessing": {"correct": np.arange(n + 1), "observed": np.bincount(c, minlength=n + 1), "null": c.size * guessing_law(n)},
        "gsr_equivalent": gsr_equivalent_riffles(perm),
    }


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
    bt = sps.binomtest(int(cuts.sum()), m * n, 0.5)
    x2 = float(((cuts - n / 2) ** 2 / (n / 4)).sum())
    p_disp = 2 * min(sps.chi2.cdf(x2, m), sps.chi2.sf(x2, m))
    k = np.count_nonzero(d[:, 1:] != d[:, :-1], axis=1)
    K, T = int(k.sum()), m * (n - 1)
    lam = K / T
    ll_gsr = m * n * math.log(0.5)
    ll_mk = m * math.log(0.5) + (K * math.log(lam) if K else 0.0) + ((T - K) * math.log(1 - lam) if T - K else 0.0)
    lr = max(0.0, 2 * (ll_mk - ll_gsr))
    return [
        TestResult("riffle_cut_binomial", Requirement.UNIFORMITY, float(cuts.sum()), None, _pv(bt.pvalue), m, "exact",
                   {"cuts": cuts, "n_cards": n, "mean_cut_fraction": float(cuts.mean() / n)}),
        TestResult("riffle_cut_dispersion", Requirement.UNIFORMITY, x2, float(m), _pv(p_disp), m, "exact (chi-square law of normal cuts)",
                   {"cut_variance": float(cuts.var(ddof=0)), "gsr_cut_variance": n / 4}),
        TestResult("riffle_drop_lrt", Requirement.INDEPENDENCE, lr, 1.0, _pv(sps.chi2.sf(lr, 1)), m, "asymptotic",
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
        p_r = float(sps.chi2.sf(x2, df))
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

#: Public name of the law of successions (used by the shuffle pipeline's power statement).
succession_law = _succession_law
