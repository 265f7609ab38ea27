"""The README's performance table (section "## Performance"), regenerated from the benchmarks (issue 26, "Done means").

    python benchmarks/perf_table.py                 # every row (about 10-15 minutes on the 2 shared cores)
    python benchmarks/perf_table.py --quick         # small sizes, one round: checks that it runs (<= 2 minutes)
    python benchmarks/perf_table.py --only fixed,parallel --rounds 5 --json table.json

Prints a markdown table ``| workload | rngcert | plain numpy floor | pyarrow floor | ratio | target | met? |``
headed by the UTC time and the load average (before and after), the plain numpy floor the headline
comparison, the pyarrow floor beside it. Every ratio is of interleaved runs in one process tree (the
best of each side: timeit's rule, the rest is other people's load), CPU time (user + system of the
command and its children) unless a row says wall.

Row groups, in this order, and where each comes from. A benchmark script owns its rows through one
stable entry point, which this script calls when the module defines it::

    perf_rows(quick: bool = False, rounds: int = 3, say=print) -> list[dict]

returning one dict a row with the keys ``workload, rngcert, numpy_floor, pyarrow_floor, ratio, target,
met`` (strings; "" for a cell with nothing to say; ``met`` is "met", "not met" or ""). A module without
``perf_rows`` is measured by this script's own version of its rows (``_rows_<group>`` below), with the
module's floor programs, imported by name (the first module of a group that exists owns it):

========== ======================== =========================================================================
group      module                   rows (fallback here) / names imported from the module
========== ======================== =========================================================================
fixed      bench_fixed.py           certify 10 k CSV and permanence list; bits 2 x 10^6 with laws on disk /
                                    ``NUMPY_FLOOR``, ``ARROW_FLOOR``, ``NUMPY_PERM_FLOOR``
throughput bench_throughput.py      certify 1 M permanence lists (17 a line, one a line), 1 M and 10 M CSV /
           (else bench_permanence)  ``PERM_FLOOR`` or ``FLOOR``, ``CSV_FLOOR``, ``ARROW_FLOOR`` (else bench_fixed's),
                                    ``write_list`` (else bench_permanence's)
ingest     bench_ingest.py          ingest 1 M spins beside DuckDB ``read_csv`` + ``INSERT`` / ``FLOOR``
memory     bench_shapes.py          peak memory of certify per input shape (CSV, JSON Lines, permanence lists
                                    one and 17 a line, ids out of order, text ids) at N and N/10 spins, the
           (else bench_memory)      10^8-spin peak extrapolated from the two (no floor program used)
parallel   bench_parallel.py        ``perf_rows`` (section S: speed-up against the ceiling, ``ceiling_rows``)
========== ======================== =========================================================================

Commands run as a user's next run: bytecode cached (PYTHONDONTWRITEBYTECODE unset), a private
``RNGCERT_CACHE`` warmed by a first run (report template, exact null laws), CI=1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

from _measure import run as _run  # noqa: E402 (benchmarks/ is the script's folder)

#: group -> the benchmark modules that own its rows, the first one present is used
GROUPS = {"fixed": ("bench_fixed",), "throughput": ("bench_throughput", "bench_permanence"), "ingest": ("bench_ingest",),
          "memory": ("bench_shapes", "bench_memory"), "parallel": ("bench_parallel",)}
COLUMNS = ("workload", "rngcert", "numpy_floor", "pyarrow_floor", "ratio", "target", "met")
HEADER = "| workload | rngcert | plain numpy floor | pyarrow floor | ratio | target | met? |"
RK = [sys.executable, "-m", "rngcert"]


def _env(tmp: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1", RNGCERT_CACHE=str(tmp / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    return env


def run(args, env, ok=(0, 10, 11, 12)) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of a command, run outside the source tree (``benchmarks/_measure.py``)."""
    return _run(args, env, ok, cwd=tempfile.gettempdir())


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.1f} / {b:.1f} / {c:.1f} on {os.cpu_count()} cores"


