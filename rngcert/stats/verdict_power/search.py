"""The verdict power at an effect, and the searches over the effect and over n
(:mod:`rngcert.stats.verdict_power`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from rngcert.errors import InputError
from rngcert.seeding import stream
from rngcert.stats.params import check_number
from rngcert.stats.ufuncs import special  # scipy.special's ufuncs without its array-API layer
from rngcert.stats.verdict_power.battery import _Battery, _Curve, _sample, _setup
from rngcert.stats.verdict_power.common import _ALT_SIZE, _block_effect, _block_pi, _probs


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
    check_number(power, "power", low=0, high=1, low_open=True, high_open=True)
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
    return _solved(curve, bat, e1, power, cap, sz, rounds)


def _solved(curve: _Curve, bat: _Battery, e1: float, power: float, cap: float, size: int, rounds: int) -> VerdictEffect:
    """The effect ``e1`` solved on ``curve``, with its Monte Carlo errors in quadrature: that of the
    draws (the power's standard error over the curve's slope) and that of the null tails."""
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
    return VerdictEffect(e1, math.hypot(se_alt, se_null), p, se, size, ess, rounds, bat.null_rse(), se_alt, se_null)


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


def min_detectable_verdict_effect(n: int, k: int, alternative: str, levels: Mapping[str, float], **options) -> float:
    """Smallest effect at which the battery FAILs with probability ``power`` (the ``effect`` of
    :func:`verdict_effect`). ``inf`` when even ``max_effect`` falls short.

    Parameters and errors as in :func:`verdict_effect` (``options`` are its keywords: ``power``,
    ``groups``, ``n_resamples``, ``n_alt``, ``max_effect``, ``entropy``, ``categories``).
    """
    return verdict_effect(n, k, alternative, levels, **options).effect


def spins_needed_for_verdict(effect: float, k: int, alternative: str, levels: Mapping[str, float], *, power: float = 0.9,
                             groups: int = 1, n_resamples: int | None = 9999, n_alt: int = 1000, max_n: int = 10**9,
                             entropy: int = 20261201, categories: Mapping[str, np.ndarray] | None = None) -> int | None:
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
