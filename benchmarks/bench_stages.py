"""Where a permanence list's ``certify`` spends its per-spin CPU time, stage by stage, beside the plain numpy floor's
own stages (issue 26 item 2: what costs more than a count over the spins). Prints; asserts nothing.

    python benchmarks/bench_stages.py                        # 10 M spins, one a line (about 1 min on 2 busy cores)
    python benchmarks/bench_stages.py --spins 1000000 --per-line 17 --resamples 999
    python benchmarks/bench_stages.py --tree /tmp/old        # the stages of another source tree (a before figure)

In one process, each stage the best of ``--repeat`` runs (CPU time of this process, ``time.process_time``), on
the same list: the reader (``read_spin_log``), the line-start comparison, the table's tally (``chunked_tally``),
the duplicated-block scan, and every test of the wheel battery as ``certify`` calls it (its Monte Carlo
p-values with ``--resamples``, stopping early as certify's do). The floor's stages are those of
``bench_throughput.PERM_FLOOR``: the parse (read, commas made spaces, ``numpy.fromstring``), the pocket counts,
the 37 x 37 pair table and the wheel distances. Not included: the process's fixed cost (imports, report, figures;
``bench_fixed.py``) and the floor's (Python and numpy imports). A test whose data are cached by the table
(the colour runs) is measured with its cache cleared each time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_STAGES = r"""
import json, sys, time
import numpy as np
from rngcert.collect.heap import keep_freed_heap
from rngcert.equipment.wheel import load_wheel
from rngcert.collect.spinlog import read_spin_log
from rngcert.pipeline import checks
from rngcert.pipeline.certify_wheel import chunked_tally, _battery
from rngcert.battery.wheel import WheelData
from rngcert.battery.core import Context, sequential_stop
from rngcert.seeding import stream
from rngcert.stats.integrity import duplicated_blocks

keep_freed_heap()  # as certify does
path, R, rep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
T = time.process_time

def best(f):
    b, r = 1e9, None
    for _ in range(rep):
        t = T(); r = f(); b = min(b, T() - t)
    return r, b

rows = []
wheel = load_wheel("european")
log, d = best(lambda: read_spin_log([path], wheel)); rows.append(("read (permstream + compact log)", d))
tb = next(iter(log.tables.values())); space = log.space
ls, d = best(lambda: checks.line_start_evidence(tb, space)); rows.append(("line-start comparison", d))
tally, d = best(lambda: chunked_tally(tb.outcomes, space)); rows.append(("tally (counts, pairs, runs)", d))
_, d = best(lambda: duplicated_blocks(tb.outcomes, space.m)); rows.append(("duplicated-block scan", d))
data = WheelData(tb.outcomes, space, tally=tally, pair_mask=checks.pair_mask_of(ls))
for spec in _battery(None).members(data):
    if any(data.lacks(n) for n in spec.needs if not n.startswith("equipment:")):
        continue
    def one(spec=spec):
        data.__dict__.pop("colour_runs", None)  # (a cached property: measured each time)
        return spec.func(data, Context(stream(1, "table:x", spec.name), R, 0.01, sequential_stop(0.05, R)), **spec.params)
    _, d = best(one); rows.append((spec.name, d))
print(json.dumps({"n": int(tb.n), "rows": rows}))
"""

_FLOOR = r"""
import json, sys, time
import numpy as np
T = time.process_time
best = {}
for _ in range(int(sys.argv[2])):
    t0 = T()
    t = open(sys.argv[1], "rb").read().replace(b",", b" ").replace(b";", b" ")
    a = np.fromstring(t, dtype=np.int64, sep=" "); t1 = T()
    c = np.bincount(a, minlength=37); t2 = T()
    p = np.bincount(a[:-1] * 37 + a[1:], minlength=37 * 37); t3 = T()
    d = np.diff(a) % 37; t4 = T()
    del t, a, p, d
    for k, v in (("parse", t1 - t0), ("pocket counts", t2 - t1), ("pair table", t3 - t2), ("wheel distances", t4 - t3)):
        best[k] = min(best.get(k, 1e9), v)
print(json.dumps(best))
"""


def main():
    import json

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_permanence import write_list

    ap = argparse.ArgumentParser()
    ap.add_argument("--spins", type=float, default=1e7)
    ap.add_argument("--per-line", type=int, default=1)
    ap.add_argument("--resamples", type=int, default=9999)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tree", type=Path, default=ROOT, help="the source tree whose stages run (default: this one)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_stages_") as tmp:
        f = write_list(Path(tmp) / "perm.txt", int(a.spins), a.per_line)
        env = dict(os.environ, PYTHONPATH=str(a.tree.resolve()), CI="1")
        load0 = " ".join(f"{x:.1f}" for x in os.getloadavg())
        ours = json.loads(subprocess.run([sys.executable, "-c", _STAGES, str(f), str(a.resamples), str(a.repeat)], env=env, cwd=tmp,
                                         capture_output=True, text=True, check=True).stdout)
        floor = json.loads(subprocess.run([sys.executable, "-c", _FLOOR, str(f), str(a.repeat)], cwd=tmp, capture_output=True, text=True,
                                          check=True).stdout)
    n = ours["n"]
    print(f"certify's stages · {n:,} spins, {a.per_line} a line, R = {a.resamples} · rngcert from {a.tree} · "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · load average {load0} -> {' '.join(f'{x:.1f}' for x in os.getloadavg())} · "
          f"best of {a.repeat}, CPU s")
    total_f = sum(floor.values())
    for name, s in sorted(ours["rows"], key=lambda r: -r[1]):
        if s >= 0.0005 * n / 1e6:
            print(f"  {name:34s} {s:6.3f} s  {s / n * 1e9:5.1f} ns a spin  ({s / total_f:4.0%} of the floor's stages)")
    total = sum(s for _, s in ours["rows"])
    print(f"  {'rngcert, all stages':34s} {total:6.3f} s  {total / n * 1e9:5.1f} ns a spin")
    for name, s in floor.items():
        print(f"  floor: {name:27s} {s:6.3f} s  {s / n * 1e9:5.1f} ns a spin")
    print(f"  {'floor, all stages':34s} {total_f:6.3f} s  {total_f / n * 1e9:5.1f} ns a spin · ratio of the stages {total / total_f:.2f}x")


if __name__ == "__main__":
    main()
