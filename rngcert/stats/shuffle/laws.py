"""Exact null laws: rising sequences (Eulerian numbers, GSR riffles), successions, guessing."""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer


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

    Parameters
    ----------
    n : int
        Cards in the deck (>= 1).
    riffles : int
        GSR riffle shuffles k (>= 0; 0 is the unshuffled deck, distance 1 - 1/n!).

    Returns
    -------
    float
        The total-variation distance, in [0, 1).

    Raises
    ------
    rngcert.errors.InputError
        ``n`` or ``riffles`` not an integer in its range.

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



#: Public name of the law of successions (used by the shuffle pipeline's power statement).
succession_law = _succession_law
