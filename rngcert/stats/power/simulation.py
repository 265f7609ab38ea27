"""Power of the max and scan statistics by seeded simulation, with common random numbers
(:mod:`rngcert.stats.power`)."""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError
from rngcert.seeding import stream
from rngcert.stats import _dist
from rngcert.stats._arcs import _arc_tables, _scan
from rngcert.stats.power.base import _BATCH_CELLS, _canonical, alternative_probs
from rngcert.stats.power.noncentral import _harmonic_basis


# ----------------------------------------------------------------------------- simulation
def _scan_lengths(test: str, k: int):
    if test == "dealer_signature":
        return list(range(1, k // 2 + 1))  # dealer_signature defaults: min_len 1 .. k//2
    return list(range(2, k // 2 + 1))  # sector_scan defaults: min_len 2 .. k//2


def _statistics(test: str, x: np.ndarray, n_per_group: np.ndarray, k: int) -> np.ndarray:
    """Statistic of ``test`` for count arrays ``x`` of shape (b, g, k) (uniform null)."""
    if test in ("sector_scan", "dealer_signature"):

        lengths = _scan_lengths(test, k)
        g = x.shape[1]
        p2 = np.full((g, k), 1.0 / k)
        tables = _arc_tables(p2, n_per_group.astype(float), lengths)
        m = np.zeros(x.shape[0])
        for z in _scan(x, tables, lengths):  # loop over arc lengths
            np.maximum(m, np.max(np.abs(z), axis=(-2, -1)), out=m)
        return m
    xs = x[:, 0, :].astype(float)
    n = float(n_per_group[0])
    if test == "max_count":
        return xs.max(axis=1)
    if test == "pocket_chisquare":
        e = n / k
        return np.sum((xs - e) ** 2, axis=1) / e
    if test == "first_harmonic":
        V = _harmonic_basis(k)
        vbar = xs @ V / n
        return 2.0 * n * np.sum(vbar**2, axis=1)
    raise InputError(f"unknown test {test!r}")


def _simulate(test: str, n: int, p: np.ndarray, groups: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` simulated statistics with n spins split evenly over ``groups`` groups, each ~ p."""
    k = p.size
    ng = np.full(groups, n // groups)
    ng[: n % groups] += 1
    cells = k * groups * (2 * k + 4 + 2 * len(_scan_lengths(test, k)))
    batch = max(1, _BATCH_CELLS // max(1, cells))
    out = np.empty(size)
    done = 0
    while done < size:
        b = min(batch, size - done)
        x = np.stack([rng.multinomial(int(m), p, size=b) for m in ng], axis=1)  # (b, g, k)
        out[done : done + b] = _statistics(test, x, ng, k)
        done += b
    return out


def _reject(null_sorted: np.ndarray, stats_: np.ndarray, alpha: float, test: str, df: int | None) -> np.ndarray:
    """Rejections at level alpha: asymptotic chi-square critical value, or the Monte Carlo rule."""
    if null_sorted is None:
        return stats_ > _dist.chi2_isf(alpha, df)
    R = null_sorted.size
    b = R - np.searchsorted(null_sorted, stats_ - 1e-9 * np.maximum(1.0, np.abs(stats_)), side="left")
    return (b + 1.0) / (R + 1.0) <= alpha


class _Simulator:
    """Power by simulation with common random numbers (one seed per role, reused at every point)."""

    def __init__(self, test, kind, width, k, groups, alpha, n_null, n_alt, rng, use_null):
        self.test, self.kind, self.width, self.k, self.groups = test, kind, width, k, groups
        self.alpha, self.n_null, self.n_alt = alpha, n_null, n_alt
        self.entropy = int(rng.integers(0, 2**63 - 1))
        self.use_null = use_null  # False: asymptotic chi-square critical value
        self.df = None if use_null else (k - 1 if test == "pocket_chisquare" else 2)
        self._null_cache: dict[int, np.ndarray] = {}

    def _gen(self, role: int) -> np.random.Generator:
        return stream(self.entropy, role)

    def null(self, n: int):
        if not self.use_null:
            return None
        if n not in self._null_cache:
            p0 = np.full(self.k, 1.0 / self.k)
            self._null_cache[n] = np.sort(_simulate(self.test, n, p0, self.groups, self.n_null, self._gen(0)))
        return self._null_cache[n]

    def power(self, n: int, effect: float) -> float:
        p1 = alternative_probs(self.k, _canonical(self.kind, self.width), effect)
        alt = _simulate(self.test, n, p1, self.groups, self.n_alt, self._gen(1))
        return float(np.mean(_reject(self.null(n), alt, self.alpha, self.test, self.df)))

    def method(self) -> str:
        crit = f"R_null={self.n_null}" if self.use_null else f"asymptotic chi-square critical value, df={self.df}"
        return f"simulation, {crit}, R_alt={self.n_alt}"

    def details(self) -> dict:
        return {"seed_entropy": str(self.entropy), "n_null": self.n_null if self.use_null else 0, "n_alt": self.n_alt}
