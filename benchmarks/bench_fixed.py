"""The fixed cost of a small certify and of ``bits``, beside plain floors, as interleaved runs (issue 26
items 1 and 5). Prints; asserts nothing.

    python benchmarks/bench_fixed.py              # 3 rounds (about 60-90 s on 2 busy cores)
    python benchmarks/bench_fixed.py --rounds 9
    python benchmarks/bench_fixed.py --certify-only --rounds 5   # item 1 alone: no bits rows (about 20 s)

Each round runs, one after the other, each in its own process:

* ``rngcert certify`` of a 10 k-spin CSV log (the simulator's 8 columns) and of a 10 k-spin
  permanence list (ten numbers a line), R = 9999, figures included. Each run certifies a log of
  another length (10,000 + round), as a lab's next log: the verdict power of a new sample size is
  simulated, the compiled report template is cached (a private cache folder, warmed first);
* the numpy floor: ``numpy.loadtxt`` of the result column, pocket counts, the 37 x 37 pair table and
  the wheel distances; the pyarrow floor: the same from ``pyarrow.csv.read_csv``;
* ``rngcert bits --streams 2 --length 1000000 --no-plots`` with the exact null laws on disk from an
  earlier run, and (first round only: 15 s) with the disk cache off (every law computed, as before
  the cache).

Wall and CPU time (user + system of the child) are printed per round; the summary takes the best
of each (timeit's rule: the rest is other people's load; 9 agents shared the 2 cores when this
was written) and the ratios of the best. Peak memory is GNU time's %M.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

NUMPY_FLOOR = r"""
import sys, numpy as np
a = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, usecols=int(sys.argv[2]), dtype=np.int64)
c = np.bincount(a, minlength=37); p = np.bincount(a[:-1] * 37 + a[1:], minlength=37 * 37); d = np.diff(a) % 37
"""
NUMPY_PERM_FLOOR = r"""
import sys, numpy as np
a = np.array(open(sys.argv[1]).read().split(), dtype=np.int64)
c = np.bincount(a, minlength=37); p = np.bincount(a[:-1] * 37 + a[1:], minlength=37 * 37); d = np.diff(a) % 37
"""
ARROW_FLOOR = r"""
import sys, numpy as np, pyarrow.csv as pc
a = pc.read_csv(sys.argv[1]).column("result").to_numpy().astype(np.int64)
c = np.bincount(a, minlength=37); p = np.bincount(a[:-1] * 37 + a[1:], minlength=37 * 37); d = np.diff(a) % 37
"""


from _measure import best as best_of  # noqa: E402 (benchmarks/ is the script's folder)
from _measure import run  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--certify-only", action="store_true", help="only the certify rows and their floors (issue 26 item 1), no bits")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.wheel import simulate_spins, write_spin_log

    tmp = Path(tempfile.mkdtemp(prefix="bench_fixed_"))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1", RNGCERT_CACHE=str(tmp / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    off = dict(env, RNGCERT_CACHE="off")
    eu = load_wheel("european")
    rk = [sys.executable, "-m", "rngcert"]
    try:
        logs = []
        for r in range(a.rounds + 1):
            n = 10_000 + r
            sim = simulate_spins(eu, n, np.random.default_rng(r), dealers=4, void_rate=0.0)
            csv = tmp / f"log{r}.csv"
            with open(csv, "wb") as fh:
                write_spin_log(fh, eu, sim, table="T1")
            x = np.random.default_rng(100 + r).integers(0, 37, n)
            perm = tmp / f"perm{r}.txt"
            perm.write_text("".join(" ".join(map(str, x[i : i + 10])) + "\n" for i in range(0, n, 10)))
            logs.append((csv, perm))
        col = open(logs[0][0]).readline().strip().split(",").index('"result"')
        print(f"fixed cost · load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs · {a.rounds} rounds")
        run(rk + ["certify", logs[0][0], "--seed", "1", "--out", tmp / "w"], env)  # warm: bytecode, template cache, page cache
        if not a.certify_only:
            run(rk + ["bits", "--source", "pcg64", "--streams", "2", "--length", "1000000", "--seed", "1", "--no-plots", "--out", tmp / "w"], env)
        rows: dict[str, list] = {}
        for r in range(1, a.rounds + 1):
            csv, perm = logs[r]
            for name, args, e in (
                ("certify 10 k CSV", rk + ["certify", csv, "--seed", "1", "--out", tmp / "o"], env),
                ("numpy floor CSV", [sys.executable, "-c", NUMPY_FLOOR, csv, col], env),
                ("pyarrow floor CSV", [sys.executable, "-c", ARROW_FLOOR, csv], env),
                ("certify 10 k permanence list", rk + ["certify", perm, "--seed", "1", "--out", tmp / "o"], env),
                ("numpy floor permanence list", [sys.executable, "-c", NUMPY_PERM_FLOOR, perm], env),
                ("bits 2 x 10^6, laws on disk", rk + ["bits", "--source", "pcg64", "--streams", "2", "--length", "1000000", "--seed", "1",
                                                      "--no-plots", "--out", tmp / "o"], env),
            )[: 5 if a.certify_only else 6] + ((("bits 2 x 10^6, cache off", rk + ["bits", "--source", "pcg64", "--streams", "2", "--length", "1000000", "--seed", "1",
                                                      "--no-plots", "--out", tmp / "o"], off),) if r == 1 and not a.certify_only else ()):  # 15 s: once
                rows.setdefault(name, []).append(run(args, e))
            shutil.rmtree(tmp / "o", ignore_errors=True)
            print(f"  round {r}: " + " | ".join(f"{k} {v[-1][0]:.2f}/{v[-1][1]:.2f} s" for k, v in rows.items()) + "  (wall/CPU)")
        best = {k: best_of(v) for k, v in rows.items()}
        print("best of the rounds (wall s, CPU s, peak MB):")
        for k, (w, c, m) in best.items():
            print(f"  {k:32s} {w:6.2f} {c:6.2f} {m:7.0f}")
        for ours, fl in (("certify 10 k CSV", "numpy floor CSV"), ("certify 10 k CSV", "pyarrow floor CSV"),
                         ("certify 10 k permanence list", "numpy floor permanence list")):
            print(f"  {ours} / {fl}: {best[ours][0] / best[fl][0]:.1f}x wall, {best[ours][1] / best[fl][1]:.1f}x CPU")
        if a.certify_only:
            return
        print(f"  bits, laws on disk / cache off: {best['bits 2 x 10^6, laws on disk'][1] / best['bits 2 x 10^6, cache off'][1]:.2f}x CPU, "
              f"{best['bits 2 x 10^6, laws on disk'][2] / best['bits 2 x 10^6, cache off'][2]:.2f}x memory")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
