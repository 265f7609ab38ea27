"""Benchmark and reference figures for the card side of rngcert (prints; not a pytest test).

Run:  python benchmarks/bench_shuffle.py [--shoes 100000]      # everything
      python benchmarks/bench_shuffle.py --targets [--quick]   # only the targets of issues 11 and 12

Figures printed:
* exact Bayer–Diaconis TV table (52 cards), H_52, the 10-shelf guessing figure, exact 8-deck
  baccarat probabilities;
* throughput of the packaged baccarat procedure (shuffle steps alone, and with the deal and
  pickup of 004 §2 3.4/3.6), eight-deck shoes per second on one core;
* wall time of shuffle_battery over N eight-deck shoes (target: 100,000 in under 30 s);
* steady-state tables (shuffle + deal + pickup per shoe of burn-in) and the trackers, eight-deck
  shoes per second on one core; both wall and CPU time are printed (a shared machine inflates
  wall time);
* the targets, in one table (``--targets`` prints only it): shoes/s/core of the shuffle steps
  (issue 12: >= 20,000) and of each tracker (>= 5,000), and the cost of ``rngcert shuffle
  certify baccarat-004`` per extra shoe beside the floor of benchmarks/bench_parallel.py
  (``Generator.permuted`` and a vectorised riffle + cut of 416 cards; issue 11: <= 5x), with
  the ratios, followed by what that per-shoe cost consists of (µs per extra shoe of each
  simulation and statistic of the certification).

Throughput is CPU time of this process on one core (OMP_NUM_THREADS=1), the best of a few
repeats; the certification runs as a subprocess and its CPU time (user + system) is read from
the children's resource usage, its wall time beside it.
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

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from numpy.random import PCG64, Generator  # noqa: E402

from rngcert.battery.shuffle import shuffle_results  # noqa: E402
from rngcert.equipment.cards import baccarat_exact, new_shoe, value_composition  # noqa: E402
from rngcert.equipment.procedure import load_procedure  # noqa: E402
from rngcert.simulate import procedure as SP  # noqa: E402
from rngcert.simulate import shufflers as S  # noqa: E402
from rngcert.stats import shuffle as SS  # noqa: E402


def best_of(fn, repeat=3):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return min(ts), out


def timed(fn):
    """(wall seconds, CPU seconds, result) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shoes", type=int, default=100_000)
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--log-shoes", type=int, default=10_000)
    ap.add_argument("--tracker-shoes", type=int, default=5_000)
    ap.add_argument("--only-trackers", action="store_true", help="run only the steady-state and tracker timings")
    ap.add_argument("--targets", action="store_true", help="run only the table of the targets of issues 11 and 12")
    ap.add_argument("--quick", action="store_true", help="smaller runs for --targets (a smoke run; noisier)")
    args = ap.parse_args()
    if args.only_trackers:
        bench_trackers(args.tracker_shoes)
        return
    if args.targets:
        bench_targets(quick=args.quick)
        return

    print("== reference values")
    print("TV after k GSR riffles, 52 cards:", " ".join(f"{r['tv']:.3f}" for r in SS.riffle_tv_table(52)))
    print(f"H_52 (uniform deck, expected correct guesses): {SS.guessing_law(52) @ np.arange(53):.6f}")
    x = np.tile(np.arange(52, dtype=np.int16), (20_000, 1))
    perm, _ = SS.card_permutation(x, S.shelf(x, Generator(PCG64(1)), shelves=10))
    g = SS.guess_count(perm)
    print(f"10-shelf, one pass, ordered 52-card deck: {g.mean():.3f} correct (sd of mean {g.std() / np.sqrt(g.size):.3f}, 20,000 decks)")
    print("8-deck baccarat exact (banker, player, tie):", " ".join(f"{p:.6f}" for p in baccarat_exact(value_composition(8, "baccarat"))))

    print("== packaged baccarat procedure, one core")
    proc = load_procedure("baccarat-004")
    rng = Generator(PCG64(2))
    n = args.chunk
    start = SP.deal_pickup(proc, SP.shuffle(proc, np.tile(new_shoe(8), (n, 1)), rng)).discards
    t, _ = best_of(lambda: SP.shuffle(proc, start, rng))
    print(f"shuffle steps only: {n} shoes in {t:.3f} s = {n / t:,.0f} shoes/s")
    t2, _ = best_of(lambda: SP.deal_pickup(proc, SP.shuffle(proc, start, rng)))
    print(f"shuffle + deal + pickup: {n} shoes in {t2:.3f} s = {n / t2:,.0f} shoes/s")
    for st in proc.steps:
        ts, _ = best_of(lambda st=st: SP.apply_step(st, start, rng))
        print(f"   step {st.op:12s} {ts:.3f} s")
    td, _ = best_of(lambda: SP.deal_pickup(proc, start))
    print(f"   deal+pickup    {td:.3f} s")

    print(f"== shuffle_battery over {args.shoes:,} eight-deck shoes (Fisher-Yates, serialised)")
    rng = Generator(PCG64(3))
    before = np.tile(new_shoe(8), (args.shoes, 1))
    after = S.fisher_yates(before, rng)
    t = time.perf_counter()
    res = shuffle_results(before, after, decks=8, entropy=int(rng.integers(2**31)), game="baccarat", usable=409)
    dt = time.perf_counter() - t
    print(f"battery: {dt:.2f} s")
    for r in res:
        print(f"   {r.name:24s} " + (f"p={r.pvalue:.4f} {r.method}" if r.applicable else f"n/a: {r.reason}"))
    t = time.perf_counter()
    res = shuffle_results(before, SP.shuffle(proc, before, rng) & S.CODE_MASK, decks=8, entropy=int(rng.integers(2**31)), game="baccarat", usable=409)
    print(f"battery on the baccarat procedure's shoes: {time.perf_counter() - t:.2f} s")
    for r in res:
        print(f"   {r.name:24s} " + (f"p={r.pvalue:.3g} stat={r.statistic:.6g}" if r.applicable else f"n/a: {r.reason}"))
    bench_log(args.log_shoes)
    bench_trackers(args.tracker_shoes)
    bench_targets(quick=args.quick)


