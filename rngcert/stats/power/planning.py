"""Power, sample size and minimum detectable effect of one wheel test against a named
alternative (:mod:`rngcert.stats.power`)."""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist
from rngcert.stats.power.base import (
    _CHISQUARE_TESTS,
    _MAX_EFFECT,
    PowerResult,
    _brentq,
    _canonical,
    _common_iv,
    _effect_iv,
    _k_iv,
    _n_iv,
    _test_iv,
    alternative_probs,
    parse_alternative,
)
from rngcert.stats.power.noncentral import _analytic_power, _lambda_for_power, _nc_method, _noncentrality_per_spin, _solve_n
from rngcert.stats.power.simulation import _Simulator


def _setup(k, alternative, alpha, power, test, method, groups, n_null, n_alt, rng):
    kind, width = parse_alternative(alternative)
    k = _k_iv(k)
    if width >= k:
        raise InputError(f"sector width {width} must be smaller than the number of positions k={k}")
    _common_iv(alpha, power)
    test, method = _test_iv(kind, test, method)
    if isinstance(groups, bool) or int(groups) != groups or groups < 1:
        raise InputError(f"groups must be a positive integer, got {groups!r}")
    if groups != 1 and kind != "dealer-signature":
        raise InputError("groups > 1 is only meaningful for the dealer-signature alternative")
    sim = None
    if method == "simulation":
        if not isinstance(rng, np.random.Generator):
            raise InputError(f"power by simulation needs rng=numpy.random.Generator, got {rng!r}")
        for label, v in (("n_null", n_null), ("n_alt", n_alt)):
            if isinstance(v, bool) or int(v) != v or v < 10:
                raise InputError(f"{label} must be an integer >= 10, got {v!r}")
        if test not in _CHISQUARE_TESTS and n_null < 2.0 / alpha:
            raise InputError(f"n_null={n_null} is too small for alpha={alpha}: need at least {math.ceil(2 / alpha)}")
        sim = _Simulator(test, kind, width, k, int(groups), alpha, int(n_null), int(n_alt), rng, test not in _CHISQUARE_TESTS)
    return kind, width, k, test, method, int(groups), sim


# ----------------------------------------------------------------------------- public API
def power_at(
    n: int,
    k: int,
    alternative: str,
    effect: float,
    *,
    alpha: float = 0.01,
    test: str | None = None,
    method: str = "auto",
    groups: int = 1,
    n_null: int = 10_000,
    n_alt: int = 2_000,
    rng: np.random.Generator | None = None,
) -> PowerResult:
    """Power of a wheel test with ``n`` spins against an alternative of a given effect size.

    Parameters
    ----------
    n : int
        Spins (all groups together).
    k : int
        Wheel positions (37, 38, 52, 54).
    alternative : str
        ``single-pocket``, ``sector:K``, ``harmonic``, ``dealer-signature[:K]`` (module docstring).
    effect : float
        Relative excess (0.1 = +10%), or the harmonic amplitude.
    alpha : float
        Level of the test.
    test : str, optional
        One of :data:`TESTS` [kind]; default the first.
    method : {"auto", "noncentral", "simulation"}
        ``auto``: non-central chi-square for chi-square tests, simulation otherwise.
    groups : int
        Dealer/direction groups over which the n spins are split evenly (dealer-signature).
    n_null, n_alt : int
        Simulated null replicates (critical value) and alternative samples (power estimate).
    rng : numpy.random.Generator
        Required for simulation.

    Returns
    -------
    PowerResult
        ``solved_for = "power"``; ``power`` = ``achieved_power`` = the power; for simulation
        ``details["se"]`` is its binomial standard error.
    """
    kind, width, k, test, method, groups, sim = _setup(k, alternative, alpha, None, test, method, groups, n_null, n_alt, rng)
    _effect_iv(kind, width, effect, k)
    n = _n_iv(n)
    alt = _canonical(kind, width)
    if sim is None:
        pw, det = _analytic_power(test, n, np.full(k, 1.0 / k), alternative_probs(k, alt, effect), alpha)
        return PowerResult(alt, test, _nc_method(test, k), "power", n, float(effect), alpha, pw, pw, k, groups, det)
    pw = sim.power(n, effect)
    det = sim.details() | {"se": math.sqrt(pw * (1 - pw) / sim.n_alt)}
    return PowerResult(alt, test, sim.method(), "power", n, float(effect), alpha, pw, pw, k, groups, det)


