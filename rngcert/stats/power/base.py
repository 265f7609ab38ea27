"""The alternatives, the validation of the arguments and the result type shared by the power
modules (:mod:`rngcert.stats.power`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.alternatives import block_probabilities
from rngcert.stats.params import check_number
from rngcert.stats.result import jsonable

ALTERNATIVES = ("single-pocket", "sector", "harmonic", "dealer-signature")

#: Tests that can be planned for each alternative (first = default).
TESTS = {
    "single-pocket": ("pocket_chisquare", "max_count", "sector_scan"),
    "sector": ("sector_scan", "pocket_chisquare", "first_harmonic"),
    "harmonic": ("first_harmonic", "pocket_chisquare", "sector_scan"),
    "dealer-signature": ("dealer_signature",),
}

_CHISQUARE_TESTS = ("pocket_chisquare", "first_harmonic")
_SIM_TESTS = ("max_count", "sector_scan", "dealer_signature")
_MAX_EFFECT = 100.0
_BATCH_CELLS = 2_000_000

@dataclass(frozen=True)
class PowerResult:
    """Power of one test against one alternative.

    Attributes
    ----------
    alternative : str
        ``"single-pocket"``, ``"sector:5"``, ``"harmonic"``, ``"dealer-signature:1"``.
    test : str
        Battery test name whose power this is.
    method : str
        ``"non-central chi-square, df=36"`` or ``"simulation, R_null=…, R_alt=…"``.
    solved_for : str
        ``"n"`` (spins needed), ``"effect"`` (minimum detectable effect) or ``"power"``.
    n : int or None
        Spins (for dealer-signature: spins in all groups together); None if no n up to
        ``max_n`` reaches the power.
    effect : float
        Effect size (inf when no effect up to the search bound reaches the power).
    alpha, power : float
        Level, and the target power (``solved_for`` n/effect) or the computed power.
    achieved_power : float or None
        Power at the returned (n, effect): exact non-central value, or the simulated estimate.
    k, groups : int
        Wheel positions; dealer/direction groups (dealer-signature).
    details : mapping
        Critical value, non-centrality, simulation seed and standard error, search bounds.
    """

    alternative: str
    test: str
    method: str
    solved_for: str
    n: int | None
    effect: float
    alpha: float
    power: float
    achieved_power: float | None
    k: int
    groups: int = 1
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return jsonable(
            {
                "alternative": self.alternative,
                "test": self.test,
                "method": self.method,
                "solved_for": self.solved_for,
                "n": self.n,
                "effect": self.effect if math.isfinite(self.effect) else "inf",
                "alpha": self.alpha,
                "power": self.power,
                "achieved_power": self.achieved_power,
                "k": self.k,
                "groups": self.groups,
                "details": dict(self.details),
            }
        )

    def text(self) -> str:
        """One line for humans (CLI and reports)."""
        eff = _effect_words(self.alternative, self.effect)
        if self.solved_for == "n":
            if self.n is None:
                return f"{self.test}: no sample size up to {self.details.get('max_n')} detects {eff} with power {self.power:.0%} at alpha={self.alpha} [{self.method}]"
            return f"{self.test}: {self.n} spins detect {eff} with power {self.power:.0%} at alpha={self.alpha} [{self.method}]"
        if self.solved_for == "effect":
            if not math.isfinite(self.effect):
                return f"{self.test}: with {self.n} spins no {self.alternative} bias up to the search bound is detected with power {self.power:.0%} at alpha={self.alpha} [{self.method}]"
            return f"{self.test}: with {self.n} spins the minimum detectable bias is {eff} (power {self.power:.0%}, alpha={self.alpha}) [{self.method}]"
        return f"{self.test}: power {self.power:.1%} to detect {eff} with {self.n} spins at alpha={self.alpha} [{self.method}]"


def _brentq(*args, **kw):
    from scipy import optimize  # imported on first use: it costs about 0.6 s, and a report rarely needs it

    return optimize.brentq(*args, **kw)


def _effect_words(alternative: str, effect: float) -> str:
    if not math.isfinite(effect):
        return f"{alternative} (none)"
    if alternative == "harmonic":
        return f"a harmonic bias of amplitude {effect:.4g}"
    return f"a {alternative} bias of {effect:+.2%}"


# ----------------------------------------------------------------------------- alternatives
def parse_alternative(alternative: str) -> tuple[str, int]:
    """Split ``"sector:5"`` into ``("sector", 5)``.

    Returns
    -------
    kind : str
        One of :data:`ALTERNATIVES`.
    width : int
        Sector width K (1 for single-pocket and the default dealer signature; 0 for harmonic).

    Raises
    ------
    InputError
        Unknown alternative or a bad width.
    """
    s = str(alternative).strip().lower()
    kind, _, w = s.partition(":")
    if kind not in ALTERNATIVES:
        raise InputError(
            f"unknown alternative {alternative!r}; allowed: single-pocket, sector:K, harmonic, dealer-signature[:K]"
        )
    if kind == "sector" and not w:
        raise InputError(f"alternative {alternative!r}: give the sector width, e.g. 'sector:5'")
    if kind in ("single-pocket", "harmonic") and w:
        raise InputError(f"alternative {alternative!r}: {kind} takes no width")
    if w:
        if not w.isdigit() or int(w) < 1:
            raise InputError(f"alternative {alternative!r}: width must be a positive integer, got {w!r}")
        width = int(w)
    else:
        width = 0 if kind == "harmonic" else 1
    return kind, width


def _canonical(kind: str, width: int) -> str:
    if kind in ("sector", "dealer-signature"):
        return f"{kind}:{width}"
    return kind


def alternative_probs(k: int, alternative: str, effect: float) -> np.ndarray:
    """(k,) cell probabilities under an alternative (positions, or offsets for dealer-signature).

    Uses :func:`rngcert.stats.alternatives.position_probabilities` and
    :func:`~rngcert.stats.alternatives.offset_probabilities`, so the effect means exactly what
    the simulator plants (biased block starting at position 0; harmonic phase 0).
    """

    kind, width = parse_alternative(alternative)
    k = _k_iv(k)
    _effect_iv(kind, width, effect, k)
    return block_probabilities(k, kind, width, effect)


def _k_iv(k) -> int:
    if isinstance(k, bool) or int(k) != k or k < 3:
        raise InputError(f"k (wheel positions) must be an integer >= 3, got {k!r}")
    return int(k)


def _effect_iv(kind, width, effect, k):
    if not isinstance(effect, (int, float, np.floating)) or not math.isfinite(effect):
        raise InputError(f"effect must be a finite number, got {effect!r}")
    if kind == "harmonic":
        if not 0 < effect < 1:
            raise InputError(f"harmonic amplitude must be in (0, 1), got {effect!r}")
    elif not effect > 0:
        raise InputError(f"effect (relative excess, 0.1 = +10%) must be > 0, got {effect!r}")
    elif effect > _MAX_EFFECT:  # beyond the searched range; 1e16 and up broke the non-central moments (division by zero)
        raise InputError(f"effect (relative excess) must be at most {_MAX_EFFECT:g} (+{_MAX_EFFECT:,.0%}: the biased pocket(s) "
                         f"{_MAX_EFFECT + 1:g} times as likely as fair), got {effect!r}")
    if width >= k:
        raise InputError(f"sector width {width} must be smaller than the number of positions k={k}")


def _common_iv(alpha, power):
    check_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    if power is not None and not alpha < check_number(power, "power", low=0, high=1, low_open=True, high_open=True):
        raise InputError(f"power must be in (alpha, 1) = ({alpha}, 1), got {power!r}")


def _test_iv(kind, test, method):
    allowed = TESTS[kind]
    if test is None:
        test = allowed[0]
    if test not in allowed:
        raise InputError(f"test {test!r} cannot be planned for a {kind} alternative; allowed: {', '.join(allowed)}")
    if method not in ("auto", "noncentral", "simulation"):
        raise InputError(f"method must be 'auto', 'noncentral' or 'simulation', got {method!r}")
    if method == "auto":
        method = "noncentral" if test in _CHISQUARE_TESTS else "simulation"
    if method == "noncentral" and test not in _CHISQUARE_TESTS:
        raise InputError(f"{test} has no non-central chi-square law; use method='simulation'")
    return test, method


#: The largest sample size planned: 10^15 spins (a wheel spinning once a second for 31 million years); at 10^18 the
#: non-central moments of a single pocket's chi-square lose every digit (a division by zero).
_MAX_N = 10**15


def _n_iv(n) -> int:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise InputError(f"n (spins) must be a positive integer, got {n!r}")
    if n > _MAX_N:
        raise InputError(f"n (spins) must be at most 10^15 (a wheel spinning once a second for 31 million years), got {n!r}")
    return int(n)