def module(group: str):
    """The benchmark module that owns a group's rows (the first of :data:`GROUPS` that exists)."""
    for name in GROUPS[group]:
        if (HERE / f"{name}.py").is_file():
            return importlib.import_module(name)
    raise SystemExit(f"none of {', '.join(GROUPS[group])} in {HERE}")


def floor_program(mod, *names: str) -> str:
    """The first of the module's floor programs named ``names`` (the benchmarks' own floors, not copies)."""
    for n in names:
        if hasattr(mod, n):
            return getattr(mod, n)
    raise SystemExit(f"{mod.__name__} defines none of {', '.join(names)}: give it perf_rows() or name its floor so")


def interleaved(cmds: dict, rounds: int, say, ok=(0, 10, 11, 12)) -> dict:
    """Run each named command once a round, one after the other; the best of each: (least wall, least CPU, largest peak)
    (timeit's rule: the rest is other people's load)."""
    got: dict = {k: [] for k in cmds}
    for r in range(rounds):
        for k, (args, env) in cmds.items():
            got[k].append(run(args, env, ok))
        say(f"   round {r + 1}: " + " | ".join(f"{k} {v[-1][1]:.2f} CPU-s" for k, v in got.items()))
    return {k: (min(x[0] for x in v), min(x[1] for x in v), max(x[2] for x in v)) for k, v in got.items()}


def _cell(b) -> str:
    return f"{b[1]:.2f} CPU-s, {b[0]:.2f} s wall, {b[2]:.0f} MB"


def _spin_log(path: Path, n: int, seed: int = 1) -> Path:
    """The simulator's CSV export of ``n`` spins (european wheel, 4 dealers, 1% void), as bench_fixed and bench_ingest write it."""
    from rngcert.equipment.wheel import load_wheel
    from rngcert.simulate.wheel import simulate_spins, write_spin_log

    eu = load_wheel("european")
    with open(path, "wb") as fh:
        write_spin_log(fh, eu, simulate_spins(eu, n, np.random.default_rng(seed), dealers=4, void_rate=0.01), table="T1")
    return path


def _result_column(path: Path) -> int:
    return [c.strip('"') for c in open(path).readline().strip().split(",")].index("result")


# ------------------------------------------------------------------------------ fallbacks: fixed
def _rows_fixed(mod, quick: bool, rounds: int, tmp: Path, say) -> list[dict]:
    env = _env(tmp)
    n = 10_000
    csv, perm = _spin_log(tmp / "f10k.csv", n), tmp / "f10k.txt"
    x = np.random.default_rng(7).integers(0, 37, n)
    perm.write_text("".join(" ".join(map(str, x[i : i + 10])) + "\n" for i in range(0, n, 10)))
    col = str(_result_column(csv))
    bits = RK + ["bits", "--source", "pcg64", "--length", "1000000", "--seed", "1", "--no-plots", "--out", tmp / "o", "--workers", "1"]
    run(RK + ["certify", csv, "--seed", "1", "--out", tmp / "o"], env)  # warm: bytecode, report template, page cache
    run(bits + ["--streams", "2"], env)  # warm: the exact laws on disk
    b = interleaved({
        "certify csv": (RK + ["certify", csv, "--seed", "1", "--out", tmp / "o"], env),
        "numpy csv": ([sys.executable, "-c", floor_program(mod, "NUMPY_FLOOR", "CSV_FLOOR"), csv, col], env),
        "pyarrow csv": ([sys.executable, "-c", floor_program(mod, "ARROW_FLOOR"), csv], env),
        "certify perm": (RK + ["certify", perm, "--seed", "1", "--out", tmp / "o"], env),
        "numpy perm": ([sys.executable, "-c", floor_program(mod, "NUMPY_PERM_FLOOR", "PERM_FLOOR"), perm], env),
        "bits 2": (bits + ["--streams", "2"], env),
        "bits 8": (bits + ["--streams", "8"], env),
    }, rounds, say)
    c, nf, af = b["certify csv"], b["numpy csv"], b["pyarrow csv"]
    p, npf = b["certify perm"], b["numpy perm"]
    b2, b8 = b["bits 2"], b["bits 8"]
    fixed_bits = b2[1] - 2 * (b8[1] - b2[1]) / 6  # the run less its two streams' own work (a stream: the 8-stream run less the 2-stream run, / 6)
    met_b = b2[2] <= 200 and fixed_bits <= 1.0
    return [
        dict(workload="certify 10 k spins, CSV (R = 9999, figures)", rngcert=_cell(c), numpy_floor=f"{nf[1]:.2f} CPU-s",
             pyarrow_floor=f"{af[1]:.2f} CPU-s", ratio=f"{c[1] / nf[1]:.1f}x numpy, {c[1] / af[1]:.1f}x pyarrow",
             target="fixed cost <= 0.6 CPU-s", met="met" if c[1] <= 0.6 else "not met"),
        dict(workload="certify 10 k spins, permanence list (ten a line)", rngcert=_cell(p), numpy_floor=f"{npf[1]:.2f} CPU-s",
             pyarrow_floor="", ratio=f"{p[1] / npf[1]:.1f}x", target="fixed cost <= 0.6 CPU-s", met="met" if p[1] <= 0.6 else "not met"),
        dict(workload="bits --streams 2 --length 10^6 --no-plots, laws on disk", rngcert=_cell(b2), numpy_floor="", pyarrow_floor="",
             ratio=f"fixed cost {fixed_bits:.2f} CPU-s (T(2 streams) - 2 x (T(8) - T(2)) / 6)", target="<= 200 MB, <= 1 s fixed",
             met="met" if met_b else "not met"),
    ]


