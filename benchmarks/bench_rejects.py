"""``rngcert certify`` of a log with many rejected rows beside the same log with none, as interleaved runs.

    python benchmarks/bench_rejects.py                          # 2,000,000 rows, half of them rejected, 3 rounds
    python benchmarks/bench_rejects.py --rows 500000 --rounds 2
    python benchmarks/bench_rejects.py --tree /tmp/old          # rngcert of another source tree beside this one (a before figure)

The shape: a CSV log (``spin_id,result``) in which half the results are labels the European wheel does
not have (``x0`` .. ``x49``: an export of another wheel's, or a wrong ``--column``). Every rejected row is
kept, counted, grouped for the INCONCLUSIVE reason and written to rejects.csv. The floor is the same
command on the same rows with every result readable (the cost of a log as such); the ratio is the
rejected rows' price. CPU time is user + system of the child, peak memory GNU time's %M; the summary
takes the best of the rounds (timeit's rule). Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import best, run  # noqa: E402


def write_logs(folder: Path, rows: int, seed: int = 1) -> tuple[Path, Path]:
    """(log with half its results unreadable, the same log with all readable)."""
    rng = np.random.default_rng(seed)
    good = rng.integers(0, 37, rows)
    bad = rng.random(rows) < 0.5
    text = good.astype(str).astype(object)
    text[bad] = np.char.add("x", rng.integers(0, 50, int(bad.sum())).astype(str)).astype(object)
    paths = folder / "half_rejected.csv", folder / "clean.csv"
    for path, cells in zip(paths, (text, good.astype(str))):
        with open(path, "w", encoding="ascii") as fh:
            fh.write("spin_id,result\n")
            fh.writelines(f"{i},{c}\n" for i, c in enumerate(cells.tolist()))
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree", help="also run rngcert from this source tree (PYTHONPATH), interleaved")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_rejects_"))
    rejected, clean = write_logs(tmp, a.rows)
    trees = [("this tree", str(ROOT))] + ([("tree " + a.tree, a.tree)] if a.tree else [])
    print(f"certify with rejected rows · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs · {a.rows:,} rows, half rejected · {a.rounds} rounds")
    runs: dict = {}
    for r in range(a.rounds):
        for label, tree in trees:
            env = dict(os.environ, PYTHONPATH=tree)
            for shape, path in (("half rejected", rejected), ("clean", clean)):
                out = tmp / f"o{r}{shape[0]}{len(runs)}"
                got = run([sys.executable, "-m", "rngcert", "certify", path, "--seed", "1", "--no-plots", "--out", out], env, cwd=tempfile.gettempdir())
                runs.setdefault((label, shape), []).append(got)
                print(f"  round {r + 1}, {label}, {shape}: {got[0]:.2f} s / {got[1]:.2f} CPU-s / {got[2]:.0f} MB", flush=True)
    print("best of the rounds (CPU s, wall s, peak MB); ratio of the best CPU times:")
    for label, _ in trees:
        (wr, cr, mr), (wc, cc, mc) = best(runs[(label, "half rejected")]), best(runs[(label, "clean")])
        print(f"  {label:<28} half rejected {cr:6.2f} CPU-s ({wr:.2f} s, {mr:.0f} MB) | clean {cc:6.2f} CPU-s ({wc:.2f} s, {mc:.0f} MB): "
              f"{cr / cc:.1f}x")


if __name__ == "__main__":
    main()
