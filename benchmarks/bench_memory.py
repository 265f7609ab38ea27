"""Peak memory of whole commands (issue 11, item 1). Prints the figures; asserts nothing.

    python benchmarks/bench_memory.py                 # certify and ingest of a 10 M-spin 9-column CSV
    python benchmarks/bench_memory.py --spins 2000000 # a smaller log
    python benchmarks/bench_memory.py --huge          # also certify 100 M spins (needs ~6 GB of disk in
                                                      # the temp folder, and RAM for the battery: see below)

Each command runs in its own process under ``/usr/bin/time -f %M`` (peak resident set, the
number a machine's memory limit sees). Beside each peak: the floor, a minimal pyarrow read of the
same file in its own process (the ``result`` column streamed in the reader's block size, pockets
counted), and the ratio. Bytes per spin are (peak - floor) / spins: what the command adds per spin
to the cost of reading the file at all.

Targets (issue 11): 100 M spins certified in <= 1.5 GB peak (about 14 bytes a spin over the
floor); ingest of a 2 GB CSV in <= 600 MB peak.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import _measure  # noqa: E402 (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1")
EXE = [sys.executable, "-m", "rngcert"]

FLOOR = r"""
import sys, numpy as np, pyarrow as pa, pyarrow.csv as pacsv, pyarrow.compute as pc
from rngcert.collect.csvstream import BLOCK_SIZE
r = pacsv.open_csv(sys.argv[1], read_options=pacsv.ReadOptions(use_threads=False, block_size=BLOCK_SIZE),
                   convert_options=pacsv.ConvertOptions(include_columns=["result"], column_types={"result": pa.string()}))
counts = {}
for b in r:
    vc = pc.value_counts(b.column(0))
    for v, c in zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist()):
        counts[v] = counts.get(v, 0) + c
    pa.default_memory_pool().release_unused()
print(sum(counts.values()))
"""


def run(args, ok=(0, 10, 11, 12)) -> tuple[float, float]:
    """(wall s, peak RSS MB) of a command in its own process."""
    wall, _, peak = _measure.run(args, ENV, ok)
    return wall, peak


def make_log(path: Path, spins: int) -> None:
    """A 9-column export (spin_id, timestamp, table, dealer, direction, release_pocket,
    revolutions, void, result): 4 dealers, 1% void, made by ``rngcert simulate wheel``."""
    run(EXE + ["simulate", "wheel", "--spins", spins, "--dealers", 4, "--release", "--void-rate", 0.01, "--seed", 1, "--out", path], ok=(0,))


def row(what: str, spins: int, wall: float, peak: float, floor: float, target: str = "") -> None:
    per = (peak - floor) * 2**20 / spins
    print(f"| {what} | {spins:,} | {wall:.0f} s | {peak:,.0f} MB | {floor:,.0f} MB | {peak / floor:.1f}x | {per:.1f} | {target} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spins", type=int, default=10_000_000)
    ap.add_argument("--huge", action="store_true", help="also certify 100 M spins")
    ap.add_argument("--ingest-spins", type=int, default=None, help="spins of the ingested log (default --spins; 37 M is about 2 GB)")
    ap.add_argument("--tmp", default=None, help="folder for the logs (default the system temp folder)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rngcert-bench-mem-", dir=a.tmp))
    print(f"peak RSS by /usr/bin/time; logs in {tmp}; free disk {shutil.disk_usage(tmp).free / 2**30:.0f} GiB\n")
    print("| command | spins | wall | peak | floor (pyarrow read) | ratio | bytes/spin over floor | target |")
    print("|---|---|---|---|---|---|---|---|")
    try:
        sizes = [a.spins] + ([100_000_000] if a.huge else [])
        for n in sizes:
            log = tmp / f"spins-{n}.csv"
            make_log(log, n)
            mb = log.stat().st_size / 2**20
            _, floor = run([sys.executable, "-c", FLOOR, log], ok=(0,))
            wall, peak = run(EXE + ["certify", log, "--seed", 1, "--resamples", 999, "--out", tmp / "reports", "--workers", 1])
            row(f"certify ({mb:,.0f} MB CSV)", n, wall, peak, floor, "<= 1.5 GB at 100 M" if n >= 100_000_000 else "")
            if n != (a.ingest_spins or a.spins):
                log.unlink()
        n = a.ingest_spins or a.spins
        log = tmp / f"spins-{n}.csv"
        if not log.exists():
            make_log(log, n)
        mb = log.stat().st_size / 2**20
        _, floor = run([sys.executable, "-c", FLOOR, log], ok=(0,))
        wall, peak = run(EXE + ["ingest", log, "--db", tmp / "store.duckdb"], ok=(0,))
        row(f"ingest ({mb:,.0f} MB CSV)", n, wall, peak, floor, "<= 600 MB at 2 GB")
        wall, peak = run(EXE + ["audit", "--db", tmp / "store.duckdb", "--table", "SIM-1", "--seed", 1, "--resamples", 999, "--no-record",
                                "--out", tmp / "reports"])
        row("audit of the stored table", n, wall, peak, floor)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