# ------------------------------------------------------------------------------ fallbacks: throughput
def _rows_throughput(mod, quick: bool, rounds: int, tmp: Path, say) -> list[dict]:
    fixed = module("fixed")
    perm_floor = floor_program(mod, "PERM_FLOOR", "FLOOR")
    csv_floor, arrow_floor = floor_program(mod, "CSV_FLOOR") if hasattr(mod, "CSV_FLOOR") else floor_program(fixed, "NUMPY_FLOOR"), \
        floor_program(mod, "ARROW_FLOOR") if hasattr(mod, "ARROW_FLOOR") else floor_program(fixed, "ARROW_FLOOR")
    write_list = getattr(mod, "write_list", None) or importlib.import_module("bench_permanence").write_list
    env = _env(tmp)
    n = 200_000 if quick else 1_000_000
    rows = []
    lists = {"17 a line": write_list(tmp / "t17.txt", n, 17), "one a line": write_list(tmp / "t1.txt", n, 1)}
    for p in lists.values():
        run(RK + ["certify", p, "--seed", "1", "--out", tmp / "o"], env)  # warm
    cmds = {}
    for k, p in lists.items():
        cmds[f"certify {k}"] = (RK + ["certify", p, "--seed", "1", "--out", tmp / "o"], env)
        cmds[f"floor {k}"] = ([sys.executable, "-c", perm_floor, p], env)
    b = interleaved(cmds, rounds, say)
    for k in lists:
        o, f = b[f"certify {k}"], b[f"floor {k}"]
        rows.append(dict(workload=f"certify {n / 1e6:g} M spins, permanence list {k}", rngcert=_cell(o), numpy_floor=f"{f[1]:.2f} CPU-s",
                         pyarrow_floor="", ratio=f"{o[1] / f[1]:.1f}x", target="<= 3x", met="met" if o[1] / f[1] <= 3 else "not met"))
    for m, target in (((n, 3.0),) if quick else ((1_000_000, 3.0), (10_000_000, 1.5))):
        csv = _spin_log(tmp / f"t{m}.csv", m)
        col = str(_result_column(csv))
        r = 1 if m >= 10_000_000 else rounds
        b = interleaved({"certify": (RK + ["certify", csv, "--seed", "1", "--out", tmp / "o"], env),
                         "numpy": ([sys.executable, "-c", csv_floor, csv, col], env),
                         "pyarrow": ([sys.executable, "-c", arrow_floor, csv], env)}, r, say)
        o, nf, af = b["certify"], b["numpy"], b["pyarrow"]
        rows.append(dict(workload=f"certify {m / 1e6:g} M spins, CSV (8 columns)", rngcert=_cell(o), numpy_floor=f"{nf[1]:.2f} CPU-s",
                         pyarrow_floor=f"{af[1]:.2f} CPU-s", ratio=f"{o[1] / nf[1]:.1f}x numpy, {o[1] / af[1]:.1f}x pyarrow",
                         target=f"<= {target:g}x numpy", met="met" if o[1] / nf[1] <= target else "not met"))
        csv.unlink()
    return rows


