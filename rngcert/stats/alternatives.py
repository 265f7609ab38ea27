"""Alternatives: the bias models that power analysis tests against and the simulator plants.

One definition serves both, so "the power against +20% on one pocket" means exactly the bias that
``rngcert simulate wheel --pocket-bias P:1.2`` plants.

Bias models (all relative to a fair wheel with probability 1/k per position):

* **pocket bias** ``(position, factor)`` — that pocket's weight is multiplied by ``factor``
  (``1.2`` = "+20%") and all weights renormalised;
* **sector bias** ``(start, width, factor)`` — ``width`` contiguous positions from ``start`` in wheel
  order get weight ``factor`` (worn frets, shallow pockets);
* **harmonic bias** ``(amplitude, phase)`` — weight ``1 + amplitude·cos(θ − phase)`` with
  ``θ = 2π·position/k`` (an unbalanced or off-level rotor);
* **dealer signature** ``(offset, width, factor)`` — the landing position *relative to the
  reference* (the release pocket when simulated, else the previous result) falls in the
  ``width``-pocket sector centred ``offset`` pockets past the reference ``factor`` times as often
  as fair. Because each offset is drawn independently, positions are a cumulative sum of
  offsets (mod k) and the whole sequence is drawn vectorised. It cannot be combined with the
  marginal biases above (the two would define different marginals).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rngcert.equipment.wheel import Wheel
from rngcert.errors import InputError

__all__ = ["WheelBias", "block_probabilities", "offset_probabilities", "position_probabilities"]


@dataclass(frozen=True)
class WheelBias:
    """A planted bias; see the module docstring for the models."""

    pockets: tuple[tuple[int, float], ...] = ()
    sectors: tuple[tuple[int, int, float], ...] = ()
    harmonic: tuple[float, float] | None = None
    signature: tuple[int, int, float] | None = None
    signature_dealer: int | None = None

    def describe(self, wheel: Wheel) -> dict:
        lab = wheel.position_space().labels if wheel.order_known else ()
        d: dict = {}
        if self.pockets:
            d["pockets"] = [{"pocket": lab[p], "factor": f} for p, f in self.pockets]
        if self.sectors:
            d["sectors"] = [{"start": lab[s], "width": w, "factor": f} for s, w, f in self.sectors]
        if self.harmonic:
            d["harmonic"] = {"amplitude": self.harmonic[0], "phase_radians": self.harmonic[1]}
        if self.signature:
            d["signature"] = {"offset": self.signature[0], "width": self.signature[1], "factor": self.signature[2]}
            if self.signature_dealer is not None:
                d["signature"]["dealer"] = self.signature_dealer
        return d


def position_probabilities(k: int, bias: WheelBias) -> np.ndarray:
    """(k,) null-or-biased probabilities of each wheel position under the marginal biases."""
    w = np.ones(k)
    for p, f in bias.pockets:
        w[p % k] *= f
    for s, width, f in bias.sectors:
        if not 1 <= width < k:  # (a sector of the whole wheel or of none biases nothing; wider, it wrapped onto itself)
            raise InputError(f"a sector's width must be 1 to {k - 1} pockets of this {k}-pocket wheel, got {width}: "
                             "a sector of the whole wheel, or of none, biases nothing")
        w[(s + np.arange(width)) % k] *= f
    if bias.harmonic:
        a, phi = bias.harmonic
        if not 0 <= a < 1:
            raise InputError(f"harmonic amplitude must be in [0, 1), got {a!r}")
        w *= 1 + a * np.cos(2 * np.pi * np.arange(k) / k - phi)
    if np.any(w < 0):
        raise InputError("bias factors must be non-negative")
    return w / w.sum()


def offset_probabilities(k: int, offset: int, width: int, factor: float) -> np.ndarray:
    """(k,) probabilities of the landing offset for a dealer signature centred at ``offset``."""
    if not 1 <= width < k:  # (all k offsets at one factor is no signature)
        raise InputError(f"signature width must be 1 to {k - 1} pockets of this {k}-pocket wheel, got {width}: "
                         "a signature over every offset, or none, biases nothing")
    w = np.ones(k)
    w[(offset - width // 2 + np.arange(width)) % k] *= factor
    return w / w.sum()


def block_probabilities(k: int, kind: str, width: int, effect: float) -> np.ndarray:
    """(k,) cell probabilities of one of the power statement's alternatives, its biased block
    from position 0: ``"single-pocket"`` (pocket 0 at 1 + effect), ``"sector"`` (positions
    0..width-1 at 1 + effect), ``"harmonic"`` (amplitude ``effect``), ``"dealer-signature"``
    (offsets around width // 2 at 1 + effect). The caller validates ``effect``."""
    if kind == "single-pocket":
        return position_probabilities(k, WheelBias(pockets=((0, 1.0 + effect),)))
    if kind == "sector":
        return position_probabilities(k, WheelBias(sectors=((0, width, 1.0 + effect),)))
    if kind == "harmonic":
        return position_probabilities(k, WheelBias(harmonic=(float(effect), 0.0)))
    return offset_probabilities(k, width // 2, width, 1.0 + effect)
