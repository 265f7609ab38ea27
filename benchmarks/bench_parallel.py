"""Benchmark of the Dask execution layer (issue 11, item 3), and where items 1-2 stand.

    python benchmarks/bench_parallel.py             # everything (about 20-30 minutes on 2 busy cores)
    python benchmarks/bench_parallel.py --quick     # 10 tables x 200k spins, 20 streams: a smoke run
    python benchmarks/bench_parallel.py --huge      # also certify 100 M spins (needs about 11 GB free)
    python benchmarks/bench_parallel.py --ceiling   # section S alone: speed-up against the ceiling (about 4 x 60 s)
    python benchmarks/bench_parallel.py --ceiling --workloads audit,bits --rounds 3 --json out.json
    python benchmarks/bench_parallel.py --ceiling --workloads bits,certify --trees /work/main,.   # A/B of two checkouts, runs alternating

Prints, measured in this one run, each figure beside its serial run, floor or peer and the ratio:

A. Dask overhead: local-cluster start-up, and the per-task overhead of empty tasks.
B. 50 tables x 1 M spins: `audit --all` (each task reads its own table from the store) and a
   multi-table `certify`, serial (`--workers 1`) and on a 2-worker local cluster; speed-up
   (target >= 1.8x) and the per-task overhead seen in the real run. The serial run already uses
   every core for part of its work (DuckDB's and pyarrow's threads, the read threads), so each is
   also run pinned to one core (``taskset``): the speed-up from one core to both.
C. 100 bit streams of 10^6 bits: `bits --streams 100`, serial and on 2 workers (target >= 1.8x).
D. 1,000 tables x 10 M spins, extrapolated from the measured cost of one 10 M-spin audit task,
   for clusters of 2..256 worker cores.
S. Speed-up against the ceiling (issue 26 item 6), for `audit --all`, a multi-table `certify`,
   `shuffle certify` of a procedure (with and without its sensitivity grid) and `bits --streams m`:
   the default (a local pool of forked workers when the estimate says it pays), `--workers 1`, and `--workers 1` pinned to one core, interleaved in each
   round; the speed-up, the ceiling, the fraction of the ceiling reached (target >= 0.85), the
   per-item costs, the cluster's start, and an Amdahl extrapolation to 16 and 64 cores (see
   :func:`ceiling_rows`, the stable entry point that ``benchmarks/perf_table.py`` calls).
E. Items 1-2 of issue 11 (the lead's), for reference: `certify` at 10 k, 1 M, 10 M (and 100 M
   with --huge) spins and on the Wiesbaden t5 log beside a minimal numpy/pyarrow floor that
   parses the same file and counts pockets, 37x37 pairs and wheel distances; `shuffle certify`
   per extra shoe beside `Generator.permuted` and a vectorised riffle + cut.

Whole commands run as subprocesses (the console script, as a user runs it); wall time and the
peak resident memory of the largest process (GNU time's %M) are reported. The load average is
printed before each section: other engineers share the 2 cores, so the machine is rarely quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1")
# Commands run as installed: pip writes bytecode at install time, so a user's run loads .pyc files.
# This machine sets PYTHONDONTWRITEBYTECODE=1, which would recompile every rngcert module on every
# run (about 0.25 s of a small certify); the first run of section E writes the cache.
BYTECODE_NOTE = "bytecode cache on (PYTHONDONTWRITEBYTECODE %s here, unset for the commands)" % ("was set" if ENV.pop("PYTHONDONTWRITEBYTECODE", None) else "not set")
EXE = [sys.executable, "-m", "rngcert"]
#: Where the commands run: not a checkout (see :func:`run_cpu`), so PYTHONPATH decides which rngcert they run.
NEUTRAL_CWD = tempfile.gettempdir()


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.1f} / {b:.1f} / {c:.1f} on {os.cpu_count()} cores"


#: Prefix that runs a command on one core: the baseline of a speed-up "from one core to every core".
#: A serial run (``--workers 1``) is not one core: pyarrow's CSV reader, DuckDB and the read threads
#: already use every core for part of the work.
ONE_CORE = ["taskset", "-c", str(min(os.sched_getaffinity(0)))] if shutil.which("taskset") and hasattr(os, "sched_getaffinity") else None


def run(args, *, ok=(0, 10, 11, 12), prefix=()) -> tuple[float, float]:
    """(wall s, peak RSS MB of the largest process) of a command (``prefix``: e.g. :data:`ONE_CORE`)."""
    wall, peak, _ = run_cpu(args, ok=ok, prefix=prefix)
    return wall, peak


def run_cpu(args, *, ok=(0, 10, 11, 12), prefix=()) -> tuple[float, float, float]:
    """(wall s, peak RSS MB of the largest process, CPU s: user + system of the command and every
    process it waited for) of a command."""
    out = tempfile.NamedTemporaryFile(suffix=".time", delete=False)
    out.close()
    t = time.perf_counter()
    # cwd outside any checkout: `python -m rngcert` puts the working directory first on sys.path, before PYTHONPATH, so
    # launched from a checkout's root every --trees run would run that checkout's code (as they did until 2026-12-04)
    p = subprocess.run(["/usr/bin/time", "-o", out.name, "-f", "%M %U %S"] + list(prefix) + [str(a) for a in args], capture_output=True, text=True,
                       env=ENV, cwd=NEUTRAL_CWD)
    wall = time.perf_counter() - t
    try:
        m, u, sy = Path(out.name).read_text().strip().splitlines()[-1].split()
        peak, cpu = float(m) / 1024, float(u) + float(sy)
    except (ValueError, IndexError):
        peak = cpu = float("nan")
    os.unlink(out.name)
    if p.returncode not in ok:
        print(p.stdout[-3000:], p.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"command failed with {p.returncode}: {' '.join(map(str, args))}")
    return wall, peak, cpu


def ceiling(serial: float, one_core: float, cores: int = 2) -> str:
    """The most any parallel run of the same work can gain over the serial run on ``cores`` cores.

    The serial run pinned to one core (``taskset``) measures the work itself: no run on ``cores``
    cores finishes it in less than ``one_core / cores``. So the speed-up over the serial run is at
    most ``cores * serial / one_core``, below ``cores`` by as much as the serial run already gains
    from its own threads (pyarrow's parse and the reading threads, DuckDB's scan threads)."""
    return (f"the serial run gains {one_core / serial:.2f}x from its own threads, so on {cores} cores no run beats "
            f"{one_core / cores:.1f} s: the speed-up over the serial run is at most {cores * serial / one_core:.2f}x")


def lean_csv(path: Path, n: int, seed: int, *, table: str | None = None, tables: int = 1, ids: bool = True) -> int:
    """A lean export: [spin_id,] [table,] result; ``tables`` tables of n spins each, one after another."""
    labels = np.array([str(i) for i in range(37)], dtype=object)  # european: label == pocket number
    with open(path, "wb") as fh:
        for k in range(tables):
            x = np.random.default_rng(seed + k).integers(0, 37, n)
            cols = {}
            if ids:
                cols["spin_id"] = pa.array(np.arange(1, n + 1))
            if tables > 1 or table is not None:
                cols["table"] = pa.array(np.full(n, table or f"T{k:03d}", dtype=object))
            cols["result"] = pa.array(labels[x])
            pacsv.write_csv(pa.table(cols), fh, write_options=pacsv.WriteOptions(include_header=k == 0, quoting_style="none"))
    return path.stat().st_size


# ------------------------------------------------------------------------------------------ A
def _noop(x):
    return x


def overhead(n_tasks: int = 400) -> dict:
    from rngcert.pipeline.parallel import Plan, iter_items

    t0 = time.perf_counter()
    timings: dict = {}
    got = sum(1 for _ in iter_items(_noop, list(range(n_tasks)), plan=Plan(workers=2), timings=timings))
    total = time.perf_counter() - t0
    assert got == n_tasks
    return {"start_s": timings["start_s"], "per_task_ms": 1e3 * timings["run_s"] / n_tasks, "total_s": total, "n": n_tasks}


# ------------------------------------------------------------------------------------------ S
#: The definition printed with section S's table.
CEILING_DEFINITION = (
    "ceiling: pinned to one core (taskset), the serial run (--workers 1) measures its whole work W with every thread it "
    "starts (pyarrow, DuckDB, the read threads) on that core: T1 >= W. No run of the same work on c cores ends before "
    "W / c, so the speed-up of any parallel run over the serial run is at most c x T(serial) / T(serial, one core), "
    "and never more than c: ceiling = min(c, c x Tserial / Tone-core), c = the cores this process may use. "
    "fraction = speed-up / ceiling (target >= 0.85). Times are the best of the interleaved rounds.")

#: Why a parallel run gains nothing on a machine that other sessions load (printed with section S).
SHARE_NOTE = (
    "share: Linux schedules by autogroup here (kernel.sched_autogroup_enabled = %s): every session gets an equal share of the "
    "cores, whatever its number of threads, so while other sessions keep the cores busy a parallel run gets no more CPU than "
    "the serial run. 'cores the default got' = its CPU-s / wall; the ceiling at this share = min(ceiling, cores the default got / "
    "cores the serial run got): what the default could reach with no cost of its own; the rest of the loss is its extra CPU-s "
    "(cluster start, each worker's first imports, per-task messages)." % (
        Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() if Path("/proc/sys/kernel/sched_autogroup_enabled").exists() else "n/a"))

#: The workloads of section S and the functions of their top-level work items (nested calls,
#: such as a table's certify inside an audit item, are not counted again).
WORKLOADS = {
    "audit": ("_audit_item",),
    "certify": ("_table_item",),
    "shuffle": ("_batch_item", "_stage_item", "_battery_item", "_remedy_item"),
    "bits": ("_stream_item", "_law_item"),
    "shuffle-grid": ("_batch_item", "_stage_item", "_battery_item", "_remedy_item", "_sensitivity_point"),
    "shuffle-figures": ("_batch_item", "_stage_item", "_battery_item", "_remedy_item"),
    # the same commands at larger sizes (not in the default set): the 20 tables x 1 M spins for the
    # one-log certify, and 20,000 shoes (ten batches) with figures for shuffle certify
    "certify-large": ("_table_item",),
    "shuffle-large": ("_batch_item", "_stage_item", "_battery_item", "_remedy_item"),
}
#: The workloads run when --workloads is not given (the large ones only on request).
DEFAULT_WORKLOADS = ("audit", "certify", "shuffle", "bits", "shuffle-grid", "shuffle-figures")


def _workload(name: str, tmp: Path, quick: bool) -> dict:
    """Inputs and commands of one workload of section S: ``cmd(out)`` (without --workers), the
    one-item command (a warm-up run that also fills the caches), items and a label."""
    if name == "audit":
        k, n = (4, 100_000) if quick else (20, 250_000)
        db = tmp / "s-audit.duckdb"
        if not db.exists():
            files = []
            for i in range(k):
                f = tmp / f"s-a-{i:03d}.csv"
                lean_csv(f, n, 300 + i, table=f"T{i:03d}")
                files.append(f)
            run(EXE + ["ingest", *files, "--db", db])
            for f in files:
                f.unlink()
        base = ["audit", "--db", db, "--seed", "1", "--no-record"]
        return {"label": f"audit --all, {k} tables x {n:,} spins, figures", "items": k, "unit": "table",
                "cmd": lambda out: EXE + base + ["--all", "--out", out], "one": lambda out: EXE + base + ["--table", "T000", "--out", out]}
    if name in ("certify", "certify-large"):
        k, n = (4, 100_000) if quick else (20, 1_000_000) if name == "certify-large" else (20, 250_000)
        big, one = tmp / f"s-{name}.csv", tmp / f"s-{name}-1.csv"
        if not big.exists():
            lean_csv(big, n, 500, tables=k, ids=False)
            lean_csv(one, n, 500, tables=1, table="T000", ids=False)
        return {"label": f"certify of one {k}-table log ({k} x {n:,} spins), figures", "items": k, "unit": "table",
                "cmd": lambda out: EXE + ["certify", big, "--seed", "1", "--out", out], "one": lambda out: EXE + ["certify", one, "--seed", "1", "--out", out]}
    if name == "shuffle":
        # --no-sensitivity: the default's grid of 32 procedures x 400 tables (section S's shuffle-grid) would make
        # 3 runs of 35 CPU-s a round. Work items here: the trackers' training beside the batches of 2,000 simulated
        # tables, the steady-state and first-shoe batteries (two at once), the first shoe's remedies (a wave of one a worker)
        shoes = 4000 if quick else 6000
        base = ["shuffle", "certify", "baccarat-004", "--seed", "1", "--no-plots", "--no-sensitivity"]
        return {"label": f"shuffle certify baccarat-004 --shoes {shoes:,} --no-sensitivity", "items": shoes // 2000, "unit": "batch of 2,000 shoes",
                "cmd": lambda out: EXE + base + ["--shoes", shoes, "--out", out], "one": lambda out: EXE + base + ["--shoes", 2000, "--out", out]}
    if name in ("shuffle-figures", "shuffle-large"):
        # the same run with its figures, as a user runs it (the row above is without them): the heat map, rising
        # sequences and guessing figures of each section, drawn by the battery's work item
        shoes = 4000 if quick else 20000 if name == "shuffle-large" else 6000
        base = ["shuffle", "certify", "baccarat-004", "--seed", "1", "--no-sensitivity"]
        return {"label": f"shuffle certify baccarat-004 --shoes {shoes:,} --no-sensitivity, figures", "items": shoes // 2000,
                "unit": "batch of 2,000 shoes", "cmd": lambda out: EXE + base + ["--shoes", shoes, "--out", out],
                "one": lambda out: EXE + base + ["--shoes", 2000, "--out", out]}
    if name == "shuffle-grid":
        # the default's sensitivity grid (32 procedures, each trained, simulated and tested), its points
        # work items; at 100 tables a point (the least allowed) so that a serial run stays under a minute
        shoes, per_point = (200, 100) if quick else (500, 100)
        base = ["shuffle", "certify", "baccarat-004", "--seed", "1", "--no-plots", "--sensitivity", "--sensitivity-shoes", per_point]
        return {"label": f"shuffle certify baccarat-004 --shoes {shoes} --sensitivity-shoes {per_point} (grid of 32 points)", "items": 32,
                "unit": "grid point", "cmd": lambda out: EXE + base + ["--shoes", shoes, "--out", out],
                "one": lambda out: EXE + ["shuffle", "certify", "baccarat-004", "--seed", "1", "--no-plots", "--no-sensitivity", "--shoes", 200, "--out", out]}
    if name == "bits":
        m, n = (4, 200_000) if quick else (40, 1_000_000)
        base = ["bits", "--source", "pcg64", "--length", n, "--seed", "1", "--no-plots"]
        return {"label": f"bits --streams {m} --length {n:,}, exact laws on disk", "items": m, "unit": "stream",
                "cmd": lambda out: EXE + base + ["--streams", m, "--out", out],
                # two streams: one stream has no two-level analysis, so it would leave the exact laws uncomputed
                "one": lambda out: EXE + base + ["--streams", 2, "--out", out]}
    raise SystemExit(f"unknown workload {name!r} (one of {', '.join(WORKLOADS)})")


def _timed(args, env, prefix=(), funcs=()) -> dict:
    """A command's wall and CPU time, and the timings of its work items (``RNGCERT_TIMINGS``; only
    the calls of ``funcs`` made by the command's own process)."""
    global ENV
    tfile = Path(tempfile.mktemp(suffix=".timings.jsonl"))
    saved, ENV = ENV, dict(env, RNGCERT_TIMINGS=str(tfile))
    try:
        wall, peak, cpu = run_cpu(args, prefix=prefix)
    finally:
        ENV = saved
    recs = [json.loads(ln) for ln in tfile.read_text().splitlines()] if tfile.exists() else []
    tfile.unlink(missing_ok=True)
    recs = [r for r in recs if r.get("func") in funcs]
    main = max(recs, key=lambda r: r.get("items", 0)) if recs else {}
    pooled = [r for r in recs if "workers_cpu_s" in r]
    # (meanwhile_s: the command's own work while the workers ran the items, e.g. shuffle certify's stages beside its grid)
    return {"wall": wall, "cpu": cpu, "peak": peak, "items_s": sum(r.get("run_s", 0.0) - r.get("meanwhile_s", 0.0) for r in recs),
            # a local pool's own CPU: its workers' beyond their items (start, imports, messages) and the client's while they ran
            "pool_cpu_s": sum(r["workers_cpu_s"] - r["items_cpu_s"] + r.get("client_cpu_s", 0.0) for r in pooled) if pooled else float("nan"),
            "worker_imports": sorted({m for r in pooled for m in r.get("worker_imports", [])}),
            "worker_items_cpu_s": sum(r["items_cpu_s"] for r in pooled) if pooled else float("nan"),
            "threads_at_fork": main.get("os_threads_at_start"), "start_method": main.get("start_method"),
            "start_s": sum(r.get("start_s", 0.0) for r in recs), "items_cpu_s": sum(r.get("client_cpu_s", 0.0) for r in recs), "mode": main.get("mode", "no work items"),
            "workers": main.get("workers", 1), "n_items": main.get("items", 0)}