def spins_needed(k: int, alternative: str, effect: float, *, alpha: float = 0.01, power: float = 0.9, test: str | None = None,
                 method: str = "auto", groups: int = 1, max_n: int = 10**9, n_null: int = 10_000, n_alt: int = 2_000,
                 rng: np.random.Generator | None = None) -> PowerResult:
    r"""Smallest number of spins for which the test detects the alternative with ``power``.

    Parameters
    ----------
    k, alternative, effect, alpha, test, method, groups, n_null, n_alt, rng
        As in :func:`power_at`.
    power : float
        Target power, in (alpha, 1).
    max_n : int
        Search bound; ``n`` is None in the result when it is not enough.

    Returns
    -------
    PowerResult
        ``solved_for = "n"``; ``achieved_power`` is the power at the returned n.

    Notes
    -----
    Non-central chi-square: the smallest n whose power (:func:`chisquare_power`) reaches the
    target, by bracketing from the local-law guess :math:`\lceil \lambda^*/\lambda_1 \rceil` and
    integer bisection (power increases with n). Simulation: bisection over n on the
    common-random-number power curve (bracketing, then to a relative precision of 0.5%).

    Examples
    --------
    >>> from rngcert.stats.power import spins_needed
    >>> r = spins_needed(37, "single-pocket", 0.1, alpha=0.01, power=0.9)
    >>> r.n, round(r.achieved_power, 4)
    (162443, 0.9)

    A pocket that comes up 10% more often than fair (probability 1.1/37.1) needs about 162,000
    spins for the pocket chi-square to flag it nine times out of ten at the 99% level.
    """
    kind, width, k, test, method, groups, sim = _setup(k, alternative, alpha, power, test, method, groups, n_null, n_alt, rng)
    _effect_iv(kind, width, effect, k)
    alt = _canonical(kind, width)
    if sim is None:
        p0, p1 = np.full(k, 1.0 / k), alternative_probs(k, alt, effect)
        lam1, df = _noncentrality_per_spin(test, p0, p1)
        guess = max(1, math.ceil(_lambda_for_power(_dist.chi2_isf(alpha, df), df, power) / lam1))
        n = _solve_n(lambda m: _analytic_power(test, m, p0, p1, alpha)[0], guess, power, max_n)
        if n is None:
            return PowerResult(alt, test, _nc_method(test, k), "n", None, float(effect), alpha, power, None, k, groups, {"max_n": max_n})
        pw, det = _analytic_power(test, n, p0, p1, alpha)
        return PowerResult(alt, test, _nc_method(test, k), "n", n, float(effect), alpha, power, pw, k, groups, det)
    # bracket around the pocket chi-square's non-central sample size (a cheap first guess;
    # the cost of a simulated point does not depend on n), then bisect
    p1 = alternative_probs(k, alt, effect)
    lam1, df = _noncentrality_per_spin("pocket_chisquare", np.full(k, 1.0 / k), p1)
    guess = max(groups, 10, math.ceil(_lambda_for_power(_dist.chi2_isf(alpha, df), df, power) / lam1))
    if sim.power(guess, effect) >= power:
        lo, hi = guess // 2, guess
        while lo > max(groups, 10) and sim.power(lo, effect) >= power:
            hi, lo = lo, lo // 2
        lo = max(lo, max(groups, 10))
    else:
        lo, hi = guess + 1, 2 * guess
        while sim.power(hi, effect) < power:
            lo, hi = hi + 1, 2 * hi
            if hi > max_n:
                return PowerResult(alt, test, sim.method(), "n", None, float(effect), alpha, power, None, k, groups, sim.details() | {"max_n": max_n})
    while hi - lo > max(0, int(0.005 * hi)):
        mid = (lo + hi) // 2
        if sim.power(mid, effect) >= power:
            hi = mid
        else:
            lo = mid + 1
    pw = sim.power(hi, effect)
    det = sim.details() | {"se": math.sqrt(pw * (1 - pw) / sim.n_alt), "precision": "0.5% of n"}
    return PowerResult(alt, test, sim.method(), "n", int(hi), float(effect), alpha, power, pw, k, groups, det)


def min_detectable_effect(n: int, k: int, alternative: str, *, alpha: float = 0.01, power: float = 0.9, test: str | None = None,
                          method: str = "auto", groups: int = 1, n_null: int = 10_000, n_alt: int = 2_000,
                          rng: np.random.Generator | None = None) -> PowerResult:
    """Smallest effect the test detects with ``power`` from ``n`` spins.

    Parameters
    ----------
    n : int
        Spins.
    k, alternative, alpha, power, test, method, groups, n_null, n_alt, rng
        As in :func:`spins_needed`.

    Returns
    -------
    PowerResult
        ``solved_for = "effect"``; ``effect`` is inf when no effect up to 100 (+10,000%; harmonic
        amplitude 0.999) reaches the power. Relative precision 1e-6 (non-central) or 0.5%
        (simulation).
    """
    kind, width, k, test, method, groups, sim = _setup(k, alternative, alpha, power, test, method, groups, n_null, n_alt, rng)
    n = _n_iv(n)
    alt = _canonical(kind, width)
    e_hi = 0.999 if kind == "harmonic" else _MAX_EFFECT
    if sim is None:
        p0 = np.full(k, 1.0 / k)

        def g(e):
            return _analytic_power(test, n, p0, alternative_probs(k, alt, e), alpha)[0] - power

        if g(e_hi) < 0:
            return PowerResult(alt, test, _nc_method(test, k), "effect", n, math.inf, alpha, power, None, k, groups, {"search_bound": e_hi})
        e = _brentq(g, 1e-12, e_hi, xtol=1e-12, rtol=1e-9)
        pw, det = _analytic_power(test, n, p0, alternative_probs(k, alt, e), alpha)
        return PowerResult(alt, test, _nc_method(test, k), "effect", n, float(e), alpha, power, pw, k, groups, det)
    if n < groups:
        raise InputError(f"n={n} spins cannot be split over {groups} groups")
    if sim.power(n, e_hi) < power:
        return PowerResult(alt, test, sim.method(), "effect", n, math.inf, alpha, power, None, k, groups, sim.details() | {"search_bound": e_hi})
    # geometric bracketing first (effects span orders of magnitude), then bisection
    e = e_hi
    while e > 1e-4 and sim.power(n, e / 4) >= power:
        e /= 4
    lo, hi = (e / 4 if e > 1e-4 else 0.0), e
    while hi - lo > 0.005 * hi:
        mid = 0.5 * (lo + hi)
        if sim.power(n, mid) >= power:
            hi = mid
        else:
            lo = mid
    pw = sim.power(n, hi)
    det = sim.details() | {"se": math.sqrt(pw * (1 - pw) / sim.n_alt), "precision": "0.5% of the effect"}
    return PowerResult(alt, test, sim.method(), "effect", n, float(hi), alpha, power, pw, k, groups, det)
