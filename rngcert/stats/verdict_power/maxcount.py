"""The battery's max count in the verdict power: its exact null law (Levin 1981), its critical
count, and its rejection rule (:mod:`rngcert.stats.verdict_power`)."""

from __future__ import annotations

import math

import numpy as np

from rngcert.stats.frequency import _fast_len
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer
from rngcert.stats.verdict_power.common import NEGLIGIBLE

#: As in :mod:`rngcert.stats.frequency` (the battery's max count): the Poisson pmfs are cut this many
#: SDs below the mean, and above this FFT length the battery takes a Monte Carlo p-value instead.
_LEVIN_LOW_SD = 13.0
_LEVIN_MAX_LEN = 4_000_000


# ----------------------------------------------------------------------------- max count: exact law
def _levin_len(n: int, k: int, a: int) -> tuple[int, int]:
    """(lower cut, FFT length) of Levin's convolution for the event {all counts <= a}, as the
    battery computes them."""
    mu = n / k
    lo = min(max(0, math.floor(mu - _LEVIN_LOW_SD * math.sqrt(mu) - 1)), a)
    return lo, k * (a - lo) + 1


def _levin_cdf(n: int, k: int, a: int) -> float:
    """P(N_j <= a for all j) for (N_j) ~ multinomial(n, uniform on k cells), Levin (1981) eq. (1):
    ``n! / (n^n e^-n)`` times the probability that k independent Poisson(n/k) variables, each
    restricted to ``[lo, a]``, sum to n; one FFT (the k pmfs are equal)."""
    if a < 0 or a * k < n:
        return 0.0
    a = min(a, n)
    lo, total = _levin_len(n, k, a)
    target = n - k * lo
    if target < 0:
        return 0.0
    mu = n / k
    x = np.arange(lo, a + 1, dtype=float)
    pmf = np.exp(special.xlogy(x, mu) - mu - special.gammaln(x + 1.0))
    nfft = _fast_len(total)
    conv = np.fft.irfft(np.fft.rfft(pmf, nfft) ** k, nfft)
    log_norm = special.gammaln(n + 1.0) - n * math.log(n) + n
    return min(1.0, max(float(conv[target]), 0.0) * math.exp(log_norm))


def max_count_sf(n: int, k: int, c: int) -> float:
    r"""Exact null probability that the largest of k uniform multinomial counts reaches c.

    Parameters
    ----------
    n : int
        Spins.
    k : int
        Cells (pockets), equally likely.
    c : int
        Count.

    Returns
    -------
    float
        :math:`P(\max_j N_j \ge c)`, :math:`(N_j) \sim \mathrm{Mult}(n, 1/k)`, by Levin's
        representation [1]_ (as the battery's :func:`rngcert.stats.frequency.max_count`).

    References
    ----------
    .. [1] Levin, B. (1981), Ann. Statist. 9, 1123-1126.

    Examples
    --------
    >>> round(max_count_sf(3, 3, 2), 6)  # 1 - P(all three different) = 1 - 3!/27
    0.777778
    """
    return 1.0 - _levin_cdf(int(n), int(k), int(c) - 1)


def _max_count_pvalue(n: int, k: int, c: int) -> float:
    """The battery's p-value of an observed max count c: max(exact tail, single-pocket tail)."""
    return max(max_count_sf(n, k, c), float(special.bdtrc(c - 1, n, 1.0 / k)))


def max_count_critical(n: int, k: int, level: float) -> int:
    """Smallest max count c whose exact p-value (as the battery computes it) is at most ``level``;
    ``n + 1`` when no count reaches it.

    The search starts at the Bonferroni count (smallest c with ``k P(N_1 >= c) <= level``, which
    the exact p-value never exceeds) and steps down: one or two FFTs.

    Examples
    --------
    >>> c = max_count_critical(20000, 37, 0.001)
    >>> max_count_sf(20000, 37, c) <= 0.001 < max_count_sf(20000, 37, c - 1)
    True
    """
    n, k = int(n), int(k)
    p = 1.0 / k
    if k * float(special.bdtrc(n - 1, n, p)) > level:  # P(max = n) = k p^n exactly: no count is significant
        return n + 1
    lo, hi = max(1, math.floor(n * p)), n
    while hi - lo > 1:  # k * P(N_1 >= c) is non-increasing in c
        mid = (lo + hi) // 2
        if k * float(special.bdtrc(mid - 1, n, p)) <= level:
            hi = mid
        else:
            lo = mid
    c = hi  # the exact p-value is at most the Bonferroni bound: c is a critical count
    while c > 1 and _max_count_pvalue(n, k, c - 1) <= level:
        c -= 1
    return c


class _MaxCountRule:
    """P(reject | max count) of the battery's max count at ``level``: ``max >= c*`` exactly, or,
    beyond the battery's FFT limit, its Monte Carlo rule with the exact q (interpolated in log q
    between exact values; 0 where that probability is below :data:`NEGLIGIBLE`)."""

    def __init__(self, n: int, k: int, level: float, n_resamples: int | None):
        self.c = max_count_critical(n, k, level)
        self.mc = n_resamples is not None and self.c <= n and _levin_len(n, k, self.c - 1)[1] > _LEVIN_MAX_LEN
        if not self.mc:
            return
        R, bmax = int(n_resamples), math.floor(level * (n_resamples + 1)) - 1
        self.bmax, self.R = bmax, R
        if bmax < 0:
            return
        step = max(1, round(0.1 * math.sqrt(n / k)))
        grid, logq = [], []

        def add(c):
            grid.append(c)
            logq.append(math.log(max(max_count_sf(n, k, c), 1e-300)))
            return float(special.bdtr(bmax, R, math.exp(logq[-1])))

        c = self.c
        while c > 1 and add(c) > NEGLIGIBLE:  # down to where the rule (almost) never rejects
            c -= step
        c = self.c + step
        while c <= n and add(c) < 1 - 1e-9:
            c += step
        order = np.argsort(grid)
        self.grid, self.logq = np.asarray(grid, dtype=float)[order], np.asarray(logq)[order]

    def __call__(self, m: np.ndarray) -> np.ndarray:
        if not self.mc:
            return (m >= self.c).astype(float)
        if self.bmax < 0:
            return np.zeros(np.shape(m))
        q = np.exp(np.interp(m, self.grid, self.logq))
        return np.where(m < self.grid[0], 0.0, special.bdtr(self.bmax, self.R, q))

    def threshold(self) -> int:
        return self.c
