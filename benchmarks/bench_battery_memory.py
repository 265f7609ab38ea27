"""Peak memory of each test of the wheel battery on one table (issue 11, item 1).

    python benchmarks/bench_battery_memory.py                # 10 M spins, dealers, direction, release
    python benchmarks/bench_battery_memory.py --spins 2000000

Python-level peak (tracemalloc) above the table's own arrays, for each Spec of
:data:`rngcert.battery.wheel.WHEEL` and for the integrity checks, in MB and bytes per spin.
numpy allocations are traced, so the figures are the temporaries a test makes. Asserts nothing.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spins", type=int, default=10_000_000)
    ap.add_argument("--resamples", type=int, default=999)
    a = ap.parse_args()
    from rngcert.battery.core import Context
    from rngcert.battery.wheel import WHEEL, WheelData
    from rngcert.collect.spinlog import TableSpins
    from rngcert.equipment.wheel import load_wheel
    from rngcert.pipeline import checks
    from rngcert.pipeline.certify_wheel import chunked_tally
    from rngcert.seeding import stream

    space = load_wheel("european").position_space()
    n = a.spins
    rng = np.random.default_rng(1)
    out = rng.integers(0, 37, n).astype(np.int8)
    release = rng.integers(0, 37, n).astype(np.int8)
    dealer = rng.integers(0, 4, n).astype(np.int8)
    direction = rng.integers(0, 2, n).astype(np.int8)
    t = TableSpins("T", out, release=release, dealer=dealer, dealer_labels=("a", "b", "c", "d"), direction=direction)
    print(f"{n:,} spins; table arrays {sum(x.nbytes for x in (out, release, dealer, direction)) / 2**20:.0f} MB\n")
    print("| test | peak over the table | bytes/spin | wall |")
    print("|---|---|---|---|")

    def row(name, fn):
        tracemalloc.start()
        t0 = time.perf_counter()
        r = fn()
        wall = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"| {name} | {peak / 2**20:,.0f} MB | {peak / n:.1f} | {wall:.1f} s |", flush=True)
        return r

    row("integrity_findings", lambda: checks.integrity_findings(t, space))
    tally = row("chunked_tally", lambda: chunked_tally(out, space))
    d = WheelData(out, space, release=release, dealer=dealer, dealer_labels=t.dealer_labels, direction=direction, tally=tally)
    for spec in WHEEL.members(d):
        ctx = Context(stream(1, "table:T", spec.name), a.resamples, 0.01)
        row(spec.name, lambda: spec.func(d, ctx, **spec.params))


if __name__ == "__main__":
    main()
