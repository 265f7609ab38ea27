"""An audit of a table whose spin ids collide: many spin ids stored with two results (issue 26, input shapes).

Two logs of one table with the same spin ids, a share of them with another result (two wheels given one table
name, or a log exported again after an edit), ingested into one store: every such id is a conflict, left out of
the audit with both its rows as rejected rows. The audit of that table runs beside the audit of the same store
without the second log (the same spins, no conflict), interleaved, and the ratio of CPU times is printed. It asserts
nothing.

    python benchmarks/bench_conflicts.py                     # 500,000 spins, 30% of them with two results
    python benchmarks/bench_conflicts.py --spins 100000 --share 0.5 --rounds 3

Found by a reviewer (2026-12-05): 3.5 M spins with 974,000 conflicts took over 300 s. The spins of a conflicted id
were selected with ``list_contains`` over the list of every conflicted id, once for every row (quadratic); now a
semi-join. On this machine, 500,000 spins with 149,000 conflicts: 108 s before, 8 s after (rejects.csv then holds
300,000 rows, both rows of each conflict).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measure  # noqa: E402 (benchmarks/ is the script's folder)


def _log(path: Path, results: np.ndarray) -> Path:
    ids = np.arange(1, results.size + 1)
    body = "\n".join(f"{i},T1,{r}" for i, r in zip(ids.tolist(), results.tolist()))
    path.write_text("spin_id,table,result\n" + body + "\n", encoding="utf-8")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spins", type=int, default=500_000)
    ap.add_argument("--share", type=float, default=0.3, help="share of the spin ids the second log gives another result")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    first = rng.integers(0, 37, a.spins)
    second = first.copy()
    flip = rng.random(a.spins) < a.share
    second[flip] = (second[flip] + 1) % 37
    env = {**os.environ, "CI": "1"}
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        one, two = _log(d / "a.csv", first), _log(d / "b.csv", second)
        clean, conflicted = d / "clean.duckdb", d / "conflicted.duckdb"
        rk = [sys.executable, "-m", "rngcert"]
        subprocess.run(rk + ["ingest", one, "--db", clean], check=True, capture_output=True, env=env)
        subprocess.run(rk + ["ingest", one, two, "--db", conflicted], check=True, capture_output=True, env=env)
        audit = rk + ["audit", "--table", "T1", "--no-plots", "--no-record", "--seed", "1", "--out", d / "r", "--db"]
        print(f"audit --table T1 of {a.spins:,} spins; {int(flip.sum()):,} spin ids with two results in the second store "
              f"(load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores)")
        got = {"clean": [], "conflicted": []}
        for k in range(a.rounds):
            for name, db in (("clean", clean), ("conflicted", conflicted)):
                got[name].append(_measure.run(audit + [db], env, cwd=d))
                w, c, m = got[name][-1]
                print(f"   round {k + 1} {name:10s}: {w:6.2f} s wall, {c:6.2f} CPU-s, peak {m:5.0f} MB")
        cw, cc, _ = _measure.best(got["clean"])
        xw, xc, _ = _measure.best(got["conflicted"])
        print(f"conflicted / clean: {xc / cc:.1f}x CPU, {xw / cw:.1f}x wall (the conflicted audit also writes "
              f"{2 * int(flip.sum()):,} rejected rows)")


if __name__ == "__main__":
    main()
