"""Calibration of the wheel verdict, before and after the verdict redesign (issue 14), side by side.

For fair European wheels (default 1,000 at 20,000 spins and 300 at 200,000) it prints the shares of
PASS / SUSPECT / FAIL / INCONCLUSIVE and the per-test Kolmogorov-Smirnov uniformity p-value; for
each planted alternative (one pocket +10% and +20%, 3- and 5-pocket sectors +8%, a dealer
signature +15%) the FAIL rate. "before" is the battery of rngcert 0.1 (equal-weight Holm over 21
tests, SUSPECT on any raw p < alpha); "after" is today's (weighted Holm over the designed family,
SUSPECT at family-wise 0.05). Every simulated wheel has 4 dealers and logged release pockets (as
the bundled default log), so both batteries run their dealer tests.

Issue 23: a calibration belongs to its configuration. ``--shapes`` measures the fair wheels of each data
shape (``dealers-release``: 4 dealers and logged release pockets, as the bundled log; ``plain``: results
only, no dealer or release column, so the dealer tests are not applicable), at ``--alpha`` with the
SUSPECT level the default standard derives from it, and ``--resamples`` R. Each share is printed with
its 95% Clopper-Pearson interval and each entry carries the fingerprint (battery spec hash, alpha,
SUSPECT level, R, dealers, release) that a report compares with its own run before printing it.

It writes ``benchmarks/out/calibrate_verdict.json`` and, with ``--write-package``, the measured
fair-wheel shares into ``rngcert/battery/calibration.json`` (what reports print as the measured
SUSPECT share; entries of other configurations are kept). Not a test: a full run takes about 20
minutes per shape on 2 cores.

    python benchmarks/calibrate_verdict.py                      # full run (dealers-release, R = 1,999)
    python benchmarks/calibrate_verdict.py --shapes dealers-release plain --resamples 9999 --write-package
    python benchmarks/calibrate_verdict.py --fair 100 --fair-big 20 --alt 40 --alt-big 10   # quick look
    python benchmarks/calibrate_verdict.py --fair 40 --fair-big 0 --alt 0 --alt-big 0 --shapes plain --no-before   # seconds
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

from rngcert.battery.standard import load_standard
from rngcert.battery.wheel import WHEEL, WHEEL_0_1, WheelData, run_fingerprint
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


SHAPES = ("dealers-release", "plain")


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) binomial interval for k successes in n trials."""
    a = 1.0 - level
    lo = 0.0 if k == 0 else float(sps.beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(sps.beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def one(job):
    """Simulate one wheel and run both batteries; returns verdicts and raw p-values."""
    label, n, i, shape, r, alpha, before = job
    wheel = load_wheel("european")
    space = wheel.position_space()
    bias = WheelBias() if label == "fair" else ALTERNATIVES[label]
    key = ("calibrate-verdict", label, n, i) if shape == "dealers-release" else ("calibrate-verdict", label, n, i, shape)
    if shape == "dealers-release":
        sim = simulate_spins(wheel, n, stream(2026, *key), bias=bias, dealers=4, with_release=True)
        # the rotor direction alternates between shifts, as in the bundled log (its direction tests run)
        data = WheelData(sim.positions.astype(np.int16), space, release=sim.release, dealer=sim.dealer, dealer_labels=("1", "2", "3", "4"),
                         direction=sim.direction)
    else:
        sim = simulate_spins(wheel, n, stream(2026, *key), bias=bias)
        data = WheelData(sim.positions.astype(np.int16), space)
    out = {}
    sl = load_standard("rngcert-default").suspect_level(alpha)
    for name, battery in (("before", WHEEL_0_1), ("after", WHEEL)):
        if name == "before" and not before:
            continue
        o = battery.run(data, entropy=1000 + i, group=f"table:{label}", alpha=alpha, n_resamples=r,
                        suspect_level=sl if name == "after" else None)
        out[name] = {"verdict": o.verdict, "p": {x.name: x.pvalue for x in o.results if x.applicable}}
    return label, n, shape, out


def summarise(rows):
    verdicts = {"before": [], "after": []}
    pvals = {"before": {}, "after": {}}
    have = [k for k in ("before", "after") if all(k in r for r in rows)]
    for r in rows:
        for k in have:
            verdicts[k].append(r[k]["verdict"])
            for t, p in r[k]["p"].items():
                pvals[k].setdefault(t, []).append(p)
    out = {}
    for k in have:
        v = np.array(verdicts[k])
        out[k] = {
            "shares": {w: float(np.mean(v == w)) for w in ("PASS", "SUSPECT", "FAIL", "INCONCLUSIVE")},
            "ci95": {w: clopper_pearson(int(np.sum(v == w)), v.size) for w in ("PASS", "SUSPECT", "FAIL", "INCONCLUSIVE")},
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
    ap.add_argument("--shapes", nargs="+", choices=SHAPES, default=["dealers-release"], help="data shapes of the fair wheels (default: as the bundled log)")
    ap.add_argument("--resamples", type=int, default=R, help=f"Monte Carlo replicates R (default {R})")
    ap.add_argument("--alpha", type=float, default=ALPHA, help=f"certification level (default {ALPHA}); SUSPECT level from the default standard")
    ap.add_argument("--no-before", action="store_true", help="skip the rngcert 0.1 battery (faster)")
    ap.add_argument("--write-package", action="store_true", help="write the measured fair shares into rngcert/battery/calibration.json")
    a = ap.parse_args(argv)
    r_, alpha, before = a.resamples, a.alpha, not a.no_before
    sl = load_standard("rngcert-default").suspect_level(alpha)
    jobs = []
    for shape in a.shapes:
        jobs += [("fair", a.n, i, shape, r_, alpha, before) for i in range(a.fair)] + [("fair", a.n_big, i, shape, r_, alpha, before) for i in range(a.fair_big)]
    for lab in ALTERNATIVES:
        jobs += [(lab, a.n, i, a.shapes[0], r_, alpha, before) for i in range(a.alt)] + [(lab, a.n_big, i, a.shapes[0], r_, alpha, before) for i in range(a.alt_big)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as ex:
        res = list(ex.map(one, jobs, chunksize=4))
    wall = time.perf_counter() - t0
    by: dict = {}
    for label, n, shape, out in res:
        by.setdefault((label, n, shape), []).append(out)
    report = {"alpha": alpha, "suspect_level": sl, "n_resamples": r_, "wall_seconds": wall,
              "generated_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "fair": {}, "alternatives": {}}
    print(f"== wheel verdict calibration, alpha = {alpha}, SUSPECT level {sl:g}, R = {r_}, {len(jobs)} simulated wheels in {wall:.0f} s")
    cols = ("before", "after") if before else ("after",)
    for shape in a.shapes:
        for n in (a.n, a.n_big):
            rows = by.get(("fair", n, shape), [])
            if not rows:
                continue
            s = summarise(rows)
            fp = run_fingerprint(alpha=alpha, suspect_level=sl, n_resamples=r_, dealers=shape == "dealers-release", release=shape == "dealers-release",
                                 direction=shape == "dealers-release")
            report["fair"][f"{n}:{shape}"] = {"wheels": len(rows), "spins": n, "shape": shape, "fingerprint": fp, **s}
            print(f"\n-- {len(rows)} fair wheels at {n:,} spins, shape {shape} (battery {fp['battery']}): shares with 95% Clopper-Pearson intervals")
            for w in ("PASS", "SUSPECT", "FAIL", "INCONCLUSIVE"):
                cells = "  ".join(f"{k}: {s[k]['shares'][w]:6.1%} [{s[k]['ci95'][w][0]:5.1%}, {s[k]['ci95'][w][1]:5.1%}]" for k in cols)
                print(f"   {w:<14}{cells}")
            lim = f"limits: SUSPECT or FAIL <= {sl:g}, FAIL <= {alpha:g}"
            print(f"   ({lim}; the limits hold when the lower end of each interval is below them)")
            print("   KS uniformity of the p-values (continuous tests)    " + "    ".join(cols))
            for t in CONTINUOUS:
                vals = [s[k]["ks_uniformity"].get(t) for k in cols]
                print(f"   {t:<40}" + "".join('' if v is None else f"{v:10.3f}" for v in vals))
    if any(k[0] != "fair" for k in by):
        print("\n-- FAIL rate under planted alternatives              " + "    ".join(cols))
    for lab in ALTERNATIVES:
        for n in (a.n, a.n_big):
            rows = by.get((lab, n, a.shapes[0]), [])
            if not rows:
                continue
            fr = {k: float(np.mean([r[k]["verdict"] == "FAIL" for r in rows])) for k in cols}
            report["alternatives"][f"{lab} @ {n}"] = {"replicates": len(rows), **fr}
            print(f"   {lab:<24} n={n:>8,} ({len(rows):>4} wheels) " + " ".join(f"{fr[k]:8.1%}" for k in cols))
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    (out / "calibrate_verdict.json").write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out / 'calibrate_verdict.json'}")
    if a.write_package:
        pkg = Path(__file__).resolve().parents[1] / "rngcert" / "battery" / "calibration.json"
        cal = json.loads(pkg.read_text()) if pkg.is_file() else {}
        wheel = cal.get("wheel", {})
        for key, v in report["fair"].items():  # entries of other configurations are kept; the same configuration is replaced
            fp = v["fingerprint"]
            name = f"{v['spins']}:{v['shape']}:R{fp['n_resamples']}:alpha{fp['alpha']:g}"
            wheel = {k: e for k, e in wheel.items() if not (e.get("fingerprint") == fp and e.get("spins") == v["spins"])}
            wheel[name] = {"fair_wheels": v["wheels"], "spins": int(v["spins"]), "suspect_share": v["after"]["shares"]["SUSPECT"],
                           "fail_share": v["after"]["shares"]["FAIL"], "suspect_ci95": list(v["after"]["ci95"]["SUSPECT"]),
                           "fail_ci95": list(v["after"]["ci95"]["FAIL"]), "n_resamples": r_, "alpha": alpha, "fingerprint": fp,
                           "generated_utc": report["generated_utc"]}
        cal.update(wheel=wheel, source="benchmarks/calibrate_verdict.py", generated_utc=report["generated_utc"])
        pkg.write_text(json.dumps(cal, indent=1) + "\n")
        print(f"wrote {pkg}")

if __name__ == "__main__":
    main()
