"""The pocket chi-square's power statement of a report and the battery's helpers
(:mod:`rngcert.stats.power`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rngcert.stats.power.planning import min_detectable_effect, spins_needed


# ----------------------------------------------------------------------------- battery helpers
def chisquare_min_detectable_pocket_bias(n: int, k: int, alpha: float = 0.01, power: float = 0.9) -> float:
    """Smallest relative single-pocket excess the pocket chi-square detects with ``power``.

    Non-central chi-square (see :func:`min_detectable_effect`); ``inf`` when n <= 0 or no excess
    up to +10,000% reaches the power. Kept with the signature :mod:`rngcert.battery.core` uses.
    """
    if n <= 0:
        return float("inf")
    return float(min_detectable_effect(int(n), int(k), "single-pocket", alpha=alpha, power=power).effect)


def chisquare_spins_needed(delta: float, k: int, alpha: float = 0.01, power: float = 0.9) -> int:
    """Spins the pocket chi-square needs to detect a relative single-pocket excess ``delta``.

    Raises
    ------
    ValueError
        When the effect is too small for 10**13 spins.
    """
    res = spins_needed(int(k), "single-pocket", float(delta), alpha=alpha, power=power, max_n=10**13)
    if res.n is None:
        raise ValueError("effect too small")
    return int(res.n)


def power_statement(n: int, k: int, alpha: float, power: float = 0.9, required_bias: float | None = None) -> tuple[dict, list[str]]:
    """Power of the sample for the report, and INCONCLUSIVE reasons when it falls short.

    Returns
    -------
    statement : dict
        ``method``, ``alpha``, ``power``, ``n``, ``min_detectable_single_pocket_bias`` and a
        one-sentence ``statement``; with ``required_bias`` also ``required_min_detectable_bias``
        and ``spins_needed_for_required_bias``.
    reasons : list of str
        Why the verdict must be INCONCLUSIVE (empty when the sample suffices).
    """
    mdb = chisquare_min_detectable_pocket_bias(n, k, alpha, power)
    st: dict[str, Any] = {
        "method": f"non-central chi-square fitted to the exact mean and variance of X^2 (two moments), pocket chi-square test, {k - 1} df",
        "alpha": alpha,
        "power": power,
        "n": n,
        "min_detectable_single_pocket_bias": mdb,
        "statement": (
            f"With {n} spins the pocket chi-square test detects a single pocket that comes up "
            f"{mdb:.1%} more often than fair with probability {power:.0%} at alpha = {alpha}."
            if np.isfinite(mdb)
            else f"With {n} spins no single-pocket bias up to +10000% is detected with probability {power:.0%}."
        ),
    }
    reasons: list[str] = []
    if required_bias is not None:
        st["required_min_detectable_bias"] = required_bias
        need = chisquare_spins_needed(required_bias, k, alpha, power)
        st["spins_needed_for_required_bias"] = need
        if n < need:
            reasons.append(
                f"{n} spins cannot detect the declared minimum bias of {required_bias:.1%} with {power:.0%} power "
                f"(needs {need} spins)"
            )
    return st, reasons
