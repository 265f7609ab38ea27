"""Calibration of the wheel verdict, before and after the verdict redesign (issue 14), side by side.

For fair European wheels (default 1,000 at 20,000 spins and 300 at 200,000) it prints the shares of
PASS / SUSPECT / FAIL / INCONCLUSIVE and the per-test Kolmogorov-Smirnov uniformity p-value; for
each planted alternative (one pocket +10% and +20%, 3- and 5-pocket sectors +8%, a dealer
signature +15%) the FAIL rate. "before" is the battery of rngcert 0.1 (equal-weight Holm over 21
tests, SUSPECT on any raw p < alpha); "after" is today's (weighted Holm over the designed family,
SUSPECT at family-wise 0.05). Every simulated wheel has 4 dealers and logged release pockets (as
the bundled default log), so both batteries run their dealer tests.

It writes ``benchmarks/out/calibrate_verdict.json`` and, with ``--write-package``, the measured
fair-wheel shares into ``rngcert/battery/calibration.json`` (what reports print as the measured
SUSPECT share). Not a test: a run takes about 20 minutes on 2 cores.

    python benchmarks/calibrate_verdict.py                      # full run
    python benchmarks/calibrate_verdict.py --fair 100 --fair-big 20 --alt 40 --alt-big 10   # quick look
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy import stats as sps

from rngcert.battery.wheel import WHEEL, WHEEL_0_1, WheelData
from rngcert.equipment.wheel import load_wheel
from rngcert.seeding import stream
from rngcert.simulate.wheel import WheelBias, simulate_spins

ALPHA = 0.01
R = 1999
ALTERNATIVES = {
    "pocket +10%": WheelBias(pockets=((0, 1.10),)),
    "pocket +20%": WheelBias(pockets=((0, 1.20),)),
    "sector 3 +8%": WheelBias(sectors=((0, 3, 1.08),)),
    "sector 5 +8%": WheelBias(sectors=((0, 5, 1.08),)),
    "dealer signature +15%": WheelBias(signature=(10, 3, 1.15)),
}
CONTINUOUS = ("pocket_chisquare", "outside_colour", "outside_dozen", "outside_column", "first_harmonic", "runs_colour",
              "runs_parity", "runs_low_high", "serial_pair", "serial_correlation", "wheel_distance", "gap_test")


def one(job):
    """Simulate one wheel and run both batteries; returns verdicts and raw p-values."""
    label, n, i = job
    wheel = load_wheel("european")
    space = wheel.position_space()
    bias = WheelBias() if label == "fair" else ALTERNATIVES[label]
    sim = simulate_spins(wheel, n, stream(2026, "calibrate-verdict", label, n, i), bias=bias, dealers=4, with_release=True)
    data = WheelData(sim.positions.astype(np.int16), space, release=sim.release, dealer=sim.dealer, dealer_labels=("1", "2", "3", "4"))
    out = {}
    for name, battery in (("before", WHEEL_0_1), ("after", WHEEL)):
        o = battery.run(data, entropy=1000 + i, group=f"table:{label}", alpha=ALPHA, n_resamples=R)
        out[name] = {"verdict": o.verdict, "p": {r.name: r.pvalue for r in o.results if r.applicable}}
    return label, n, out


def summarise(rows):
    verdicts = {"before": [], "after": []}
    pvals = {"before": {}, "after": {}}
    for r in rows:
        for k in ("before", "after"):
            verdicts[k].append(r[k]["verdict"])
            for t, p in r[k]["p"].items():
                pvals[k].setdefault(t, []).append(p)
    out = {}
    for k in ("before", "after"):
        v = np.array(verdicts[k])
        out[k] = {
            "shares": {w: float(np.mean(v == w)) for w in ("PASS", "SUSPECT", "FAIL", "INCONCLUSIVE")},
            "ks_uniformity": {t: float(sps.kstest(ps, "uniform").pvalue) for t, ps in sorted(pvals[k].items()) if t in CONTINUOUS},
        }
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fair", type=int, default=1000, help="fair wheels at --n spins")
    ap.add_argument("--fair-big", type=int, default=300, help="fair wheels at --n-big spins")
    ap.add_argument("--alt", type=int, default=200, help="replicates per alternative at --n")
    ap.add_argument("--alt-big", type=int, default=100, help="replicates per alternative at --n-big")
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--n-big", type=int, default=200_000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--write-package", action="store_true", help="write the measured fair shares into rngcert/battery/calibration.json")
    a = ap.parse_args(argv)
    jobs = [("fair", a.n, i) for i in range(a.fair)] + [("fair", a.n_big, i) for i in range(a.fair_big)]
    for lab in ALTERNATIVES:
        jobs += [(lab, a.n, i) for i in range(a.alt)] + [(lab, a.n_big, i) for i in range(a.alt_big)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as ex:
        res = list(ex.map(one, jobs, chunksize=4))
    wall = time.perf_counter() - t0
    by: dict = {}
    for label, n, out in res:
        by.setdefault((label, n), []).append(out)
    report = {"alpha": ALPHA, "n_resamples": R, "wall_seconds": wall, "generated_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "fair": {}, "alternatives": {}}
    print(f"== wheel verdict calibration, alpha = {ALPHA}, R = {R}, {len(jobs)} simulated wheels in {wall:.0f} s")
    for n in (a.n, a.n_big):
        rows = by.get(("fair", n), [])
        if not rows:
            continue
        s = summarise(rows)
        report["fair"][str(n)] = {"wheels": len(rows), **s}
        print(f"\n-- {len(rows)} fair wheels at {n:,} spins: shares            before    after")
        for w in ("PASS", "SUSPECT", "FAIL", "INCONCLUSIVE"):
            print(f"   {w:<14}{'':26}{s['before']['shares'][w]:8.1%} {s['after']['shares'][w]:8.1%}")
        print("   KS uniformity of the p-values (continuous tests)    before    after")
        for t in CONTINUOUS:
            b, f = s["before"]["ks_uniformity"].get(t), s["after"]["ks_uniformity"].get(t)
            print(f"   {t:<40}{'' if b is None else f'{b:8.3f}':>12} {'' if f is None else f'{f:8.3f}':>8}")
    print("\n-- FAIL rate under planted alternatives              before    after")
    for lab in ALTERNATIVES:
        for n in (a.n, a.n_big):
            rows = by.get((lab, n), [])
            if not rows:
                continue
            fb = float(np.mean([r["before"]["verdict"] == "FAIL" for r in rows]))
            fa = float(np.mean([r["after"]["verdict"] == "FAIL" for r in rows]))
            report["alternatives"][f"{lab} @ {n}"] = {"replicates": len(rows), "before": fb, "after": fa}
            print(f"   {lab:<24} n={n:>8,} ({len(rows):>4} wheels) {fb:8.1%} {fa:8.1%}")
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    (out / "calibrate_verdict.json").write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out / 'calibrate_verdict.json'}")
    if a.write_package:
        pkg = Path(__file__).resolve().parents[1] / "rngcert" / "battery" / "calibration.json"
        cal = {
            "wheel": {
                str(n): {"fair_wheels": v["wheels"], "spins": int(n), "suspect_share": v["after"]["shares"]["SUSPECT"],
                         "fail_share": v["after"]["shares"]["FAIL"], "n_resamples": R, "alpha": ALPHA}
                for n, v in report["fair"].items()
            },
            "source": "benchmarks/calibrate_verdict.py",
            "generated_utc": report["generated_utc"],
        }
        pkg.write_text(json.dumps(cal, indent=1) + "\n")
        print(f"wrote {pkg}")


if __name__ == "__main__":
    main()
