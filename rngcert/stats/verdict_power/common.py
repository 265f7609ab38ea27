"""Constants and the block alternatives shared by the verdict-power modules
(:mod:`rngcert.stats.verdict_power`): the tests modelled, the alternatives' cell probabilities and
the probability of the biased block as a function of the effect."""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.alternatives import block_probabilities

#: Count-based tests of the wheel battery whose rejections make up the verdict power.
COUNT_TESTS = ("pocket_chisquare", "max_count", "sector_scan", "first_harmonic")
#: Rejection probability of a scan test below which the simulated null tail ends (taken as 0).
NEGLIGIBLE = 1e-4
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
