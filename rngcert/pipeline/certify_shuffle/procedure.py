"""Certification of a shuffle procedure by simulation (:func:`certify_procedure`): steady state, first
shoe from new decks, remedies for it, trackers, sensitivity grid.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

from rngcert.battery.core import worst
from rngcert.battery.plain import add_shoe_findings
from rngcert.battery.shuffle import ShoeData, is_tracker
from rngcert.equipment import games as G
from rngcert.equipment.procedure import Procedure, load_procedure
from rngcert.pipeline.certify_shuffle._common import (
    ShuffleCertification,
    _figures,
    _has_trackers,
    _header,
    _house_edges,
    _max_edge,
    _rules,
    _run,
    _section,
    keep_shuffle_heap,
)
from rngcert.pipeline.certify_shuffle.training import TRAIN_TABLES, _kernel
from rngcert.pipeline.options import ShuffleOptions
from rngcert.pipeline.parallel import CLUSTER_START_S, PARALLEL_EFFICIENCY, Plan, iter_items, map_items, pinned
from rngcert.pipeline.shoe_power import default_min_edge, power_gate
from rngcert.report import plots
from rngcert.seeding import root
from rngcert.simulate.fit import wash_parameters
from rngcert.simulate.procedure import DEFAULT_BURN_IN, SIMULATION_STREAM, concat_tables, simulate_batch, simulate_tables, table_batches

# ----------------------------------------------------------------------------- procedures
#: Serial CPU seconds of a shuffle work item, per simulated table (a batch), per training table (the trackers' kernel)
#: and per shoe tested (a battery, the trackers' play most of it), measured on baccarat-004 on the 2-core machine
#: (2026-12-03, loaded: 0.12-0.23 ms a table, 0.12 s for 500 training tables, 0.45 ms a shoe at 500-2,000 shoes). With
#: the default plan the items run on a local pool only where these say it pays (:func:`~rngcert.pipeline.parallel.parallel_pays`).
SIM_TABLE_S = 0.2e-3
TRAIN_TABLE_S = 0.25e-3
BATTERY_SHOE_S = 0.5e-3


def _remedy_cost(tables: int) -> float:
    """Estimated serial seconds of one remedy item (training, ``tables`` simulated tables, the battery)."""
    return TRAIN_TABLE_S * min(TRAIN_TABLES, tables) + (SIM_TABLE_S + BATTERY_SHOE_S) * tables

def _procedure_data(proc: Procedure, tab, kernel, *, first: bool, threshold: float, bj_rules) -> ShoeData:
    if first:
        before, after, rot, view = tab.first_before, tab.first_after, tab.first_after_rotated, tab.first_before
    else:
        before, after, rot = tab.before, tab.after, tab.after_rotated
        view = np.where(tab.before_unseen, -1, tab.before)
    game = None if proc.game == "none" else proc.game
    turns = any(s.op == "wash" and s.full_params()["rotate"] > 0 for s in proc.steps)  # orientation is modelled only then
    return ShoeData(before, after, proc.decks, game, proc.dealer_rule, proc.cut_position if game else None, None,
                    guess_shoes=min(2000, before.shape[0]), before_view=view, kernel=kernel, threshold=threshold, bj_rules=bj_rules,
                    players=int(proc.deal.get("players", 7)), rotated=rot.astype(np.int8) if turns else None)


def _batch_item(item):
    """One batch of simulated tables (a Dask work item): ``(procedure, batch, tables, entropy,
    burn-in, key)`` -> :class:`~rngcert.simulate.procedure.Tables`."""
    proc, batch, n, entropy, burn_in, key = item
    keep_shuffle_heap()
    return simulate_batch(proc, batch, n, entropy, burn_in=burn_in, key=key)


def _stage_item(item):
    """The trackers' training (``("kernel", (procedure, entropy, tables))`` -> the kernel) or one batch of
    simulated tables (``("batch", item of _batch_item)``): the work items of a procedure's first stage."""
    kind, args = item
    keep_shuffle_heap()
    return _kernel(*args) if kind == "kernel" else _batch_item(args)


