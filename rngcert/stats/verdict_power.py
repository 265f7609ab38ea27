r"""Power of the *verdict*: the probability that a battery returns FAIL under a stated alternative.

A battery FAILs when (weighted) Holm rejects at level alpha. Holm's procedure rejects something
if and only if its first step rejects, i.e. some applicable test i has :math:`p_i \le \alpha w_i/W`
(W the total weight of the applicable tests). So

.. math:: P(\text{FAIL}) = P\big(\exists i:\ p_i \le \alpha w_i / W\big),

a union of per-test rejections at fixed levels. This module estimates it by simulating count
vectors under the alternative and computing, on the same vectors, every count-based test of the
battery that carries power against it (pocket chi-square, max count, sector scan, first harmonic,
the outside-bet category chi-squares when their partitions are given; for a dealer signature, the
dealer-signature scan), each against its own level :math:`a_i = \alpha w_i/W`:

* the chi-square statistics against their asymptotic critical values (as the battery computes
  them);
* the max count against its **exact** null law, which is what the battery uses (Levin's
  representation [1]_, :func:`max_count_sf`): it rejects exactly when the largest count reaches
  the critical count :math:`c^*`. (Beyond the battery's FFT limit, hundreds of millions of spins,
  the battery takes a Monte Carlo p-value, modelled as below with the exact :math:`q`.)
* the scan statistics (sector scan, dealer signature) with the battery's Monte Carlo rule modelled
  exactly: a test with R resamples rejects when :math:`(b+1)/(R+1) \le a`, and given the observed
  statistic s, :math:`b \sim \mathrm{Bin}(R, q(s))` with :math:`q(s) = P_0(M \ge s)` the null
  exceedance probability, so :math:`P(\text{reject} \mid s) = P(\mathrm{Bin}(R, q(s)) \le
  \lfloor a(R+1)\rfloor - 1)`. Only the upper tail of :math:`q` matters (where that probability
  is above :data:`NEGLIGIBLE`); it is estimated by importance sampling over the arcs, the
  estimator of Naiman & Priebe [2]_ (:func:`scan_null_tail`), whose relative error does not
  grow as the level shrinks. Where the estimated tail ends (:math:`s < s_0`, the rejection
  probability is below :data:`NEGLIGIBLE` there) the rejection probability is taken as 0.

Tests that need the order (runs, gap, serial correlation) are valid conditional tests under the
i.i.d. alternatives used here and reject at about their own level, so leaving them out makes the
stated power a lower bound by at most the sum of their levels (about 0.5 percentage point at
alpha = 0.01). The validation (``tests/test_verdict.py``) runs the real battery on simulated
wheels at the stated 90% point.

**The search over the effect.** Under a block alternative (one pocket, a sector of K pockets, a
dealer signature on K offsets) the counts given the block's total m are multinomial with uniform
cells inside and outside the block, whatever the effect. So one sample drawn at a proposal
effect :math:`e_0` serves every effect e with the likelihood-ratio weights
:math:`w(m) = \mathrm{Bin}(m; n, \pi_e)/\mathrm{Bin}(m; n, \pi_{e_0})`, :math:`\pi_e` the
block's probability (importance sampling on the block total, Owen [3]_ ch. 9): the estimated
power curve is a smooth function of e, solved exactly for the 90% point. Its standard error
combines, in quadrature, that of the draws (the power's standard error over the curve's slope)
and that of the estimated null tails (the root again with q one relative standard error lower
and higher). The proposal is re-centred on the root until the root lies within half a standard
deviation of the block total from it (the effective sample size is then at least 78%). Groups
(dealer × direction) are exchangeable under the model (each of ``n // groups`` spins, which
drops at most groups - 1 spins: a lower bound), and the dealer-signature statistic is the
maximum over groups, so :math:`P(\text{FAIL}) = \int \phi\, dF^g` with F the law of one group's
statistic: one group is simulated, and the null tail of g groups is
:math:`1 - (1 - q_1)^g`. (:math:`\hat F^g` is a V-statistic: its bias, of order :math:`g^2/N`,
lowers the estimated power, by less than 0.001 for 20 groups and N = 4000 draws.)

References
----------
.. [1] Levin, B. (1981), "A representation for multinomial cumulative distribution functions",
       Ann. Statist. 9, 1123-1126.
.. [2] Naiman, D. Q. & Priebe, C. E. (2001), "Computing scan statistic p values using importance
       sampling, with applications to genetics and medical image analysis", J. Comput. Graph.
       Statist. 10, 296-328.
.. [3] Owen, A. B. (2013), *Monte Carlo theory, methods and examples*, ch. 9 (importance
       sampling, self-normalised estimates and their effective sample size).

Examples
--------
>>> from rngcert.stats.verdict_power import verdict_power
>>> levels = {"pocket_chisquare": 0.001, "max_count": 0.001, "sector_scan": 0.001, "first_harmonic": 0.001}
>>> p = verdict_power(20000, 37, "single-pocket", 0.5, levels, n_alt=200)
>>> 0.9 < p <= 1.0
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from rngcert.errors import InputError
from rngcert.seeding import stream
from rngcert.stats.alternatives import block_probabilities
from rngcert.stats.frequency import _fast_len
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer

__all__ = [
    "COUNT_TESTS",
    "NEGLIGIBLE",
    "VerdictEffect",
    "max_count_sf",
    "max_count_critical",
    "scan_null_tail",
    "verdict_power",
    "verdict_effect",
    "min_detectable_verdict_effect",
    "spins_needed_for_verdict",
]

#: Count-based tests of the wheel battery whose rejections make up the verdict power.
COUNT_TESTS = ("pocket_chisquare", "max_count", "sector_scan", "first_harmonic")
#: Rejection probability of a scan test below which the simulated null tail ends (taken as 0).
NEGLIGIBLE = 1e-4
#: As in :mod:`rngcert.stats.frequency` (the battery's max count): the Poisson pmfs are cut this many
#: SDs below the mean, and above this FFT length the battery takes a Monte Carlo p-value instead.
_LEVIN_LOW_SD = 13.0
_LEVIN_MAX_LEN = 4_000_000
#: Importance-sampling draws of a scan null tail (relative standard error of q about 3-5% at the level).
_NULL_SIZE = 4000
#: Draws under the alternative in the final round of the effect search.
_ALT_SIZE = 4000
_ALTERNATIVES = ("single-pocket", "sector", "harmonic", "dealer-signature")


# ----------------------------------------------------------------------------- alternatives
def _parse(alternative: str, k: int) -> tuple[str, int]:
    """``"sector:5"`` → ``("sector", 5)`` with the rules of :func:`rngcert.stats.power.parse_alternative`
    (width 1 for single-pocket and the default dealer signature, 0 for harmonic)."""
    s = str(alternative).strip().lower()
    kind, _, w = s.partition(":")
    if kind not in _ALTERNATIVES:
        raise InputError(f"unknown alternative {alternative!r}; allowed: single-pocket, sector:K, harmonic, dealer-signature[:K]")
    if kind == "sector" and not w:
        raise InputError(f"alternative {alternative!r}: give the sector width, e.g. 'sector:5'")
    if kind in ("single-pocket", "harmonic") and w:
        raise InputError(f"alternative {alternative!r}: {kind} takes no width")
    if w and (not w.isdigit() or int(w) < 1):
        raise InputError(f"alternative {alternative!r}: width must be a positive integer, got {w!r}")
    width = int(w) if w else (0 if kind == "harmonic" else 1)
    if width >= k:
        raise InputError(f"sector width {width} must be smaller than the number of positions k={k}")
    return kind, width


def _probs(k: int, kind: str, width: int, effect: float) -> np.ndarray:
    """(k,) cell probabilities, exactly as :func:`rngcert.stats.power.alternative_probs` (the
    models of :mod:`rngcert.stats.alternatives`; biased block from position 0)."""
    if not math.isfinite(effect) or (kind == "harmonic" and not 0 < effect < 1) or (kind != "harmonic" and not effect > 0):
        raise InputError(f"effect {effect!r} out of range for a {kind} alternative")
    return block_probabilities(k, kind, width, effect)


def _block_pi(effect, K: int, k: int):
    """Probability of the biased block of K cells (weight 1 + e against 1)."""
    return K * (1.0 + effect) / (k + K * effect)


def _block_effect(pi: float, K: int, k: int) -> float:
    return (pi * k - K) / (K * (1.0 - pi))


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


# ----------------------------------------------------------------------------- scan statistics
def _scan_lengths(test: str, k: int) -> tuple[int, ...]:
    """Arc lengths of the battery's scans: dealer signature 1..k//2, sector scan 2..k//2."""
    return tuple(range(1 if test == "dealer_signature" else 2, k // 2 + 1))


@dataclass(frozen=True)
class _Arcs:
    n: int
    k: int
    lengths: tuple
    e: np.ndarray
    sd: np.ndarray
    p: np.ndarray


def _arcs(n: int, k: int, lengths) -> _Arcs:
    L = np.asarray(lengths, dtype=float)
    p = L / k
    return _Arcs(int(n), int(k), tuple(int(v) for v in lengths), n * p, np.sqrt(n * p * (1.0 - p)), p)


def _scan(x: np.ndarray, arcs: _Arcs, up=None, lo=None):
    """Max |z| over all arcs of count rows ``x`` (N, k) (uniform null: per length, the arc sums
    share one expectation and SD, so only the largest and smallest sum matter), and with the
    integer thresholds ``up``/``lo`` the number of arcs at or beyond them."""
    N, k = x.shape
    dt = np.int32 if 2 * arcs.n < 2**31 else np.int64
    cx = np.zeros((N, 2 * k + 1), dtype=dt)
    np.cumsum(np.concatenate([x, x], axis=1), axis=1, out=cx[:, 1:])
    M = np.zeros(N)
    C = np.zeros(N, dtype=np.int64) if up is not None else None
    for i, L in enumerate(arcs.lengths):  # loop over arc lengths (<= k/2)
        s = cx[:, L : L + k] - cx[:, :k]
        np.maximum(M, (s.max(axis=1) - arcs.e[i]) / arcs.sd[i], out=M)
        np.maximum(M, (arcs.e[i] - s.min(axis=1)) / arcs.sd[i], out=M)
        if C is not None:
            C += np.count_nonzero(s >= up[i], axis=1)
            if lo[i] >= 0:
                C += np.count_nonzero(s <= lo[i], axis=1)
    return M, C


def _thresholds(arcs: _Arcs, s: float):
    up = np.ceil(arcs.e + s * arcs.sd).astype(np.int64)
    lo = np.floor(arcs.e - s * arcs.sd).astype(np.int64)
    return up, lo


def _arc_tails(arcs: _Arcs, up, lo):
    """Null probabilities of one arc (start 0) at or above ``up`` and at or below ``lo``, per length."""
    pu = np.where(up <= arcs.n, special.bdtrc(up - 1, arcs.n, arcs.p), 0.0)
    pl = np.where(lo >= 0, special.bdtr(np.maximum(lo, 0), arcs.n, arcs.p), 0.0)
    return pu, pl


def _bonferroni(arcs: _Arcs, s: float) -> float:
    pu, pl = _arc_tails(arcs, *_thresholds(arcs, s))
    return arcs.k * float(np.sum(pu) + np.sum(pl))


def _tail_values(n: int, p: float, a: int, b: int, size: int, rng) -> np.ndarray:
    """``size`` draws of Bin(n, p) restricted to [a, b] (inverse CDF on the explicit pmf)."""
    v = np.arange(a, b + 1, dtype=float)
    # log pmf relative to v = a, from the ratios pmf(v+1)/pmf(v) = (n-v)/(v+1) * p/(1-p)
    lp = np.concatenate([[0.0], np.cumsum(np.log((n - v[:-1]) / (v[:-1] + 1.0)) + math.log(p / (1.0 - p)))])
    c = np.cumsum(np.exp(lp - lp.max()))
    idx = np.searchsorted(c / c[-1], rng.random(size), side="right")
    return v[np.minimum(idx, v.size - 1)].astype(np.int64)


@dataclass(frozen=True)
class ScanTail:
    r"""Importance-sampling estimate of the null upper tail of a scan statistic (one group).

    ``q(s)`` for :math:`s > s_0` is :math:`P_0(M \ge s)` for ``groups`` independent groups of n
    spins each, :math:`1-(1-q_1(s))^g`; ``rse(s)`` its relative standard error.
    """

    test: str
    n: int
    k: int
    groups: int
    s0: float
    size: int
    stat: np.ndarray = field(repr=False)  # sorted M of the draws
    wsum: np.ndarray = field(repr=False)  # suffix sums of the weights (length size + 1)
    w2sum: np.ndarray = field(repr=False)

    def _idx(self, s):
        s = np.asarray(s, dtype=float)
        return np.searchsorted(self.stat, s - 1e-9 * np.maximum(1.0, np.abs(s)), side="left")

    def q1(self, s) -> np.ndarray:
        """One group's exceedance probability (valid for s > s0)."""
        return self.wsum[self._idx(s)] / self.size

    def q(self, s) -> np.ndarray:
        return -np.expm1(self.groups * np.log1p(-np.minimum(self.q1(s), 1.0)))

    def rse(self, s) -> np.ndarray:
        """Relative standard error of ``q1(s)`` (that of ``q`` is the same to first order)."""
        i = self._idx(s)
        m1, m2 = self.wsum[i] / self.size, self.w2sum[i] / self.size
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sqrt(np.maximum(m2 - m1 * m1, 0.0) / self.size) / m1

    def inverse(self, q: float) -> float:
        """Smallest draw s with ``q(s) <= q`` (a quantile of the null, for starting searches)."""
        q1 = -math.expm1(math.log1p(-min(q, 1.0 - 1e-16)) / self.groups)
        i = int(np.searchsorted(-self.wsum[:-1], -q1 * self.size, side="left"))
        return float(self.stat[min(i, self.size - 1)])


def _draw_tail(arcs: _Arcs, s0: float, size: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Naiman-Priebe draws at threshold s0: (M, weight) per draw."""
    n, k = arcs.n, arcs.k
    up, lo = _thresholds(arcs, s0)
    pu, pl = _arc_tails(arcs, up, lo)
    probs = np.concatenate([pu, pl])
    total = arcs.k * float(probs.sum())
    alloc = rng.multinomial(size, probs / probs.sum())
    nL = len(arcs.lengths)
    rows = []
    for j in np.flatnonzero(alloc):  # loop over (length, side) events drawn
        i, upper = j % nL, j < nL
        L, sd = arcs.lengths[i], float(arcs.sd[i])
        w = int(math.ceil(8.0 * sd + 20.0))  # beyond, the pmf is below e^-32 of its value at the threshold
        a, b = (int(up[i]), min(n, int(up[i]) + w)) if upper else (max(0, int(lo[i]) - w), int(lo[i]))
        v = _tail_values(n, float(arcs.p[i]), a, b, int(alloc[j]), rng)
        inside = v[:, None] if L == 1 else rng.multinomial(v, np.full(L, 1.0 / L))
        rows.append(np.concatenate([inside, rng.multinomial(n - v, np.full(k - L, 1.0 / (k - L)))], axis=1))
    x = np.concatenate(rows)
    M, C = _scan(x, arcs, up, lo)
    assert C.min() >= 1  # every draw lies in the event it was drawn from
    return M, total / C


@functools.lru_cache(maxsize=64)
def scan_null_tail(test: str, n: int, k: int, groups: int, q_min: float, size: int = _NULL_SIZE, entropy: int = 20261201) -> ScanTail:
    r"""Null upper tail of the battery's sector scan or dealer-signature statistic, down to ``q_min``.

    Parameters
    ----------
    test : {"sector_scan", "dealer_signature"}
        Which scan (arc lengths 2..k//2, or 1..k//2).
    n : int
        Spins per group.
    k : int
        Positions (uniform null).
    groups : int
        Independent groups of n spins whose maximum is the statistic.
    q_min : float
        The estimate must cover every s with :math:`q(s) \ge` ``q_min`` (the threshold :math:`s_0`
        is lowered until :math:`q(s_0) \ge` ``q_min``).
    size : int
        Importance-sampling draws.
    entropy : int
        Seed.

    Returns
    -------
    ScanTail
        :math:`\hat q(s)` for :math:`s > s_0`, with relative standard errors.

    Notes
    -----
    Let :math:`E_{A,\pm}` be the events that arc A's count is at least :math:`e_A + s_0 sd_A`
    (or at most :math:`e_A - s_0 sd_A`), :math:`S = \sum P(E)` their Bonferroni sum and
    :math:`C(x)` the number of them that a sample x is in. Drawing an event with probability
    :math:`P(E)/S`, then x from the null conditional on it (the arc's count from the truncated
    binomial, the cells inside and outside the arc from uniform multinomials), gives
    :math:`E[S\,1\{M(x)\ge s\}/C(x)] = P_0(M \ge s)` for every :math:`s \ge s_0`, with bounded
    relative variance [1]_. By rotation invariance every arc starts at position 0. For g groups,
    :math:`q = 1-(1-q_1)^g` with :math:`q_1` one group's tail.

    References
    ----------
    .. [1] Naiman, D. Q. & Priebe, C. E. (2001), J. Comput. Graph. Statist. 10, 296-328.
    """
    if test not in ("sector_scan", "dealer_signature"):
        raise InputError(f"no scan null for {test!r}")
    n, k, g = int(n), int(k), int(groups)
    arcs = _arcs(n, k, _scan_lengths(test, k))
    q1_min = -math.expm1(math.log1p(-q_min) / g)
    rng = stream(entropy, "verdict-power-null", test, n, k)
    ratio = 8.0  # overlapping arcs: the Bonferroni sum is several times q
    for _ in range(8):
        target = ratio * q1_min
        a, b = 0.0, 2.0
        while _bonferroni(arcs, b) > target and b < 1e3:
            b *= 2
        while b - a > 1e-3:  # bisection: the Bonferroni sum is non-increasing in s
            mid = 0.5 * (a + b)
            a, b = (mid, b) if _bonferroni(arcs, mid) > target else (a, mid)
        s0 = a  # its Bonferroni sum exceeds the target (never 0: some event is possible)
        M, w = _draw_tail(arcs, s0, size, rng)
        if float(np.sum(w[M >= s0 * (1 + 1e-9)])) / size >= q1_min or _bonferroni(arcs, 0.0) <= target:
            break
        ratio *= 4.0
    order = np.argsort(M, kind="stable")
    M, w = M[order], w[order]
    wsum = np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]])
    w2sum = np.concatenate([np.cumsum((w * w)[::-1])[::-1], [0.0]])
    return ScanTail(test, n, k, g, float(s0), int(size), M, wsum, w2sum)


class _ScanRule:
    """P(reject | statistic) of a scan test at ``level`` with R Monte Carlo resamples."""

    def __init__(self, test: str, n: int, k: int, groups: int, level: float, n_resamples: int | None, entropy: int):
        self.level, self.R = level, n_resamples
        if n_resamples is None:
            self.bmax, q_min = 0, min(1.0, 2.0 * level)
        else:
            self.bmax = math.floor(level * (n_resamples + 1)) - 1
            q_min = float(special.bdtri(self.bmax, n_resamples, NEGLIGIBLE)) if self.bmax >= 0 else 0.0
        self.tail = scan_null_tail(test, n, k, groups, q_min, _NULL_SIZE, entropy) if self.bmax >= 0 else None

    def prob(self, q) -> np.ndarray:
        if self.R is None:
            return (np.asarray(q) <= self.level).astype(float)
        return special.bdtr(self.bmax, self.R, q)

    def __call__(self, s: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """P(reject | s); ``scale`` multiplies the estimated q (to carry its Monte Carlo error)."""
        if self.tail is None:
            return np.zeros(np.shape(s))
        return np.where(s > self.tail.s0 * (1 + 1e-9), self.prob(np.minimum(1.0, scale * self.tail.q(s))), 0.0)

    def half(self) -> float | None:
        """Statistic where the rejection probability is 1/2 (start of the effect search)."""
        if self.tail is None:
            return None
        q = self.level if self.R is None else float(special.bdtri(self.bmax, self.R, 0.5))
        return self.tail.inverse(q)

    def rse_at_level(self) -> float | None:
        if self.tail is None:
            return None
        return float(self.tail.rse(self.tail.inverse(self.level)))


# ----------------------------------------------------------------------------- the battery's rules
def _check(n, k, levels, categories):
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise InputError(f"n must be a positive integer, got {n!r}")
    if isinstance(k, bool) or int(k) != k or k < 3:
        raise InputError(f"k must be an integer >= 3, got {k!r}")
    if not levels:
        raise InputError("levels must name at least one test")
    known = COUNT_TESTS + ("dealer_signature",) + tuple(categories)
    for t, a in levels.items():
        if t not in known:
            raise InputError(f"no verdict-power model for test {t!r}; known: {known}")
        if not 0 < a < 1:
            raise InputError(f"level of {t} must be in (0, 1), got {a!r}")
    out = {}
    for t, ids in categories.items():
        c = np.asarray(ids)
        if c.shape != (int(k),) or not np.issubdtype(c.dtype, np.integer) or len(set(c[c >= 0].tolist())) < 2:
            raise InputError(f"categories[{t!r}] must be ({k},) integer ids with at least two categories >= 0")
        out[t] = c
    return out


def _category_matrix(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(k, m) indicator of the categories (id -1 in none) and their null shares."""
    keep = ids >= 0
    m = int(ids[keep].max()) + 1
    A = (ids[:, None] == np.arange(m)[None, :]).astype(float)
    return A, A.sum(axis=0) / keep.sum()


def _category_chisquare(x: np.ndarray, ids: np.ndarray, _A=None) -> tuple[np.ndarray, int]:
    """Pearson chi-square of the category counts (uniform null over the included positions) for
    count arrays ``x`` (b, k); positions with id -1 are excluded, as in the battery."""
    A, share = _A if _A is not None else _category_matrix(ids)
    agg = np.asarray(x, dtype=float) @ A
    e = agg.sum(axis=1, keepdims=True) * share[None, :]
    return np.sum((agg - e) ** 2 / np.where(e > 0, e, 1.0), axis=1), A.shape[1] - 1


class _Battery:
    """The count-based tests at their levels for samples of n spins in ``groups`` groups."""

    def __init__(self, n, k, levels, cats, dealer, groups, n_resamples, entropy):
        self.n, self.k, self.dealer, self.groups = n, k, dealer, groups
        self.cats, self.rules = cats, {}
        for test, a in levels.items():
            if dealer != (test == "dealer_signature"):
                continue
            if test in cats:
                A = _category_matrix(cats[test])
                self.rules[test] = (float(special.chdtri(A[0].shape[1] - 1, a)), A)
            elif test == "pocket_chisquare":
                self.rules[test] = float(special.chdtri(k - 1, a))
            elif test == "first_harmonic":
                self.rules[test] = float(special.chdtri(2, a))
            elif test == "max_count":
                self.rules[test] = _MaxCountRule(n, k, a, None if n_resamples is None else int(n_resamples))
            else:
                self.rules[test] = _ScanRule(test, n, k, groups, a, n_resamples, entropy)
        lengths = _scan_lengths("dealer_signature" if dealer else "sector_scan", k)
        self.arcs = _arcs(n, k, lengths)

    def evaluate(self, x: np.ndarray) -> "_Eval":
        """The tests on count rows ``x`` (N, k) of one group: P(FAIL | x), or for the dealer
        signature P(reject | the maximum over groups is this row's statistic)."""
        n, k = self.n, self.k
        miss = np.ones(x.shape[0])
        xs = x.astype(float)
        M, scan = np.zeros(x.shape[0]), None
        for test, rule in self.rules.items():
            if test in self.cats:
                s, _ = _category_chisquare(xs, self.cats[test], rule[1])
                rej = s > rule[0]
            elif test == "pocket_chisquare":
                e = n / k
                rej = np.sum((xs - e) ** 2, axis=1) / e > rule
            elif test == "first_harmonic":
                th = 2.0 * np.pi * np.arange(k) / k
                rej = 2.0 / n * ((xs @ np.cos(th)) ** 2 + (xs @ np.sin(th)) ** 2) > rule
            elif test == "max_count":
                rej = rule(x.max(axis=1))
            else:
                M, scan = _scan(x, self.arcs)[0], rule
                continue
            miss *= 1.0 - rej  # deterministic rejections multiply out exactly
        return _Eval(miss, M, scan)

    def null_rse(self) -> dict:
        return {t: r.rse_at_level() for t, r in self.rules.items() if isinstance(r, _ScanRule) and r.tail is not None}


@dataclass(frozen=True)
class _Eval:
    """The tests on N samples: the probability that no deterministic test rejects, and the scan
    statistic with its rule (Monte Carlo rejections are independent of the rest given the sample)."""

    miss: np.ndarray
    stat: np.ndarray
    scan: _ScanRule | None

    def fail(self, scale: float = 1.0) -> np.ndarray:
        """P(FAIL | sample), the scan's null tail multiplied by ``scale``."""
        if self.scan is None:
            return 1.0 - self.miss
        return 1.0 - self.miss * (1.0 - self.scan(self.stat, scale))


# ----------------------------------------------------------------------------- power curves
class _Curve:
    """Power of the verdict as a function of the effect, from one sample drawn at block
    probability ``pi0`` (likelihood-ratio weights on the block totals ``m``)."""

    def __init__(self, n, k, K, pi0, m, ev: _Eval, groups, scale: float = 1.0):
        self.n, self.k, self.K, self.pi0, self.groups, self.ev = n, k, K, pi0, groups, ev
        self.order = np.argsort(ev.stat, kind="stable") if groups > 1 else np.arange(m.size)
        self.m, self.val = m[self.order].astype(float), ev.fail(scale)[self.order]
        self._m = m

    def rescaled(self, scale: float) -> "_Curve":
        """The same draws with the scan's estimated null tail q multiplied by ``scale``."""
        return _Curve(self.n, self.k, self.K, self.pi0, self._m, self.ev, self.groups, scale)

    def weights(self, e: float) -> np.ndarray:
        pi = _block_pi(e, self.K, self.k)
        lw = self.m * math.log(pi / self.pi0) + (self.n - self.m) * math.log((1.0 - pi) / (1.0 - self.pi0))
        w = np.exp(lw - lw.max())
        return w / w.sum()

    def power(self, e: float, se: bool = False):
        w = self.weights(e)
        g = self.groups
        if g == 1:
            p = float(w @ self.val)
            if not se:
                return p
            return p, float(math.sqrt(np.sum((w * (self.val - p)) ** 2))), float(1.0 / np.sum(w * w))
        F = np.cumsum(w)
        Fg = F**g
        dFg = np.diff(Fg, prepend=0.0)
        p = float(self.val @ dFg)
        if not se:
            return p
        # influence of one group's draw on E[phi(max of g)]: g (h(y) - p), h(y) = E phi(max(y, Y_2..Y_g))
        Fg1 = F ** (g - 1)
        after = np.concatenate([np.cumsum((self.val * np.diff(Fg1, prepend=0.0))[::-1])[::-1][1:], [0.0]])
        h = self.val * Fg1 + after
        return p, float(g * math.sqrt(np.sum((w * (h - p)) ** 2))), float(1.0 / np.sum(w * w))


def _sample(bat: _Battery, K: int, pi0: float, size: int, rng) -> _Curve:
    """``size`` draws of one group under a block alternative with block probability pi0."""
    n, k = bat.n, bat.k
    m = rng.binomial(n, pi0, size=size)
    inside = m[:, None] if K == 1 else rng.multinomial(m, np.full(K, 1.0 / K))
    x = np.concatenate([inside, rng.multinomial(n - m, np.full(k - K, 1.0 / (k - K)))], axis=1)
    return _Curve(n, k, K, pi0, m, bat.evaluate(x), bat.groups)


def _setup(n, k, alternative, levels, groups, n_resamples, entropy, categories):
    cats = _check(n, k, levels, categories or {})
    n, k = int(n), int(k)
    kind, width = _parse(alternative, k)
    dealer = kind == "dealer-signature"
    g = max(1, int(groups)) if dealer else 1
    if n // g < 1:
        raise InputError(f"{n} spins cannot fill {g} groups")
    bat = _Battery(n // g, k, dict(levels), cats, dealer, g, n_resamples, int(entropy))
    return n, k, kind, width, g, bat


def verdict_power(
    n: int,
    k: int,
    alternative: str,
    effect: float,
    levels: Mapping[str, float],
    *,
    groups: int = 1,
    n_resamples: int | None = 9999,
    n_alt: int = 1000,
    entropy: int = 20261201,
    categories: Mapping[str, np.ndarray] | None = None,
) -> float:
    r"""Probability that the battery returns FAIL under ``alternative`` at ``effect``.

    Parameters
    ----------
    n : int
        Spins (void spins excluded).
    k : int
        Pockets (positions in wheel order, uniform null).
    alternative : str
        ``"single-pocket"``, ``"sector:K"``, ``"harmonic"`` or ``"dealer-signature[:K]"``
        (:func:`rngcert.stats.power.alternative_probs`).
    effect : float
        Relative excess (0.1 = +10%), or the harmonic amplitude.
    levels : mapping of str to float
        First-step Holm level ``alpha * w_i / W`` of each count-based test of the battery that
        was applicable (keys from :data:`COUNT_TESTS`, or ``"dealer_signature"``).
    groups : int
        Dealer × direction groups (dealer signature: offsets are counted per group, each of
        ``n // groups`` spins).
    n_resamples : int or None
        Monte Carlo resamples of the battery's scan tests (None: judged by their exact null law).
    n_alt : int
        Simulated samples under the alternative (for a dealer signature: of one group).
    entropy : int
        Seed of the simulation (fixed: the same statement for the same n and wheel).
    categories : mapping of str to (k,) array of int, optional
        Outside-bet partitions of the positions (test name, e.g. ``"outside_colour"``, to
        category ids, -1 excluded), for the battery's category chi-squares: each is judged by its
        Pearson statistic against the chi-square law at its level in ``levels``. The biased block
        of the alternative starts at position 0, so rotate the ids to put it where it is meant to
        be (rngcert.battery.power puts it on a numbered pocket, not the zero).

    Returns
    -------
    float
        Estimated P(FAIL), a lower bound as explained in the module docstring. Its Monte Carlo
        standard error is at most ``0.5 / sqrt(n_alt)`` with one group; for g dealer groups each
        draw of one group serves every group (:math:`\int \phi\, d\hat F^g`) and the error, at most
        g times that bound, is about the same in practice (:func:`verdict_effect` reports it).

    Raises
    ------
    InputError
        Invalid n, k, levels or alternative.
    """
    n, k, kind, width, g, bat = _setup(n, k, alternative, levels, groups, n_resamples, entropy, categories)
    p1 = _probs(k, kind, width, float(effect))
    rng = stream(entropy, "verdict-power-alt", alternative, n, k, g)
    if kind == "harmonic":
        return float(bat.evaluate(rng.multinomial(bat.n, p1, size=int(n_alt))).fail().mean())
    K = width
    return _sample(bat, K, _block_pi(float(effect), K, k), int(n_alt), rng).power(float(effect))


@dataclass(frozen=True)
class VerdictEffect:
    """Smallest effect the battery FAILs with the stated power, and its Monte Carlo errors.

    Attributes
    ----------
    effect : float
        The effect (``inf`` when even the search bound falls short).
    se : float
        Monte Carlo standard error of ``effect``: ``se_alt`` and ``se_null`` in quadrature; nan when
        ``effect`` is inf (and for the harmonic alternative, solved by bisection over fresh draws).
    se_alt : float
        From the draws under the alternative (delta method: the power's standard error over the
        slope of the estimated power curve).
    se_null : float
        From the estimated null tails of the scans (half the change of the root when q moves one
        relative standard error down and up; 0 without a scan test).
    power, power_se : float
        Estimated P(FAIL) at ``effect`` (the target, by construction) and its standard error.
    n_alt : int
        Draws under the alternative in the final round; ``ess`` their effective sample size at
        ``effect``; ``rounds`` the proposals drawn.
    null_rse : dict
        Per scan test, the relative standard error of the estimated null tail q at the test's level.
    """

    effect: float
    se: float
    power: float
    power_se: float
    n_alt: int
    ess: float
    rounds: int
    null_rse: dict
    se_alt: float = math.nan
    se_null: float = math.nan

    def to_dict(self) -> dict:
        """JSON-ready (non-finite values as None)."""

        def num(v):
            return float(v) if v is not None and math.isfinite(v) else None

        return {"effect": num(self.effect), "se": num(self.se), "power": num(self.power), "power_se": num(self.power_se),
                "n_alt": int(self.n_alt), "ess": num(self.ess), "rounds": int(self.rounds),
                "null_rse": {t: num(v) for t, v in self.null_rse.items()}, "se_alt": num(self.se_alt), "se_null": num(self.se_null)}


def _pilot(bat: _Battery, n: int, k: int, K: int, power: float) -> float | None:
    """Effect at which the dominant single statistic reaches ``power`` (starting point): the block
    total reaching the max count's critical count (one pocket), or the scan's arc over the block
    reaching its critical statistic, or the pocket chi-square by its local non-central law."""
    g = bat.groups
    pt = -math.expm1(math.log1p(-power) / g)  # per-group power that gives ``power`` over g groups
    ng = bat.n
    cands = []
    thr = []
    r = bat.rules.get("max_count")
    if r is not None and K == 1 and r.threshold() <= ng:
        thr.append(r.threshold())
    for t in ("sector_scan", "dealer_signature"):
        r = bat.rules.get(t)
        s = r.half() if r is not None else None
        if s is not None and K in bat.arcs.lengths:
            i = bat.arcs.lengths.index(K)
            thr.append(int(math.ceil(bat.arcs.e[i] + s * bat.arcs.sd[i])))
    for c in thr:
        if 1 <= c <= ng:
            pi = float(special.bdtri(c - 1, ng, 1.0 - pt))
            if 0 < pi < 1 and pi > K / k:
                cands.append(_block_effect(pi, K, k))
    crit = bat.rules.get("pocket_chisquare")
    if crit is not None and g == 1:
        lam = float(special.chndtrinc(crit, k - 1, 1.0 - power))
        if math.isfinite(lam) and lam > 0:
            def lam_of(e):  # n * sum (p1 - p0)^2 / p0 for the block alternative
                d_in, d_out = _block_pi(e, K, k) / K - 1 / k, (1 - _block_pi(e, K, k)) / (k - K) - 1 / k
                return n * k * (K * d_in**2 + (k - K) * d_out**2)
            a, b = 0.0, 1.0
            while lam_of(b) < lam and b < 1e6:
                b *= 2
            for _ in range(60):
                a, b = ((a + b) / 2, b) if lam_of((a + b) / 2) < lam else (a, (a + b) / 2)
            cands.append(b)
    return min(cands) if cands else None


def _root(curve: _Curve, power: float, lo: float, hi: float):
    """('ok', e) with the smallest e in [lo, hi] where the curve reaches ``power`` (a grid in
    log e, then regula falsi with the Illinois modification on the bracketing interval, to a
    relative 1e-7), or ('below', lo) / ('above', hi) when the crossing is outside."""
    es = np.geomspace(lo, hi, 9)
    ps = np.array([curve.power(float(e)) for e in es]) - power
    if ps[0] >= 0:
        return "below", lo
    if not np.any(ps >= 0):
        return "above", hi
    i = int(np.argmax(ps >= 0))
    a, b, fa, fb = math.log(es[i - 1]), math.log(es[i]), float(ps[i - 1]), float(ps[i])
    side = 0
    for _ in range(60):
        if b - a <= 1e-7:
            break
        c = (a * fb - b * fa) / (fb - fa) if fb != fa else 0.5 * (a + b)
        if not a < c < b:
            c = 0.5 * (a + b)
        fc = curve.power(math.exp(c)) - power
        if fc >= 0:
            b, fb = c, fc
            if side == 1:
                fa /= 2
            side = 1
        else:
            a, fa = c, fc
            if side == -1:
                fb /= 2
            side = -1
    return "ok", math.exp(b)


def verdict_effect(
    n: int,
    k: int,
    alternative: str,
    levels: Mapping[str, float],
    *,
    power: float = 0.9,
    groups: int = 1,
    n_resamples: int | None = 9999,
    n_alt: int = _ALT_SIZE,
    max_effect: float = 50.0,
    entropy: int = 20261201,
    categories: Mapping[str, np.ndarray] | None = None,
) -> VerdictEffect:
    """Smallest effect at which the battery FAILs with probability ``power``, with its Monte Carlo error.

    Block alternatives (single pocket, sector, dealer signature) are solved on the smooth power
    curve of one weighted sample (module docstring), re-centred until the proposal lies within half
    an SD of the block total from the root; the harmonic alternative by bisection over fresh samples
    at each effect (common seeds).

    Parameters and errors as in :func:`verdict_power`; ``max_effect`` bounds the search (0.99 for
    the harmonic amplitude).

    Returns
    -------
    VerdictEffect
    """
    if not 0 < power < 1:
        raise InputError(f"power must be in (0, 1), got {power!r}")
    n, k, kind, width, g, bat = _setup(n, k, alternative, levels, groups, n_resamples, entropy, categories)
    size = int(n_alt)
    if kind == "harmonic":
        return _harmonic_effect(bat, n, k, alternative, power, size, entropy)
    K, ng = width, bat.n
    cap = float(max_effect)
    e0 = min(cap, _pilot(bat, n, k, K, power) or cap)
    # the start is usually within a few tenths of an SD of the block total from the root: one round
    for rounds in range(1, 13):
        sz = size
        pi0 = _block_pi(e0, K, k)
        curve = _sample(bat, K, pi0, sz, stream(entropy, "verdict-power-alt", alternative, n, k, g, rounds))
        lo, hi = e0 / 2, min(cap, 2 * e0)
        status, e1 = _root(curve, power, lo, hi)
        if status == "above":
            if e0 >= cap:  # drawn at the bound itself: even the bound falls short
                return VerdictEffect(math.inf, math.nan, curve.power(cap), math.nan, sz, sz, rounds, bat.null_rse(), math.nan, math.nan)
            e0 = min(cap, 4 * e0)
            continue
        if status == "below":
            e0 = e0 / 4
            continue
        shift = (_block_pi(e1, K, k) - pi0) * ng / math.sqrt(ng * pi0 * (1 - pi0))
        if abs(shift) <= 0.5:
            break
        e0 = e1
    p, se, ess = curve.power(e1, se=True)
    h = 1e-3 * e1
    slope = (curve.power(e1 + h) - curve.power(e1 - h)) / (2 * h)
    se_alt = se / slope if slope > 0 else math.nan
    # the null tail's Monte Carlo error: the root again with q one relative standard error up and down
    nr = [v for v in bat.null_rse().values() if v is not None and math.isfinite(v)]
    se_null = 0.0
    if nr:
        roots = [_root(curve.rescaled(1.0 + f * max(nr)), power, e1 / 1.5, min(cap, 1.5 * e1)) for f in (-1.0, 1.0)]
        if all(st == "ok" for st, _ in roots):
            se_null = abs(roots[1][1] - roots[0][1]) / 2
    return VerdictEffect(e1, math.hypot(se_alt, se_null), p, se, sz, ess, rounds, bat.null_rse(), se_alt, se_null)


def _harmonic_effect(bat, n, k, alternative, power, size, entropy) -> VerdictEffect:
    def pw(e):
        rng = stream(entropy, "verdict-power-alt", alternative, n, k, 1)
        return float(bat.evaluate(rng.multinomial(bat.n, _probs(k, "harmonic", 0, e), size=size)).fail().mean())

    cap = 0.99
    if pw(cap) < power:
        return VerdictEffect(math.inf, math.nan, pw(cap), math.nan, size, size, 1, bat.null_rse(), math.nan, math.nan)
    crit = bat.rules.get("first_harmonic")
    start = min(cap, math.sqrt(2 * float(special.chndtrinc(crit, 2, 1 - power)) / n)) if crit is not None else cap / 8
    lo, hi = 0.0, cap
    mid = start
    for _ in range(40):
        if pw(mid) >= power:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 0.005 * hi:
            break
        mid = math.sqrt(lo * hi) if lo > 0 else hi / 2
    p = pw(hi)
    return VerdictEffect(float(hi), math.nan, p, math.sqrt(p * (1 - p) / size), size, size, 1, bat.null_rse(), math.nan, math.nan)


def min_detectable_verdict_effect(
    n: int,
    k: int,
    alternative: str,
    levels: Mapping[str, float],
    *,
    power: float = 0.9,
    groups: int = 1,
    n_resamples: int | None = 9999,
    n_alt: int = _ALT_SIZE,
    max_effect: float = 50.0,
    entropy: int = 20261201,
    categories: Mapping[str, np.ndarray] | None = None,
) -> float:
    """Smallest effect at which the battery FAILs with probability ``power`` (the ``effect`` of
    :func:`verdict_effect`). ``inf`` when even ``max_effect`` falls short.

    Parameters and errors as in :func:`verdict_power`.
    """
    return verdict_effect(n, k, alternative, levels, power=power, groups=groups, n_resamples=n_resamples, n_alt=n_alt,
                          max_effect=max_effect, entropy=entropy, categories=categories).effect


def spins_needed_for_verdict(
    effect: float,
    k: int,
    alternative: str,
    levels: Mapping[str, float],
    *,
    power: float = 0.9,
    groups: int = 1,
    n_resamples: int | None = 9999,
    n_alt: int = 1000,
    max_n: int = 10**9,
    entropy: int = 20261201,
    categories: Mapping[str, np.ndarray] | None = None,
) -> int | None:
    """Smallest n at which the battery FAILs with probability ``power`` at ``effect`` (bisection
    over n on a log scale, to 1%); None above ``max_n``."""
    if not effect > 0:
        raise InputError(f"effect must be > 0, got {effect!r}")
    kw = dict(groups=groups, n_resamples=n_resamples, n_alt=n_alt, entropy=entropy, categories=categories)
    lo, hi = max(2 * k, 100), max(2 * k, 100)
    while verdict_power(hi, k, alternative, effect, levels, **kw) < power:
        lo, hi = hi, hi * 4
        if hi > max_n:
            return None
    if hi == lo:
        return int(hi)
    while hi > lo * 1.01 + 1:
        mid = int(math.sqrt(lo * hi))
        if verdict_power(mid, k, alternative, effect, levels, **kw) >= power:
            hi = mid
        else:
            lo = mid
    return int(hi)