# ------------------------------------------------------------------------------ fallbacks: ingest
def _rows_ingest(mod, quick: bool, rounds: int, tmp: Path, say) -> list[dict]:
    env = _env(tmp)
    n = 200_000 if quick else 1_000_000
    log = _spin_log(tmp / "i.csv", n)
    run(RK + ["ingest", log, "--db", tmp / "warm.duckdb"], env, ok=(0,))
    # each round into new databases (an ingest into a store that has the file already is another job)
    dbs = iter(range(10**6))
    b = interleaved({"rngcert": (RK + ["ingest", log, "--db", _Fresh(tmp, "r", dbs)], env),
                     "duckdb": ([sys.executable, "-c", floor_program(mod, "FLOOR"), log, _Fresh(tmp, "f", dbs)], env)}, rounds, say, ok=(0,))
    o, f = b["rngcert"], b["duckdb"]
    return [dict(workload=f"ingest {n / 1e6:g} M spins (8-column CSV) beside DuckDB read_csv + INSERT", rngcert=_cell(o),
                 numpy_floor="", pyarrow_floor=f"DuckDB: {f[1]:.2f} CPU-s", ratio=f"{o[1] / f[1]:.2f}x DuckDB", target="<= 2x DuckDB",
                 met="met" if o[1] / f[1] <= 2 else "not met")]


class _Fresh:
    """A database path that is new each time it is turned into a command argument."""

    def __init__(self, tmp: Path, prefix: str, counter):
        self.tmp, self.prefix, self.counter = tmp, prefix, counter

    def __str__(self) -> str:
        return str(self.tmp / f"{self.prefix}{next(self.counter)}.duckdb")


