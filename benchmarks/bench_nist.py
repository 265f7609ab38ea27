"""Benchmark of the SP 800-22 battery (issue 6, "done means" 3) and the full calibration run.

Run:  python benchmarks/bench_nist.py [--streams 100] [--length 1000000] [--processes 2]
                                       [--calibration 200]

Prints: time of one 10^6-bit stream (all 15 tests), wall time for m streams on the given number
of processes, peak resident memory (this process and its children), and optionally the
two-level analysis of 200 PCG64 and 200 Philox streams (issue 6, "done means" 2).
Targets: one stream <= 0.5 s; 100 streams <= 20 s on 2 cores; peak memory <= 1 GB.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time

import numpy as np

from rngcert.simulate.sources import generate_bits
from rngcert.stats import nist
from rngcert.stats.multiple import holm
from rngcert.stats.nist.twolevel import run_many


def peak_mb() -> tuple[float, float]:
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return self_kb / 1024, child_kb / 1024


def one_stream(n: int, reps: int = 5) -> None:
    x = generate_bits("pcg64", n, seed=20261130)
    nist.run_sp800_22(x)  # warm-up (caches of class probabilities)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        nist.run_sp800_22(x)
        times.append(time.perf_counter() - t)
    print(f"one stream, n = {n}: median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s over {reps} runs (target <= 0.5 s)")
    per = {}
    for key in nist.DEFAULT_PARAMS:
        t = time.perf_counter()
        nist.run_sp800_22(x, tests=[key])
        per[key] = time.perf_counter() - t
    print("  per test (ms): " + ", ".join(f"{k} {v * 1000:.0f}" for k, v in per.items()))


def many(m: int, n: int, processes: int) -> None:
    t0 = time.perf_counter()
    streams = generate_bits("pcg64", n, seed=20261130, streams=m)
    t1 = time.perf_counter()
    per, summary = run_many(streams, processes=processes)
    t2 = time.perf_counter()
    print(f"{m} streams x {n} bits: generation {t1 - t0:.2f} s, battery + two-level "
          f"{t2 - t1:.2f} s on {processes} process(es) (target <= 20 s for 100 x 10^6 on 2)")
    print(f"  results per stream: {len(per[0])}; two-level rows failing the SP 800-22 rules: "
          f"{len(summary.failed)} {summary.failed[:6]}")
    s, c = peak_mb()
    print(f"  peak RSS: main {s:.0f} MB, largest child {c:.0f} MB (target <= 1024 MB)")


def calibration(m: int, n: int, processes: int) -> None:
    for name in ("pcg64", "philox"):
        t = time.perf_counter()
        streams = generate_bits(name, n, seed=12345, streams=m)
        _, summary = run_many(streams, processes=processes)
        del streams
        res = [r for r in summary.to_test_results() if r.applicable]
        p = np.array([r.pvalue for r in res])
        reject, _ = holm(p, 0.01)
        unif = [r for r in summary.rows if r.uniformity_pvalue is not None]
        print(f"calibration {name}: m = {m}, n = {n}, {time.perf_counter() - t:.1f} s")
        print(f"  SP 800-22 rule failures (proportion or uniformity < 1e-4): "
              f"{len(summary.failed)} of {len(summary.rows)} names: {summary.failed}")
        print(f"  Holm over {p.size} second-level p-values at 0.01: {int(reject.sum())} rejected")
        print(f"  smallest uniformity p: {min(r.uniformity_pvalue for r in unif):.2e}; "
              f"excursion applicability: {summary.row('nist_random_excursions[x=1]').m}/{m}")
        for nm in ("nist_overlapping_template", "nist_longest_run"):
            r = summary.row(nm)
            print(f"  {nm}: passes {r.passes}/{r.m}, uniformity p {r.uniformity_pvalue:.4f}, "
                  f"histogram {list(r.histogram)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=100)
    ap.add_argument("--length", type=int, default=1_000_000)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--calibration", type=int, default=0,
                    help="also run the two-level calibration with this many streams per "
                         "generator (issue: 200)")
    a = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    one_stream(a.length)
    many(a.streams, a.length, a.processes)
    if a.calibration:
        calibration(a.calibration, a.length, a.processes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