def _simulate(proc: Procedure, tables: int, entropy: int, *, burn_in: int, plan: Plan, key=("tables",)):
    """:func:`~rngcert.simulate.procedure.simulate_tables`, its batches run as the plan's work items."""
    items = [(proc, b, n, entropy, burn_in, key) for b, n in table_batches(tables)]
    return concat_tables(map_items(_batch_item, items, plan=plan))


def _remedies(proc: Procedure) -> list[tuple[str, dict]]:
    """Candidate changes for the first shoe of new decks: an extra riffle, a longer wash, both."""
    out = []
    riffle = next((i for i, s in enumerate(proc.steps, 1) if s.op in ("grab_riffle", "riffle")), None)
    wash = wash_parameters(proc)
    if riffle is not None:
        t = proc.steps[riffle - 1].full_params()["times"]
        out.append((f"one more riffle of the new decks (step {riffle} x{t + 1})", {f"steps[{riffle}].times": t + 1}))
        out.append((f"two more riffles (step {riffle} x{t + 2})", {f"steps[{riffle}].times": t + 2}))
    if wash is not None:
        v = proc.value(wash[0])
        out.append((f"a wash twice as long (travel {2 * v:.2f})", {wash[0]: min(100.0, 2 * v)}))
        if riffle is not None:
            t = proc.steps[riffle - 1].full_params()["times"]
            out.append(("a wash twice as long and one more riffle", {wash[0]: min(100.0, 2 * v), f"steps[{riffle}].times": t + 1}))
    return out


def _battery_item(item):
    """The battery on one shoe data set (a work item): ``(ShoeData, keywords of _run, figures)`` -> ``(its
    BatteryOutcome, its section's figures)`` (no figures when ``figures`` is false). The figures are drawn
    here, on the worker that ran the battery, not after both batteries in the command (where the other core
    would wait)."""
    data, kw, figures = item
    keep_shuffle_heap()
    out = _run(data, **kw)
    return out, (_figures(data, out) if figures else [])


def _remedy_item(item) -> tuple[dict, bool]:
    """One candidate change for the first shoe of new decks (a work item): ``(procedure, label, change,
    entropy, tables, options)`` -> (its entry of ``remedies_tried``, whether it is a remedy). Its streams
    are the same for every candidate and never depend on where or in which order it runs."""
    proc, label, change, entropy, tables, kw = item
    keep_shuffle_heap()
    threshold = kw["threshold"]
    p2 = proc.with_params(change)
    k2 = _kernel(p2, entropy, min(TRAIN_TABLES, tables), key=("tracker-training", "remedy"))
    t2 = simulate_tables(p2, tables, entropy, burn_in=1, key=("remedy",))
    d2 = _procedure_data(p2, t2, k2, first=True, threshold=threshold, bj_rules=kw["bj_rules"])
    o2 = _run(d2, entropy=entropy, group="first-shoe-remedy", alpha=kw["alpha"], n_resamples=kw["n_resamples"], standard=kw["standard"])
    best = _max_edge(o2)
    entry = {"change": label, "parameters": change, "verdict": o2.verdict,
             "max_tracker_edge": None if best is None else {"tracker": best[0], "edge": best[1], "ci95": best[2]}}
    return entry, o2.verdict in ("PASS", "SUSPECT") and not any(is_tracker(n) for n in o2.rejected) and (best is None or best[1] <= threshold)


def _remedy_candidates(proc, entropy, *, tables, alpha, threshold, n_resamples, standard, bj_rules) -> list:
    """The first shoe's candidate changes (:func:`_remedies`) as work items of :func:`_remedy_item`, in the
    order they are tried; a change of a parameter fixed by the rules says so, with the rule."""
    rules = {p["name"]: p.get("source", "") for p in proc.parameters() if p.get("status") == "rule"}
    kw = dict(alpha=alpha, threshold=threshold, n_resamples=n_resamples, standard=standard, bj_rules=bj_rules)
    items = []
    for label, change in _remedies(proc):
        fixed = [f"{k} is fixed by {rules[k]}" for k in change if k in rules]
        if fixed:
            label += " — a change of the rules: " + "; ".join(fixed)
        items.append((proc, label, change, entropy, tables, kw))
    return items


def _pinned_remedy(item):
    """:func:`_remedy_item` in this process, with one BLAS thread (as on a worker: the trackers' products sum in the same order)."""
    with pinned():
        return _remedy_item(item)


