"""Benchmark of the store, audits and the watch (issues 4 and 11). Prints the figures; asserts nothing.

    python benchmarks/bench_store.py            # everything (about 5-8 minutes on 2 cores)
    python benchmarks/bench_store.py --quick    # skip the 10 M-spin store and the watch runs

Issue 11 rows: ingest of a 10 M-spin CSV by the console script (wall time, peak memory) beside the
floor (DuckDB's own ``read_csv`` + ``INSERT`` of the same file, in its own process); an audit
started while an ingest holds the write lock (how long it waits, that it succeeds); ``export
--parquet`` of the 10 M spins and ``ingest`` of that folder.

Targets (issue 4, "Done means" 3): ingest >= 1 M spins/s from CSV; an audit of a 1 M-spin table
in <= 2 s; the store for 10 M spins under 200 MB. Also the full watch simulation: 200 runs x
130,000 spins (30,000 fair, then +15% on 5 pockets for 100,000 spins) and 200 fair runs of
100,000 spins.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from rngcert.collect.spinlog import read_spin_rows
from rngcert.collect.store import Store
from rngcert.equipment.wheel import load_wheel
from rngcert.pipeline.audit import audit_table
from rngcert.simulate.watch import simulate_watch
from rngcert.simulate.wheel import WheelBias, simulate_spins, write_spin_log

EU = load_wheel("european")
import _measure  # noqa: E402 (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1")
EXE = [sys.executable, "-m", "rngcert"]


def run_cmd(args, ok=(0, 10, 11, 12)) -> tuple[float, float]:
    """(wall s, peak RSS MB) of a command in its own process (GNU time %M)."""
    wall, _, peak = _measure.run(args, ENV, ok)
    return wall, peak


DUCKDB_FLOOR = r"""
import sys, duckdb
con = duckdb.connect(sys.argv[2])
con.execute("CREATE TABLE spins AS SELECT * FROM read_csv(?, header = true) LIMIT 0", [sys.argv[1]])
con.execute("INSERT INTO spins SELECT * FROM read_csv(?, header = true)", [sys.argv[1]])
print(con.execute("SELECT count(*) FROM spins").fetchall()[0][0])
con.close()
"""


def full_csv(path: Path, n: int, seed: int, table: str, first: int = 0, header: bool = True, mode: str = "wb"):
    """The simulator's 8-column export: spin_id, timestamp, table, dealer, direction, revolutions, void, result."""
    sim = simulate_spins(EU, n, np.random.default_rng(seed), dealers=4, void_rate=0.01, first_spin=first)
    with open(path, mode) as fh:
        write_spin_log(fh, EU, sim, table=table, first_spin=first, header=header)


def lean_csv(path: Path, n: int, seed: int, table: str):
    """A 3-column export: spin_id, table, result."""
    x = np.random.default_rng(seed).integers(0, 37, n)
    labels = np.array(EU.labels, dtype=object)
    pacsv.write_csv(
        pa.table({"spin_id": pa.array(np.arange(1, n + 1)), "table": pa.array(np.full(n, table, dtype=object)), "result": pa.array(labels[x])}),
        str(path),
        write_options=pacsv.WriteOptions(quoting_style="none"),
    )


def timed(fn, repeat=1):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_store_"))
    try:
        run(tmp, args.quick)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # about 1 GB of logs and stores


