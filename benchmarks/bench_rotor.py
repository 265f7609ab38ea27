"""The rotor tests in the wheel battery (issue 25): FAIL rate of the battery with and without the
rotor columns on fair wheels and on planted rotor alternatives.

For each case, REPS simulated logs (``rngcert.simulate.rotor``: the rotor direction alternating,
the speed 16.0 +- 0.6 in tenths, the ball against the rotor) are run through today's battery twice:
with the rotor columns (``direction``, ``rotor_speed``, ``ball_direction``) and without them (the
battery before issue 25 sees only the results). It prints the FAIL and SUSPECT-or-FAIL shares.
Not a test; about a minute on one core with the defaults.

    python benchmarks/bench_rotor.py [--reps 40] [--spins 20000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rngcert.battery.wheel import WHEEL, WheelData
from rngcert.equipment.wheel import load_wheel
from rngcert.simulate.rotor import RotorBias, simulate_rotor_spins

CASES = {
    "fair": RotorBias(),
    "direction: 5-pocket arc x1.3 cw, x0.7 ccw": RotorBias(direction=(3, 5, 1.3)),
    "speed: 5-pocket arc x1.3 fast, x0.7 slow": RotorBias(speed=(3, 5, 1.3)),
    "speed drift -0.3 over the session": RotorBias(drift=-0.3),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--spins", type=int, default=20000)
    ap.add_argument("--resamples", type=int, default=199)
    a = ap.parse_args()
    eu = load_wheel("european")
    space = eu.position_space()
    t0 = time.time()
    print(f"{a.reps} logs of {a.spins:,} spins per case; FAIL share (SUSPECT or FAIL share)")
    print(f"{'case':<45} {'with rotor columns':>20} {'results only':>20}")
    for ci, (name, bias) in enumerate(CASES.items()):
        res = {True: [], False: []}
        for r in range(a.reps):  # loop over replicates
            rng = np.random.default_rng([ci, r])
            sp, speed, ball = simulate_rotor_spins(eu, a.spins, rng, bias=bias)
            x = sp.positions.astype(np.int16)
            for with_rotor in (True, False):
                d = WheelData(x, space, direction=sp.direction, rotor_speed=speed, ball_direction=ball) if with_rotor else WheelData(x, space)
                res[with_rotor].append(WHEEL.run(d, entropy=r, group=ci, n_resamples=a.resamples).verdict)
        cell = lambda v: f"{np.mean([u == 'FAIL' for u in v]):.0%} ({np.mean([u in ('FAIL', 'SUSPECT') for u in v]):.0%})"  # noqa: E731
        print(f"{name:<45} {cell(res[True]):>20} {cell(res[False]):>20}")
    print(f"({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
