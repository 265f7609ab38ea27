"""False-FAIL counts of the SP 800-22 two-level analysis for good generators (case c02).

Run:  python benchmarks/bench_nist_calibration.py [--n 128 1000 10000 1000000] [--m 100 1000]
          [--seeds 10] [--seeds-large 1] [--generators pcg64 philox] [--processes 2]

For every generator, n, m and seed (fixed: 20261201 + i), m streams of n bits are drawn, the
battery runs once, and the verdict is decided twice from the same first-level p-values: with
the law of each p-value under H0 (``null_law="exact"``, rngcert's default) and with SP 800-22's
flat expectation as published (``null_law="uniform"``). Printed per configuration: the
verdict counts (FAIL / SUSPECT / INCONCLUSIVE / PASS) under both, the number of second-level
p-values and the share below 0.01 and 0.0001 under the exact law (about 0.01 and 0.0001 for
a calibrated analysis), the smallest uniformity p-value, the kinds of law used and the time.
``--seeds-large`` seeds are used for n >= 10^6 (one run of m = 1000 at n = 10^6 takes
about 100 s on 2 processes). A good generator must FAIL in at most a share alpha = 0.01 of runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

import numpy as np

from rngcert.pipeline.certify_bits import bits_verdict
from rngcert.simulate.sources import generate_bits
from rngcert.stats.nist.twolevel import run_many, two_level

VERDICTS = ("FAIL", "SUSPECT", "INCONCLUSIVE", "PASS")


def one(gen: str, n: int, m: int, seed: int, processes: int):
    """One run: battery on m streams, verdicts with the exact and the flat null law.

    Parameters
    ----------
    gen : str
        Bit generator name (:data:`rngcert.collect.bits.BIT_GENERATORS`).
    n, m, seed : int
        Bits per stream, streams, seed of ``generate_bits``.
    processes : int
        Worker processes.

    Returns
    -------
    tuple
        (verdict with the exact law, verdict with SP 800-22's flat law, (k,) array of the
        applicable second-level p-values under the exact law, smallest uniformity p-value or
        None, Counter of law kinds over the names, BatteryOutcome of the exact law).
    """
    per, exact = run_many(generate_bits(gen, n, seed=seed, streams=m), processes=processes)
    flat = two_level(per, null_law="uniform")
    out_e = bits_verdict(per, exact)
    out_u = bits_verdict(per, flat)
    p = np.array([r.pvalue for r in exact.to_test_results() if r.applicable])
    unif = [r.uniformity_pvalue for r in exact.rows if r.uniformity_pvalue is not None]
    kinds = Counter(r.law_kind for r in exact.rows if r.m)
    return out_e.verdict, out_u.verdict, p, min(unif) if unif else None, kinds, out_e


def main(argv=None) -> int:
    """Command-line entry point (always exit status 0; read the counts)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[128, 1000, 10_000, 1_000_000])
    ap.add_argument("--m", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--seeds", type=int, default=10, help="seeds per configuration, n < 10^6")
    ap.add_argument("--seeds-large", type=int, default=1, help="seeds per configuration, n >= 10^6")
    ap.add_argument("--generators", nargs="+", default=["pcg64", "philox"])
    ap.add_argument("--processes", type=int, default=2)
    a = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; alpha 0.01")
    print(f"{'gen':<7}{'n':>8}{'m':>6}{'runs':>5}  exact law F/S/I/P     SP 800-22 flat F/S/I/P"
          "   2nd-level p: count, <0.01, <1e-4   min unif p   time")
    total_fail = total_runs = 0
    for n in a.n:
        for m in a.m:
            for gen in a.generators:
                k = a.seeds_large if n >= 1_000_000 else a.seeds
                ve, vu, ps, mins, kinds = Counter(), Counter(), [], [], Counter()
                t = time.perf_counter()
                for i in range(k):
                    e, u, p, mu, kd, out = one(gen, n, m, 20261201 + i, a.processes)
                    ve[e] += 1
                    vu[u] += 1
                    ps.append(p)
                    kinds.update(kd)
                    if mu is not None:
                        mins.append(mu)
                    if e == "FAIL":
                        print(f"  FAIL {gen} n={n} m={m} seed {20261201 + i}: {out.reasons}")
                p = np.concatenate(ps) if ps else np.zeros(0)
                total_fail += ve["FAIL"]
                total_runs += k
                fe = "/".join(str(ve[v]) for v in VERDICTS)
                fu = "/".join(str(vu[v]) for v in VERDICTS)
                low = np.mean(p < 0.01) if p.size else float("nan")
                tiny = np.mean(p < 1e-4) if p.size else float("nan")
                mn = f"{min(mins):.2e}" if mins else "n/a"
                print(f"{gen:<7}{n:>8}{m:>6}{k:>5}  {fe:<21} {fu:<24} {p.size:>7} {low:>7.4f} "
                      f"{tiny:>8.5f}   {mn:>10}  {time.perf_counter() - t:6.1f} s")
                print(f"{'':<26}laws: " + ", ".join(f"{kk} {v // k}" for kk, v in
                                                    sorted(kinds.items())))
                sys.stdout.flush()
    from scipy import stats
    tail = float(stats.binom.sf(total_fail - 1, total_runs, 0.01)) if total_fail else 1.0
    print(f"\nexact law: {total_fail} FAIL in {total_runs} runs of good generators; "
          f"{0.01 * total_runs:.2f} expected at a false-FAIL rate of alpha = 0.01, "
          f"P(>= {total_fail} | Binomial({total_runs}, 0.01)) = {tail:.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
