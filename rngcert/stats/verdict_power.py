r"""Power of the *verdict*: the probability that a battery returns FAIL under a stated alternative.

A battery FAILs when (weighted) Holm rejects at level alpha. Holm's procedure rejects something
if and only if its first step rejects, i.e. some applicable test i has :math:`p_i \le \alpha w_i/W`
(W the total weight of the applicable tests). So

.. math:: P(\text{FAIL}) = P\big(\exists i:\ p_i \le \alpha w_i / W\big),

a union of per-test rejections at fixed levels. This module estimates it by simulating count
vectors under the alternative and computing, on the same vectors, every count-based test of the
battery that carries power against it (pocket chi-square, max count, sector scan, first harmonic,
the outside-bet category chi-squares when their partitions are given; for a dealer signature, the
dealer-signature scan), each against its own level
:math:`\alpha w_i/W`:

* the chi-square statistics against their asymptotic critical values (as the battery computes them);
* the max-count and scan statistics against a simulated null, with the battery's Monte Carlo rule
  modelled exactly: a test with R resamples rejects when its Monte Carlo p-value
  :math:`(b+1)/(R+1) \le a`, and given the observed statistic s, :math:`b \sim \mathrm{Bin}(R, q(s))`
  with q(s) the null exceedance probability, estimated from a large null sample.

Tests that need the order (runs, gap, serial correlation) are valid conditional tests under the
i.i.d. alternatives used here and reject at about their own level, so leaving them out makes the
stated power a lower bound by at most the sum of their levels (about 0.5 percentage point at
alpha = 0.01). The validation (``tests/test_verdict_power.py``) runs the real battery on simulated
wheels at the stated 90% point.

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
from typing import Mapping

import numpy as np
from scipy import stats as sps

from rngcert.errors import InputError
from rngcert.seeding import stream
from rngcert.stats.power import _scan_lengths, _statistics, alternative_probs

__all__ = ["COUNT_TESTS", "verdict_power", "min_detectable_verdict_effect", "spins_needed_for_verdict"]

#: Count-based tests of the wheel battery whose rejections make up the verdict power.
COUNT_TESTS = ("pocket_chisquare", "max_count", "sector_scan", "first_harmonic")
_NULL_FLOOR = 20_000


def _null_size(levels: Mapping[str, float]) -> int:
    small = min([a for t, a in levels.items() if t in ("max_count", "sector_scan", "dealer_signature")] or [1.0])
    return int(min(100_000, max(_NULL_FLOOR, math.ceil(50 / small))))


@functools.lru_cache(maxsize=256)
def _null_sorted(test: str, n: int, k: int, groups: int, size: int, entropy: int) -> np.ndarray:
    rng = stream(entropy, "verdict-power-null", test, n, k, groups)
    p = np.full(k, 1.0 / k)
    ng = np.full(groups, n // groups)
    ng[: n % groups] += 1
    out = np.empty(size)
    batch = max(1, 2_000_000 // (k * groups * (2 + len(_scan_lengths(test, k)))))
    done = 0
    while done < size:
        b = min(batch, size - done)
        x = np.stack([rng.multinomial(int(m), p, size=b) for m in ng], axis=1)
        out[done : done + b] = _statistics(test, x, ng, k)
        done += b
    out.sort()
    return out


def _mc_reject_prob(null_sorted: np.ndarray, s: np.ndarray, level: float, n_resamples: int | None) -> np.ndarray:
    """P(reject | statistic s) for a test judged by its Monte Carlo p-value (or its exact null law
    when ``n_resamples`` is None)."""
    R0 = null_sorted.size
    exceed = R0 - np.searchsorted(null_sorted, s - 1e-9 * np.maximum(1.0, np.abs(s)), side="left")
    q = (exceed + 0.5) / (R0 + 1.0)
    if n_resamples is None:
        return (q <= level).astype(float)
    bmax = math.floor(level * (n_resamples + 1)) - 1
    if bmax < 0:
        return np.zeros_like(q)
    return sps.binom.cdf(bmax, n_resamples, q)


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


def _category_chisquare(x: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, int]:
    """Pearson chi-square of the category counts (uniform null over the included positions) for
    count arrays ``x`` (b, k); positions with id -1 are excluded, as in the battery."""
    keep = ids >= 0
    m = int(ids[keep].max()) + 1
    agg = np.zeros((x.shape[0], m))
    for c in range(m):  # a handful of categories
        agg[:, c] = x[:, ids == c].sum(axis=1)
    n = agg.sum(axis=1, keepdims=True)
    share = np.bincount(ids[keep], minlength=m) / keep.sum()
    e = n * share[None, :]
    return np.sum((agg - e) ** 2 / np.where(e > 0, e, 1.0), axis=1), m - 1


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
    """Probability that the battery returns FAIL under ``alternative`` at ``effect``.

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
        Dealer × direction groups (dealer signature: offsets are counted per group).
    n_resamples : int or None
        Monte Carlo resamples of the battery's max-count and scan tests (None: exact null law).
    n_alt : int
        Simulated samples under the alternative.
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
        standard error is at most ``0.5 / sqrt(n_alt)``.

    Raises
    ------
    InputError
        Invalid n, k, levels or alternative.
    """
    cats = _check(n, k, levels, categories or {})
    n, k = int(n), int(k)
    p1 = alternative_probs(k, alternative, float(effect))
    dealer = alternative.startswith("dealer-signature")
    g = int(groups) if dealer else 1
    rng = stream(entropy, "verdict-power-alt", alternative, n, k, g)
    ng = np.full(g, n // g)
    ng[: n % g] += 1
    x = np.stack([rng.multinomial(int(m), p1, size=int(n_alt)) for m in ng], axis=1)  # (n_alt, g, k)
    miss = np.ones(int(n_alt))  # P(no test rejects | sample), tests treated as given the sample
    size = _null_size(levels)
    for test, a in levels.items():
        if dealer != (test == "dealer_signature"):
            continue
        if test in cats:
            s, df = _category_chisquare(x[:, 0, :], cats[test])
            miss *= 1.0 - (s > sps.chi2.isf(a, df)).astype(float)
            continue
        s = _statistics(test, x, ng, k)
        if test == "pocket_chisquare":
            rej = (s > sps.chi2.isf(a, k - 1)).astype(float)
        elif test == "first_harmonic":
            rej = (s > sps.chi2.isf(a, 2)).astype(float)
        else:
            R = None if test == "max_count" else n_resamples  # the battery's max count is exact (Levin 1981)
            rej = _mc_reject_prob(_null_sorted(test, n, k, g, size, entropy), s, a, R)
        # deterministic rejections multiply out exactly; Monte Carlo ones are independent given the sample
        miss *= 1.0 - rej
    return float(1.0 - miss.mean())


def min_detectable_verdict_effect(
    n: int,
    k: int,
    alternative: str,
    levels: Mapping[str, float],
    *,
    power: float = 0.9,
    groups: int = 1,
    n_resamples: int | None = 9999,
    n_alt: int = 1000,
    max_effect: float = 50.0,
    entropy: int = 20261201,
    categories: Mapping[str, np.ndarray] | None = None,
) -> float:
    """Smallest effect at which the battery FAILs with probability ``power`` (bisection on
    :func:`verdict_power`, common random numbers). ``inf`` when even ``max_effect`` falls short.

    Parameters and errors as in :func:`verdict_power`.
    """
    if not 0 < power < 1:
        raise InputError(f"power must be in (0, 1), got {power!r}")
    kw = dict(groups=groups, n_resamples=n_resamples, n_alt=n_alt, entropy=entropy, categories=categories)
    cap = max_effect
    if alternative == "harmonic":
        cap = 0.99
    if verdict_power(n, k, alternative, cap, levels, **kw) < power:
        return math.inf
    lo, hi = 0.0, cap
    # start near the chi-square scaling to save steps
    for _ in range(40):
        mid = math.sqrt(lo * hi) if lo > 0 else hi / 8
        if verdict_power(n, k, alternative, mid, levels, **kw) >= power:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 0.005 * hi:
            break
    return float(hi)


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

