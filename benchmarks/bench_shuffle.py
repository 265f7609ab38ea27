"""Benchmark and reference figures for the card side of rngcert (prints; not a pytest test).

Run:  python benchmarks/bench_shuffle.py [--shoes 100000]

Figures printed:
* exact Bayer–Diaconis TV table (52 cards), H_52, the 10-shelf guessing figure, exact 8-deck
  baccarat probabilities;
* throughput of the packaged baccarat procedure (shuffle steps alone, and with the deal and
  pickup of 004 §2 3.4/3.6), eight-deck shoes per second on one core (target >= 20,000);
* wall time of shuffle_battery over N eight-deck shoes (target: 100,000 in under 30 s);
* steady-state tables (shuffle + deal + pickup per shoe of burn-in) and the trackers, eight-deck
  shoes per second on one core (targets: >= 20,000/s for the shuffle steps, >= 5,000/s for the
  trackers); both wall and CPU time are printed (a shared machine inflates wall time).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from numpy.random import PCG64, Generator  # noqa: E402

from rngcert.battery.shuffle import shuffle_results
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
    args = ap.parse_args()
    if args.only_trackers:
        bench_trackers(args.tracker_shoes)
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


if __name__ == "__main__":
    main()
