"""Shuffle certification end to end (DESIGN §4, §5): shoes → shuffle battery and trackers →
verdict → report, with the same report writer as the wheel. No printing here.

Two sources of shoes, one battery:

* :func:`certify_procedure` — a procedure (packaged or a lab's TOML) simulated at ``tables``
  tables: each table deals ``burn_in`` shoes from new decks before the shoe under test (steady
  state); the first shoe from new decks is judged separately (its own section and verdict line,
  and, when it fails, what a new deck needs). Trackers learn the procedure from independent
  simulated tables. Optionally a sensitivity grid over the assumed wash and riffle parameters.
* :func:`certify_log` — a card-scanner log. Shoes with a ``before`` stage are used as recorded;
  a log of dealt cards only is certified by rebuilding each shoe's order before the shuffle from
  the previous shoe of the same table and the procedure's pickup (or from ``--before``); the cards
  nobody saw are filled at random (valid under a uniform shuffle, see
  :func:`rngcert.simulate.deal.complete_shoes`). Trackers learn from one half of the shoes and play
  the other (cross-fitting). The battery runs on all shoes and per dealer; when the procedure has
  a wash, its travel and clump size are measured (:func:`rngcert.simulate.fit.fit_procedure`).

Every report carries: the procedure's parameters marked measured/rule/assumed, the trackers'
edges with intervals against the house edge, the findings in words, the power and effect-size
statement, the game's house edges and the equipment checks.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats as sps

from rngcert.battery.core import BatteryOutcome, worst
from rngcert.battery.plain import add_shoe_findings
from rngcert.battery.shuffle import POLICY_TEXT, ShoeData, decide_shuffle, evaluate_shuffle, is_tracker
from rngcert.equipment import games as G
from rngcert.equipment.cards import new_shoe
from rngcert.equipment.procedure import Procedure
from rngcert.errors import InputError
from rngcert.pipeline.parallel import Plan, map_items
from rngcert.pipeline.shoe_power import default_min_edge, power_gate
from rngcert.report import cite, plots, schema, text
from rngcert.seeding import root, stream
from rngcert.simulate import deal as D
from rngcert.simulate import games
from rngcert.simulate.fit import fit_procedure, wash_parameters
from rngcert.simulate.procedure import DEFAULT_BURN_IN, SIMULATION_STREAM, concat_tables, simulate_batch, simulate_tables, table_batches
from rngcert.stats import trackers as TR
from rngcert.stats.shuffle import adjacency_share, shuffle_plot_data, succession_law

REQUIREMENT_TEXT = (
    "Requirement: a shuffle must leave every order of the shoe equally likely — the dealt cards statistically "
    "independent of the order they were picked up in, uniformly distributed over positions, and unpredictable "
    "to a player who saw the previous shoe (the shuffle-tracking threat). A regulator acts on the player's edge: "
    "the report states what realistic trackers gain, in % of the stake, with its interval."
)
KERNEL_LAGS = 24
TRAIN_TABLES = 500
#: Power at which a shoe sample must detect the declared minimum tracker edge for a PASS (as the wheel's ``--power``).
DEFAULT_POWER = 0.9

__all__ = ["ShuffleCertification", "certify_procedure", "certify_log", "certify_shoes", "REQUIREMENT_TEXT"]


@dataclass
class ShuffleCertification:
    report: dict
    figures: list[list]
    outcome: BatteryOutcome

    @property
    def verdict(self) -> str:
        return self.report["verdict"]


# ----------------------------------------------------------------------------- pieces
def _rules(proc: Procedure | None, decks: int):
    if proc is None or proc.game != "blackjack":
        return None
    from rngcert.stats.blackjack import Rules

    return Rules.from_procedure(proc, decks)


def _house_edges(game: str | None, decks: int, bj_rules) -> dict | None:
    """The report's house-edge block: the registered game's own (:mod:`rngcert.simulate.games`)."""
    return None if game is None else games.play(game).house_edge(decks, bj_rules)


def _finding_sentence(t: dict, n_cards: int) -> str:
    """One plain sentence for a flagged test: what was observed, causes to check, next step (the
    caller puts the test's name before it)."""
    name, d = t["name"], t.get("details") or {}
    if name.startswith("tracker_edge:"):
        e, ci = d.get("edge"), d.get("ci95")
        who = name.split(":", 1)[1].replace("_", " ")
        return (f"the {who} tracker, seeing only the dealt cards, returns {100 * e:+.2f}% of the stake (95% interval "
                f"{100 * ci[0]:+.2f}% to {100 * ci[1]:+.2f}%) against a threshold of {100 * d.get('threshold', 0):+.2f}%: the shuffle "
                "leaves the order of the previous shoe readable; lengthen the wash or add riffles and re-certify")
    if name == "adjacent_pairs":
        m = d.get("mean_per_shoe", t["statistic"] / max(t.get("n") or 1, 1))
        return (f"{m:.1f} of the {n_cards - 1} neighbouring pairs of a shoe stay together (a uniform shuffle keeps about 1): "
                "clumps survive the wash; check the wash length and that the riffle interleaves single cards")
    if name in ("rising_sequences", "displacement", "rank_correlation", "position_correlation", "position_chisquare"):
        return ("cards end up nearer their place before the shuffle than chance allows "
                f"(p {text.p_is(t)}); the order of the discards is partly kept; lengthen the wash or add a riffle")
    if name == "fixed_points":
        return (f"{d.get('mean_per_shoe') or 0:.2f} cards per shoe stay in place against {d.get('null_mean_per_shoe') or 0:.2f} expected: "
                "too few means an algorithm that never leaves a card in place (Sattolo's off-by-one), too many a shuffle that "
                "leaves cards alone; have the shuffler's algorithm inspected")
    if name == "guessing":
        return (f"a guesser who knows the order before the shuffle names {d.get('mean_correct_per_shoe') or 0:.2f} cards per shoe "
                f"against {d.get('null_mean_per_shoe') or 0:.2f} by chance: the shuffle is predictable card by card")
    if name in ("baccarat_outcomes", "dealer_totals", "ten_clumping", "position_rank_chisquare"):
        return (f"the dealt game departs from a well-shuffled shoe (p {text.p_is(t)}); residual order "
                "of the discards (new decks, or a short wash) shows in the game itself")
    if name.startswith("orientation"):
        return ("card orientation is not random (edge-sorting risk, 004 §2 rule 3.1): the wash does not turn the cards; "
                "use symmetric backs or turn half the stack")
    return f"p {text.p_is(t)}"


def _findings(outcome: BatteryOutcome, n_cards: int) -> list[str]:
    d = outcome.to_dict()
    # the tests rejected after Holm at the sample's level: what the verdict calls findings (a raw p below
    # the level without a rejection is shown in the tables and the sample's line, not asserted as a defect)
    return [f"{x['name']}: " + _finding_sentence(x, n_cards) for x in d["tests"] if x["applicable"] and x.get("rejected_familywise")]


def _trackers(outcome: BatteryOutcome) -> list[dict]:
    out = []
    for r in outcome.results:
        if not is_tracker(r.name):
            continue
        item = {"name": r.name.split(":", 1)[1], "test": r.name, "applicable": r.applicable}
        if r.applicable:
            d = r.details
            beats = r.name in outcome.rejected
            ph = outcome.adjusted.get(r.name)
            # the 95% interval describes the edge; the decision is the one-sided test after Holm at the
            # section's family-wise level, stated beside it so that the two are never read as one
            decision = (f"one-sided p = {r.pvalue:.2g}, Holm-adjusted {ph:.2g} {'<=' if beats else '>'} the family-wise level "
                        f"{outcome.alpha:.3g}" if ph is not None else f"one-sided p = {r.pvalue:.2g}")
            item |= {"edge": d["edge"], "ci95": d["ci95"], "se": d["se"], "units": d["units"], "bets_shoes": d["bets_shoes"],
                     "n_shoes": d["n_shoes"], "threshold": d["threshold"], "house_edge": d.get("house_edge"),
                     "policy": d.get("policy"), "validation": d.get("validation"), "pvalue": r.pvalue,
                     "pvalue_holm": ph, "beats_threshold": beats, "decision": decision,
                     "sentence": (f"{100 * d['edge']:+.2f}% of the stake (95% interval {100 * d['ci95'][0]:+.2f}% to "
                                  f"{100 * d['ci95'][1]:+.2f}%, {d['units']:.0f} units over {d['n_shoes']} shoes) "
                                  + ("— BEATS the threshold" if beats else "— does not beat the threshold")
                                  + f" of {100 * d['threshold']:+.2f}% (house edge {100 * (d.get('house_edge') or 0):.2f}%"
                                  + (f"; flat play of the same shoes {100 * flat['edge']:+.2f}%" if (flat := (d.get("validation") or {}).get("flat"))
                                     and flat.get("edge") is not None else "") + f"; {decision})")}
        else:
            item |= {"edge": None, "reason": r.reason, "sentence": f"no edge: {r.reason}"}
        out.append(item)
    return out


def _power(outcome: BatteryOutcome, data: ShoeData, power: float = DEFAULT_POWER) -> dict:
    """Smallest adjacency retention and smallest tracker edge detectable with the given power (default 90%)."""
    m = max(1, len(outcome.applicable))
    a1 = outcome.alpha / m  # Holm's first threshold: the level a single effect must pass
    z_a, z_b = sps.norm.isf(a1), sps.norm.isf(1.0 - power)
    out = {"power": power, "level": a1, "level_note": f"alpha / {m} (Holm's first step)"}
    n = data.n_cards
    if data.before is not None and data.after is not None:
        S = data.n_shoes
        law = succession_law(n)
        k = np.arange(law.size)
        mu0 = float(k @ law)
        v0 = float(((k - mu0) ** 2) @ law)
        rho = 0.0
        for _ in range(50):  # fixed point: retention rho keeps rho (N-1) pairs besides chance (mean shift rho (N-1-mu0))
            v1 = rho * (1 - rho) * (n - 1) + v0
            rho_new = (z_a * math.sqrt(v0) + z_b * math.sqrt(v1)) / (math.sqrt(S) * (n - 1 - mu0))
            if abs(rho_new - rho) < 1e-12:
                break
            rho = rho_new
        out["min_adjacency_retention"] = rho
        unique = data.permutation[1]
        out["adjacency_note"] = ("for card identity (serialised decks)" if unique else
                                 "computed as for identified cards; with repeated cards the test uses Monte Carlo and needs more")
        out["observed_adjacency"] = adjacency_share(data.permutation[0])
    edges = {}
    for r in outcome.results:
        if not is_tracker(r.name):
            continue
        if r.applicable:
            se = r.details["se"]
            edges[r.name.split(":", 1)[1]] = r.details["threshold"] + (z_a + z_b) * se
        else:
            edges[r.name.split(":", 1)[1]] = None
    out["min_detectable_edge"] = edges
    parts = []
    if "min_adjacency_retention" in out:
        rho = out["min_adjacency_retention"]
        parts.append(f"with {data.n_shoes} shoes the battery detects, with {100 * power:.0f}% power at level {a1:.2g}, a shuffle that keeps "
                     f"{100 * rho:.2f}% of the neighbouring pairs together beyond the {mu0:.2f} pair a shoe that a uniform "
                     f"shuffle keeps by chance ({rho * (n - 1):.2f} more pairs a shoe; {out['adjacency_note']})")
    det = [f"{k.replace('_', ' ')} {100 * v:+.2f}%" for k, v in edges.items() if v is not None]
    if det:
        parts.append("and a tracker edge above " + ", ".join(det) + " of the stake")
    out["statement"] = "; ".join(parts) if parts else "no power statement: neither identity tests nor trackers could run"
    return out


def _header(*, command, inputs, equipment, subject, notes, tables, verdict, alpha, entropy, seed, n_resamples, decks, game, rule,
            rejected_count=0, standard="edge") -> dict:
    """The report header of every shuffle report, from the one schema of :mod:`rngcert.report.schema`."""
    pol = schema.policy(alpha, "holm (over all applicable tests of a section, trackers included)", cite.shuffle_requirement())
    pol.update(
        verdicts=dict(POLICY_TEXT), standard=standard,
        standard_text=("edge: a manual procedure FAILs on a tracker's edge; statistical rejections are findings"
                       if standard == "edge" else "uniform: a machine or algorithm FAILs on any family-wise rejection"),
    )
    # page one's two sentences, for shoes (the schema's default is the wheel's)
    pol["summary"] = (
        "INCONCLUSIVE first, when the data cannot carry a verdict (no order before the shuffle for the required card-tracking "
        "tests, too few shoes, a test that could not run); "
        + (f"otherwise FAIL when a realistic tracker's edge beats the threshold declared in advance (a one-sided test, Holm "
           f"over every test of the sample at alpha = {alpha:g}); a statistical rejection without such an edge is a finding "
           "(SUSPECT), stated in words with what to check, and PASS when no test rejects after Holm."
           if standard == "edge" else
           f"otherwise FAIL when any test, trackers included, rejects after Holm's correction at alpha = {alpha:g} "
           "(a machine or an algorithm can be exact), and PASS when none does.")
        + " Each sample (steady state, first shoe, a dealer) is judged at its own family-wise level, stated with it; "
        "the report's verdict is the worst of them."
    )
    report = schema.header(
        subject=subject,
        command=command,
        inputs=list(inputs),
        rejected_count=rejected_count,
        equipment=equipment,
        equipment_line=f"{equipment.get('name', subject)} — {decks} deck(s), game {game or 'none'}"
        + (f", dealer rule {rule}" if game == "blackjack" else ""),
        rules=[str(equipment["source"])] if equipment.get("kind") == "shuffle-procedure" and equipment.get("source") else [],
        declared={"certification level alpha": alpha, "decks per shoe": decks, "Monte Carlo replicates": n_resamples},
        unit="shoes",
        section_word="Sample",
        level="cards",
        policy=pol,
        seed={"entropy": str(entropy), "how": "given with --seed" if seed is not None else "fresh OS entropy, recorded here", "n_resamples": n_resamples},
        notes=list(notes),
    )
    report["tables"] = tables
    report["verdict"] = verdict
    return report


def _run(data: ShoeData, *, entropy: int, group: str, alpha: float, n_resamples: int, standard: str, inconclusive=(),
         power: float = DEFAULT_POWER):
    results, errors, keys = evaluate_shuffle(data, entropy=entropy, n_resamples=n_resamples, alpha=alpha, group=group)
    out = decide_shuffle(results, alpha=alpha, standard=standard, errors=errors, inconclusive=inconclusive,
                         seeds={"entropy": str(entropy), "spawn_keys": keys})
    out.power = _power(out, data, power)
    return out


def _section(title: str, data: ShoeData, out: BatteryOutcome, notes=(), extra=None) -> dict:
    n_cards = data.n_cards
    sec = {"table": title, "n": data.n_shoes, "void": 0, "notes": list(notes), "labels": [],
           "min_holm": min(out.adjusted.values()) if out.adjusted else None, "battery": out.to_dict(),
           "findings": _findings(out, n_cards), "trackers": _trackers(out)}
    sec["battery"]["exploitability_line"] = "; ".join(
        f"{t['name'].replace('_', ' ')}: {t['sentence']}" for t in sec["trackers"] if t.get("edge") is not None) or ""
    if extra:
        sec.update(extra)
    return sec


def _figures(data: ShoeData, out: BatteryOutcome) -> list:
    figs = []
    if data.before is not None and data.after is not None:
        pdata = shuffle_plot_data(data.before, data.after, guess_shoes=min(500, data.n_shoes))
        figs = [plots.position_heatmap(pdata["heatmap"]), plots.rising_histogram(pdata["rising"], pdata.get("gsr_equivalent")),
                plots.guessing_histogram(pdata["guessing"])]
    if out.applicable:
        figs.append(plots.pvalue_figure(out.results, out.alpha, out.adjusted))
    return figs


def _max_edge(out: BatteryOutcome):
    best = None
    for r in out.results:
        if is_tracker(r.name) and r.applicable and (best is None or r.statistic > best[1]):
            best = (r.name.split(":", 1)[1], float(r.statistic), r.details["ci95"])
    return best


# ----------------------------------------------------------------------------- procedures
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
    return simulate_batch(proc, batch, n, entropy, burn_in=burn_in, key=key)


def _simulate(proc: Procedure, tables: int, entropy: int, *, burn_in: int, plan: Plan, key=("tables",)):
    """:func:`~rngcert.simulate.procedure.simulate_tables`, its batches run as the plan's work items."""
    items = [(proc, b, n, entropy, burn_in, key) for b, n in table_batches(tables)]
    return concat_tables(map_items(_batch_item, items, plan=plan))


def _kernel(proc: Procedure, entropy: int, train_tables: int, key=("tracker-training",)):
    tr = simulate_tables(proc, train_tables, entropy, burn_in=2, key=key)
    return TR.learn_kernel(tr.before, tr.after, lags=KERNEL_LAGS)


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


def _first_shoe_remedy(proc, entropy, *, tables, alpha, threshold, n_resamples, standard, bj_rules):
    """The first candidate change under which the first shoe of new decks is not FAIL and no tracker's
    edge is above the threshold even as a point estimate (a SUSPECT at +4% is not a remedy); a change
    of a parameter fixed by the rules says so, with the rule."""
    tried = []
    rules = {p["name"]: p.get("source", "") for p in proc.parameters() if p.get("status") == "rule"}
    for label, change in _remedies(proc):
        fixed = [f"{k} is fixed by {rules[k]}" for k in change if k in rules]
        if fixed:
            label += " — a change of the rules: " + "; ".join(fixed)
        p2 = proc.with_params(change)
        k2 = _kernel(p2, entropy, min(TRAIN_TABLES, tables), key=("tracker-training", "remedy"))
        t2 = simulate_tables(p2, tables, entropy, burn_in=1, key=("remedy",))
        d2 = _procedure_data(p2, t2, k2, first=True, threshold=threshold, bj_rules=bj_rules)
        o2 = _run(d2, entropy=entropy, group="first-shoe-remedy", alpha=alpha, n_resamples=n_resamples, standard=standard)
        best = _max_edge(o2)
        tried.append({"change": label, "parameters": change, "verdict": o2.verdict,
                      "max_tracker_edge": None if best is None else {"tracker": best[0], "edge": best[1], "ci95": best[2]}})
        if o2.verdict in ("PASS", "SUSPECT") and not any(is_tracker(n) for n in o2.rejected) and (best is None or best[1] <= threshold):
            return label, tried
    return None, tried


def _sensitivity(proc: Procedure, entropy: int, *, tables: int, alpha: float, threshold: float, n_resamples: int, standard: str,
                 bj_rules, clumps=(1.0, 2.0, 4.0, 8.0), travels=(0.05, 0.15, 0.3, 0.6), riffles=(1, 2)) -> dict | None:
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
    rows = []
    for g in grid:  # grid points, each a vectorised simulation
        p2 = proc.with_params(g)
        k2 = _kernel(p2, entropy, max(200, tables // 2), key=("tracker-training", "sensitivity"))
        t2 = simulate_tables(p2, tables, entropy, burn_in=4, key=("sensitivity",))
        d2 = _procedure_data(p2, t2, k2, first=False, threshold=threshold, bj_rules=bj_rules)
        o2 = _run(d2, entropy=entropy, group="sensitivity", alpha=alpha, n_resamples=n_resamples, standard=standard)
        best = _max_edge(o2)
        mde = (o2.power.get("min_detectable_edge") or {}).get(best[0]) if best is not None else None  # that tracker's own
        rows.append({**{ax: g[axes[ax][0]] for ax in names}, "verdict": o2.verdict, "detectable_edge": mde,
                     "tracker": None if best is None else best[0], "edge": None if best is None else best[1],
                     "ci95": None if best is None else best[2], "rejected": list(o2.rejected)})
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


def certify_procedure(proc: Procedure, *, tables: int = 2000, seed: int | None = None, burn_in: int = DEFAULT_BURN_IN,
                      alpha: float = 0.01, threshold: float = 0.0, n_resamples: int = 1999, standard: str | None = None,
                      sensitivity: bool = False, sensitivity_tables: int = 400, first_shoe: bool = True, figures: bool = True,
                      command: str = "", decks_note: str = "", progress=None, plan: Plan | None = None,
                      min_edge: float | None = None, power: float = DEFAULT_POWER) -> ShuffleCertification:
    """Certify a shuffle procedure by simulation: steady state, first shoe, trackers, sensitivity.

    Parameters
    ----------
    proc : Procedure
    tables : int
        Tables simulated (one tested shoe each, in steady state; their first shoes for the
        first-shoe verdict).
    seed : int, optional
        Root seed (fresh OS entropy, recorded, when None).
    burn_in : int
        Shoes a table deals before the tested shoe (stated in the report).
    alpha : float
        Family-wise level.
    threshold : float
        Tracker edge (per unit staked) declared in advance; above it the procedure FAILs.
    n_resamples : int
        Monte Carlo replicates (only when card identity is ambiguous; simulations are serialised).
    standard : {"edge", "uniform"}, optional
        Default: "edge" for a manual procedure, "uniform" for a machine.
    sensitivity : bool
        Also run the grid of assumed parameters (wash travel × clump × riffles).
    sensitivity_tables : int
        Tables per grid point.
    first_shoe : bool
        Judge the first shoe from new decks separately (and try remedies when it fails).
    progress : callable, optional
        ``progress(done, total, label)`` as each stage finishes (trackers trained, tables
        simulated, steady-state battery, first-shoe battery, remedies, sensitivity grid): the
        CLI's progress bar.
    plan : rngcert.pipeline.parallel.Plan, optional
        Where the batches of simulated tables run (work items of
        :data:`~rngcert.simulate.procedure.TABLE_BATCH` tables): default serial in this process;
        ``Plan()`` for a local Dask cluster of every core, ``Plan(scheduler="tcp://…")`` for an
        existing cluster. The tables, and so the report, are the same wherever they ran; the
        battery and the trackers run here.
    min_edge : float, optional
        Declared minimum tracker edge above ``threshold`` that the tables must detect with
        ``power`` for a PASS (steady state and first shoe; :mod:`rngcert.pipeline.shoe_power`);
        default the game's house edge.
    power : float
        Declared power (default 0.9).

    Returns
    -------
    ShuffleCertification
    """
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
    kernel = _kernel(proc, entropy, min(TRAIN_TABLES, max(100, tables)))
    advance("trackers trained")
    tab = _simulate(proc, tables, entropy, burn_in=burn_in, plan=plan or Plan(workers=1))
    advance(f"{tables} tables simulated")
    data = _procedure_data(proc, tab, kernel, first=False, threshold=threshold, bj_rules=bj_rules)
    out = _run(data, entropy=entropy, group="steady-state", alpha=alpha, n_resamples=n_resamples, standard=standard, power=power)
    house = _house_edges(game, proc.decks, bj_rules)
    min_edge, edge_basis = (min_edge, "declared") if min_edge is not None else default_min_edge(house)
    gate_kw = dict(game=game, min_edge=min_edge, power=power, threshold=threshold, basis=edge_basis, usable=data.usable,
                   players=int(proc.deal.get("players", 7)))
    gate = power_gate(out, n_shoes=data.n_shoes, **gate_kw)
    advance(f"steady state: {out.verdict}")
    notes = [f"simulation: {tables} tables from new decks, each dealing {burn_in} shoe(s) before the tested shoe (steady state); "
             f"stream SeedSequence({entropy}, spawn_key=CRC-32('{SIMULATION_STREAM}'), ...)",
             f"trackers learned the procedure from {min(TRAIN_TABLES, max(100, tables))} independent simulated tables and play only "
             "what a player sees (rank and suit, no deck serials); threshold declared in advance: "
             f"{100 * threshold:+.2f}% of the stake"]
    if decks_note:
        notes.append(decks_note)
    sections = [_section(f"steady state (after {burn_in} shoes)", data, out, extra={"kind": "steady_state", "burn_in": burn_in,
                                                                                   "power_gate": gate})]
    figs = [_figures(data, out) if figures else []]
    report_extra: dict = {"steady_state": {"burn_in": burn_in, "verdict": out.verdict, "tables": tables}}
    outs = [out]
    if first_shoe:
        d1 = _procedure_data(proc, tab, kernel, first=True, threshold=threshold, bj_rules=bj_rules)
        o1 = _run(d1, entropy=entropy, group="first-shoe", alpha=alpha, n_resamples=n_resamples, standard=standard, power=power)
        gate1 = power_gate(o1, n_shoes=d1.n_shoes, **gate_kw)
        advance(f"first shoe: {o1.verdict}")
        outs.append(o1)
        sec1 = _section("first shoe from new decks", d1, o1, notes=["new decks are spread face up in order for inspection "
                                                                   "(004 §2 and §3 rule 3.1.2): a player knows the order before the first shuffle"],
                        extra={"kind": "first_shoe", "power_gate": gate1})
        sections.append(sec1)
        figs.append(_figures(d1, o1) if figures else [])
        fs = {"verdict": o1.verdict, "reasons": o1.reasons, "trackers": sec1["trackers"], "findings": sec1["findings"]}
        if o1.verdict == "FAIL":
            fix, tried = _first_shoe_remedy(proc, entropy, tables=min(tables, 1000), alpha=alpha, threshold=threshold,
                                            n_resamples=n_resamples, standard=standard, bj_rules=bj_rules)
            fs["remedy"] = fix
            fs["remedies_tried"] = tried
            fs["needs"] = (f"new decks need {fix} before the first shoe" if fix else
                           "none of the remedies tried (one or two more riffles, a wash twice as long) is enough for new decks")
        advance("remedies tried" if o1.verdict == "FAIL" else "no remedy needed")
        report_extra["first_shoe"] = fs
    if sensitivity:
        report_extra["sensitivity"] = _sensitivity(proc, entropy, tables=sensitivity_tables, alpha=alpha, threshold=threshold,
                                                   n_resamples=n_resamples, standard=standard, bj_rules=bj_rules)
        advance("sensitivity grid")
        if figures and report_extra["sensitivity"]:
            figs[0].append(plots.sensitivity_figure(report_extra["sensitivity"]))
    verdict = worst([o.verdict for o in outs])
    equipment = {"id": proc.id, "name": proc.name, "kind": "shuffle-procedure", "source": proc.source, "file": proc.path,
                 "procedure": proc.to_dict()}
    inputs = [{"path": proc.path, "sha256": "", "format": "shuffle procedure (TOML)",
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


# ----------------------------------------------------------------------------- scanner logs
def _pickup(proc: Procedure | None, game: str | None):
    """The game's deal-and-pickup function and its parameters (:mod:`rngcert.simulate.games`)."""
    if game is None:
        return None, {}
    return games.play(game).deal, games.deal_params(game, proc)


def _faces(x, serialised):
    a = np.asarray(x).astype(np.int64)
    return np.where(a >= 0, a if serialised else a % 52, -1).astype(np.int16)


def _log_pairs(log, *, decks: int, game, proc, before_mode, before_orders, rng, how: Counter | None = None, side_of: dict | None = None,
               prev_out: dict | None = None):
    """Rebuild (before view, after prefix) pairs from consecutive dealt shoes of each table.

    Returns arrays over the shoes that can be tested and their indices into the log; ``how``
    (when given) counts where each shoe's order before the shuffle came from. ``side_of``
    (``{previous shoe's log index: pickup side}``) overrides the procedure's pickup side shoe by
    shoe; ``prev_out`` (when given) receives ``{log index of a rebuilt shoe: previous shoe's index}``."""
    how = Counter() if how is None else how
    ser = bool(log.serialised)
    dealt = _faces(log.dealt, ser)
    lengths = (dealt >= 0).sum(axis=1)
    fn, params = _pickup(proc, game)
    idx, views = [], []
    rebuild = []  # (slot in views, previous shoe): rebuilt by the pickup in one vectorised call
    recorded = {}
    if log.pair_ids:
        pos = {k: i for i, k in enumerate(log.after_ids)}
        for j, k in enumerate(log.pair_ids):
            recorded[pos[k]] = _faces(log.pair_before[j], ser)
    for table, seq in log.sequence().items():
        for j, i in enumerate(seq):
            if i in recorded:
                idx.append(i)
                views.append(recorded[i])
                how["recorded in the log (stage before)"] += 1
            elif before_orders is not None and (table, log.meta[i]["shoe"]) in before_orders:
                idx.append(i)
                views.append(_faces(before_orders[(table, log.meta[i]["shoe"])], ser))
                how["given in the --before file"] += 1
            elif before_mode == "new-deck":
                idx.append(i)
                views.append(_faces(new_shoe(decks), ser))
                how["new decks in order (--before new-deck)"] += 1
            elif j > 0:
                prev = seq[j - 1]
                idx.append(i)
                if before_mode == "previous" or fn is None:
                    views.append(dealt[prev].astype(np.int16))
                    how["the previous shoe's dealt order"] += 1
                else:
                    how["rebuilt from the previous shoe by the pickup rules"] += 1
                    rebuild.append((len(views), prev))
                    views.append(None)
    if not idx:
        return None
    if rebuild:
        slots, prevs = (np.array(x) for x in zip(*rebuild))
        if prev_out is not None:
            prev_out.update({int(idx[s_]): int(p_) for s_, p_ in zip(slots, prevs)})
        sides = np.array([(side_of or {}).get(int(p_), params.get("pickup", "")) for p_ in prevs])
        for side in np.unique(sides):  # one vectorised rebuild per pickup side
            sel = sides == side
            kw = dict(params) | ({"pickup": str(side)} if side else {})
            rebuilt = D.rebuild_before(fn, dealt[prevs[sel]], lengths[prevs[sel]], **kw)
            for s_, v in zip(slots[sel], np.where(rebuilt >= 0, rebuilt, -1).astype(np.int16)):
                views[s_] = v
    idx = np.array(idx)
    view = np.stack(views)
    after_prefix = dealt[idx]
    return idx, view, after_prefix


def certify_log(log, *, source: str, decks: int, game: str | None, proc: Procedure | None = None, before_mode: str = "pickup",
                before_orders: dict | None = None, seed: int | None = None, alpha: float = 0.01, threshold: float = 0.0,
                n_resamples: int = 1999, standard: str | None = None, figures: bool = True, command: str = "",
                fit: bool = True, inputs: Sequence[dict] = (), notes: Sequence[str] = (), progress=None,
                min_edge: float | None = None, power: float = DEFAULT_POWER, pickup: str | None = None,
                sensitivity: bool = False) -> ShuffleCertification:
    """Certify a card-scanner shoe log (see the module docstring).

    When the order before a shuffle is rebuilt through a pickup whose side the rules leave to the
    dealer (baccarat, 004 §2 rule 3.6.2), the side is fitted from the log per dealer and shift
    (:mod:`rngcert.pipeline.pickup_side`) unless ``pickup`` declares it; where the log cannot tell,
    the log is certified with each plausible side and the verdict is the worst of them. The other
    parameters are documented at :func:`_certify_log_once`, which certifies once with given sides.

    Parameters
    ----------
    pickup : str, optional
        A declared pickup side for every shoe (``"banker-first"``, ``"player-first"``): not fitted.
    sensitivity : bool
        Also certify the log under every plausible pickup side and at both ends of every wash
        parameter's interval, and tabulate the verdicts (``report["log_sensitivity"]``).
    """
    from rngcert.pipeline.pickup_side import SIDES, fit_sides, kept_pairs

    kw = dict(source=source, decks=decks, game=game, proc=proc, before_mode=before_mode, before_orders=before_orders, seed=seed,
              alpha=alpha, threshold=threshold, n_resamples=n_resamples, standard=standard, figures=figures, command=command, fit=fit,
              inputs=inputs, notes=notes, progress=progress, min_edge=min_edge, power=power)
    sides = SIDES.get(game) if game and before_mode == "pickup" else None
    if pickup is not None:
        if not sides or pickup not in sides:
            raise InputError(f"pickup {pickup!r}: the {game or 'no'} game's pickup sides are {list(sides or [])}")
    if not sides:
        cert = _certify_log_once(log, **kw)
        return _log_sensitivity(cert, log, kw, [None]) if sensitivity else cert
    # rebuild with each side; the shoes rebuilt through a pickup (not recorded or declared before orders)
    prev_of: dict = {}
    built = {}
    for sd in sides:
        side_all = {i: sd for i in range(log.n_shoes)}
        built[sd] = _log_pairs(log, decks=decks, game=game, proc=proc, before_mode=before_mode, before_orders=before_orders,
                               rng=None, side_of=side_all, prev_out=prev_of)
    if not prev_of or built[sides[0]] is None:
        cert = _certify_log_once(log, **kw)
        return _log_sensitivity(cert, log, kw, [None]) if sensitivity else cert
    idx = built[sides[0]][0]
    rows = np.array([j for j, i in enumerate(idx) if int(i) in prev_of])
    prevs = np.array([prev_of[int(idx[j])] for j in rows])
    if pickup is not None:
        assignments = [{i: pickup for i in range(log.n_shoes)}]
        info = {"status": "declared", "side": pickup, "groups": [], "method": "declared with --pickup (not fitted)"}
    else:
        kept = {sd: kept_pairs(built[sd][1][rows], built[sd][2][rows]) for sd in sides}
        by = [c for c in ("dealer", "shift") if c in log.columns]
        keys = [tuple(log.meta[int(p_)][c] for c in by) for p_ in prevs]
        labels = sorted(set(keys))
        gid = np.array([labels.index(k) for k in keys])
        names = [", ".join(f"{c} {v or '(none)'}" for c, v in zip(by, k)) or "whole log" for k in labels]
        info = fit_sides(kept, gid, names)
        info["grouped_by"] = by or ["whole log (no dealer or shift column)"]
        group_of_prev = {int(p_): int(g) for p_, g in zip(prevs, gid)}
        assignments = [{p_: a[g] for p_, g in group_of_prev.items()} for a in info["assignments"]]
    runs = []
    for a in assignments:
        c = _certify_log_once(log, **kw, side_of=a, split=len(assignments))
        best = max((t for t in c.report["tables"][0].get("trackers", []) if t.get("edge") is not None), key=lambda t: t["edge"], default=None)
        runs.append((c, {"sides": sorted(set(a.values())), "verdict": c.verdict,
                         "best_tracker": None if best is None else {"name": best["name"], "edge": best["edge"], "ci95": best["ci95"]}}))
    order = {"PASS": 0, "SUSPECT": 1, "INCONCLUSIVE": 2, "FAIL": 3}
    cert = max(runs, key=lambda x: order[x[0].verdict])[0] if len(runs) > 1 else runs[0][0]
    named = [{g["group"]: asg[gi] for gi, g in enumerate(info["groups"])} for asg in info.get("assignments", [])] if pickup is None else []
    info = dict(info) | {"runs": [r for _, r in runs], "verdict": cert.verdict, "assignments": named}
    if pickup is None:
        meas = [g for g in info["groups"] if g["side"]]
        unid = [g for g in info["groups"] if not g["side"]]
        rule_ref = G.get(game).pickup_rule
        line = f"pickup side ({rule_ref} leaves it to each dealer for a shift), fitted from the log: "
        line += "; ".join(f"{g['group']}: {g['side']} measured ({g['evidence']})" for g in meas)
        if unid:
            line += ("; " if meas else "") + "; ".join(f"{g['group']}: not identifiable from this log ({g['evidence']})" for g in unid)
            line += ("; the log was certified with each plausible side and the verdict is the worst: "
                     + ", ".join(f"{'/'.join(r['sides'])} {r['verdict']}" for _, r in runs))
        cert.report["notes"].append(line)
        info["sentence"] = line
    else:
        cert.report["notes"].append(f"pickup side declared: {pickup} (--pickup; not fitted from the log)")
        info["sentence"] = cert.report["notes"][-1]
    cert.report["pickup_side"] = info
    if cert.report.get("parameters") is not None and not any(p_["name"] == "deal.pickup" for p_ in cert.report["parameters"]):
        cert.report["parameters"].append({"name": "deal.pickup", "label": "deal.pickup", "value": sides[0], "status": "assumed",
                                          "interval": None, "source": "004 default"})
    for p_ in cert.report.get("parameters") or []:
        if p_["name"] == "deal.pickup":  # the procedure's declared side is not what the log was read with
            if pickup is not None:
                p_.update(value=pickup, status="assumed", source="declared with --pickup")
            elif all(g["side"] for g in info["groups"]):
                vals = sorted({g["side"] for g in info["groups"]})
                p_.update(value=vals[0] if len(vals) == 1 else "/".join(vals), status="measured", source=info["sentence"])
            else:
                p_.update(value="/".join(sides), status="not identifiable",
                          source="not identifiable from this log for some dealers or shifts: the verdict is the worst over both sides")
    cert.report["reconstruction"]["pickup_side"] = info.get("side") or [r["sides"] for _, r in runs]
    if sensitivity:
        cert = _log_sensitivity(cert, log, kw, assignments)
    return cert


def _log_sensitivity(cert, log, kw, assignments):
    """--sensitivity on a log: the verdict under each plausible pickup assignment and at both ends of
    every fitted wash parameter's interval (trackers trained there); the report's verdict is unchanged
    (it is already the worst over the plausible sides), the table shows how much rests on each."""
    rows = []
    fitp = (cert.report.get("fit") or {}).get("parameters") or {}
    corners = [None]
    if fitp:
        names = list(fitp)
        ends = [(fitp[n_]["interval"][0], fitp[n_]["interval"][1]) for n_ in names]
        from itertools import product

        corners += [{n_: e[i] for n_, e, i in zip(names, ends, idx_)} for idx_ in product((0, 1), repeat=len(names))]
    for a in assignments:
        for cn in corners:
            c = _certify_log_once(log, **kw, side_of=a, wash_override=cn)
            best = max((t for t in c.report["tables"][0].get("trackers", []) if t.get("edge") is not None), key=lambda t: t["edge"], default=None)
            rows.append({"pickup": "declared/default" if a is None else "/".join(sorted(set(a.values()))),
                         "wash": "fitted" if cn is None else {k.split(".")[-1]: v for k, v in cn.items()}, "verdict": c.verdict,
                         "edge": None if best is None else best["edge"], "ci95": None if best is None else best["ci95"],
                         "tracker": None if best is None else best["name"]})
    cert.report["log_sensitivity"] = {
        "rows": rows,
        "note": ("each row certifies this log again with the pickup side(s) shown and the trackers trained on the procedure with the "
                 "wash shown (fitted, or an end of its 95% interval); the report's verdict is the worst over the plausible pickup sides "
                 "(and the worst case of a wash parameter the log cannot identify), the table shows what each assumption changes")}
    return cert


def _certify_log_once(log, *, source: str, decks: int, game: str | None, proc: Procedure | None = None, before_mode: str = "pickup",
                      before_orders: dict | None = None, seed: int | None = None, alpha: float = 0.01, threshold: float = 0.0,
                      n_resamples: int = 1999, standard: str | None = None, figures: bool = True, command: str = "",
                      fit: bool = True, inputs: Sequence[dict] = (), notes: Sequence[str] = (), progress=None,
                      min_edge: float | None = None, power: float = DEFAULT_POWER, side_of: dict | None = None,
                      wash_override: dict | None = None, split: int = 1) -> ShuffleCertification:
    """Certify a card-scanner shoe log once, with given pickup sides (see the module docstring).

    ``side_of`` (``{previous shoe's log index: pickup side}``) overrides the procedure's pickup side
    in the rebuild; ``wash_override`` (``{parameter: value}``) trains the trackers on that wash
    instead of the fitted one (a sensitivity point); ``split`` divides every section's level (the
    number of plausible pickup assignments whose worst verdict is reported).

    Parameters
    ----------
    log : rngcert.collect.shoelog.ShoeLog
    source : str
        The log's path (for the report).
    decks : int
    game : {"baccarat", "blackjack"} or None
    proc : Procedure, optional
        The procedure the table follows: its pickup rebuilds the order before each shuffle, its
        kind sets the standard, its wash is fitted. Default: the game's pickup rules of 004.
    before_mode : {"pickup", "previous", "new-deck"}
        How a shoe's order before the shuffle is known when the log has no ``before`` stage:
        rebuilt from the previous shoe by the pickup, the previous shoe's order itself (an
        electronic reshuffle of the shoe as dealt), or new-deck order for every shoe.
    before_orders : dict, optional
        ``{(table, shoe_id): order}`` declared orders before the shuffle (``--before FILE``).
    standard : {"edge", "uniform"}, optional
        Default: "edge" when ``proc`` is a manual procedure, else "uniform".
    progress : callable, optional
        ``progress(done, total, label)`` as each stage finishes (orders rebuilt, wash fitted,
        trackers trained, one battery per section): the CLI's progress bar.
    min_edge : float, optional
        Declared minimum tracker edge (per unit staked, above ``threshold``) that the shoes must
        detect with ``power`` for a PASS (:mod:`rngcert.pipeline.shoe_power`); default the game's
        house edge. Without that power a PASS is INCONCLUSIVE with the shoes needed.
    power : float
        Declared power (default 0.9, as the wheel's ``--power``).

    Returns
    -------
    ShuffleCertification
    """
    step = [0, 3]

    def advance(label: str) -> None:
        step[0] += 1
        if progress is not None:
            progress(step[0], max(step), label)

    if before_mode not in ("pickup", "previous", "new-deck"):
        raise InputError(f"before must be 'pickup', 'previous', 'new-deck' or a file, got {before_mode!r}")
    entropy = int(root(seed).entropy)
    standard = standard or (G.get(game).default_standard if proc is not None and proc.kind == "manual" and game is not None else "uniform")
    N = 52 * decks
    ser = bool(log.serialised)
    notes = list(notes)
    bj_rules = _rules(proc, decks)
    if game == "blackjack" and bj_rules is None:
        from rngcert.stats.blackjack import Rules

        bj_rules = Rules(decks=decks)
        notes.append("blackjack rules not given (no --procedure): the trackers play the defaults of rngcert.stats.blackjack.Rules")
    house = _house_edges(game, decks, bj_rules)
    min_edge, edge_basis = (min_edge, "declared") if min_edge is not None else default_min_edge(house)
    players = int(proc.deal.get("players", 7)) if proc and proc.game == game else 7
    rng = stream(entropy, SIMULATION_STREAM, "log-completion")
    how: Counter = Counter()
    built = _log_pairs(log, decks=decks, game=game, proc=proc, before_mode=before_mode, before_orders=before_orders, rng=rng, how=how,
                       side_of=side_of)
    cut = None
    if proc is not None and proc.game == game and game is not None:
        cut = N - proc.cut_card_from_back
    dealt_all = _faces(log.dealt, ser)
    lengths_all = (dealt_all >= 0).sum(axis=1)
    usable = int(lengths_all.min())
    if built is None:
        # no order before any shuffle: rank and game tests only (INCONCLUSIVE: the required families cannot run)
        data = ShoeData(None, None, decks, game, proc.dealer_rule if proc and proc.game == "blackjack" else "S17", usable,
                        dealt_all[:, :usable], guess_shoes=min(2000, dealt_all.shape[0]),
                        rotated=None if log.rotated is None else log.rotated[:, :usable])
        out = _run(data, entropy=entropy, group="log", alpha=alpha, n_resamples=n_resamples, standard=standard, power=power)
        gate = power_gate(out, n_shoes=data.n_shoes, game=game, min_edge=min_edge, power=power, threshold=threshold, basis=edge_basis,
                          usable=usable, players=players)
        sections = [_section(f"shoe log {source} ({log.n_shoes} shoes)", data, out, extra={"power_gate": gate})]
        notes.append("no shoe has a known order before its shuffle (one shoe per table, no before stage, no --before): "
                     "only rank and game-level tests ran")
        rep = _header(command=command, inputs=inputs, equipment=_log_equipment(source, decks, proc), subject=f"shoe log {source}",
                      notes=notes, tables=sections, verdict=out.verdict, alpha=alpha, entropy=entropy, seed=seed,
                      n_resamples=n_resamples, decks=decks, game=game, rule=data.rule, standard=standard,
                      rejected_count=len(log.rejected))
        rep["parameters"] = proc.parameters() if proc else []
        rep["house_edge"] = house
        rep["power_effect"] = out.power
        rep["power_gate"] = gate
        add_shoe_findings(rep)
        return ShuffleCertification(rep, [[plots.pvalue_figure(out.results, alpha, out.adjusted)] if figures and out.applicable else []], out)
    idx, view, after_prefix = built
    advance(f"{idx.size} shoes rebuilt")
    known_before = view >= 0
    known_after = after_prefix >= 0
    before_c = D.complete_shoes(view, decks, rng, serialised=ser)
    after_c = D.complete_shoes(after_prefix, decks, rng, serialised=ser)
    n_filled_b = int((~known_before).sum())
    n_filled_a = int((~known_after).sum())
    notes.append(f"{idx.size} of {log.n_shoes} shoes have a known order before the shuffle "
                 f"({'; '.join(f'{v} {k}' for k, v in how.items())}); "
                 f"{n_filled_b / max(idx.size, 1):.1f} cards per shoe before and {n_filled_a / max(idx.size, 1):.1f} after it were never "
                 "seen and are filled at random (valid under a uniform shuffle; they only dilute what a weak one leaves)")
    extra = {}
    measured = None
    if fit and proc is not None and wash_parameters(proc) is not None:
        base = proc.with_decks(decks) if proc.decks != decks else proc
        try:
            f = fit_procedure(base, before_c, after_c, entropy, known_before=known_before, known_after=known_after, serialised=ser)
        except InputError as exc:
            f = {"error": str(exc)}
        extra["fit"] = f
        if f and "parameters" in f:
            vals = {k: v["value"] for k, v in f["parameters"].items()}
            ivs = {k: v["interval"] for k, v in f["parameters"].items()}
            # a parameter whose interval reaches both ends of the fitting grid is not identifiable from this
            # log: the trackers train on its worst case over the interval (the least mixing: the shortest
            # travel, the largest clumps), and it is never called measured
            wp = wash_parameters(base) or []
            unid = [k for k, v in f["parameters"].items() if v.get("open_low") and v.get("open_high")]
            for k in unid:
                vals[k] = ivs[k][0] if k == wp[0] else ivs[k][1]
                f["parameters"][k]["status"] = "not identifiable from this log"
                f["parameters"][k]["trained_on"] = vals[k]
            if wash_override:
                vals.update({k: float(v) for k, v in wash_override.items()})
            src = f"fit to {f['n_shoes']} shoes of {source}"
            measured = base.with_params(vals, status="measured", intervals=ivs, source=src)
            extra["parameters"] = measured.parameters()
            for p_ in extra["parameters"]:
                if p_["name"] in unid:
                    p_["status"] = "not identifiable"
                    p_["source"] = (f"{src}: the 95% interval reaches both ends of the fitting grid ({ivs[p_['name']][0]:g}..{ivs[p_['name']][1]:g}); "
                                    f"not identifiable from this log; the trackers train on its worst case, {vals[p_['name']]:g}")
            extra["measured_procedure"] = {"parameters": [{"name": k, "status": "not identifiable" if k in unid else "measured",
                                                           "interval": ivs[k], "value": vals[k], "source": src} for k in vals]}
            if unid:
                notes.append("not identifiable from this log: " + ", ".join(f"{f['parameters'][k]['label']} (interval {ivs[k][0]:g}..{ivs[k][1]:g}, "
                                                                             f"the whole fitting grid)" for k in unid)
                             + "; the trackers train on the worst case over the interval (" + ", ".join(f"{k} = {vals[k]:g}" for k in unid) + ")")
            if wash_override:
                notes.append("sensitivity point: the trackers train on the wash " + ", ".join(f"{k} = {v:g}" for k, v in wash_override.items()))
    advance("wash fitted" if measured is not None else "no wash to fit")
    # trackers learn the shuffle from one half of the shoes and play the other (cross-fitting)
    fold = np.arange(idx.size) % 2
    kernels = []
    if measured is not None:
        # the tracker has studied the procedure as measured: its kernel comes from simulated tables
        # of the measured procedure (card identity known), and it plays every shoe of the log
        kernels.append((_kernel(measured, entropy, TRAIN_TABLES, key=("tracker-training", "measured")), np.arange(idx.size)))
        notes.append(f"trackers learned the shuffle from {TRAIN_TABLES} simulated tables of the procedure with the wash measured here"
                     + (" (worst case where not identifiable)" if extra.get("fit", {}).get("parameters") and any(
                         v.get("status") for v in extra["fit"]["parameters"].values()) else ""))
    else:
        for f_ in (0, 1):
            tr = fold != f_
            if tr.sum() >= 10:
                k = TR.learn_kernel(before_c[tr], after_c[tr], lags=KERNEL_LAGS, known_before=known_before[tr], known_after=known_after[tr])
                kernels.append((k, np.flatnonzero(fold == f_)))
        if kernels:
            notes.append("trackers learned the shuffle from one half of the shoes and played the other, both ways (cross-fitting)")
    rot = None if log.rotated is None else log.rotated[idx]
    dealer = [log.meta[i]["dealer"] for i in idx]
    cut_pos = cut if cut is not None else int(np.median(lengths_all[idx]))
    sections, figs, outs = [], [], []
    groups = [("all shoes", np.arange(idx.size))]
    dealers = sorted({d for d in dealer if d})
    if len(dealers) > 1:
        groups += [(f"dealer {d}", np.array([j for j, x in enumerate(dealer) if x == d])) for d in dealers]
    step[1] = 3 + len(groups)
    advance("trackers trained")
    a_each = (alpha if len(groups) == 1 else alpha / 2) / split
    a_dealer = alpha / (2 * max(1, len(groups) - 1)) / split
    data_all = None
    for gi, (title, rows) in enumerate(groups):
        level = a_each if gi == 0 else a_dealer
        ks = _subset_kernels(kernels, rows)
        data = ShoeData(before_c[rows], after_c[rows], decks, game, bj_rules.dealer if bj_rules else "S17",
                        min(cut_pos, usable) if game else None, after_prefix[rows][:, :usable] if usable < N else None,
                        guess_shoes=min(2000, rows.size), mc_shoes=500,
                        before_view=view[rows] if ks else None, kernel=ks or None, threshold=threshold, bj_rules=bj_rules,
                        players=int(proc.deal.get("players", 7)) if proc and proc.game == game else 7,
                        rotated=None if rot is None else rot[rows])
        if data.kernel is not None and len(data.kernel) == 1 and data.kernel[0][1].size == rows.size:
            data.kernel = data.kernel[0][0]  # one kernel for every shoe (not trained on them)
        o = _run_folds(data, entropy=entropy, group=f"log:{title}", alpha=level, n_resamples=n_resamples, standard=standard, power=power)
        r_needed = _resolution_needed(o, level, n_resamples)
        sec_notes = [f"family-wise level {level:.3g}" + ("" if len(groups) == 1 else " (alpha split between all shoes and the dealers, Bonferroni)")
                     + (f" (alpha also split between the {split} plausible pickup-side assignments, Bonferroni: the verdict is the worst of "
                        "them, so a fair shuffle still fails with probability at most alpha)" if split > 1 else "")]
        if r_needed:
            data.kernel = (ks[0][0] if len(ks) == 1 and ks[0][1].size == rows.size else ks) or None  # as before the first run
            o = _run_folds(data, entropy=entropy, group=f"log:{title}", alpha=level, n_resamples=r_needed, standard=standard, power=power)
            sec_notes.append(f"Monte Carlo replicates raised from {n_resamples} to {r_needed} for this sample: with {n_resamples} the "
                             f"smallest p-value, {1 / (n_resamples + 1):.2g}, could not reject after Holm at level {level:.3g}, "
                             "and some test sat at it")
        # PASS needs power: the sample of all shoes is gated; a dealer's share states its power only
        gate = power_gate(o, n_shoes=rows.size, game=game, min_edge=min_edge, power=power, threshold=threshold, basis=edge_basis,
                          usable=data.usable, players=players, apply=gi == 0)
        if gi > 0 and gate["status"] == "underpowered":
            sec_notes.append("power: " + gate["sentence"] + " (a dealer's share of the shoes; the log's verdict rests on all shoes)")
        advance(f"{title}: {o.verdict}")
        outs.append(o)
        sec = _section(title, data, o, notes=sec_notes, extra={"kind": "log" if gi == 0 else "dealer", "power_gate": gate})
        sections.append(sec)
        figs.append(_figures(data, o) if figures and gi == 0 else [])
        if gi == 0:
            data_all = data
    verdict = worst([o.verdict for o in outs])
    rep = _header(command=command, inputs=inputs, equipment=_log_equipment(source, decks, proc), subject=f"shoe log {source} ({log.n_shoes} shoes)",
                  notes=notes, tables=sections, verdict=verdict, alpha=alpha, entropy=entropy, seed=seed, n_resamples=n_resamples,
                  decks=decks, game=game, rule=data_all.rule, standard=standard, rejected_count=len(log.rejected))
    rep["parameters"] = extra.pop("parameters", proc.parameters() if proc else [])
    rep |= extra
    rep["house_edge"] = house
    rep["power_effect"] = outs[0].power
    rep["power_gate"] = sections[0]["power_gate"]
    rep["reconstruction"] = {"before": before_mode, "shoes_tested": int(idx.size), "cards_filled_before_per_shoe": n_filled_b / idx.size,
                             "cards_filled_after_per_shoe": n_filled_a / idx.size,
                             "pickup": (proc.id if proc is not None else f"the {game} pickup of 004 (defaults)") if game else "none"}
    add_shoe_findings(rep)
    return ShuffleCertification(rep, figs, outs[0])


def _resolution_needed(o: BatteryOutcome, level: float, n_resamples: int) -> int | None:
    """Monte Carlo replicates a section needs, or None when it has enough.

    A Monte Carlo p-value is at least 1 / (R + 1). When that floor is above Holm's first threshold
    level / k (k applicable tests), a test can never reject, and a PASS would rest on the
    resolution, not on the data (a dealer's sample at alpha / 6 with R = 1999: floor 0.0005 against
    0.00017). When some unrejected test sits at the floor, the section is run again with R + 1 the
    next multiple of 1,000 above 2k / level (the floor half of Holm's first threshold); otherwise the
    floor did not bind and the result stands.
    """
    applicable = [r for r in o.results if getattr(r, "applicable", False)]
    k = max(len(applicable), 1)
    floor = 1.0 / (n_resamples + 1)
    if floor <= level / k:
        return None
    if not any(float(r.pvalue) <= floor * (1 + 1e-9) and r.name not in o.rejected for r in applicable):
        return None
    return int(math.ceil(2 * k / level / 1000.0)) * 1000 - 1


def _subset_kernels(kernels, rows):
    """Kernels of the cross-fitting folds restricted to the section's shoes (row indices)."""
    out = []
    pos = {int(r): j for j, r in enumerate(rows)}
    for k, fold_rows in kernels:
        sel = np.array([pos[int(r)] for r in fold_rows if int(r) in pos], dtype=np.int64)
        if sel.size:
            out.append((k, sel))
    return out


def _run_folds(data: ShoeData, **kw) -> BatteryOutcome:
    """Run the battery; with cross-fitted kernels the trackers of each fold use the other fold's kernel."""
    if not isinstance(data.kernel, list):
        return _run(data, **kw)
    power = kw.get("power", DEFAULT_POWER)
    from rngcert.battery import shuffle as BS

    folds = data.kernel
    specs = []
    for spec in BS.battery_for(data.game).specs:
        if is_tracker(spec.name) and "tracker" in spec.needs:
            specs.append(_fold_spec(spec, folds))
        else:
            specs.append(spec)
    battery = BS.Battery("shuffle", tuple(specs), BS.REQUIRED)
    data.kernel = folds[0][0]  # for lacks("tracker")
    results, errors, keys = evaluate_shuffle(data, entropy=kw["entropy"], n_resamples=kw["n_resamples"], alpha=kw["alpha"],
                                             group=kw["group"], battery=battery)
    out = decide_shuffle(results, alpha=kw["alpha"], standard=kw["standard"], errors=errors,
                         seeds={"entropy": str(kw["entropy"]), "spawn_keys": keys})
    out.power = _power(out, data, power)
    return out


def _fold_spec(spec, folds):
    from dataclasses import replace

    from rngcert.battery.shuffle import ShoeData as SD

    def run(d: SD, ctx, **params):
        parts = []
        for k, rows in folds:
            sub = SD(d.before[rows], d.after[rows], d.decks, d.game, d.rule, d.usable, None if d.dealt is None else d.dealt[rows],
                     before_view=d.before_view[rows], kernel=k, threshold=d.threshold, bj_rules=d.bj_rules, players=d.players)
            r = spec.func(sub, ctx, **params)
            parts.append(r)
        # re-assemble per-shoe stakes and returns of the folds into one edge test
        app = [r for r in parts if r.applicable]
        if not app:
            return parts[0]
        tot_units = sum(r.details["units"] for r in app)
        e_num = sum(r.details["edge"] * r.details["units"] for r in app)
        var = sum((r.details["se"] * r.details["units"]) ** 2 for r in app)
        edge = e_num / tot_units
        se = math.sqrt(var) / tot_units
        d0 = dict(app[0].details)
        d0.update({"edge": edge, "se": se, "ci95": [edge - 1.96 * se, edge + 1.96 * se], "units": tot_units,
                   "n_shoes": sum(r.details["n_shoes"] for r in app), "bets_shoes": sum(r.details["bets_shoes"] for r in app),
                   "cross_fitting": "trackers learned from one half of the shoes and played the other, both ways"})
        z = (edge - d.threshold) / se if se > 0 else 0.0
        from rngcert.stats.result import TestResult

        return TestResult(spec.name, app[0].requirement, edge, None, max(float(sps.norm.sf(z)), float(np.finfo(float).tiny)),
                          d0["n_shoes"], app[0].method + ", cross-fitted", d0 | {"z": z})

    return replace(spec, func=run)


def _log_equipment(source, decks, proc):
    eq = {"id": "shoe-log", "name": f"card-scanner log, {decks} deck(s)", "kind": "shoe", "source": str(source)}
    if proc is not None:
        eq["procedure"] = proc.to_dict()
    return eq


def certify_shoes(before, after, *, decks: int, game: str | None, rule: str = "S17", usable: int | None = None, dealt=None,
                  subject: str, equipment: dict, inputs: Sequence[dict], seed: int | None = None, alpha: float = 0.01,
                  command: str = "", figures: bool = True, notes: Sequence[str] = (), rejected_count: int = 0,
                  n_resamples: int = 1999, standard: str = "uniform") -> ShuffleCertification:
    """Run the shuffle battery on given shoes before/after a shuffle (no trackers) and build the report."""
    entropy = int(root(seed).entropy)
    data = ShoeData(before, after, decks, game, rule, usable, dealt)
    out = _run(data, entropy=entropy, group="shuffle", alpha=alpha, n_resamples=n_resamples, standard=standard)
    sections = [_section(subject, data, out, notes=notes)]
    rep = _header(command=command, inputs=inputs, equipment=equipment, subject=subject, notes=notes, tables=sections,
                  verdict=out.verdict, alpha=alpha, entropy=entropy, seed=seed, n_resamples=n_resamples, decks=decks, game=game,
                  rule=rule, rejected_count=rejected_count, standard=standard)
    rep["power_effect"] = out.power
    add_shoe_findings(rep)
    return ShuffleCertification(rep, [_figures(data, out) if figures else []], out)
