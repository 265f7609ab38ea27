"""Benchmark: end-to-end ``rngcert certify`` on the Wiesbaden logs and on a generated 10 M-spin log.

Targets (issue 2): the statistics at >= 2 M spins/s; the whole command, parse and report
included, at >= 500 k spins/s; peak memory under 2 GB for 10 M spins, on the 2-core machine.

Run from the repository root:  python benchmarks/bench_certify.py [--spins 10000000]

It prints one line per measurement. The whole command is timed as a subprocess (the console
script as a user runs it) and its peak resident memory is read from getrusage(RUSAGE_CHILDREN).
The statistics alone are timed in-process on the already-read spins.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WIESBADEN = ROOT.parent / "shared" / "data" / "roulette-wiesbaden"


def run_command(args: list[str]) -> tuple[float, float, int]:
    """Wall time (s), peak RSS of the child (MB), exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 10, 11, 12):
        print(proc.stdout, proc.stderr, file=sys.stderr)
        raise SystemExit(f"command failed with {proc.returncode}: {' '.join(args)}")
    return wall, max(peak, before) / 1024, proc.returncode


def stats_only(paths: list[Path]) -> tuple[int, float, float]:
    """(spins, read seconds, statistics seconds) in-process with R = 9999, no figures."""
    from rngcert.battery.wheel import WHEEL, WheelData
    from rngcert.collect.spinlog import read_spin_log
    from rngcert.equipment.wheel import load_wheel

    wheel = load_wheel("european")
    # warm-up: first calls import and initialise scipy/numpy internals; not part of the rate
    x0 = np.random.default_rng(0).integers(0, 37, 5000)
    WHEEL.run(WheelData(x0, wheel.position_space()), entropy=0, n_resamples=99)
    t = time.perf_counter()
    log = read_spin_log(paths, wheel)
    t_read = time.perf_counter() - t
    n = 0
    t = time.perf_counter()
    for i, tab in enumerate(log.tables.values()):
        data = WheelData(tab.outcomes, log.space, release=tab.release, dealer=tab.dealer, dealer_labels=tab.dealer_labels, direction=tab.direction)
        WHEEL.run(data, entropy=1, group=i)
        n += tab.n
    return n, t_read, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spins", type=int, default=10_000_000)
    args = ap.parse_args()
    exe = [sys.executable, "-m", "rngcert.cli"]
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, cores {len(__import__('os').sched_getaffinity(0))}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cases = []
        if WIESBADEN.exists():
            cases.append(("wiesbaden t5+t6 (permanence lists)", sorted(WIESBADEN.glob("spielbank-*.txt"))))
        else:
            print("(../shared/data/roulette-wiesbaden not found: skipping the Wiesbaden case)")
        big = tmp / "big.csv"
        t = time.perf_counter()
        subprocess.run(exe + ["simulate", "wheel", "--spins", str(args.spins), "--seed", "1", "--dealers", "8", "--release", "--void-rate", "0.01", "--out", str(big)], check=True, capture_output=True)
        print(f"generated {args.spins:,} spins (all 9 DESIGN columns) in {time.perf_counter() - t:.1f} s, {big.stat().st_size / 1e6:.0f} MB")
        cases.append((f"generated {args.spins / 1e6:g} M-spin CSV (9 columns)", [big]))
        for name, paths in cases:
            n, t_read, t_stats = stats_only(paths)
            wall, peak, code = run_command(exe + ["certify", *map(str, paths), "--seed", "1", "--out", str(tmp / "reports")])
            print(
                f"{name}: {n:,} spins | read {t_read:.2f} s ({n / t_read / 1e6:.2f} M/s) | statistics {t_stats:.2f} s "
                f"({n / t_stats / 1e6:.2f} M spins/s, target >= 2) | whole command {wall:.2f} s "
                f"({n / wall / 1e3:.0f} k spins/s, target >= 500) | peak RSS {peak:.0f} MB (target < 2048) | exit {code}"
            )


if __name__ == "__main__":
    main()