# ------------------------------------------------------------------------------ fallbacks: memory
def _shapes(tmp: Path, n: int, perm_mod) -> dict:
    """The input shapes of issue 26 item 3, ``n`` spins each."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(11)
    x = rng.integers(0, 37, n)
    ids = np.arange(1, n + 1)
    res = pa.array(x).cast(pa.string())
    out = {}

    def lean(path, idcol):
        pacsv.write_csv(pa.table({"spin_id": idcol, "table": pa.array(np.full(n, "T1", dtype=object)), "result": res}), path,
                        write_options=pacsv.WriteOptions(quoting_style="none"))
        return path

    out["CSV (spin_id, table, result)"] = lean(tmp / f"m{n}.csv", pa.array(ids))
    swapped = ids.copy()
    swapped[1::1000], swapped[2::1000] = ids[2::1000], ids[1::1000]  # a pair of rows swapped every 1,000
    out["CSV, ids out of order"] = lean(tmp / f"m{n}-ooo.csv", pa.array(swapped))
    out["CSV, text ids"] = lean(tmp / f"m{n}-text.csv", pc.binary_join_element_wise("S", pa.array(ids).cast(pa.string()), ""))
    lines = pc.binary_join_element_wise('{"spin_id": ', pa.array(ids).cast(pa.string()), ', "table": "T1", "result": "', res, '"}', "")
    with open(tmp / f"m{n}.jsonl", "w") as fh:
        for a in range(0, n, 1_000_000):
            fh.write("\n".join(lines[a : a + 1_000_000].to_pylist()) + "\n")
    out["JSON Lines"] = tmp / f"m{n}.jsonl"
    out["permanence list, one a line"] = perm_mod.write_list(tmp / f"m{n}-1.txt", n, 1)
    out["permanence list, 17 a line"] = perm_mod.write_list(tmp / f"m{n}-17.txt", n, 17)
    return out


def _rows_memory(mod, quick: bool, rounds: int, tmp: Path, say) -> list[dict]:
    perm = importlib.import_module("bench_permanence")
    env = _env(tmp)
    n = 50_000 if quick else 10_000_000
    peaks: dict = {}
    for m in (n // 10, n):
        for shape, path in _shapes(tmp, m, perm).items():
            w, c, pk = run(RK + ["certify", path, "--seed", "1", "--resamples", "999", "--no-plots", "--out", tmp / "o"], env)
            peaks.setdefault(shape, {})[m] = (w, c, pk)
            say(f"   {shape}, {m:,} spins: {pk:.0f} MB, {c:.1f} CPU-s")
            path.unlink()
        shutil.rmtree(tmp / "o", ignore_errors=True)
    rows = []
    for shape, d in peaks.items():
        small, big = d[n // 10][2], d[n][2]
        # MB a spin; with --quick (5,000 and 50,000 spins) the fixed part dominates and the smaller run can peak higher
        slope = max(0.0, (big - small) / (n - n // 10))
        at_1e8 = big + slope * (100_000_000 - n)
        rows.append(dict(workload=f"certify {n / 1e6:g} M spins, {shape} (R = 999, no figures): peak memory", rngcert=f"{big:,.0f} MB "
                         f"({d[n][1]:.1f} CPU-s); {small:,.0f} MB at {n // 10:,}", numpy_floor="", pyarrow_floor="",
                         ratio=f"{slope * 2**20:.1f} bytes a spin; 10^8 spins: {at_1e8:,.0f} MB (extrapolated)", target="10^8 spins in <= 1.5 GB",
                         met="" if quick or small > big else "met (extrapolated)" if at_1e8 <= 1536 else "not met (extrapolated)"))
    return rows


# ------------------------------------------------------------------------------ main
def rows_of(group: str, quick: bool, rounds: int, tmp: Path, say=print) -> list[dict]:
    """The rows of one group: the module's ``perf_rows`` when it has one, else this script's version."""
    mod = module(group)
    if hasattr(mod, "perf_rows"):
        return mod.perf_rows(quick=quick, rounds=rounds, say=say)
    sub = tmp / group
    sub.mkdir(parents=True, exist_ok=True)
    return globals()[f"_rows_{group}"](mod, quick, rounds, sub, say)


def markdown(rows: list[dict]) -> str:
    out = [HEADER, "|---|---|---|---|---|---|---|"]
    for r in rows:
        met = r.get("met", "")
        out.append("| " + " | ".join([*(str(r.get(k, "")) for k in COLUMNS[:-1]), f"**{met}**" if met.startswith("not") else met]) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one round (checks that every row runs; <= 2 minutes)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds a row (default 3, 1 with --quick)")
    ap.add_argument("--only", default=",".join(GROUPS), help="comma-separated groups of " + ", ".join(GROUPS))
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    a = ap.parse_args()
    rounds = a.rounds or (1 if a.quick else 3)
    groups = [g.strip() for g in a.only.split(",") if g.strip()]
    for g in groups:
        if g not in GROUPS:
            raise SystemExit(f"unknown group {g!r} (one of {', '.join(GROUPS)})")

    def say(msg):
        print(msg, file=sys.stderr, flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="perf_table_"))
    t0, start, load0 = time.perf_counter(), time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), load()
    rows: list[dict] = []
    try:
        for g in groups:
            mod = module(g)
            say(f"== {g} ({mod.__name__}.py{'' if hasattr(mod, 'perf_rows') else ', measured here'}; {load()})")
            got = rows_of(g, a.quick, rounds, tmp, say)
            for r in got:
                r.setdefault("group", g)
            rows += got
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    end = time.strftime("%H:%M:%S UTC", time.gmtime())
    print(f"Measured {start} to {end} ({time.perf_counter() - t0:.0f} s{', --quick: small sizes, not the README figures' if a.quick else ''}), "
          f"{rounds} interleaved round(s) a row, best of each side; {load0} at the start, {load()} at the end. "
          f"`python benchmarks/perf_table.py{' --quick' if a.quick else ''}`.\n")
    print(markdown(rows))
    if a.json:
        Path(a.json).write_text(json.dumps({"start": start, "end": end, "load_start": load0, "load_end": load(), "quick": a.quick,
                                            "rounds": rounds, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