def bench_trackers(n: int = 5000) -> None:
    from rngcert.stats import trackers as T
    from rngcert.stats.blackjack import Rules, first_deal_ev, house_edge, play_rounds

    print(f"== steady state and trackers, {n:,} eight-deck shoes (one core; wall / CPU)")
    for pid in ("baccarat-004", "blackjack-004"):
        proc = load_procedure(pid)
        w, c, tab = timed(lambda: SP.simulate_tables(proc, n, 1, burn_in=10))
        print(f"{pid}: steady state, 11 shuffles + 10 deals per table: {w:.2f} s / {c:.2f} s CPU = "
              f"{11 * n / c:,.0f} shuffled-and-dealt shoes/s (CPU)")
        tr = SP.simulate_tables(proc, 500, 2, burn_in=2, key=("train",))
        k = T.learn_kernel(tr.before, tr.after, lags=24)
        view = np.where(tab.before_unseen, -1, tab.before)
        if proc.game == "baccarat":
            T.baccarat_prefix_returns(8)
            w, c, _ = timed(lambda: T.baccarat_sequence_tracker(view, tab.after, k, decks=8, cut_position=proc.cut_position))
            print(f"   baccarat sequence tracker: {w:.2f} s / {c:.2f} s CPU = {n / c:,.0f} shoes/s (CPU)")
        else:
            rules = Rules.from_procedure(proc)
            ev = first_deal_ev(rules)
            house_edge(rules, strategy="table")
            w0, c0, rr = timed(lambda: play_rounds(tab.after, rules=rules, players=7, cut_position=proc.cut_position))
            w1, c1, _ = timed(lambda: T.blackjack_sequence_tracker(view, tab.after, rr["starts"], k, ev, decks=8, players=7))
            w2, c2, _ = timed(lambda: T.blackjack_zone_tracker(view, tab.after, rr["starts"], k, decks=8))
            w3, c3, _ = timed(lambda: T.hilo_counter(tab.after, rr["starts"], decks=8))
            tot = c0 + c1 + c2 + c3
            print(f"   rounds (7 seats, basic strategy) {c0:.2f} s, sequence tracker {c1:.2f} s, zone tracker {c2:.2f} s, "
                  f"Hi-Lo {c3:.2f} s CPU: {n / tot:,.0f} shoes/s for all three (CPU)")


def bench_log(n_shoes: int = 10_000) -> None:
    import tempfile
    from pathlib import Path

    from rngcert.collect.shoelog import read_shoe_log, write_shoe_log

    print(f"== shoe log round trip, {n_shoes:,} eight-deck shoes before+after ({2 * 416 * n_shoes:,} rows)")
    proc = load_procedure("baccarat-004")
    t = SP.simulate_tables(proc, n_shoes, 4, burn_in=1)
    before, after = t.before, t.after
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "log.csv"
        t = time.perf_counter()
        write_shoe_log(f, after, before=before, table="T1")
        tw = time.perf_counter() - t
        t = time.perf_counter()
        log = read_shoe_log(f, decks=8)
        tr = time.perf_counter() - t
        print(f"write {tw:.2f} s, read+validate {tr:.2f} s ({f.stat().st_size / 1e6:.0f} MB); "
              f"{log.n_shoes} shoes, {len(log.pair_ids)} pairs, {len(log.rejected)} rejected rows, {len(log.problems)} problems")