def run(tmp: Path, quick: bool):
    n = 1_000_000
    print(f"rngcert store benchmark · {os.cpu_count()} CPU(s) · load average {os.getloadavg()[0]:.1f} (other jobs share the CPUs) · temp {tmp}")

    # warm-up (imports, DuckDB first connection)
    warm = tmp / "warm.csv"
    full_csv(warm, 1000, 0, "W")
    with Store(tmp / "warm.duckdb") as st:
        st.ingest([warm])

    # ---------------------------------------------------------------- ingest
    for kind, maker in (("8-column CSV", full_csv), ("3-column CSV", lean_csv)):
        f = tmp / f"{kind[0]}.csv"
        maker(f, n, 1, "T1")
        size_mb = f.stat().st_size / 1e6
        t_parse, _ = timed(lambda: read_spin_rows(f, EU), repeat=2)
        times = []
        for rep in range(2):
            db = tmp / f"ingest-{kind[0]}-{rep}.duckdb"
            with Store(db) as st:
                t, _ = timed(lambda: st.ingest([f]))
            times.append(t)
        t = min(times)
        print(f"ingest {kind} ({size_mb:.0f} MB, {n:,} spins, new table): {t:.2f} s = {n / t / 1e6:.2f} M spins/s "
              f"(parsing alone, rngcert.collect.spinlog: {t_parse:.2f} s = {n / t_parse / 1e6:.2f} M/s; "
              f"the rest — hash, Arrow tables, DuckDB insert and commit: {t - t_parse:.2f} s)")
    # grown log: 1 M stored, 100 k appended → the slow path (joins against stored rows)
    g = tmp / "grown.csv"
    full_csv(g, n, 2, "G")
    db = tmp / "grown.duckdb"
    with Store(db) as st:
        st.ingest([g])
        full_csv(g, 100_000, 3, "G", first=n, header=False, mode="ab")
        t, (res,) = timed(lambda: st.ingest([g]))
        print(f"ingest of a grown log (1.1 M rows, 100 k new, 1 M already stored): {t:.2f} s; inserted {res.inserted:,}, duplicates {res.duplicates:,}")

    # ---------------------------------------------------------------- audit
    with Store(tmp / "ingest-8-0.duckdb") as st:
        t, a = timed(lambda: audit_table(st, "T1", seed=1, figures=False, outdir=tmp / "rep"))
        print(f"audit of a 1 M-spin table (R = 9999, no plots, report + record written): {t:.2f} s → {a.verdict}")
        t, a = timed(lambda: audit_table(st, "T1", seed=1, figures=True, outdir=tmp / "rep"))
        print(f"audit of a 1 M-spin table with plots: {t:.2f} s (second audit: trend vs the first)")

    if not quick:
        # ------------------------------------------------------------ 10 M spins
        db = tmp / "ten.duckdb"
        files = []
        for i in range(10):
            f = tmp / f"ten-{i:02d}.csv"
            full_csv(f, n, 10 + i, f"TABLE-{i:02d}")
            files.append(f)
        with Store(db) as st:
            # one call: the next file is parsed while DuckDB stores the current one
            t_total, res = timed(lambda: st.ingest(files))
            total = st.count_spins()
            st.con.execute("CHECKPOINT").fetchall()
        size = sum(p.stat().st_size for p in tmp.glob("ten.duckdb*"))
        print(f"store of {total:,} spins (10 tables, 8-column logs with timestamps, dealers, provenance): {size / 1e6:.1f} MB "
              f"({size / total:.1f} bytes/spin)")
        print(f"ingest of the 10 files (480 MB of CSV) in one call, parse and store pipelined: {t_total:.1f} s = {total / t_total / 1e6:.2f} M spins/s")

        # ------------------------------------------------------------ issue 11: ingest 10 M vs the DuckDB floor
        print(f"-- issue 11 (load average {os.getloadavg()[0]:.1f})")
        big = tmp / "ten-m.csv"
        full_csv(big, 10 * n, 99, "BIG")
        mb = big.stat().st_size / 1e6
        w, pk = run_cmd(EXE + ["ingest", big, "--db", tmp / "ten-m.duckdb"])
        fw, fpk = run_cmd([sys.executable, "-c", DUCKDB_FLOOR, big, tmp / "floor.duckdb"], ok=(0,))
        print(f"ingest 10 M spins ({mb:.0f} MB, 8 columns), console script: {w:.1f} s, peak {pk:.0f} MB | floor, DuckDB read_csv + INSERT: "
              f"{fw:.1f} s, peak {fpk:.0f} MB | ratio {w / fw:.2f}x time, {pk / fpk:.2f}x memory")
        # an audit started while an ingest holds the write lock
        small = tmp / "small.csv"
        full_csv(small, 200_000, 5, "SMALL")
        hold = subprocess.Popen([sys.executable, "-c", (
            "import sys, time, rngcert.collect.store as s\n"
            "def hook():\n    print('HOLD', flush=True); time.sleep(5)\n"
            "s.ingest._before_commit = hook\n"
            "s.ingest_files(sys.argv[1], [sys.argv[2]], wait=60)\n"), str(tmp / "ten-m.duckdb"), str(small)], stdout=subprocess.PIPE, text=True, env=ENV)
        hold.stdout.readline()
        w, pk = run_cmd(EXE + ["audit", "--table", "BIG", "--db", tmp / "ten-m.duckdb", "--seed", "1", "--no-plots", "--out", tmp / "rep-c", "--last", "1000000"])
        hold.wait()
        print(f"audit of the last 1 M spins started while an ingest held the write lock for 5 s: finished in {w:.1f} s "
              f"(it waited for the writer, then ran; before issue 11 it failed at once with 'in use')")
        # export and read back
        w, pk = run_cmd(EXE + ["export", "--db", tmp / "ten-m.duckdb", "--parquet", tmp / "pq"])
        size = sum(p.stat().st_size for p in (tmp / "pq").rglob("*.parquet"))
        print(f"export --parquet of {10 * n + 200_000:,} spins (partitioned by table and day): {w:.1f} s, {size / 1e6:.0f} MB of Parquet, peak {pk:.0f} MB")
        w, pk = run_cmd(EXE + ["ingest", tmp / "pq", "--db", tmp / "back.duckdb"])
        print(f"ingest of that export folder into a new store: {w:.1f} s, peak {pk:.0f} MB")

        # ------------------------------------------------------------ watch simulation
        t, al = timed(lambda: simulate_watch(EU, runs=200, n_fair=100_000, seed=20261130))
        print(f"watch, fair wheel, 200 runs x 100,000 spins: {(al > 0).sum()} false alarm(s) (guarantee <= 1% per run) [{t:.1f} s]")
        bias = WheelBias(sectors=((10, 5, 1.15),))
        t, al = timed(lambda: simulate_watch(EU, runs=200, n_fair=30_000, n_biased=100_000, bias=bias, seed=4))
        det = al > 30_000
        d = al[det] - 30_000
        print(
            f"watch, +15% on 5 pockets after 30,000 fair spins, 200 runs x 130,000 spins [{t:.1f} s]: "
            f"{((al > 0) & (al <= 30_000)).sum()} alarm(s) before the change; detected in {det.mean():.1%} of runs; "
            f"within 30,000 spins: {(det & (al <= 60_000)).mean():.1%}; delay median {np.median(d):.0f}, "
            f"10%/90% {np.percentile(d, 10):.0f}/{np.percentile(d, 90):.0f}, max {d.max():.0f} spins"
        )


if __name__ == "__main__":
    main()
