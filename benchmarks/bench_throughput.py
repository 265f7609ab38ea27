"""``rngcert certify`` at 1 M and 10 M spins beside plain floors, as interleaved runs (issue 26 item 2:
<= 3x a plain numpy floor at 1 M spins, <= 1.5x at 10 M). Prints; asserts nothing.

    python benchmarks/bench_throughput.py                       # 1 M and 10 M, 2 pairs (about 3-4 min on 2 busy cores)
    python benchmarks/bench_throughput.py --sizes 1000000 --pairs 3
    python benchmarks/bench_throughput.py --tree /tmp/old       # rngcert of another source tree (a before figure)

Three shapes, each at every size: a permanence list one number a line, one with 17 numbers a line
(comma-separated; seed 1), and the simulator's 8-column CSV log (one table, 4 dealers, no voids).
Each round runs, one after the other and each in its own process, ``rngcert certify FILE --seed 1``
as a user runs it by default (R = 9999, figures included, the report template cached: a lab's next
log), the plain numpy floor and, for the CSV, the pyarrow floor. The floors parse the same file and
compute the pocket counts, the 37 x 37 pair table and the wheel distances: numpy ``fromstring`` of
the list (commas made spaces), ``numpy.loadtxt`` of the CSV's result column, ``pyarrow.csv.read_csv``.
CPU time is user + system of the child (``getrusage(RUSAGE_CHILDREN)``), peak memory GNU time's %M.
The summary takes the best of each (timeit's rule: the rest is other people's load) and prints the
ratio of the best CPU times, with the range of the rounds' own ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

PERM_FLOOR = r"""
import sys, numpy as np
t = open(sys.argv[1], "rb").read().replace(b",", b" ").replace(b";", b" ")
a = np.fromstring(t, dtype=np.int64, sep=" ")
c = np.bincount(a, minlength=37); p = np.bincount(a[:-1] * 37 + a[1:], minlength=37 * 37); d = np.diff(a) % 37
"""
CSV_FLOOR = r"""
import sys, numpy as np
a = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, usecols=int(sys.argv[2]), dtype=np.int64)
c = np.bincount(a, minlength=37); p = np.bincount(a[:-1] * 37 + a[1:], minlength=37 * 37); d = np.diff(a) % 37
"""
ARROW_FLOOR = r"""
import sys, numpy as np, pyarrow.csv as pc
a = pc.read_csv(sys.argv[1]).column("result").to_numpy().astype(np.int64)
c = np.bincount(a, minlength=37); p = np.bincount(a[:-1] * 37 + a[1:], minlength=37 * 37); d = np.diff(a) % 37
"""


from _measure import run as _run  # noqa: E402 (benchmarks/ is the script's folder)
from bench_permanence import write_list  # noqa: E402


def run(args, env):
    return _run(args, env, cwd=tempfile.gettempdir())  # outside the source tree


def write_csv(path: Path, n: int, seed: int = 1, block: int = 2_000_000) -> Path:
    """The simulator's 8-column CSV log of ``n`` spins (one table, 4 dealers, no voids), written in blocks."""
    sys.path.insert(0, str(ROOT))
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.wheel import simulate_spins, write_spin_log

    eu = load_wheel("european")
    rng = np.random.default_rng(seed)
    with open(path, "wb") as fh:
        for a in range(0, n, block):
            sim = simulate_spins(eu, min(block, n - a), rng, dealers=4, void_rate=0.0)
            write_spin_log(fh, eu, sim, table="T1", first_spin=a, header=a == 0)
    return path


def _fmt(n: int) -> str:
    return f"{n / 1e6:g} M"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--sizes", default="1000000,10000000", help="comma-separated spin counts")
    ap.add_argument("--shapes", default="one,17,csv", help="comma-separated: one (one a line), 17 (17 a line), csv")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the source tree whose rngcert runs (default: this one)")
    a = ap.parse_args()
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    shapes = a.shapes.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="bench_thr_"))
    env = dict(os.environ, PYTHONPATH=str(a.tree.resolve()), CI="1", RNGCERT_CACHE=str(tmp / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    rk = [sys.executable, "-m", "rngcert", "certify"]
    try:
        files = {}  # name -> (file, [(floor name, argv)])
        for n in sizes:
            for s in shapes:
                if s == "csv":
                    f = write_csv(tmp / f"log{n}.csv", n)
                    col = open(f).readline().strip().split(",").index('"result"')
                    files[f"{_fmt(n)} CSV 8-column"] = (f, [("numpy", [sys.executable, "-c", CSV_FLOOR, f, col]),
                                                             ("pyarrow", [sys.executable, "-c", ARROW_FLOOR, f])])
                else:
                    per = 1 if s == "one" else int(s)
                    f = write_list(tmp / f"perm{n}_{per}.txt", n, per)
                    files[f"{_fmt(n)} permanence {'one' if per == 1 else per} a line"] = (f, [("numpy", [sys.executable, "-c", PERM_FLOOR, f])])
        print(f"certify throughput · rngcert from {a.tree} · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs · {a.pairs} rounds", flush=True)
        run(rk + [next(iter(files.values()))[0], "--seed", "1", "--out", tmp / "w"], env)  # warm: bytecode, template cache
        rows: dict[str, dict[str, list]] = {k: {"rngcert": []} | {fn: [] for fn, _ in fl} for k, (_, fl) in files.items()}
        for i in range(a.pairs):
            for k, (f, floors) in files.items():
                ours = run(rk + [f, "--seed", "1", "--out", tmp / "o"], env)
                rows[k]["rngcert"].append(ours)
                line = f"  round {i + 1}, {k}: rngcert {ours[0]:.2f} s / {ours[1]:.2f} CPU-s / {ours[2]:.0f} MB"
                for fn, argv in floors:
                    fr = run(argv, env)
                    rows[k][fn].append(fr)
                    line += f"; {fn} {fr[0]:.2f} / {fr[1]:.2f} / {fr[2]:.0f} MB ({ours[1] / fr[1]:.1f}x)"
                print(line, flush=True)
                shutil.rmtree(tmp / "o", ignore_errors=True)
        print(f"best of the rounds (CPU s, wall s, peak MB), ratio of the best CPU (rounds' range) · load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} · {time.strftime('%H:%M UTC', time.gmtime())}:")
        for k, r in rows.items():
            o = r["rngcert"]
            bo = min(c for _, c, _ in o)
            line = f"  {k:30s} rngcert {bo:5.2f} CPU-s ({min(w for w, _, _ in o):5.2f} s, {max(m for _, _, m in o):4.0f} MB)"
            for fn, fr in r.items():
                if fn == "rngcert":
                    continue
                bf = min(c for _, c, _ in fr)
                per = [x[1] / y[1] for x, y in zip(o, fr)]
                line += f" | {fn} {bf:5.2f} CPU-s ({min(w for w, _, _ in fr):5.2f} s, {max(m for _, _, m in fr):4.0f} MB): {bo / bf:4.1f}x ({min(per):.1f}-{max(per):.1f}x)"
            print(line)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
