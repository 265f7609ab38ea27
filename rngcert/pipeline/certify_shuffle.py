"""Shuffle certification end to end: shoes before/after a shuffle → shuffle battery → verdict →
report, with the same verdict machinery and report writer as the wheel (DESIGN §4).

Two sources of shoes: a shuffle procedure (packaged or a lab's TOML) simulated for N tables, or
a card-scanner shoe log. Both end in :func:`certify_shoes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rngcert.battery.core import BatteryOutcome, decide
from rngcert.battery.shuffle import SHUFFLE, ShoeData, evaluate_shuffle
from rngcert.report import cite, plots, schema
from rngcert.seeding import root
from rngcert.stats.shuffle import shuffle_plot_data


@dataclass
class ShuffleCertification:
    report: dict
    figures: list[list]
    outcome: BatteryOutcome

    @property
    def verdict(self) -> str:
        return self.report["verdict"]


def certify_shoes(
    before: np.ndarray | None,
    after: np.ndarray | None,
    *,
    decks: int,
    game: str | None,
    rule: str = "S17",
    usable: int | None = None,
    dealt: np.ndarray | None = None,
    subject: str,
    equipment: dict,
    inputs: Sequence[dict],
    seed: int | None = None,
    alpha: float = 0.01,
    command: str = "",
    figures: bool = True,
    notes: Sequence[str] = (),
    rejected_count: int = 0,
    n_resamples: int = 1999,
) -> ShuffleCertification:
    """Run the shuffle battery on shoes and build the report.

    Parameters
    ----------
    before, after : (n_shoes, 52·decks) int arrays or None
        Card orders before and after the shuffle under test (None when a log has no ``before``
        stage; then only tests on the dealt order run).
    decks : int
        Decks per shoe.
    game : {"baccarat", "blackjack"} or None
        Adds the game-level tests.
    dealt : (n_shoes, L) int array, optional
        Dealt prefixes from a scanner log (to the cut card).
    seed : int, optional
        Root seed of the Monte Carlo p-values (fresh entropy, recorded, when None).
    """
    entropy = int(root(seed).entropy)
    data = ShoeData(before, after, decks, game, rule, usable, dealt)
    results, errors, keys = evaluate_shuffle(data, entropy=entropy, n_resamples=n_resamples, alpha=alpha)
    # without the order before the shuffle, the tests that track it cannot run: no PASS then
    out = decide(results, alpha=alpha, errors=errors, required=SHUFFLE.required, seeds={"entropy": str(entropy), "spawn_keys": keys})
    notes = list(notes)
    mc = [r for r in results if r.applicable and r.method.startswith("monte-carlo")]
    n_app = max(1, len(out.applicable))
    if mc and 1.0 / (n_resamples + 1) >= alpha / n_app:
        notes.append(
            f"{len(mc)} test(s) use Monte Carlo p-values with R = {n_resamples}: their smallest p-value "
            f"{1 / (n_resamples + 1):.2g} is not below Holm's first threshold {alpha / n_app:.2g}, so they cannot reject "
            f"alone; use --resamples {int(2 * n_app / alpha)} or more"
        )
    n_shoes = int((after if after is not None else dealt).shape[0])
    section = {
        "table": subject,
        "n": n_shoes,
        "void": 0,
        "notes": list(notes),
        "labels": [],
        "min_holm": min(out.adjusted.values()) if out.adjusted else None,
        "battery": out.to_dict(),
    }
    figs: list = []
    if figures and before is not None and after is not None:
        pdata = shuffle_plot_data(before, after)
        section["plot_data"] = {"gsr_equivalent": pdata.get("gsr_equivalent")}
        figs = _figures(pdata, out)
    elif figures and out.applicable:
        figs = [plots.pvalue_figure(out.results, alpha, out.adjusted)]
    report = schema.header(
        subject=subject,
        command=command,
        inputs=inputs,
        rejected_count=rejected_count,
        equipment=equipment,
        equipment_line=f"{equipment.get('name', subject)} — {decks} deck(s), game {game or 'none'}"
        + (f", dealer rule {rule}" if game == "blackjack" else ""),
        rules=[str(equipment["source"])] if equipment.get("kind") == "shuffle-procedure" and equipment.get("source") else [],
        declared={"certification level alpha": alpha, "decks per shoe": decks, "Monte Carlo replicates": n_resamples},
        unit="shoes",
        section_word="Shoes",
        level="cards",
        policy=schema.policy(alpha, "holm (over all applicable tests)", cite.shuffle_requirement()),
        seed={"entropy": str(entropy), "how": "given with --seed" if seed is not None else "fresh OS entropy, recorded here", "n_resamples": n_resamples},
        notes=list(notes),
    )
    report["tables"] = [section]
    report["verdict"] = out.verdict
    return ShuffleCertification(report, [figs], out)


def _figures(pdata: dict, out: BatteryOutcome) -> list:
    figs = [plots.position_heatmap(pdata["heatmap"]), plots.rising_histogram(pdata["rising"], pdata.get("gsr_equivalent")), plots.guessing_histogram(pdata["guessing"])]
    if out.applicable:
        figs.append(plots.pvalue_figure(out.results, out.alpha, out.adjusted))
    return figs
