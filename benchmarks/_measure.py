"""What the command-level benchmarks share: the wall time, CPU time and peak memory of one command."""

from __future__ import annotations

import resource
import subprocess
import tempfile
import time
from pathlib import Path


def run(args, env, ok=(0, 10, 11, 12), cwd=None) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of a command in its own process (GNU time's %M for the peak; the CPU time is user +
    system of the children, from getrusage). ``cwd``: where it runs (outside the source tree, ``python -m`` would
    put the working folder first on the path, before PYTHONPATH's tree)."""
    tfile = Path(tempfile.mktemp(suffix=".time"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-o", str(tfile), "-f", "%M"] + [str(a) for a in args], capture_output=True, text=True, env=env,
                       cwd=cwd)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = float(tfile.read_text().strip().splitlines()[-1]) / 1024
    tfile.unlink()
    if p.returncode not in ok:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(map(str, args))}\n{p.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), peak


def best(rows) -> tuple[float, float, float]:
    """The best of repeated runs of one command (timeit's rule): least wall time, least CPU time, largest peak."""
    return min(r[0] for r in rows), min(r[1] for r in rows), max(r[2] for r in rows)
