"""The answer of ``rngcert power`` for the verdict (power is the probability that the *verdict* is FAIL, not that
one test rejects): the probability that ``rngcert certify`` of a plain log returns FAIL under an alternative, the smallest effect it
FAILs with the required probability, or the spins it needs, from the battery's weighted Holm levels
(:func:`rngcert.battery.power.planned_levels`) and :mod:`rngcert.stats.verdict_power`.
"""

from __future__ import annotations

import math

import numpy as np

#: The alternatives whose verdict power is modelled for a plain log (no dealer ids: no dealer signature).
_VERDICT_ALTERNATIVES = ("single-pocket", "sector", "harmonic")


def verdict_answer(wheel, res, *, alpha: float, target: float, effect: float | None, spins: int | None) -> dict:
    """The answer of ``rngcert power`` for the verdict: the probability that ``rngcert certify`` of a plain log
    returns FAIL (weighted Holm at alpha over the battery's count-based tests, :mod:`rngcert.stats.verdict_power`).

    Parameters
    ----------
    wheel : rngcert.equipment.wheel.Wheel
    res : rngcert.stats.power.PowerResult
        The single test's answer (its alternative; its n gives the battery's levels when n is solved for).
    alpha, target : float
        Certification level; required power.
    effect, spins : float or int or None
        As given on the command line.

    Returns
    -------
    dict
        ``statement`` always; with a modelled alternative ``power`` (and ``power_se``), ``effect`` (and
        ``effect_se``) or ``n``, the ``levels``, ``min_spins`` and the ``method``.
    """
    from rngcert.battery.power import planned_levels
    from rngcert.pipeline.checks import MIN_PER_OUTCOME

    kind = res.alternative.split(":")[0]
    if not wheel.order_known or kind not in _VERDICT_ALTERNATIVES:
        why = "the wheel's arrangement is unknown" if not wheel.order_known else f"the {kind} alternative needs dealer ids, not modelled here"
        return {"statement": f"verdict: the probability that certify returns FAIL is not computed here ({why}); "
                             "the line above is one test alone, at the unadjusted level", "power": None}
    floor = MIN_PER_OUTCOME * wheel.k  # fewer spins: certify is INCONCLUSIVE (too few to certify), never FAIL
    if spins is not None and spins > _VERDICT_MAX_N:
        return {"statement": f"verdict: the probability that certify returns FAIL is computed up to {_VERDICT_MAX_N:,} spins "
                             f"(the max count's exact law at {spins:,} would not fit in memory); the line above is one test alone",
                "power": None}
    n_levels = max(floor, spins if spins is not None else (res.n or 100 * wheel.k))
    levels, cats = planned_levels(wheel, n_levels, alpha)
    d = {"method": METHOD_VERDICT, "levels": dict(levels), "alpha": alpha, "min_spins": floor}
    args = (wheel.k, res.alternative, dict(levels))
    kw = dict(categories={t: np.array(ids) for t, ids in cats})
    if spins is not None and spins < floor:
        return d | {"power": 0.0, "n": spins, "effect": effect,
                    "statement": f"verdict: with {spins} spins certify returns INCONCLUSIVE, never FAIL (it needs at least {floor}, "
                                 f"{MIN_PER_OUTCOME} per outcome): the probability of FAIL is 0"}
    if spins is not None and effect is not None:
        return d | _verdict_at(spins, effect, args, kw, alpha)
    if spins is not None:
        return d | _verdict_effect(spins, target, args, kw, alpha)
    return d | _verdict_spins(effect, target, args, kw, alpha, floor)


def _verdict_at(spins: int, effect: float, args: tuple, kw: dict, alpha: float) -> dict:
    """The probability of FAIL at (spins, effect), with its Monte Carlo standard error."""
    from rngcert.stats import verdict_power as vp

    p = min(1.0, max(0.0, vp.verdict_power(spins, *args[:2], effect, args[2], n_alt=_VERDICT_DRAWS, **kw)))
    se = math.sqrt(p * (1 - p) / _VERDICT_DRAWS)
    return {"power": p, "power_se": se, "n": spins, "effect": effect,
            "statement": f"verdict: with {spins} spins certify returns FAIL with probability {p:.1%} (Monte Carlo SE {se:.1%}) at alpha={alpha}"}


def _verdict_effect(spins: int, target: float, args: tuple, kw: dict, alpha: float) -> dict:
    """The smallest effect that certify FAILs with probability ``target`` at ``spins``, with its standard error."""
    from rngcert.stats import verdict_power as vp

    r = vp.verdict_effect(spins, *args, power=target, **kw).to_dict()
    e = "none up to the search bound" if r["effect"] is None else f"{r['effect']:.4g}"
    return {"power": target, "n": spins, "effect": r["effect"], "effect_se": r["se"],
            "statement": f"verdict: with {spins} spins certify returns FAIL with probability {target:.0%} at effect {e} (alpha={alpha})"}


def _verdict_spins(effect: float, target: float, args: tuple, kw: dict, alpha: float, floor: int) -> dict:
    """The spins at which certify FAILs with probability ``target`` at ``effect`` (to about 1%), at least ``floor``."""
    from rngcert.stats import verdict_power as vp

    n = vp.spins_needed_for_verdict(effect, *args, power=target, n_alt=_VERDICT_DRAWS, max_n=_VERDICT_MAX_N, **kw)
    n = None if n is None else max(n, floor)
    return {"power": target, "n": n, "effect": effect,
            "statement": f"verdict: certify returns FAIL with probability {target:.0%} at effect {effect:g} with "
                         + (f"{n} spins" if n is not None else f"no sample size up to {_VERDICT_MAX_N:,} spins") + f" (alpha={alpha}; to about 1%)"}


_VERDICT_DRAWS = 2000
_VERDICT_MAX_N = 10**7  #: largest sample whose verdict power is computed (the max count's exact law holds ~n floats)
METHOD_VERDICT = ("probability that the battery returns FAIL on a log without dealer ids or release pockets (weighted Holm at "
                  "alpha, each count-based test at its first-step "
                  "level alpha*w/W, the battery's Monte Carlo rule for the scans at certify's default --resamples 9999: fewer "
                  "resamples lower it), simulated with a fixed seed; a lower bound (order-based tests left out)")
