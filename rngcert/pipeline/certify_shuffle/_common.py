"""The pieces every shuffle certification shares: constants, the result type, the house edges, the
findings and trackers in words, the power statement, the report header, one battery run, a report
section and its figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rngcert.battery.core import BatteryOutcome
from rngcert.battery.shuffle import POLICY_TEXT, ShoeData, decide_shuffle, evaluate_shuffle, is_tracker
from rngcert.equipment.procedure import Procedure
from rngcert.report import cite, plots, schema, text
from rngcert.simulate import games
from rngcert.stats import distributions as dist  # scipy.stats' laws without its import (over 0.5 s)
from rngcert.stats.shuffle import adjacency_share, shuffle_plot_data, succession_law

REQUIREMENT_TEXT = (
    "Requirement: a shuffle must leave every order of the shoe equally likely — the dealt cards statistically "
    "independent of the order they were picked up in, uniformly distributed over positions, and unpredictable "
    "to a player who saw the previous shoe (the shuffle-tracking threat). A regulator acts on the player's edge: "
    "the report states what realistic trackers gain, in % of the stake, with its interval."
)
#: Power at which a shoe sample must detect the declared minimum tracker edge for a PASS (as the wheel's ``--power``).
DEFAULT_POWER = 0.9


@dataclass
class ShuffleCertification:
    report: dict
    figures: list[list]
    outcome: BatteryOutcome

    @property
    def verdict(self) -> str:
        return self.report["verdict"]


# ----------------------------------------------------------------------------- pieces
def keep_shuffle_heap() -> None:
    """Keep the shuffle simulation's freed arrays on the C heap for the next step instead of mapping and
    faulting them in again (:data:`rngcert.collect.heap.SHUFFLE_TRIM_THRESHOLD`: fewer page faults, the same
    numbers). Called where a shuffle certification starts and by each of its work items (a Dask worker
    starts no certification of its own); the first call of a process sets the thresholds."""
    from rngcert.collect.heap import SHUFFLE_MMAP_THRESHOLD, SHUFFLE_TRIM_THRESHOLD, keep_freed_heap

    keep_freed_heap(SHUFFLE_TRIM_THRESHOLD, SHUFFLE_MMAP_THRESHOLD)


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


def _power(outcome: BatteryOutcome, data: ShoeData, power: float = DEFAULT_POWER, standard: str = "uniform") -> dict:
    """Smallest adjacency retention and smallest tracker edge detectable with the given power (default 90%); the statement
    says which verdict a detection gives under ``standard`` (DESIGN §4: power is the probability of a FAIL): under
    "uniform" a rejection FAILs; under "edge" a retention no tracker exploits is a finding (SUSPECT), and only the
    trackers' edge FAILs."""
    m = max(1, len(outcome.applicable))
    a1 = outcome.alpha / m  # Holm's first threshold: the level a single effect must pass
    z_a, z_b = dist.norm_isf(a1), dist.norm_isf(1.0 - power)
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
        out["adjacency_note"] = (("for card identity (one deck)" if data.decks == 1 else "for card identity (serialised decks)") if unique else
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
        edge = standard == "edge"
        parts.append(f"with {data.n_shoes} shoes the battery {'rejects' if edge else 'FAILs'}, with {100 * power:.0f}% power at level {a1:.2g}, "
                     f"a shuffle that keeps {100 * rho:.2f}% of the neighbouring pairs together beyond the {mu0:.2f} pair a shoe that a "
                     f"uniform shuffle keeps by chance ({rho * (n - 1):.2f} more pairs a shoe; {out['adjacency_note']})"
                     + (" — under the edge rule a finding (SUSPECT), not a FAIL, unless no tracker could measure the edge" if edge else ""))
    det = [f"{k.replace('_', ' ')} {100 * v:+.2f}%" for k, v in edges.items() if v is not None]
    if det:
        parts.append(("and it FAILs" if parts else "the battery FAILs") + f", with {100 * power:.0f}% power, a tracker edge above "
                     + ", ".join(det) + " of the stake")
    out["statement"] = "; ".join(parts) if parts else "no power statement: neither identity tests nor trackers could run"
    return out


def _header(*, command, inputs, equipment, subject, notes, tables, verdict, alpha, entropy, seed, n_resamples, decks, game, rule,
            rejected_count=0, standard="edge", max_rejected=None) -> dict:
    """The report header of every shuffle report, from the one schema of :mod:`rngcert.report.schema`; ``max_rejected``
    (a scanner log's ``--max-rejected`` share) is stated in the declared parameters and the INCONCLUSIVE policy."""
    pol = schema.policy(alpha, "holm (over all applicable tests of a section, trackers included)", cite.shuffle_requirement())
    pol.update(
        verdicts=dict(POLICY_TEXT), standard=standard,
        standard_text=("edge: a manual procedure FAILs on a tracker's edge; statistical rejections are findings"
                       if standard == "edge" else "uniform: a machine or algorithm FAILs on any family-wise rejection"),
    )
    declared = {"certification level alpha": alpha, "decks per shoe": decks, "Monte Carlo replicates": n_resamples}
    if max_rejected is not None:
        limit = f"{100.0 * max_rejected:.3g}%"
        declared["largest share of unreadable rows or of dealt shoes left out"] = limit
        pol["verdicts"]["INCONCLUSIVE"] += (f"; for a scanner log also more than {limit} of a file's data rows unreadable or of the dealt "
                                            "shoes left out for problems (--max-rejected)")
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
        declared=declared,
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
    out.power = _power(out, data, power, standard)
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


def _has_trackers(game: str | None) -> bool:
    """The game's battery has a tracker (without one, no note may say that trackers learned or played anything)."""
    from rngcert.battery.shuffle import battery_for, is_tracker

    return game is not None and any(is_tracker(s.name) for s in battery_for(game).specs)