# ----------------------------------------------------------------------------- the targets
ROOT = Path(__file__).resolve().parents[1]
#: Issue 12: eight-deck shoes per second per core through the shuffle steps (steady state).
TARGET_STEPS = 20_000
#: Issue 12: shoes per second through each tracker.
TARGET_TRACKERS = 5_000
#: Issue 11: cost of `shuffle certify` per extra shoe, at most this multiple of the floor.
TARGET_CERTIFY = 5.0


def cpu_best(fn, repeat: int = 3) -> float:
    """Smallest CPU time (s) of ``repeat`` calls of ``fn`` (after one warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        c = time.process_time()
        fn()
        best = min(best, time.process_time() - c)
    return best


def _mark(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def _rate_row(name: str, shoes: int, cpu: float, target: float) -> None:
    rate = shoes / cpu
    print(f"  {name:<68} {rate:>10,.0f} shoes/s   target >= {target:>7,.0f}   {rate / target:5.2f}x  {_mark(rate >= target)}")


def certify_cost(n1: int, n2: int) -> dict:
    """CPU and wall seconds of `rngcert shuffle certify baccarat-004 --shoes n` at n1 and n2 tables."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), CI="1")
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench_shuffle_") as tmp:
        for n in (n1, n2):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "rngcert", "shuffle", "certify", "baccarat-004", "--shoes", str(n), "--seed", "1",
                                "--no-plots", "--out", str(Path(tmp) / f"rep-{n}")], capture_output=True, text=True, env=env)
            wall = time.perf_counter() - t
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode not in (0, 10, 11, 12):
                raise SystemExit(f"shuffle certify --shoes {n} failed with {p.returncode}: {p.stderr[-2000:]}")
            out[n] = {"wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)}
    return out


def certify_breakdown(n1: int, n2: int) -> list[tuple[str, float]]:
    """µs per extra shoe of each piece of the procedure certification, from in-process runs at n1 and n2 tables.

    The pieces are those of rngcert.pipeline.certify_shuffle.certify_procedure that grow with the
    tables: the simulation of the tables (burn-in of 10 shoes) and every statistic of the steady-state
    and first-shoe batteries. The trackers' training, the first-shoe remedies (at most 1,000 tables) and
    the report do not grow with the tables past 1,000.
    """
    from rngcert.battery import shuffle as BS
    from rngcert.battery.core import Context
    from rngcert.pipeline import certify_shuffle as CS
    from rngcert.seeding import root
    from rngcert.simulate.procedure import simulate_tables

    proc = load_procedure("baccarat-004")
    entropy = int(root(1).entropy)
    kernel = CS._kernel(proc, entropy, 200)
    costs: dict[int, dict[str, float]] = {}
    for n in (200, n1, n2):  # the first size warms up imports and caches
        t: dict[str, float] = {}
        c = time.process_time()
        tab = simulate_tables(proc, n, entropy, burn_in=10)
        t["simulate the tables (11 shuffles + 10 deals and pickups each)"] = time.process_time() - c
        for first in (False, True):
            label = "first shoe" if first else "steady state"
            d = CS._procedure_data(proc, tab, kernel, first=first, threshold=0.0, bj_rules=None)
            c = time.process_time()
            d.permutation
            t[f"{label}: card permutation"] = time.process_time() - c
            for spec in BS.SHUFFLE.members(d):
                if any(d.lacks(x) for x in spec.needs if not x.startswith("equipment:")):
                    continue
                c = time.process_time()
                spec.func(d, Context(np.random.default_rng(0), 1999, 0.01))
                t[f"{label}: {spec.name}"] = time.process_time() - c
        costs[n] = t
    return [(k, 1e6 * (costs[n2][k] - costs[n1][k]) / (n2 - n1)) for k in costs[n2]]


def bench_targets(quick: bool = False) -> None:
    """The targets of issues 11 and 12 in one table (see the module docstring)."""
    from bench_parallel import load, shuffle_floor  # noqa: E402 (the floor is defined once, there)

    from rngcert.stats import trackers as T
    from rngcert.stats.blackjack import Rules, first_deal_ev, house_edge, play_rounds

    steps_n, trk_n = (4000, 500) if quick else (20_000, 2000)
    print(f"\n== targets of issues 11 and 12 (CPU time, one core; {load()})")
    print("  shuffle steps (issue 12), eight-deck shoes from steady-state discards:")
    for pid in ("baccarat-004", "blackjack-004"):
        proc = load_procedure(pid)
        rng = Generator(PCG64(2))
        start = SP.deal_pickup(proc, SP.shuffle(proc, np.tile(new_shoe(8), (steps_n, 1)).astype(np.int16), rng)).discards
        _rate_row(f"{pid}: shuffle steps", steps_n, cpu_best(lambda: SP.shuffle(proc, start, rng)), TARGET_STEPS)
        _rate_row(f"{pid}: shuffle steps + deal + pickup", steps_n,
                  cpu_best(lambda: SP.deal_pickup(proc, SP.shuffle(proc, start, rng))), TARGET_STEPS)
        c = cpu_best(lambda: SP.simulate_tables(proc, trk_n, 1, burn_in=10), repeat=1)
        _rate_row(f"{pid}: steady state, 11 shuffles + 10 deals per table", 11 * trk_n, c, TARGET_STEPS)
    print(f"  trackers (issue 12), {trk_n:,} steady-state shoes:")
    for pid in ("baccarat-004", "blackjack-004"):
        proc = load_procedure(pid)
        tab = SP.simulate_tables(proc, trk_n, 1, burn_in=10)
        tr = SP.simulate_tables(proc, 500, 2, burn_in=2, key=("train",))
        k = T.learn_kernel(tr.before, tr.after, lags=24)
        view = np.where(tab.before_unseen, -1, tab.before)
        if proc.game == "baccarat":
            T.baccarat_prefix_returns(8)
            _rate_row("baccarat sequence tracker", trk_n,
                      cpu_best(lambda: T.baccarat_sequence_tracker(view, tab.after, k, decks=8, cut_position=proc.cut_position)),
                      TARGET_TRACKERS)
            continue
        rules = Rules.from_procedure(proc)
        ev = first_deal_ev(rules)
        house_edge(rules, strategy="table")
        rr = play_rounds(tab.after, rules=rules, players=7, cut_position=proc.cut_position)
        parts = {
            "blackjack rounds (7 seats, basic strategy; every tracker needs them)":
                cpu_best(lambda: play_rounds(tab.after, rules=rules, players=7, cut_position=proc.cut_position)),
            "blackjack sequence tracker":
                cpu_best(lambda: T.blackjack_sequence_tracker(view, tab.after, rr["starts"], k, ev, decks=8, players=7)),
            "blackjack zone tracker": cpu_best(lambda: T.blackjack_zone_tracker(view, tab.after, rr["starts"], k, decks=8)),
            "Hi-Lo counter": cpu_best(lambda: T.hilo_counter(tab.after, rr["starts"], decks=8)),
        }
        for name, c in parts.items():
            _rate_row(name, trk_n, c, TARGET_TRACKERS)
        _rate_row("blackjack: rounds + the three trackers", trk_n, sum(parts.values()), TARGET_TRACKERS)
    n1, n2 = (1000, 2000) if quick else (2000, 6000)  # from 1,000 tables on, the first-shoe remedies no longer grow
    print(f"  `rngcert shuffle certify baccarat-004` per extra shoe (issue 11), from --shoes {n1:,} and {n2:,}:")
    cost = certify_cost(n1, n2)
    p_ms, r_ms = shuffle_floor()
    for what in ("cpu", "wall"):
        per = 1e3 * (cost[n2][what] - cost[n1][what]) / (n2 - n1)
        print(f"    {what:>4}: {cost[n1][what]:7.1f} s and {cost[n2][what]:7.1f} s -> {per:7.3f} ms per extra shoe;"
              f" floor {p_ms:.4f} ms (permuted): {per / p_ms:6.0f}x, {r_ms:.4f} ms (riffle + cut): {per / r_ms:6.0f}x;"
              f" target <= {TARGET_CERTIFY:g}x: {_mark(per <= TARGET_CERTIFY * r_ms)}")
    b1, b2 = (300, 900) if quick else (2000, 4000)  # the guessing test plays at most 2,000 shoes
    rows = certify_breakdown(b1, b2)
    total = sum(v for _, v in rows)
    print(f"  what the per-shoe cost consists of (in process, CPU µs per extra shoe from {b1:,} and {b2:,} tables):")
    for name, us in sorted(rows, key=lambda r: -r[1]):
        if us >= 0.5:
            print(f"    {name:<70} {us:8.1f} µs  {100 * us / total:5.1f}%")
    print(f"    {'total':<70} {total:8.1f} µs = {total / (1e3 * r_ms):.0f}x the riffle + cut floor "
          f"({total / (1e3 * p_ms):.0f}x permuted); the simulation alone is {rows[0][1] / (1e3 * r_ms):.0f}x")


if __name__ == "__main__":
    main()