def _first_shoe_remedy(proc, entropy, *, tables, alpha, threshold, n_resamples, standard, bj_rules, plan: Plan | None = None):
    """The first candidate change under which the first shoe of new decks is not FAIL and no tracker's
    edge is above the threshold even as a point estimate (a SUSPECT at +4% is not a remedy).

    The candidates (:func:`_remedy_candidates`) are tried in order and the search stops at the first
    remedy. On a ``plan`` that runs in parallel they are work items tried a wave at a time, one candidate
    per worker and one in this process beside them (the candidates after a remedy in its wave are
    computed and left out): the result is the serial search's. (On a local pool, :func:`certify_procedure`
    runs the candidates beside the batteries instead: :func:`_batteries_and_remedies`.)"""
    tried = []
    items = _remedy_candidates(proc, entropy, tables=tables, alpha=alpha, threshold=threshold, n_resamples=n_resamples,
                               standard=standard, bj_rules=bj_rules)
    plan = plan or Plan(workers=1)
    costs = [_remedy_cost(tables)] * len(items)
    workers = plan.n_workers(len(items)) if plan.runs_parallel(len(items), costs) else 0
    here = 0 if plan.address else 1  # on an existing cluster this process takes no candidate (it would run before the wave)
    a = 0
    while a < len(items):
        todo = items[a : a + workers + here]
        if len(todo) > 1:  # this process takes the first candidate of a wave larger than the workers
            own = todo[: max(0, len(todo) - workers)]
            mine: list = []
            got = map_items(_remedy_item, todo[len(own):], plan=plan, costs=costs[len(own) : len(todo)],
                            meanwhile=(lambda: mine.extend(_pinned_remedy(it) for it in own)) if own else None)
            got = mine + got
        else:
            got = map_items(_remedy_item, todo, plan=Plan(workers=1))
        for item, (entry, ok) in zip(todo, got):
            tried.append(entry)
            if ok:
                return item[1], tried
        a += len(todo)
    return None, tried


def _stage_two_item(item):
    """A work item of the batteries' stage on a local pool (:func:`_batteries_and_remedies`): ``(func, args, flag)`` ->
    ``func(args)`` (a battery or a remedy candidate), or None without computing it when ``flag`` (a candidate's) names a
    file that exists (the command creates it once no candidate is needed any more)."""
    func, args, flag = item
    return None if flag is not None and os.path.exists(flag) else func(args)


def _remedies_settled(got: dict, n: int) -> bool:
    """Whether the results in ``got`` (item index -> result of :func:`_stage_two_item`: the steady-state battery 0,
    the first shoe's 1, then ``n`` candidates in order) settle the search: the first shoe is not FAIL, or every
    candidate up to the first remedy (or every candidate) has its result."""
    if 1 not in got:
        return False
    if got[1][0].verdict != "FAIL":
        return True
    for k in range(2, 2 + n):
        if k not in got:
            return False
        if got[k][1]:
            return True
    return True


def _batteries_and_remedies(p: Plan, batteries: list, costs: list, candidates: list, remedy_cost: float, *, battery=None, remedy=None):
    """The steady-state and first-shoe batteries (items of :func:`_battery_item`) and the first shoe's candidate
    changes (items of :func:`_remedy_item`, in their order) as the work items of one local pool, started in that
    order: a worker that finishes a battery goes on to the candidates, with no barrier between the stages. Once
    the first shoe is not FAIL, or the candidates up to the first remedy have their results, the candidates not
    yet started are skipped (at most one a worker was computed for nothing, beside the other battery).

    Returns ``(both batteries' results, (remedy, tried) or None when the first shoe is not FAIL)``: the
    remedy and the candidates tried are the serial search's (:func:`_first_shoe_remedy`). ``battery`` and
    ``remedy`` are the items' functions (default :func:`_battery_item` and :func:`_remedy_item`; module-level
    functions, which a worker started by a fork server imports by name)."""
    import rngcert.scratch as scratch

    battery, remedy = battery or _battery_item, remedy or _remedy_item
    items = [(battery, b, None) for b in batteries]
    got: dict = {}
    with scratch.folder("rngcert-remedies-") as tmp:
        flag = os.path.join(tmp, "skip")
        items += [(remedy, c, flag) for c in candidates]
        for i, res in iter_items(_stage_two_item, items, plan=p, costs=list(costs) + [remedy_cost] * len(candidates)):
            got[i] = res
            if not os.path.exists(flag) and _remedies_settled(got, len(candidates)):
                open(flag, "x").close()  # noqa: SIM115 - an empty file: its existence is the message
    both = [got[0], got[1]]
    if both[1][0].verdict != "FAIL":
        return both, None
    tried = []
    for k, cand in enumerate(candidates):
        entry, ok = got[2 + k]
        tried.append(entry)
        if ok:
            return both, (cand[1], tried)
    return both, (None, tried)


