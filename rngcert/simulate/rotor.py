"""Simulated rotor data: spins with the rotor's direction and speed and the ball's direction,
fair or with a planted rotor-dependent bias (issue 25), for the rotor tests and demos.

A fair controller alternates the rotor direction from one game to the next (money-wheel rule
4.1; the controller captures of ``wheel-controller-serial`` do), varies its speed at random
within its range, and the dealer spins the ball against the rotor (003 rule 3.6). The planted
alternatives are the faults the rotor tests are for:

* ``direction``: in clockwise spins an arc of the wheel has weight ``factor``, in
  counter-clockwise spins ``2 - factor`` (fair to second order when the directions are pooled,
  so the pooled tests cannot see it);
* ``speed``: the same with spins faster than the mean speed against slower ones;
* ``drift``: the mean speed changes by ``drift`` (the log's unit) from the first spin to the last;
* ``same_direction``: the share of spins in which the ball is spun with the rotor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rngcert.equipment.wheel import Wheel
from rngcert.errors import InputError
from rngcert.simulate.wheel import SimulatedSpins
from rngcert.stats.alternatives import WheelBias, position_probabilities

__all__ = ["RotorBias", "simulate_rotor_spins"]


@dataclass(frozen=True)
class RotorBias:
    """A planted rotor-dependent bias (all None / 0: a fair wheel and procedure).

    Attributes
    ----------
    direction : (start, width, factor) or None
        Clockwise spins: ``width`` pockets from position ``start`` get weight ``factor`` (0 to
        2); counter-clockwise spins: the same arc gets weight ``2 - factor``.
    speed : (start, width, factor) or None
        The same with spins faster than the mean speed (weight ``factor``) against slower ones.
    drift : float
        Change of the mean rotor speed over the session.
    same_direction : float
        Share of spins in which the ball is spun with the rotor.
    """

    direction: tuple[int, int, float] | None = None
    speed: tuple[int, int, float] | None = None
    drift: float = 0.0
    same_direction: float = 0.0


def _arc_probs(k: int, arc: tuple[int, int, float], other: bool) -> np.ndarray:
    start, width, factor = arc
    if not 0 < float(factor) < 2:
        raise InputError(f"a rotor bias factor must be between 0 and 2 (the other group gets 2 - factor), got {factor}")
    f = 2.0 - float(factor) if other else float(factor)
    return position_probabilities(k, WheelBias(sectors=((int(start) % k, int(width), f),)))


def simulate_rotor_spins(wheel: Wheel, n: int, rng: np.random.Generator, *, bias: RotorBias = RotorBias(), speed_mean: float = 16.0,
                         speed_sd: float = 0.6, resolution: float = 0.1) -> tuple[SimulatedSpins, np.ndarray, np.ndarray]:
    """Draw ``n`` spins of ``wheel`` with rotor data.

    Parameters
    ----------
    wheel : Wheel
        A wheel whose arrangement is known.
    n : int
        Number of spins.
    rng : numpy.random.Generator
        Source of randomness.
    bias : RotorBias
        Planted alternative; the default is fair.
    speed_mean, speed_sd : float
        Normal law of the rotor speed (default 16.0 +- 0.6 revolutions per minute, inside the
        16.0-18.0 range configured on the controller of the captures).
    resolution : float
        Speeds are rounded to this step (the controller reports tenths); 0 keeps them exact.

    Returns
    -------
    spins : SimulatedSpins
        Positions and the rotor ``direction`` (alternating 0, 1, 0, ...); no void spin, one dealer.
    rotor_speed : (n,) float64
    ball_direction : (n,) int8
        Opposite to the rotor except in the planted ``same_direction`` share.
    """
    if not wheel.order_known:
        raise InputError(f"wheel {wheel.id!r} has no known arrangement; simulation needs one")
    if n < 1:
        raise InputError(f"number of spins must be positive, got {n}")
    if not 0 <= bias.same_direction <= 1:
        raise InputError(f"same_direction must be a share in [0, 1], got {bias.same_direction}")
    if bias.direction is not None and bias.speed is not None:
        raise InputError("plant a direction bias or a speed bias, not both")
    k = wheel.k
    direction = (np.arange(n) % 2).astype(np.int8)
    mean = speed_mean + bias.drift * (np.arange(n) / max(n - 1, 1) - 0.5)
    noise = rng.normal(0.0, speed_sd, size=n)
    speed = mean + noise
    if resolution > 0:
        speed = np.round(speed / resolution) * resolution
    group = None
    if bias.direction is not None:
        group, arc = direction, bias.direction
    elif bias.speed is not None:
        group, arc = (noise > 0).astype(np.int8), bias.speed
    if group is None:
        pos = rng.choice(k, size=n)
    else:
        a = rng.choice(k, size=n, p=_arc_probs(k, arc, False))
        b = rng.choice(k, size=n, p=_arc_probs(k, arc, True))
        pos = np.where(group == 0, a, b)
    ball = (1 - direction).astype(np.int8)
    if bias.same_direction > 0:
        flip = rng.random(n) < bias.same_direction
        ball = np.where(flip, direction, ball).astype(np.int8)
    spins = SimulatedSpins(pos.astype(np.int32), np.zeros(n, dtype=bool), None, np.zeros(n, dtype=np.int32), direction,
                           rng.integers(3, 9, size=n).astype(np.int32), meta={"rotor_bias": bias.__dict__})
    return spins, speed.astype(np.float64), ball
