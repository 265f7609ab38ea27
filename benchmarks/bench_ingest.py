"""Ingest beside its floor, as ratios of interleaved runs (issue 26 item 4). Prints; asserts nothing.

    python benchmarks/bench_ingest.py                 # 1 M spins, 3 pairs (about 40 s on 2 busy cores)
    python benchmarks/bench_ingest.py --spins 200000 --pairs 5

Each pair runs ``rngcert ingest LOG --db NEW`` (the console script, in its own process) and the
floor, DuckDB's own ``read_csv`` + ``INSERT`` of the same file into a new database (its own
process), one after the other. The machine is shared (9 agents on 2 cores at the time of
writing), so a single time says little: each pair's ratio is printed, CPU time (user + system
of the child processes) beside wall time, and the best of each side is compared (timeit's rule).
Target: ingest <= 2x the floor.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1")
ENV.pop("PYTHONDONTWRITEBYTECODE", None)

FLOOR = r"""
import sys, duckdb
con = duckdb.connect(sys.argv[2])
con.execute("CREATE TABLE spins AS SELECT * FROM read_csv(?, header = true) LIMIT 0", [sys.argv[1]])
con.execute("INSERT INTO spins SELECT * FROM read_csv(?, header = true)", [sys.argv[1]])
con.close()
"""


def run(args) -> tuple[float, float]:
    """(wall s, CPU s of the child) of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(map(str, args))}\n{p.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spins", type=int, default=1_000_000)
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.wheel import simulate_spins, write_spin_log

    tmp = Path(tempfile.mkdtemp(prefix="bench_ingest_"))
    try:
        log = tmp / "log.csv"
        eu = load_wheel("european")
        sim = simulate_spins(eu, a.spins, np.random.default_rng(1), dealers=4, void_rate=0.01)
        with open(log, "wb") as fh:
            write_spin_log(fh, eu, sim, table="T1")
        print(f"ingest of {a.spins:,} spins ({log.stat().st_size / 1e6:.0f} MB, 8-column CSV) · load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} CPUs")
        run([sys.executable, "-m", "rngcert", "ingest", log, "--db", tmp / "warm.duckdb"])  # bytecode, page cache
        ours, floor = [], []
        for i in range(a.pairs):
            ours.append(run([sys.executable, "-m", "rngcert", "ingest", log, "--db", tmp / f"r{i}.duckdb"]))
            floor.append(run([sys.executable, "-c", FLOOR, log, tmp / f"f{i}.duckdb"]))
            (o_w, o_c), (f_w, f_c) = ours[-1], floor[-1]
            print(f"  pair {i + 1}: rngcert {o_w:.2f} s wall, {o_c:.2f} s CPU | floor {f_w:.2f} s wall, {f_c:.2f} s CPU | "
                  f"ratio {o_w / f_w:.2f}x wall, {o_c / f_c:.2f}x CPU")
            for p in tmp.glob("*.duckdb*"):
                if not p.name.startswith("warm"):
                    p.unlink() if p.is_file() else shutil.rmtree(p, ignore_errors=True)
        bw, bc = min(w for w, _ in ours), min(c for _, c in ours)
        fw, fc = min(w for w, _ in floor), min(c for _, c in floor)
        print(f"best: rngcert {bw:.2f} s wall, {bc:.2f} s CPU ({a.spins / bw / 1e6:.2f} M spins/s) | floor {fw:.2f} s wall, {fc:.2f} s CPU | "
              f"ratio {bw / fw:.2f}x wall, {bc / fc:.2f}x CPU (target <= 2x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