def _cluster_start_model() -> float:
    """The cluster start that rngcert's threshold assumes (used when the default ran serially)."""
    from rngcert.pipeline.parallel import CLUSTER_START_S

    return CLUSTER_START_S


def _tree_env(env: dict, tree: Path | None) -> dict:
    """``env`` with ``tree`` (a checkout of rngcert) first on PYTHONPATH: the commands then run that tree's code."""
    if tree is None:
        return env
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT]
    return dict(env, PYTHONPATH=os.pathsep.join([str(Path(tree).resolve())] + rest))


# long: one loop over workloads, rounds, trees and kinds of run (interleaved), then the row of each tree
def ceiling_rows(workloads=DEFAULT_WORKLOADS, *, quick: bool = False, rounds: int = 2, tmp: Path | None = None,
                 say=print, trees=(None,)) -> list[dict]:
    """Section S: for each workload, the default, ``--workers 1`` and ``--workers 1`` on one core,
    interleaved in each of ``rounds`` rounds; the best of each is compared.

    A stable entry point (``benchmarks/perf_table.py`` calls it). Returns one dict a workload:
    ``label, items, unit, cores, default, serial, one_core`` (each ``{wall, cpu, peak, items_s,
    start_s, mode, workers}`` of the best run), ``speedup, ceiling, fraction, per_item_s,
    serial_part_s, start_s, efficiency, extrapolated`` ({cores: seconds}), ``load``.
    ``trees``: checkouts of rngcert (None: this one) whose runs alternate within each round (an A/B
    in one invocation, under the same load); one row a workload and tree, its label ending in ``[tree]``."""
    from rngcert.pipeline.parallel import available_cores

    cores = available_cores()
    own = tmp is None
    tmp = Path(tmp or tempfile.mkdtemp(prefix="bench_ceiling_"))
    env = dict(ENV, RNGCERT_CACHE=str(tmp / "cache"))
    out = []
    tag = {t: "" if t is None else f" [{t}]" for t in trees}
    try:
        for name in workloads:
            w = _workload(name, tmp, quick)
            say(f"\n-- {w['label']} ({load()})")
            funcs = WORKLOADS[name]
            for tree in trees:
                one = _timed(w["one"](tmp / "o-warm"), _tree_env(env, tree), funcs=funcs)  # warm-up: bytecode, report template, verdict power, laws on disk
                shutil.rmtree(tmp / "o-warm", ignore_errors=True)
                say(f"   one {w['unit']} alone{tag[tree]} (two streams for bits; warm-up, caches filled): {one['wall']:.2f} s wall, {one['cpu']:.2f} CPU-s")
            runs: dict = {(t, k): [] for t in trees for k in ("default", "serial", "one_core")}
            for r in range(rounds):
                for tree in trees:
                    for kind, extra, prefix in (("default", [], ()), ("serial", ["--workers", "1"], ()), ("one_core", ["--workers", "1"], ONE_CORE or ())):
                        if kind == "one_core" and not ONE_CORE:
                            continue
                        got = _timed(w["cmd"](tmp / f"o-{kind}") + extra, _tree_env(env, tree), prefix, funcs)
                        shutil.rmtree(tmp / f"o-{kind}", ignore_errors=True)
                        runs[(tree, kind)].append(got)
                        pool = (f", items' CPU on the workers {got['worker_items_cpu_s']:.2f} s, pool's own CPU {got['pool_cpu_s']:.2f} s, workers imported {got['worker_imports'] or 'nothing'}, "
                                f"threads at the {got['start_method']} {got['threads_at_fork']}") if got["pool_cpu_s"] == got["pool_cpu_s"] else ""
                        say(f"   round {r + 1}{tag[tree]} {kind:<8}: {got['wall']:6.2f} s wall, {got['cpu']:6.2f} CPU-s, peak {got['peak']:5.0f} MB, "
                            f"items {got['items_s']:6.2f} s ({got['items_cpu_s']:.2f} CPU-s here), start {got['start_s']:.2f} s ({got['mode']}, {got['workers']} worker(s)){pool} [{load()}]")
            for tree in trees:
                out.append(_ceiling_row(name, dict(w, label=w["label"] + tag[tree]), {k: v for (t, k), v in runs.items() if t == tree}, one, cores, say))
    finally:
        if own:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _ceiling_row(name: str, w: dict, runs: dict, one: dict, cores: int, say=print) -> dict:
    """The row of one workload (and tree) of section S from its runs ({kind: [run, ...]})."""
    best = {k: min(v, key=lambda g: g["wall"]) for k, v in runs.items() if v}
    ts, td = best["serial"]["wall"], best["default"]["wall"]
    tp = best["one_core"]["wall"] if "one_core" in best else float("nan")
    ceil = min(cores, cores * ts / tp) if tp == tp else float(cores)
    speed = ts / td
    items = max(best["serial"]["n_items"], 1)
    per_item = best["serial"]["items_s"] / items
    serial_part = ts - best["serial"]["items_s"]
    start = best["default"]["start_s"]
    workers = best["default"]["workers"]
    par_items = best["default"]["items_s"]
    eff = (best["serial"]["items_s"] / workers) / par_items if workers > 1 and par_items > 0 else float("nan")
    row = dict(name=name, label=w["label"], items=w["items"], unit=w["unit"], cores=cores, one_item=one, **best,
               speedup=speed, ceiling=ceil, fraction=speed / ceil, per_item_s=per_item, serial_part_s=serial_part,
               start_s=start, efficiency=eff, load=load(), utc=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    row["extrapolated"] = extrapolate(row)
    say(f"   {w['label']}: speed-up {speed:.2f}x, ceiling {ceil:.2f}x, fraction {speed / ceil:.2f} (target >= 0.85: {'met' if speed / ceil >= 0.85 else 'NOT met'})")
    return row


def extrapolate(row: dict, cores=(2, 16, 64)) -> dict:
    """Amdahl's law from CPU seconds (which the other users' load does not stretch as it stretches wall time):
    the serial run's CPU outside its work items (its serial part) + the cluster start measured in the default run
    (:data:`rngcert.pipeline.parallel.CLUSTER_START_S` when the default ran serially) + max(the items' CPU / cores,
    one item's CPU). EXTRAPOLATED, not measured: it assumes every core free and ideal workers."""
    s = row["serial"]
    items_cpu = s["items_cpu_s"]
    n = max(s["n_items"], 1)
    start = row["start_s"] if row["start_s"] > 0 else _cluster_start_model()
    serial_cpu = max(s["cpu"] - items_cpu, 0.0)
    return {p: serial_cpu + start + max(items_cpu / min(p, n), items_cpu / n) for p in cores}


def perf_rows(quick: bool = False, rounds: int = 2, say=print) -> list[dict]:
    """Rows of ``benchmarks/perf_table.py`` (its stable entry point): section S, one row a workload
    (``--quick``: the bit streams alone, small: it checks that the row runs)."""
    rows = ceiling_rows(("bits",) if quick else DEFAULT_WORKLOADS, quick=quick, rounds=min(rounds, 2), say=say)
    print_ceiling(rows, say=say)  # (the per-item costs and the extrapolation to 16 and 64 cores that the README quotes)
    out = []
    for r in rows:
        d = r["default"]
        mode = f"{d['workers']} workers" if d["workers"] > 1 else "serial by the threshold"
        oc = f", one core {r['one_core']['wall']:.2f} s" if "one_core" in r else ""
        out.append(dict(
            workload=f"{r['label']}: default (a local pool when it pays) against --workers 1, {r['cores']} cores",
            rngcert=f"{d['wall']:.2f} s wall ({mode}), {d['cpu']:.2f} CPU-s",
            numpy_floor="", pyarrow_floor=f"--workers 1: {r['serial']['wall']:.2f} s{oc}",
            ratio=f"speed-up {r['speedup']:.2f}x of a ceiling of {r['ceiling']:.2f}x = {r['fraction']:.2f}",
            target=">= 0.85 of the ceiling", met="" if quick else "met" if r["fraction"] >= 0.85 else "not met"))
    return out


def print_ceiling(rows: list[dict], say=print) -> None:
    """Section S's tables (speed-up against the ceiling; per-item costs and the extrapolation)."""
    say("\n" + CEILING_DEFINITION)
    say("\n" + SHARE_NOTE)
    say("\n| workload | default | --workers 1 | --workers 1, one core | speed-up | ceiling | fraction | target >= 0.85 "
        "| cores the default got / the serial run got | ceiling at this share | fraction of it | CPU-s default / serial |")
    say("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        d, s = r["default"], r["serial"]
        mode = f"{d['workers']} workers" if d["workers"] > 1 else "serial (threshold)"
        oc = f"{r['one_core']['wall']:.2f} s" if "one_core" in r else "n/a"
        got_d, got_s = d["cpu"] / d["wall"], s["cpu"] / s["wall"]
        capped = min(r["ceiling"], got_d / got_s)
        say(f"| {r['label']} | {d['wall']:.2f} s ({mode}) | {s['wall']:.2f} s | {oc} | {r['speedup']:.2f}x | "
            f"{r['ceiling']:.2f}x | {r['fraction']:.2f} | {'met' if r['fraction'] >= 0.85 else '**not met**'} | "
            f"{got_d:.2f} / {got_s:.2f} | {capped:.2f}x | {r['speedup'] / capped:.2f} | {d['cpu']:.2f} / {s['cpu']:.2f} |")
    say("\nper-item costs from the serial run (CPU seconds of its work items / items; the rest of its CPU is its serial part), "
        "the local pool's start (wall, the default run: the imports it makes before forking included), the 2-worker efficiency (items' serial wall / 2 / their wall on "
        "the cluster, at this load), and EXTRAPOLATED (not measured) times on 2, 16 and 64 free cores: serial part + cluster start + "
        "max(items / cores, one item), all from CPU seconds (Amdahl; ideal workers), with the speed-up over the serial run's CPU")
    say("\n| workload | per item (CPU) | serial part (CPU) | cluster start | 2-worker efficiency | 2 cores | 16 cores | 64 cores |")
    say("|---|---|---|---|---|---|---|---|")
    for r in rows:
        x = r["extrapolated"]
        s = r["serial"]
        n = max(s["n_items"], 1)
        eff = f"{r['efficiency']:.2f}" if r["efficiency"] == r["efficiency"] else "n/a (serial)"
        say(f"| {r['label']} | {s['items_cpu_s'] / n:.3f} s a {r['unit']} | {max(s['cpu'] - s['items_cpu_s'], 0):.2f} s | {r['start_s']:.2f} s | {eff} | "
            + " | ".join(f"{x[p]:.1f} s ({s['cpu'] / x[p]:.1f}x)" for p in (2, 16, 64)) + " |")


# ------------------------------------------------------------------------------------------ E floors
FLOOR = r"""
import sys, time, numpy as np, pyarrow as pa, pyarrow.csv as pacsv, pyarrow.compute as pc
t = time.perf_counter()
path, fmt = sys.argv[1], sys.argv[2]
if fmt == "csv":
    col = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(include_columns=["result"], column_types={"result": pa.string()})).column("result")
else:  # a permanence list: numbers separated by commas, semicolons or whitespace
    import re
    col = pa.array(re.split(rb"[,;\s]+", open(path, "rb").read().strip()))
    col = pc.cast(col, pa.string())
enc = pc.dictionary_encode(col)
enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
lut = np.array([int(s) if s.isdigit() else -1 for s in enc.dictionary.to_pylist()])
x = lut[enc.indices.to_numpy()]
x = x[x >= 0]
order = np.array([0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10, 5, 24, 16, 33, 1, 20, 14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26])
pos = np.empty(37, dtype=np.int64); pos[order] = np.arange(37)
w = pos[x]
pockets = np.bincount(x, minlength=37)
pairs = np.bincount(x[:-1] * 37 + x[1:], minlength=37 * 37)
dist = np.bincount((w[1:] - w[:-1]) % 37, minlength=37)
print(len(x), pockets.sum(), pairs.sum(), dist.sum(), time.perf_counter() - t)
"""


def floor(path: Path, fmt: str = "csv") -> tuple[float, float]:
    return run([sys.executable, "-c", FLOOR, path, fmt], ok=(0,))


def shuffle_floor(n_shoes: int = 20_000, cards: int = 416, repeat: int = 3) -> tuple[float, float]:
    """ms per shoe: Generator.permuted, and a vectorised GSR-style riffle (random bits, stable
    sort) followed by a cut (rotation), on (n_shoes, 416) int16 shoes."""
    from rngcert.seeding import stream

    rng = stream(1, "bench", "floor")
    shoes = np.tile(np.arange(cards, dtype=np.int16), (n_shoes, 1))
    best_p = best_r = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        rng.permuted(shoes, axis=1)
        best_p = min(best_p, time.perf_counter() - t)
        t = time.perf_counter()
        bits = rng.integers(0, 2, size=shoes.shape, dtype=np.int8)
        order = np.argsort(bits, axis=1, kind="stable")
        riffled = np.take_along_axis(shoes, order, axis=1)
        cut = rng.integers(cards // 4, 3 * cards // 4, size=n_shoes)
        idx = (np.arange(cards)[None, :] + cut[:, None]) % cards
        np.take_along_axis(riffled, idx, axis=1)
        best_r = min(best_r, time.perf_counter() - t)
    return 1e3 * best_p / n_shoes, 1e3 * best_r / n_shoes


# ------------------------------------------------------------------------------------------ main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--huge", action="store_true", help="also certify 100 M spins (about 11 GB of memory)")
    ap.add_argument("--repeat", type=int, default=None, help="section E: runs of each certify and its floor, alternating; the best of each is compared (default 3, 1 with --quick)")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip, e.g. E")
    ap.add_argument("--ceiling", action="store_true", help="section S alone: speed-up against the ceiling (issue 26 item 6)")
    ap.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS), help="section S: comma-separated, of " + ", ".join(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=2, help="section S: interleaved rounds (the best of each kind of run is compared)")
    ap.add_argument("--json", default=None, help="section S: also write its rows to this JSON file")
    ap.add_argument("--trees", default=None, help="section S: comma-separated checkouts of rngcert whose runs alternate in each round "
                    "(an A/B under the same load, e.g. --trees /work/main,.); default: this one")
    ap.add_argument("--tmp", default=None, help="scratch folder (default: a new temporary folder, removed at the end)")
    a = ap.parse_args()
    tmp = Path(a.tmp or tempfile.mkdtemp(prefix="bench_parallel_"))
    tmp.mkdir(parents=True, exist_ok=True)
    skip = set(a.skip.upper().split(",")) if a.skip else set()
    a.repeat = a.repeat or (1 if a.quick else 3)
    print(f"rngcert Dask benchmark · python {sys.version.split()[0]} · numpy {np.__version__} · {load()} · scratch {tmp} · {BYTECODE_NOTE}")
    try:
        if a.ceiling:
            section_s(tmp, a.quick, a.workloads.split(","), a.rounds, a.json, trees=a.trees.split(",") if a.trees else (None,))
            return
        if "A" not in skip:
            section_a()
        if "B" not in skip:
            section_b(tmp, a.quick)
        if "C" not in skip:
            section_c(tmp, a.quick)
        if "D" not in skip:
            section_d(tmp, a.quick)
        if "E" not in skip:
            section_e(tmp, a.quick, a.huge, a.repeat)
        if "S" not in skip:
            section_s(tmp, a.quick, a.workloads.split(","), a.rounds, a.json)
    finally:
        if a.tmp is None:
            shutil.rmtree(tmp, ignore_errors=True)


def section_s(tmp: Path, quick: bool, workloads, rounds: int, json_path=None, trees=(None,)):
    print(f"\n== S. speed-up against the ceiling, {rounds} interleaved round(s) ({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {load()})")
    rows = ceiling_rows(workloads, quick=quick, rounds=rounds, tmp=tmp, trees=trees)
    print(f"\n({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {load()})")
    print_ceiling(rows)
    if json_path:
        Path(json_path).write_text(json.dumps(rows, indent=1, default=str))


def section_a():
    print(f"\n== A. Dask overhead ({load()})")
    o = overhead()
    print(f"local cluster of 2 worker processes: start-up {o['start_s']:.2f} s; {o['n']} empty tasks: {o['per_task_ms']:.2f} ms per task "
          f"(scatter, schedule, gather); {o['total_s']:.2f} s in all")


def section_b(tmp: Path, quick: bool):
    n_tables, n = (10, 200_000) if quick else (50, 1_000_000)
    print(f"\n== B. {n_tables} tables x {n:,} spins ({load()})")
    db = tmp / "b.duckdb"
    files = []
    t = time.perf_counter()
    for k in range(n_tables):
        f = tmp / f"b-{k:03d}.csv"
        lean_csv(f, n, 100 + k, table=f"T{k:03d}")
        files.append(f)
    print(f"generated {n_tables} lean logs (spin_id, table, result) in {time.perf_counter() - t:.0f} s")
    wall, peak = run(EXE + ["ingest", *files, "--db", db])
    print(f"ingest of the {n_tables} logs ({n_tables * n:,} spins): {wall:.1f} s, peak {peak:.0f} MB")
    for f in files:
        f.unlink()
    rows = {}
    for label, extra in (("serial, --workers 1", ["--workers", "1"]), ("Dask, --workers 2", ["--workers", "2"])):
        wall, peak, cpu = run_cpu(EXE + ["audit", "--all", "--db", db, "--seed", "1", "--no-record", "--out", tmp / f"rep-{extra[1]}", *extra])
        rows[extra[1]] = (wall, peak, cpu)
        print(f"audit --all, figures included, {label}: {wall:.1f} s wall, {cpu:.1f} CPU-s, peak {peak:.0f} MB (largest process) [{load()}]")
    (ws, _, _), (wd, _, _) = rows["1"], rows["2"]
    per_task = (2 * wd - ws) / n_tables
    print(f"audit --all speed-up on 2 workers: {ws / wd:.2f}x (target >= 1.8x); per table {ws / n_tables:.2f} s serial; "
          f"overhead per task in this run (2 x Dask wall - serial wall) / tables = {per_task:+.2f} s (cluster start and worker imports included)")
    if ONE_CORE:
        w1, _ = run(EXE + ["audit", "--all", "--db", db, "--seed", "1", "--no-record", "--out", tmp / "rep-c1", "--workers", "1"], prefix=ONE_CORE)
        shutil.rmtree(tmp / "rep-c1", ignore_errors=True)
        print(f"audit --all, serial on one core ({' '.join(ONE_CORE)}): {w1:.1f} s wall, {w1 / ws:.2f}x the serial run "
              f"(the serial run's DuckDB reads use every core); 2 workers against one core: {w1 / wd:.2f}x [{load()}]")
        print(f"audit --all: {ceiling(ws, w1)}")
    # the work items alone, in this (warm) process: what the execution layer adds or saves
    from rngcert.pipeline.audit import _audit_item

    # (outdir False: the items compute and return; no report is written, as on a remote cluster)
    items = [(str(db), f"T{k:03d}", {"since": None, "until": None, "last": None}, {"seed": 1, "figures": True}, 60, False) for k in range(n_tables)]
    ph = items_phase(_audit_item, items, ("rngcert.pipeline.certify_wheel", "rngcert.report.plots"))
    print(f"audit work items alone (read + battery + figures, warm process): serial {ph['1']:.1f} s, 2 workers {ph['2']:.1f} s "
          f"(start-up {ph['start']:.2f} s included) → {ph['1'] / ph['2']:.2f}x [{load()}]")
    same = _same_reports(tmp / "rep-1", tmp / "rep-2")
    print(f"audit reports serial vs Dask identical (minus timestamps, command, paths): {same}")
    shutil.rmtree(tmp / "rep-1", ignore_errors=True)
    shutil.rmtree(tmp / "rep-2", ignore_errors=True)
    # one multi-table log, certified
    big = tmp / "b-all.csv"
    size = lean_csv(big, n, 100, tables=n_tables, ids=False)
    print(f"one log of {n_tables} tables ({size / 1e6:.0f} MB: table, result)")
    crow = {}
    for w in ("1", "2"):
        wall, peak, cpu = run_cpu(EXE + ["certify", big, "--seed", "1", "--no-plots", "--out", tmp / f"c-{w}", "--workers", w])
        crow[w] = wall
        print(f"certify {n_tables} tables, --workers {w}, no figures: {wall:.1f} s, {cpu:.1f} CPU-s, peak {peak:.0f} MB [{load()}]")

    print(f"multi-table certify speed-up on 2 workers: {crow['1'] / crow['2']:.2f}x (the log is read on the client first, "
          f"on its read threads: item 1 is the lead's)")
    if ONE_CORE:
        w1, _ = run(EXE + ["certify", big, "--seed", "1", "--no-plots", "--out", tmp / "c-c1", "--workers", "1"], prefix=ONE_CORE)
        shutil.rmtree(tmp / "c-c1", ignore_errors=True)
        print(f"certify {n_tables} tables, serial on one core: {w1:.1f} s, {w1 / crow['1']:.2f}x the serial run (whose read uses every core); "
              f"2 workers against one core: {w1 / crow['2']:.2f}x [{load()}]")
        print(f"multi-table certify: {ceiling(crow['1'], w1)}")
    big.unlink()
    shutil.rmtree(tmp / "c-1", ignore_errors=True)
    shutil.rmtree(tmp / "c-2", ignore_errors=True)


def items_phase(func, items, preload) -> dict:
    """Wall time of the work items alone, serial and on a fresh 2-worker local cluster, in this
    process (imports done): the execution layer's own speed-up, without the command's fixed cost."""
    from rngcert.pipeline.parallel import Plan, map_items

    map_items(func, items[:1], plan=Plan(workers=1))  # warm-up: first-call costs are not the layer's
    out = {}
    for w in (1, 2):
        tm: dict = {}
        t = time.perf_counter()
        map_items(func, items, plan=Plan(workers=w), timings=tm, preload=preload)
        out[str(w)] = time.perf_counter() - t
        out["start"] = tm.get("start_s", 0.0)
    return out


def _same_reports(a: Path, b: Path) -> bool:
    def load_all(d):
        out = {}
        for p in Path(d).glob("*/report.json"):
            r = json.loads(p.read_text())
            # the integrity block hashes the report with its timestamp and command line: it differs with them
            for k in ("generated_utc", "command", "rejects_file", "integrity"):
                r.pop(k, None)
            out[r["tables"][0]["table"]] = r
        return out

    x, y = load_all(a), load_all(b)
    if x != y:
        diff = sorted({k for t in set(x) | set(y) for k in set(x.get(t, {})) | set(y.get(t, {})) if x.get(t, {}).get(k) != y.get(t, {}).get(k)})
        print(f"   (fields that differ: {diff})")
    return bool(x) and x == y


def section_c(tmp: Path, quick: bool):
    m, n = (20, 1_000_000) if quick else (100, 1_000_000)
    print(f"\n== C. {m} bit streams of {n:,} bits ({load()})")
    rows = {}
    for w in ("1", "2"):
        wall, peak, cpu = run_cpu(EXE + ["bits", "--source", "pcg64", "--streams", m, "--length", n, "--seed", "1", "--no-plots", "--out", tmp / f"bits-{w}", "--workers", w])
        rows[w] = wall
        print(f"bits --streams {m}, --workers {w}: {wall:.1f} s, {cpu:.1f} CPU-s, peak {peak:.0f} MB [{load()}]")

    print(f"bits speed-up on 2 workers: {rows['1'] / rows['2']:.2f}x (target >= 1.8x); per stream {rows['1'] / m:.3f} s serial; "
          f"overhead per task (2 x Dask wall - serial wall) / streams = {(2 * rows['2'] - rows['1']) / m * 1e3:+.0f} ms")
    if ONE_CORE:
        w1, _ = run(EXE + ["bits", "--source", "pcg64", "--streams", m, "--length", n, "--seed", "1", "--no-plots", "--out", tmp / "bits-c1", "--workers", "1"],
                    prefix=ONE_CORE)
        shutil.rmtree(tmp / "bits-c1", ignore_errors=True)
        print(f"bits --streams {m}, serial on one core: {w1:.1f} s, {w1 / rows['1']:.2f}x the serial run; 2 workers against one core: "
              f"{w1 / rows['2']:.2f}x [{load()}]")
        print(f"bits: {ceiling(rows['1'], w1)}")
    from rngcert.pipeline.certify_bits import GeneratedStreams, _stream_item, _stream_items

    gen = GeneratedStreams("pcg64", 1, m, n)
    ph = items_phase(_stream_item, _stream_items(gen, "reference", packed=False), ())
    print(f"SP 800-22 work items alone (warm process): serial {ph['1']:.1f} s, 2 workers {ph['2']:.1f} s "
          f"(start-up {ph['start']:.2f} s included) → {ph['1'] / ph['2']:.2f}x [{load()}]")
    a = json.loads(next((tmp / "bits-1").glob("*/report.json")).read_text())
    b = json.loads(next((tmp / "bits-2").glob("*/report.json")).read_text())
    for r in (a, b):
        for k in ("generated_utc", "command", "rejects_file", "integrity"):  # the integrity hash covers the first two
            r.pop(k, None)
    print(f"bits reports serial vs Dask identical: {a == b}" + ("" if a == b else f" (fields that differ: {sorted(k for k in a if a[k] != b.get(k))})"))


def section_d(tmp: Path, quick: bool):
    n = 1_000_000 if quick else 10_000_000
    print(f"\n== D. one {n:,}-spin table as a work item, and 1,000 tables x 10 M spins extrapolated ({load()})")
    f = tmp / "d.csv"
    lean_csv(f, n, 7, table="BIG")
    db = tmp / "d.duckdb"
    wall_i, peak_i = run(EXE + ["ingest", f, "--db", db])
    f.unlink()
    wall, peak = run(EXE + ["audit", "--table", "BIG", "--db", db, "--seed", "1", "--no-record", "--out", tmp / "rep-d"])
    from rngcert.pipeline.audit import audit_table

    t = time.perf_counter()
    audit_table(db, "BIG", seed=1, record=False, outdir=tmp / "rep-d2", wait=60)
    task = time.perf_counter() - t  # the work item in a warm process: what a worker spends per table
    print(f"ingest {n:,} spins: {wall_i:.1f} s; audit of the table as a command {wall:.1f} s (peak {peak:.0f} MB); "
          f"as a work item in a warm worker {task:.1f} s")
    scale = 10_000_000 / n
    per = task * scale
    ov = overhead(200)
    print(f"1,000 tables x 10 M spins (= {1000 * 10:,} M spins), from {per:.1f} s per table"
          + (f" (measured at {n / 1e6:g} M, scaled x{scale:g})" if scale != 1 else "")
          + f", {ov['per_task_ms']:.1f} ms per-task overhead and {ov['start_s']:.1f} s start-up; memory per worker ≈ {peak:.0f} MB:")
    for w in (2, 16, 64, 256):
        t_all = ov["start_s"] + 1000 * (per + ov["per_task_ms"] / 1e3) / w
        print(f"  {w:>4} worker cores: {t_all / 3600:6.2f} h ({t_all / 60:,.0f} min)")


def section_e(tmp: Path, quick: bool, huge: bool, repeat: int = 3):
    global ENV
    print(f"\n== E. items 1-2 of issue 11 (the lead's), beside the floor ({load()})")
    sizes = [10_000, 1_000_000] + ([] if quick else [10_000_000]) + ([100_000_000] if huge else [])
    hdr = f"{'workload':<44} {'rngcert':>22} {'floor':>22} {'ratio':>12}"
    print(hdr)
    rows = []
    for n in sizes:
        f = tmp / f"e-{n}.csv"
        cmd = EXE + ["simulate", "wheel", "--spins", n, "--seed", "1", "--dealers", "4", "--release", "--void-rate", "0.01", "--out", f]
        subprocess.run([str(x) for x in cmd], check=True, capture_output=True, env=ENV, cwd=NEUTRAL_CWD)
        rows.append((f"certify {n:,} spins (9 columns, figures)", f, "csv"))
    t5 = SHARED / "roulette-wiesbaden" / "spielbank-wiesbaden_t5_190424.txt"
    if t5.is_file():
        rows.append(("certify Wiesbaden t5 (permanence list)", t5, "permanence"))
    # As a user's next log: bytecode and the compiled report template cached (a warm-up certify of
    # another sample size writes both), the verdict's power not (a fresh cache: each size is new).
    saved, ENV = ENV, dict(ENV, RNGCERT_CACHE=str(tmp / "cache-e"))
    warm = tmp / "e-warm.csv"
    lean_csv(warm, 5_000, 99)
    run(EXE + ["certify", warm, "--seed", "1", "--out", tmp / "rep-e"])
    shutil.rmtree(tmp / "rep-e", ignore_errors=True)
    for name, f, fmt in rows:
        # rngcert and its floor alternate, `repeat` times each: the best of each is compared (timeit's
        # rule: on a shared machine the minimum is the cost, the rest is other people's load), and the
        # range of the ratios of the pairs is printed beside it
        got = []
        for _ in range(repeat):
            shutil.rmtree(tmp / "cache-e" / "verdict-power", ignore_errors=True)  # each pair as the first report of its size
            wall, peak = run(EXE + ["certify", f, "--seed", "1", "--out", tmp / "rep-e"])
            shutil.rmtree(tmp / "rep-e", ignore_errors=True)
            fw, fp = floor(f, fmt)
            got.append((wall, peak, fw, fp))
        wall, peak = min(g[0] for g in got), max(g[1] for g in got)
        fw, fp = min(g[2] for g in got), max(g[3] for g in got)
        pairs = [g[0] / g[2] for g in got]
        spread = f" (pairs {min(pairs):.1f}-{max(pairs):.1f}x)" if repeat > 1 else ""
        print(f"{name:<44} {wall:>8.2f} s {peak:>8.0f} MB {fw:>8.2f} s {fp:>8.0f} MB {wall / fw:>6.2f}x {peak / fp:>4.1f}x{spread}")
        if f.parent == tmp:
            f.unlink()
    ENV = saved
    # shuffle certify: per extra shoe, from two shoe counts
    n1, n2 = (1000, 3000) if quick else (2000, 12000)
    w1, _ = run(EXE + ["shuffle", "certify", "baccarat-004", "--shoes", n1, "--seed", "1", "--no-plots", "--out", tmp / "rep-s"])
    w2, _ = run(EXE + ["shuffle", "certify", "baccarat-004", "--shoes", n2, "--seed", "1", "--no-plots", "--out", tmp / "rep-s"])
    per = 1e3 * (w2 - w1) / (n2 - n1)
    p_ms, r_ms = shuffle_floor()
    print(f"{'shuffle certify baccarat-004, per extra shoe':<44} {per:>10.3f} ms {'':>10} {p_ms:>6.3f} ms permuted {per / p_ms:>5.0f}x")
    print(f"{'':<44} {'':>21} {r_ms:>7.3f} ms riffle+cut {per / r_ms:>4.0f}x")
    shutil.rmtree(tmp / "rep-s", ignore_errors=True)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
