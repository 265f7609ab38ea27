"""A tracker's edge: realised return per unit staked over shoes and its one-sided test against a
threshold declared in advance (part of :mod:`rngcert.stats.trackers`, which re-exports the public names)."""

from __future__ import annotations

import math

import numpy as np

from rngcert.stats import _dist  # scipy.stats' distributions without its import (over 0.5 s)
from rngcert.stats.result import NotApplicable, Requirement, TestResult, clip_pvalue

__all__ = ["edge_summary", "tracker_edge"]

_TINY = float(np.finfo(float).tiny)


def edge_summary(stake, ret) -> dict:
    """Realised return per unit staked over shoes, with its standard error and 95% interval.

    Parameters
    ----------
    stake, ret : (n_shoes,) array_like of float
        Units staked and net return of each shoe (shoes are the independent unit).

    Returns
    -------
    dict
        ``edge`` (return per unit staked), ``se`` (delta-method standard error of the ratio
        estimator over shoes), ``ci95`` [low, high], ``units``, ``bets_shoes`` (shoes with a bet),
        ``n_shoes``, ``per_unit_sd``.

    Notes
    -----
    edge = sum(ret) / sum(stake); with e_s = ret_s - edge * stake_s,
    Var(edge) ~ n/(n-1) * sum(e_s^2) / (sum stake)^2 (Cochran, *Sampling Techniques*, 3rd ed.,
    1977, §6.4, the ratio estimator).
    """
    s = np.asarray(stake, dtype=float)
    r = np.asarray(ret, dtype=float)
    n = s.size
    tot = float(s.sum())
    out = {"n_shoes": int(n), "bets_shoes": int(np.count_nonzero(s)), "units": tot}
    if tot <= 0 or n < 2:
        return out | {"edge": None, "se": None, "ci95": None, "per_unit_sd": None}
    edge = float(r.sum() / tot)
    e = r - edge * s
    se = math.sqrt(n / (n - 1) * float((e * e).sum())) / tot
    return out | {"edge": edge, "se": se, "ci95": [edge - 1.96 * se, edge + 1.96 * se], "per_unit_sd": se * math.sqrt(tot)}



#: The reason a tracker's edge is not applicable when it never bet: it looked at every shoe and found no bet worth
#: placing (a judgement of the edge: none to take), unlike a tracker that bet too little to measure its edge.
NO_BET = "the tracker never found a bet worth placing"


def tracker_edge(name: str, stake, ret, *, threshold: float = 0.0, house_edge: float | None = None, min_units: int = 30,
                 min_shoes: int = 10, extra: dict | None = None) -> TestResult | NotApplicable:
    """One-sided test that a tracker's edge exceeds a threshold declared in advance.

    Parameters
    ----------
    name : str
        Result name (``"tracker_edge:baccarat_sequence"``).
    stake, ret : (n_shoes,) array_like of float
        Units staked and net return per shoe.
    threshold : float
        Edge (return per unit staked) the tracker must not beat; default 0: it must not beat the
        house.
    house_edge : float, optional
        The game's house edge, for the report (a tracker without information returns -house_edge).
    min_units, min_shoes : int
        Fewer units staked or shoes with a bet: not applicable (too few bets for the normal law).

    Returns
    -------
    TestResult or NotApplicable
        statistic = edge (return per unit staked); p-value = P(Z >= (edge - threshold)/se);
        details: the :func:`edge_summary` and the threshold.
    """
    summ = edge_summary(stake, ret)
    details = {"threshold": threshold, "house_edge": house_edge, **summ, **(extra or {})}
    if summ["edge"] is None or summ["units"] < min_units or summ["bets_shoes"] < min_shoes:
        why = (NO_BET if not summ["units"] else
               f"the tracker bet {summ['units']:.0f} unit(s) in {summ['bets_shoes']} shoe(s): fewer than {min_units} units or {min_shoes} shoes")
        return NotApplicable(name, Requirement.UNPREDICTABILITY, summ["n_shoes"], why)
    se = summ["se"]
    if se <= 0:
        return NotApplicable(name, Requirement.UNPREDICTABILITY, summ["n_shoes"], "returns have no spread (a constant outcome)")
    z = (summ["edge"] - threshold) / se
    p = max(clip_pvalue(float(_dist.norm_sf(z))), _TINY)
    return TestResult(name, Requirement.UNPREDICTABILITY, summ["edge"], None, p, summ["n_shoes"],
                      "asymptotic (ratio estimator over shoes)", details | {"z": z})
