"""The Roulette Rage section of a wheel report (003 rules 3.14-3.31; issue 25): the side wager's
rounds counted on the certified spins, their run lengths against the exact law, and the return
each packaged Rage pay table paid on them.

It is part of a table's report when the equipment offers the wager (a single-zero roulette
wheel: :func:`rngcert.equipment.paytables.paytables_for_wheel`). It is a statement about the
side wager, not a test of the battery: the colour-run tests of the battery (runs, longest run)
already see the same sequence, so its p-value does not enter the verdict.
"""

from __future__ import annotations

import numpy as np

from rngcert.equipment.paytables import load_paytable, rage_run_length_law
from rngcert.stats.rage import rage_returns_counts, rage_run_length_test_counts
from rngcert.stats.result import jsonable
from rngcert.stats.runs import ColourRuns, colour_runs

#: The packaged Rage pay tables whose return is stated (minimum odds of rule 3.28, pay tables 1 and 2 of rule 3.31).
RAGE_PAYTABLES = ("roulette-rage-minimum-odds", "roulette-rage-pay-table-1", "roulette-rage-pay-table-2")


def rage_section(outcomes: np.ndarray, space, *, rng: np.random.Generator, n_resamples: int = 9999, alpha: float = 0.01,
                 runs: ColourRuns | None = None) -> dict:
    """The Roulette Rage section of one table.

    Parameters
    ----------
    outcomes : (n,) int array
        Wheel positions in spin order.
    space : OutcomeSpace
        With a ``colour`` partition (0 red, 1 black, 2 zero).
    rng : numpy.random.Generator
        The section's own stream (Monte Carlo p-values and ranges).
    n_resamples : int
        Monte Carlo replicates.
    alpha : float
        Level at which the sentence calls a deviation from the exact law.
    runs : ColourRuns, optional
        The colour runs of ``outcomes`` when already read (:func:`rngcert.stats.runs.colour_runs`; the
        battery's longest-run test reads them too), with the pay tables' cap on L.

    Returns
    -------
    dict
        ``rounds``, ``censored``, ``by_colour``, ``p_same``, ``run_length_test`` (a test dict),
        ``returns`` (per pay table id), ``rules`` and ``line`` (the sentence of the report).
    """
    tables = [load_paytable(pid) for pid in RAGE_PAYTABLES]
    max_run = int(tables[0].params["max_run"])
    col = np.asarray(space.categories["colour"][0])
    p_same = float(np.asarray(space.probs)[col == 0].sum())
    law = np.asarray(rage_run_length_law(p_same, max_run), dtype=float)
    cr = runs if runs is not None and runs.max_run == max_run else colour_runs(outcomes, col, max_run)
    rounds = {"rounds": int(cr.round_counts.sum()), "censored": cr.censored, "by_colour": {"red": cr.red, "black": cr.black}}
    test = rage_run_length_test_counts(cr.round_counts, law, n_resamples=n_resamples, rng=rng)
    nets = {}
    for pt in tables:
        net = np.full(max_run + 1, -1.0)
        for j, v in pt.bets[0].net.items():
            net[int(j)] = float(v)
        nets[pt.id] = net
    ret = rage_returns_counts(cr.round_counts, law, nets, n_resamples=n_resamples, rng=rng)
    r = rounds["rounds"]
    if test.applicable:
        how = (f"run lengths after the establishing spin consistent with the exact law (p = {test.pvalue:.2g})" if test.pvalue >= alpha else
               f"run lengths after the establishing spin deviate from the exact law (p = {test.pvalue:.2g}; mean {test.details['mean_run']:.3f} "
               f"against {test.details['expected_mean_run']:.3f})")
    else:
        how = f"run lengths not tested ({test.reason})"
    paid = "; ".join(f"{pid.replace('roulette-rage-', '')}: {v['observed']:+.1%} per unit (exact {v['expected']:+.1%}, fair 95% range "
                     f"{v['range95'][0]:+.1%} to {v['range95'][1]:+.1%}; {v['wins']} paid)" for pid, v in ret.items() if v["observed"] is not None)
    line = (f"Roulette Rage (rules 3.15-3.18): {r:,} rounds after an establishing spin ({rounds['by_colour']['red']:,} on red, "
            f"{rounds['by_colour']['black']:,} on black{', the last one unsettled at the end of the log' if rounds['censored'] else ''}); "
            f"{how}. Return on these rounds — {paid if paid else 'none (no complete round)'}.")
    return jsonable({
        "rounds": r, "censored": rounds["censored"], "by_colour": rounds["by_colour"], "p_same": p_same, "max_run": max_run,
        "run_length_test": test.to_dict(), "returns": ret, "rules": "003 rules 3.15-3.18 (establishing spin), 3.26-3.28 and 3.31 (pay tables)",
        "line": line,
    })

