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
import shutil
import sys
import tempfile
from pathlib import Path

import _measure  # (benchmarks/ is the script's folder)
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


def run(args) -> tuple[float, float, float]:
    """(wall s, CPU s of the child, peak MB) of a command."""
    return _measure.run(args, ENV, ok=(0,))


def compared(ours, floor) -> str:
    """One line: rngcert's and the floor's wall and CPU times and their ratios."""
    (o_w, o_c, _), (f_w, f_c, _) = ours, floor
    return (f"rngcert {o_w:.2f} s wall, {o_c:.2f} s CPU | floor {f_w:.2f} s wall, {f_c:.2f} s CPU | "
            f"ratio {o_w / f_w:.2f}x wall, {o_c / f_c:.2f}x CPU")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spins", type=int, default=1_000_000)
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.wheel import simulate_spins, write_spin_log

    with tempfile.TemporaryDirectory(prefix="bench_ingest_") as d:
        tmp = Path(d)
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
            print(f"  pair {i + 1}: {compared(ours[-1], floor[-1])}")
            for p in tmp.glob("*.duckdb*"):
                if not p.name.startswith("warm"):
                    p.unlink() if p.is_file() else shutil.rmtree(p, ignore_errors=True)
        b_ours, b_floor = _measure.best(ours), _measure.best(floor)
        print(f"best: {compared(b_ours, b_floor)} (target <= 2x); rngcert {a.spins / b_ours[0] / 1e6:.2f} M spins/s")


if __name__ == "__main__":
    main()