#: The process that runs the other stages beside the grid's workers (:func:`certify_procedure`): a forked worker of
#: another process lowers its own priority before its first point, so that the stages, the run's critical path,
#: get their share of the cores first and the grid's points the rest. (None: no grid beside the stages.)
_BESIDE: int | None = None
#: Niceness a grid worker adds to itself when it runs beside the stages.
GRID_NICE = 10


def _yield_to_stages() -> None:
    global _BESIDE
    if _BESIDE is not None and os.getpid() != _BESIDE:
        with contextlib.suppress(OSError):
            os.nice(GRID_NICE)
        _BESIDE = None  # once a worker


def _sensitivity_point(item) -> dict:
    """One point of the sensitivity grid (a work item): ``(procedure, point, columns, entropy, tables,
    options)`` -> the grid's row: a fresh simulation with the point's values, trackers trained on
    their own tables, the battery's verdict and the best tracker's edge. Its streams depend on the
    point's procedure and the run's entropy only, never on where or in which order it runs."""
    _yield_to_stages()
    keep_shuffle_heap()
    proc, g, cols, entropy, tables, kw = item
    p2 = proc.with_params(g)
    k2 = _kernel(p2, entropy, max(200, tables // 2), key=("tracker-training", "sensitivity"))
    t2 = simulate_tables(p2, tables, entropy, burn_in=4, key=("sensitivity",))
    d2 = _procedure_data(p2, t2, k2, first=False, threshold=kw["threshold"], bj_rules=kw["bj_rules"])
    o2 = _run(d2, entropy=entropy, group="sensitivity", alpha=kw["alpha"], n_resamples=kw["n_resamples"], standard=kw["standard"])
    best = _max_edge(o2)
    mde = (o2.power.get("min_detectable_edge") or {}).get(best[0]) if best is not None else None  # that tracker's own
    return {**{ax: g[param] for ax, param in cols}, "verdict": o2.verdict, "detectable_edge": mde,
            "tracker": None if best is None else best[0], "edge": None if best is None else best[1],
            "ci95": None if best is None else best[2], "rejected": list(o2.rejected)}


def _sensitivity_grid(proc: Procedure, entropy: int, *, tables: int, alpha: float, threshold: float, n_resamples: int, standard: str,
                      bj_rules, clumps=(1.0, 2.0, 4.0, 8.0), travels=(0.05, 0.15, 0.3, 0.6), riffles=(1, 2)):
    """The sensitivity grid's work items (:func:`_sensitivity_point`) and the function that makes the
    report's block from their rows, or None when the procedure has neither a wash nor a riffle."""
    wash = wash_parameters(proc)
    riffle = next((i for i, s in enumerate(proc.steps, 1) if s.op in ("grab_riffle", "riffle")), None)
    if wash is None and riffle is None:
        return None
    axes = {}
    if wash is not None:
        axes["travel"] = (wash[0], list(travels))
        axes["clump"] = (wash[1], list(clumps))
    if riffle is not None:
        axes["riffles"] = (f"steps[{riffle}].times", list(riffles))
    names = list(axes)
    grid = [dict()]
    for ax in names:
        grid = [g | {axes[ax][0]: v} for g in grid for v in axes[ax][1]]
    # grid points, each a vectorised simulation and a battery: independent work items on the plan's workers
    cols = [(ax, axes[ax][0]) for ax in names]
    kw = dict(alpha=alpha, threshold=threshold, n_resamples=n_resamples, standard=standard, bj_rules=bj_rules)
    items = [(proc, g, cols, entropy, tables, kw) for g in grid]

    def block(rows: list) -> dict:
        current = {ax: proc.value(axes[ax][0]) for ax in names}
        return {"axes": {ax: {"parameter": axes[ax][0], "values": axes[ax][1]} for ax in names}, "current": current, "rows": rows,
                "tables_per_point": tables, "burn_in": 4,
                "note": ("each point: a fresh simulation of the procedure with these values (the other parameters as declared), "
                         "trackers trained on independent tables; 'edge' is the best tracker's edge in % of the stake, with its 95% "
                         "interval, and 'detectable' the edge of that tracker its tables detect with 90% power at the family-wise level. "
                         "A point is FAIL when the edge passes the one-sided Holm test, or when a test rejects and no tracker could bet "
                         "(nothing measured the edge, so nothing clears the rejection), so an interval above 0 need not be a FAIL "
                         "at this size, and a point with fewer tables than the main run can differ from the main verdict for that reason. "
                         "SUSPECT means statistical findings and no tracker edge established at this size: where its interval lies "
                         "above 0 the edge is possible, not excluded; a point is shown safe only by no bets, or by an interval below 0")}

    return items, block


def _point_cost(tables: int) -> float:
    """Estimated serial seconds of one sensitivity point (training, ``tables`` simulated tables, the battery)."""
    return TRAIN_TABLE_S * max(200, tables // 2) + (SIM_TABLE_S + BATTERY_SHOE_S) * tables


def _sensitivity(proc: Procedure, entropy: int, *, plan: Plan | None = None, **keywords) -> dict | None:
    """The sensitivity grid (keywords of :func:`_sensitivity_grid`), its points the plan's work items."""
    grid = _sensitivity_grid(proc, entropy, **keywords)
    if grid is None:
        return None
    items, block = grid
    return block(map_items(_sensitivity_point, items, plan=plan or Plan(workers=1)))


def _warm_up(proc: Procedure, bj_rules) -> None:
    """Fill this process's caches that a battery of ``proc``'s shoes fills on its first run, from a
    battery on 4 tables of a stream of their own, thrown away: the exact laws of the shoe's size, the
    game's exact enumeration, the modules the tests import on first use (about 0.9 CPU-s for 416 cards
    of baccarat). Run before the workers of a later stage are forked, each inherits them instead of
    filling them again. The caches hold exact functions of the shoe's size and game, so no result
    depends on whether this ran; it is only a speed-up, so a failure here is left to the real run."""
    import warnings

    try:
        with warnings.catch_warnings(), pinned():
            warnings.simplefilter("ignore")
            tab = simulate_tables(proc, 4, 0, burn_in=1, key=("warm-up",))
            kern = _kernel(proc, 0, 4, key=("warm-up",))
            for first in (False, True):
                d = _procedure_data(proc, tab, kern, first=first, threshold=0.0, bj_rules=bj_rules)
                _run(d, entropy=0, group="warm-up", alpha=0.01, n_resamples=99, standard="edge")
    except Exception:  # noqa: BLE001 - a speed-up only: the run's own stages raise what is wrong, with their context
        pass


def _overlap_pays(chain: float, grid: float, workers: int) -> bool:
    """Whether the sensitivity grid's points on ``workers`` workers beside the rest of the run in this
    process (serially) end sooner than the rest of the run on the workers and then the grid: the
    first takes about max(chain, (chain + grid) / workers), the second the rest on a pool where it pays
    (its start + chain / (workers x efficiency)) + grid / workers (estimated serial seconds of each part)."""
    apart = min(chain, CLUSTER_START_S + chain / (workers * PARALLEL_EFFICIENCY)) + grid / workers
    return workers > 1 and max(chain, (chain + grid) / workers) < apart


def _procedure_of(spec) -> Procedure:
    """A packaged procedure id or TOML path loaded (``certify_procedure("baccarat-004")`` raised AttributeError: 'str'
    object has no attribute 'kind'); anything else is a TypeError naming the argument."""
    if isinstance(spec, (str, Path)):
        return load_procedure(spec)
    raise TypeError(f"certify_procedure(): proc must be a Procedure, a packaged procedure id or a TOML path, got {spec!r} ({type(spec).__name__})")


# long: numpydoc a third; the rest the stages in their order (trackers, tables, steady state, first shoe and remedies, sensitivity, report)
def certify_procedure(proc: Procedure | str | Path, *, tables: int = 2000, burn_in: int = DEFAULT_BURN_IN, sensitivity: bool = False,
                      sensitivity_tables: int = 400, first_shoe: bool = True, decks_note: str = "",
                      options: ShuffleOptions | None = None, **keywords) -> ShuffleCertification:
    """Certify a shuffle procedure by simulation: steady state, first shoe, trackers, sensitivity.

    Parameters
    ----------
    proc : Procedure, str or Path
        The shuffle procedure: a loaded :class:`~rngcert.equipment.procedure.Procedure`, a packaged
        procedure id (``"baccarat-004"``, as ``rngcert shuffle certify`` takes it) or a TOML path.
    tables : int
        Tables simulated (one tested shoe each, in steady state; their first shoes for the
        first-shoe verdict).
    burn_in : int
        Shoes a table deals before the tested shoe (stated in the report).
    sensitivity : bool
        Also run the grid of assumed parameters (wash travel × clump × riffles).
    sensitivity_tables : int
        Tables per grid point.
    first_shoe : bool
        Judge the first shoe from new decks separately (and try remedies when it fails).
    decks_note : str
        A note on the decks the report prints.
    options : ShuffleOptions, optional
        The certification's options as one object (:class:`rngcert.pipeline.options.ShuffleOptions`,
        what ``rngcert shuffle certify`` builds); keywords given beside it replace its fields.
    **keywords
        The fields of :class:`~rngcert.pipeline.options.ShuffleOptions`: ``seed`` (root seed; fresh OS
        entropy, recorded, when None), ``alpha`` (family-wise level), ``threshold``, ``n_resamples``
        (only when card identity is ambiguous; simulations are serialised), ``standard`` (default
        "edge" for a manual procedure, "uniform" for a machine), ``figures``, ``command``, ``progress``
        (called as each stage finishes: trackers trained, tables simulated, steady-state battery,
        first-shoe battery, remedies, sensitivity grid), ``plan`` (where the batches of simulated
        tables run, work items of :data:`~rngcert.simulate.procedure.TABLE_BATCH` tables: default
        serial; the tables, and so the report, are the same wherever they ran; the sensitivity grid's
        points are work items of the same plan, and so, on a plan that runs in parallel, are the steady-state and
        first-shoe batteries and the first shoe's remedies (on a local pool: one pool, the candidates started as a worker
        finishes a battery and skipped once not needed, :func:`_batteries_and_remedies`; on a cluster: the batteries, then
        the candidates a wave at a time) and the trackers' training (an item beside the batches); the grid's points run on the workers while
        this process runs the other stages where that pays (:func:`_overlap_pays`); every item runs with one BLAS thread, serially too), ``min_edge`` (that the tables must detect with ``power`` for a PASS, steady
        state and first shoe; default the game's house edge) and ``power`` (default 0.9).

    Returns
    -------
    ShuffleCertification
    """
    o = ShuffleOptions.of(options, where="certify_procedure", **keywords)
    proc = proc if isinstance(proc, Procedure) else _procedure_of(proc)
    keep_shuffle_heap()  # (before the pools fork: their workers inherit the thresholds)
    seed, alpha, threshold, n_resamples, standard, figures = o.seed, o.alpha, o.threshold, o.n_resamples, o.standard, o.figures
    command, progress, plan, min_edge, power = o.command, o.progress, o.plan, o.min_edge, o.power
    stages = 3 + (2 if first_shoe else 0) + (1 if sensitivity else 0)
    step = [0]

    def advance(label: str) -> None:
        step[0] += 1
        if progress is not None:
            progress(step[0], stages, label)

    entropy = int(root(seed).entropy)
    # no game, no player's edge to measure: the uniform standard applies
    standard = standard or ("uniform" if proc.kind == "machine" or proc.game == "none" else G.get(proc.game).default_standard)
    game = None if proc.game == "none" else proc.game
    bj_rules = _rules(proc, proc.decks)
    plan = plan or Plan(workers=1)
    chain_cost = TRAIN_TABLE_S * min(TRAIN_TABLES, max(100, tables)) + (SIM_TABLE_S + 2 * BATTERY_SHOE_S) * tables

    # long: the stages in their order (trackers and tables, steady state, first shoe and its remedies), as before the grid
    def main_stages(p: Plan) -> tuple:
        """Every stage but the sensitivity grid, its work items on plan ``p``."""
        # the trackers' training beside the batches of simulated tables: work items of one call (its own streams)
        batches = [("batch", (proc, b, n, entropy, burn_in, ("tables",))) for b, n in table_batches(tables)]
        n_train = min(TRAIN_TABLES, max(100, tables))
        costs = [TRAIN_TABLE_S * n_train] + [SIM_TABLE_S * it[1][2] for it in batches]
        # where a later stage may run on a pool, this process fills the batteries' caches while the workers simulate
        # (before the batteries' and remedies' workers are forked from it, so that none fills them again)
        later = not p.address and (p.runs_parallel(2, [BATTERY_SHOE_S * tables] * 2) or p.runs_parallel(len(batches) + 1, costs))
        warm = (lambda: _warm_up(proc, bj_rules)) if later else None
        got = map_items(_stage_item, [("kernel", (proc, entropy, n_train))] + batches, plan=p, costs=costs, largest_first=True, meanwhile=warm)
        kernel, tab = got[0], concat_tables(got[1:])
        del got
        advance("trackers trained")
        advance(f"{tables} tables simulated")
        data = _procedure_data(proc, tab, kernel, first=False, threshold=threshold, bj_rules=bj_rules)
        run_kw = dict(entropy=entropy, alpha=alpha, n_resamples=n_resamples, standard=standard, power=power)
        d1 = _procedure_data(proc, tab, kernel, first=True, threshold=threshold, bj_rules=bj_rules) if first_shoe else None
        costs = [BATTERY_SHOE_S * data.n_shoes, BATTERY_SHOE_S * d1.n_shoes] if first_shoe else None
        rem_kw = dict(tables=min(tables, 1000), alpha=alpha, threshold=threshold, n_resamples=n_resamples, standard=standard, bj_rules=bj_rules)
        searched = None
        if first_shoe:  # the two batteries: work items (each in its own streams), at once on a pool where it pays
            pair = [(data, dict(run_kw, group="steady-state"), figures), (d1, dict(run_kw, group="first-shoe"), figures)]
            if p.runs_parallel(2, costs) and not p.address:  # the first shoe's candidate changes on the same pool, after them
                both, searched = _batteries_and_remedies(p, pair, costs, _remedy_candidates(proc, entropy, **rem_kw), _remedy_cost(rem_kw["tables"]))
            else:
                both = map_items(_battery_item, pair, plan=p, costs=costs)
        else:  # (one BLAS thread, as on a worker: the trackers' products sum in the same order)
            with pinned():
                both = [_battery_item((data, dict(run_kw, group="steady-state"), figures)), (None, [])]
        (out, figs0), (o1, figs1) = both
        house = _house_edges(game, proc.decks, bj_rules)
        edge, edge_basis = (min_edge, "declared") if min_edge is not None else default_min_edge(house)
        gate_kw = dict(game=game, min_edge=edge, power=power, threshold=threshold, basis=edge_basis, usable=data.usable,
                       players=int(proc.deal.get("players", 7)))
        gate = power_gate(out, n_shoes=data.n_shoes, **gate_kw)
        advance(f"steady state: {out.verdict}")
        notes = [f"simulation: {tables} tables from new decks, each dealing {burn_in} shoe(s) before the tested shoe (steady state); "
                 f"stream SeedSequence({entropy}, spawn_key=CRC-32('{SIMULATION_STREAM}'), ...)"]
        if _has_trackers(game):  # (no sentence about trackers where the game has none)
            notes.append(f"trackers learned the procedure from {min(TRAIN_TABLES, max(100, tables))} independent simulated tables and play "
                         "only what a player sees (rank and suit, no deck serials); threshold declared in advance: "
                         f"{100 * threshold:+.2f}% of the stake")
        if decks_note:
            notes.append(decks_note)
        sections = [_section(f"steady state (after {burn_in} shoes)", data, out, extra={"kind": "steady_state", "burn_in": burn_in,
                                                                                       "power_gate": gate})]
        figs = [figs0]
        report_extra: dict = {"steady_state": {"burn_in": burn_in, "verdict": out.verdict, "tables": tables}}
        outs = [out]
        if first_shoe:
            gate1 = power_gate(o1, n_shoes=d1.n_shoes, **gate_kw)
            advance(f"first shoe: {o1.verdict}")
            outs.append(o1)
            sec1 = _section("first shoe from new decks", d1, o1, notes=["new decks are spread face up in order for inspection "
                                                                       "(004 §2 and §3 rule 3.1.2): a player knows the order before the first shuffle"],
                            extra={"kind": "first_shoe", "power_gate": gate1})
            sections.append(sec1)
            figs.append(figs1)
            fs = {"verdict": o1.verdict, "reasons": o1.reasons, "trackers": sec1["trackers"], "findings": sec1["findings"]}
            if o1.verdict == "FAIL":
                fix, tried = searched or _first_shoe_remedy(proc, entropy, plan=p, **rem_kw)
                fs["remedy"] = fix
                fs["remedies_tried"] = tried
                fs["needs"] = (f"new decks need {fix} before the first shoe" if fix else
                               "none of the remedies tried (one or two more riffles, a wash twice as long) is enough for new decks")
            advance("remedies tried" if o1.verdict == "FAIL" else "no remedy needed")
            report_extra["first_shoe"] = fs
        return out, gate, house, notes, sections, figs, report_extra, outs

    grid = None
    if sensitivity:
        grid = _sensitivity_grid(proc, entropy, tables=sensitivity_tables, alpha=alpha, threshold=threshold,
                                 n_resamples=n_resamples, standard=standard, bj_rules=bj_rules)
    costs = [] if grid is None else [_point_cost(sensitivity_tables)] * len(grid[0])
    done: list = []
    if (grid is not None and not plan.address and plan.runs_parallel(len(costs), costs)
            and _overlap_pays(chain_cost, sum(costs), plan.n_workers(len(costs)))):
        # the grid's points on the pool's workers while this process runs the other stages serially (they do
        # not depend on each other); its caches filled first, so that the workers forked now inherit them
        _warm_up(proc, bj_rules)
        global _BESIDE
        _BESIDE = os.getpid()  # (the workers, forked next, give the stages here their share of the cores first)
        try:
            rows = map_items(_sensitivity_point, grid[0], plan=plan, costs=costs,
                             meanwhile=lambda: done.append(main_stages(Plan(workers=1))))
        finally:
            _BESIDE = None
    else:
        done.append(main_stages(plan))
        rows = None if grid is None else map_items(_sensitivity_point, grid[0], plan=plan)
    out, gate, house, notes, sections, figs, report_extra, outs = done[0]
    if sensitivity:
        report_extra["sensitivity"] = None if grid is None else grid[1](rows)
        advance("sensitivity grid")
        if figures and report_extra["sensitivity"]:
            figs[0].append(plots.sensitivity_figure(report_extra["sensitivity"]))
    verdict = worst([o.verdict for o in outs])
    equipment = {"id": proc.id, "name": proc.name, "kind": "shuffle-procedure", "source": proc.source, "file": proc.path,
                 "procedure": proc.to_dict()}
    inputs = [{"path": proc.path, "sha256": proc.sha256, "format": "shuffle procedure (TOML)",
               "summary": f"{tables} simulated tables; steady state after {burn_in} shoes; first shoe from new decks judged separately"}]
    report = _header(command=command, inputs=inputs, equipment=equipment, subject=f"{proc.name} ({tables} simulated tables)",
                     notes=notes, tables=sections, verdict=verdict, alpha=alpha, entropy=entropy, seed=seed, n_resamples=n_resamples,
                     decks=proc.decks, game=game, rule=proc.dealer_rule, standard=standard)
    report |= report_extra
    report["parameters"] = proc.parameters()
    report["assumed_parameters"] = [p["name"] for p in report["parameters"] if p["status"] == "assumed"]
    report["house_edge"] = house
    report["power_effect"] = out.power
    report["power_gate"] = gate
    add_shoe_findings(report)
    return ShuffleCertification(report, figs, out)
