"""`shuffle certify` on 2 cores, this tree against another (e.g. the code before a change), interleaved.

    git archive COMMIT rngcert | tar -x -C /tmp/before      # the other tree (then compile it once)
    python benchmarks/bench_shuffle_ab.py --before /tmp/before --workload shuffle --rounds 2
    python benchmarks/bench_shuffle_ab.py --before /tmp/before --workload grid --rounds 2

In each round, for each tree: the default (a local pool where it pays), ``--workers 1`` and ``--workers 1``
pinned to one core (``taskset -c 0``), as subprocesses with the bytecode cache on; wall time and CPU time
(user + system of the command and its workers) and the load average beside each. The best of each kind is
compared as section S of ``bench_parallel.py`` does: speed-up, ceiling = min(2, 2 x serial / one core),
fraction; and, because other sessions share the cores by autogroup, the cores each run got (CPU-s / wall),
the ceiling at that share and the fraction of it, and the default's CPU over the serial run's.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = {
    "shuffle": ["shuffle", "certify", "baccarat-004", "--seed", "1", "--no-plots", "--no-sensitivity", "--shoes", "6000"],
    "grid": ["shuffle", "certify", "baccarat-004", "--seed", "1", "--no-plots", "--sensitivity", "--sensitivity-shoes", "100", "--shoes", "500"],
}
MODES = {"default": ([], []), "serial": ([], ["--workers", "1"]), "one core": (["taskset", "-c", "0"], ["--workers", "1"])}


def run(tree: Path, args: list[str], prefix: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s of the command and its children, load average before) of one command."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as out:
        load = os.getloadavg()[0]
        ru0, w0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        # cwd=out: `python -m` puts the working directory first on sys.path, before PYTHONPATH; launched from a checkout's
        # root, both trees would run that checkout's code
        p = subprocess.run(prefix + [sys.executable, "-m", "rngcert", *args, "--out", out], env=env, capture_output=True, text=True, cwd=out)
        wall, ru1 = time.perf_counter() - w0, resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 10, 11, 12):
        raise SystemExit(f"{tree}: exit {p.returncode}: {p.stderr[-1000:]}")
    return wall, ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="the other tree (a folder holding its rngcert package)")
    ap.add_argument("--workload", choices=list(WORKLOADS), default="shuffle")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    trees = {"before": a.before, "after": ROOT}
    res: dict = {}
    for r in range(a.rounds):
        for name, tree in trees.items():
            for mode, (prefix, extra) in MODES.items():
                wall, cpu, load = run(tree, WORKLOADS[a.workload] + extra, prefix)
                res.setdefault((name, mode), []).append((wall, cpu, load))
                print(f"round {r + 1} {name:6s} {mode:8s} {wall:6.2f} s wall {cpu:6.2f} CPU-s load {load:.1f}", flush=True)
    print(" ".join(WORKLOADS[a.workload]))
    for name in trees:
        (d, dc, dl), (s, sc, sl), (o, _, _) = (min(res[(name, m)]) for m in MODES)
        ceiling = min(2.0, 2 * s / o)
        got_d, got_s = dc / d, sc / s
        capped = min(ceiling, got_d / got_s)
        print(f"{name}: default {d:.2f} s ({dc:.2f} CPU-s, load {dl:.1f}), serial {s:.2f} s ({sc:.2f} CPU-s, load {sl:.1f}), one core {o:.2f} s; "
              f"speed-up {s / d:.2f} of ceiling {ceiling:.2f}: fraction {s / d / ceiling:.2f}; cores got {got_d:.2f} / {got_s:.2f}, "
              f"ceiling at this share {capped:.2f}, fraction of it {s / d / capped:.2f}; CPU default / serial {dc / sc:.2f}")


if __name__ == "__main__":
    main()
