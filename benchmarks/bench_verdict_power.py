"""Benchmark: the cold power statement of a wheel report (issue 11, item 2).

For each sample size it runs the battery once (R = 99: only its applicable tests and weights
matter), then times :func:`rngcert.battery.power.verdict_power_statement` with every cache
cleared and ``RNGCERT_CACHE=off`` (best of ``--reps``; wall and CPU time, since the machine is
shared), and prints the three stated effects with their Monte Carlo standard errors. ``bundled``
is the packaged 20k-spin log (4 dealers, release pockets); a number is a simulated fair table
with 4 dealers and release pockets.

Run from the repository root:  python benchmarks/bench_verdict_power.py [bundled 10000 1000000 10000000] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ["RNGCERT_CACHE"] = "off"

import numpy as np  # noqa: E402

from rngcert.battery import power as bp  # noqa: E402
from rngcert.battery.core import decide  # noqa: E402
from rngcert.battery.wheel import WHEEL, WheelData  # noqa: E402
from rngcert.collect.spinlog import read_spin_log  # noqa: E402
from rngcert.equipment.wheel import load_wheel  # noqa: E402
from rngcert.stats import verdict_power as vp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EU = load_wheel("european")


def table(which: str) -> WheelData:
    if which == "bundled":
        log = read_spin_log([ROOT / "data" / "default-european-spins.csv"], EU)
        (t,) = log.tables.values()
        return WheelData(t.outcomes, log.space, release=t.release, dealer=t.dealer, dealer_labels=t.dealer_labels, direction=t.direction)
    n = int(which)
    rng = np.random.default_rng(5)
    return WheelData(rng.integers(0, 37, n).astype(np.int16), EU.position_space(), release=rng.integers(0, 37, n).astype(np.int16),
                     dealer=rng.integers(0, 4, n).astype(np.int16), dealer_labels=["D1", "D2", "D3", "D4"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", default=["bundled", "10000", "1000000", "10000000"])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    for which in args.sizes:
        d = table(which)
        res, err, _ = WHEEL.evaluate(d, entropy=1, group="bench", n_resamples=99, alpha=0.01)
        out = decide(res, alpha=0.01, errors=err, weights=WHEEL.weights)
        best = (float("inf"), float("inf"))
        for _ in range(args.reps):
            bp._verdict_effect.cache_clear()
            vp.scan_null_tail.cache_clear()
            t, c = time.perf_counter(), time.process_time()
            P, _ = bp.verdict_power_statement(out, d, alpha=0.01, n_resamples=9999)
            best = min(best, (time.perf_counter() - t, time.process_time() - c))
        eff = "  ".join(f"{key} {P[key]['effect']:.4f}±{P[key]['effect_se']:.4f}" for key in ("single_pocket", "sector", "dealer_signature")
                        if "effect" in P[key])
        print(f"{which:>9} n={P['n']:>10,}  wall {best[0]:.3f} s  cpu {best[1]:.3f} s  {eff}  (groups {P['dealer_signature'].get('groups')})",
              flush=True)


if __name__ == "__main__":
    main()
