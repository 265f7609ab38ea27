"""The battery's scan statistics (sector scan, dealer signature) in the verdict power: the arcs,
the importance-sampled null tail (Naiman & Priebe 2001) and the Monte Carlo rejection rule
(:mod:`rngcert.stats.verdict_power`)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from rngcert.errors import InputError
from rngcert.seeding import stream
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer
from rngcert.stats.verdict_power.common import _NULL_SIZE, NEGLIGIBLE


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
