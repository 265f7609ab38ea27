"""``rngcert certify`` of a permanence list beside a plain numpy floor, as interleaved runs (issue 26
items 2 and 3, the shape casinos publish). Prints; asserts nothing.

    python benchmarks/bench_permanence.py                  # 1 M spins x 3 pairs, 10^7 memory row (about 60 s on 2 busy cores)
    python benchmarks/bench_permanence.py --pairs 5 --big 0
    python benchmarks/bench_permanence.py --big 100000000  # the 10^8-spin row (minutes)
    python benchmarks/bench_permanence.py --tree /tmp/old  # rngcert of another source tree (a before figure)

Each pair runs, one after the other and each in its own process, ``rngcert certify LIST --seed 1``
(R = 9999, figures included, the report template cached: a lab's next list) and the floor: numpy
``fromstring`` of the same file (commas and semicolons made spaces), pocket counts, the 37 x 37 pair
table and the wheel distances. Two lists of 10^6 random pockets (seed 1): 17 numbers a line, and one
a line. CPU time is user + system of the child (``getrusage(RUSAGE_CHILDREN)``), peak memory GNU
time's %M. The ratio of each pair is printed, and the ratio of the best of each (timeit's rule: the
rest is other people's load).

The memory row certifies a list of ``--big`` spins one a line (``--resamples 999 --no-plots``: the
statistics' own memory does not depend on R) once, beside the floor once, and prints peak MB and
bytes a spin.
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

FLOOR = r"""
import sys, numpy as np
t = open(sys.argv[1], "rb").read().replace(b",", b" ").replace(b";", b" ")
a = np.fromstring(t, dtype=np.int64, sep=" ")
c = np.bincount(a, minlength=37); p = np.bincount(a[:-1] * 37 + a[1:], minlength=37 * 37); d = np.diff(a) % 37
"""


from _measure import run as _run  # noqa: E402 (benchmarks/ is the script's folder)


def run(args, env, ok=(0, 10, 11, 12)):
    return _run(args, env, ok, cwd=tempfile.gettempdir())  # outside the source tree


def write_list(path: Path, n: int, per_line: int, seed: int = 1, block: int = 10_000_000) -> Path:
    """A permanence list of ``n`` random pockets 0..36, ``per_line`` a line (comma-separated), written in blocks."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for a in range(0, n, block):
            x = rng.integers(0, 37, min(block, n - a))
            if per_line == 1:
                fh.write("\n".join(map(str, x.tolist())) + "\n")
            else:
                fh.write("".join(",".join(map(str, x[i : i + per_line].tolist())) + "\n" for i in range(0, x.size, per_line)))
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--spins", type=int, default=1_000_000)
    ap.add_argument("--big", type=int, default=10_000_000, help="spins of the memory row (0: skip it)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the source tree whose rngcert runs (default: this one)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_perm_"))
    env = dict(os.environ, PYTHONPATH=str(a.tree.resolve()), CI="1", RNGCERT_CACHE=str(tmp / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    rk = [sys.executable, "-m", "rngcert", "certify"]
    fl = [sys.executable, "-c", FLOOR]
    try:
        lists = {f"{a.spins / 1e6:g} M, 17 a line": write_list(tmp / "multi.txt", a.spins, 17),
                 f"{a.spins / 1e6:g} M, one a line": write_list(tmp / "one.txt", a.spins, 1)}
        print(f"permanence lists · rngcert from {a.tree} · load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs · {a.pairs} pairs")
        for p in lists.values():  # warm: bytecode, template cache, page cache
            run(rk + [p, "--seed", "1", "--out", tmp / "w"], env)
        rows: dict[str, dict[str, list]] = {k: {"rngcert": [], "floor": []} for k in lists}
        for i in range(a.pairs):
            for k, p in lists.items():
                ours = run(rk + [p, "--seed", "1", "--out", tmp / "o"], env)
                floor = run(fl + [p], env)
                rows[k]["rngcert"].append(ours)
                rows[k]["floor"].append(floor)
                print(f"  pair {i + 1}, {k}: rngcert {ours[0]:.2f} s / {ours[1]:.2f} CPU-s / {ours[2]:.0f} MB; floor {floor[0]:.2f} / {floor[1]:.2f} / "
                      f"{floor[2]:.0f} MB; ratio {ours[1] / floor[1]:.1f}x CPU", flush=True)
            shutil.rmtree(tmp / "o", ignore_errors=True)
        print("best of the pairs (CPU s, wall s, peak MB) and the ratio of the best:")
        for k, r in rows.items():
            o, f = r["rngcert"], r["floor"]
            bo, bf = min(c for _, c, _ in o), min(c for _, c, _ in f)
            per = [x[1] / y[1] for x, y in zip(o, f)]
            print(f"  certify {k}: rngcert {bo:.2f} CPU-s ({min(w for w, _, _ in o):.2f} s, {max(m for _, _, m in o):.0f} MB), "
                  f"floor {bf:.2f} CPU-s ({min(w for w, _, _ in f):.2f} s, {max(m for _, _, m in f):.0f} MB): "
                  f"{bo / bf:.1f}x CPU (pairs {min(per):.1f}-{max(per):.1f}x)")
        if a.big:
            big = write_list(tmp / "big.txt", a.big, 1)
            ours = run(rk + [big, "--seed", "1", "--resamples", "999", "--no-plots", "--out", tmp / "o"], env)
            floor = run(fl + [big], env)
            print(f"memory, {a.big:,} spins one a line ({big.stat().st_size / 1e6:.0f} MB file): rngcert {ours[2]:.0f} MB peak "
                  f"({ours[2] * 2**20 / a.big:.1f} bytes a spin; {ours[0]:.1f} s, {ours[1]:.1f} CPU-s), floor {floor[2]:.0f} MB "
                  f"({floor[2] * 2**20 / a.big:.1f} bytes a spin; {floor[1]:.1f} CPU-s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
