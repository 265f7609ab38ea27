"""The power statement of a wheel report: the probability that *the battery* returns FAIL.

The levels come from the battery run itself: each applicable count-based test i is judged at
``alpha * w_i / W`` by the first step of weighted Holm (W the total weight of the applicable
tests), and the battery FAILs exactly when one of them (or another test) rejects there
(:mod:`rngcert.stats.verdict_power`). Results are computed at n rounded to two significant digits
and scaled by ``sqrt(n0 / n)`` (the detectable effect of a fixed-power test scales as
``n**-0.5``; the error of this step is below 1% for n >= 1,000), and cached per (n0, wheel, levels)
so that a report of many tables stays fast: in memory, and on disk between runs (:func:`cache_dir`;
a first run at a new n costs about 0.2 s of CPU for the three statements, a repeat milliseconds).
Each stated effect carries its Monte Carlo standard error.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from rngcert.battery.cachedir import cache_dir  # re-exported: rngcert.battery.power.cache_dir
from rngcert.battery.core import BatteryOutcome
from rngcert.battery.wheel import Landings, WheelData
from rngcert.stats import verdict_power as vp

#: Sector width of the stated sector alternative (a number and two neighbours each side).
SECTOR_WIDTH = 5
#: Arc width of the stated dealer-signature alternative (stated only on a wheel of more pockets).
SIGNATURE_WIDTH = 3
METHOD = (
    "probability that the battery returns FAIL (weighted Holm at alpha), by simulation of its count-based tests "
    "at their first-step levels alpha*w/W: the max count against its exact null law (Levin 1981), the scans with the "
    "battery's Monte Carlo rule on a null tail estimated by importance sampling over the arcs (Naiman & Priebe 2001), "
    "the alternative drawn given the biased block's total and reweighted to every effect; a lower bound (the "
    "order-based tests are left out)"
)


def _round2(n: int) -> int:
    if n < 100:
        return int(n)
    e = 10 ** (int(math.log10(n)) - 1)
    return int(round(n / e) * e)


#: Version of the cached results: bump when the verdict-power model changes. 2: exact max-count law,
#: importance-sampled scan nulls, the effect solved on one reweighted sample, with its standard error.
CACHE_VERSION = 2


def _cache_file(key: tuple) -> Path | None:
    d = cache_dir()
    if d is None:
        return None
    h = hashlib.sha256(json.dumps([CACHE_VERSION, *key]).encode()).hexdigest()[:32]
    return d / "verdict-power" / f"{h}.json"


@functools.lru_cache(maxsize=512)
def _verdict_effect(n0: int, k: int, alternative: str, levels: tuple, power: float, groups: int, n_resamples: int,
                    categories: tuple = ()) -> dict:
    """:meth:`rngcert.stats.verdict_power.VerdictEffect.to_dict` of the smallest effect the battery
    FAILs with probability ``power`` at n0 spins, from the disk cache or computed (and stored)."""
    key = (n0, k, alternative, [list(x) for x in levels], power, groups, n_resamples, [[t, list(ids)] for t, ids in categories])
    f = _cache_file(key)
    if f is not None:
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
            if doc.get("key") == json.loads(json.dumps([CACHE_VERSION, *key])) and isinstance(doc.get("result"), dict):
                return doc["result"]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    r = vp.verdict_effect(n0, k, alternative, dict(levels), power=power, groups=groups, n_resamples=n_resamples,
                          categories={t: np.array(ids) for t, ids in categories}).to_dict()
    r = json.loads(json.dumps(r))  # exactly what a cache hit returns
    if f is not None:
        try:  # written whole, then renamed: a concurrent reader sees the old file or the new one
            f.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=f.parent, delete=False, suffix=".tmp", encoding="utf-8") as tmp:
                json.dump({"key": [CACHE_VERSION, *key], "effect": r["effect"], "result": r}, tmp)
            os.replace(tmp.name, f)
        except OSError:
            pass  # a read-only home: no cache, same numbers
    return r


def _mde(n0: int, k: int, alternative: str, levels: tuple, power: float, groups: int, n_resamples: int, categories: tuple = ()) -> float:
    """The effect of :func:`_verdict_effect` (``inf`` when no effect up to the search bound is reached)."""
    e = _verdict_effect(n0, k, alternative, levels, power, groups, n_resamples, categories)["effect"]
    return math.inf if e is None else float(e)


def _levels(out: BatteryOutcome, alpha: float) -> dict[str, float]:
    W = sum(out.weights.values())
    return {t: alpha * w / W for t, w in out.weights.items() if _modelled(t)}


def _modelled(t: str) -> bool:
    return t in vp.COUNT_TESTS + ("dealer_signature",) or t.startswith("outside_")


def standard_levels(out: BatteryOutcome, clauses: Sequence[tuple[Any, float]]) -> dict[str, float]:
    """First-step level at which each modelled test of the battery makes one of ``clauses`` not met.

    Parameters
    ----------
    out : BatteryOutcome
        The table's battery run (its applicable tests and weights).
    clauses : sequence of (Clause, float)
        Clauses of a standard (:class:`rngcert.battery.standard.Clause`) with their level at this run's alpha.

    Returns
    -------
    dict
        ``{test: level}``: a per-test clause's level; ``level * w / W`` for a family-wise clause, W the weight of the
        whole battery (``family = "battery"``) or of the clause's own tests (the first step of weighted Holm); the
        largest over the clauses; only the tests the verdict-power model simulates.
    """
    W = sum(out.weights.values())
    lv: dict[str, float] = {}
    for c, level in clauses:
        mine = {t: w for t, w in out.weights.items() if c.selects(t)}
        if c.correction == "second-level" or not mine:
            continue
        total = W if c.family == "battery" else sum(mine.values())
        for t, w in mine.items():
            a = level if c.correction == "per-test" else level * w / total
            lv[t] = max(lv.get(t, 0.0), a)
    return {t: a for t, a in lv.items() if _modelled(t)}


def stated_start(data: WheelData) -> int:
    """Wheel position where the stated single-pocket and sector alternatives begin: the first
    numbered pocket after the zero(s). A biased zero is its own colour category and is caught more
    easily, so stating the power for a numbered pocket keeps the statement a lower bound."""
    cats = data.space.categories
    colour = cats.get("colour")
    if colour is None:
        return 0
    ids, names = colour
    zero = [i for i, nm in enumerate(names) if nm in ("zero", "green")]
    numbered = np.flatnonzero(~np.isin(ids, zero))
    return int(numbered[0]) if numbered.size else 0


def _categories(out: BatteryOutcome, data: WheelData, start: int) -> tuple:
    """The outside-bet partitions of the applicable category tests, rotated so that the model's
    biased block (position 0) is the stated pocket ``start``."""
    res = []
    for t in sorted(out.weights):
        partition = t.removeprefix("outside_")
        if partition != t and partition in data.space.categories:
            ids = np.asarray(data.space.categories[partition][0])
            res.append((t, tuple(int(v) for v in np.roll(ids, -start))))
    return tuple(res)


# long: one table's power statement built in order: the not-modelled case, the count alternatives, the dealer signature and the
#   declared bias, each adding its entry and sentence to the same statement and its Monte Carlo errors to one list
def verdict_power_statement(
    out: BatteryOutcome,
    data: WheelData,
    *,
    alpha: float,
    power: float = 0.9,
    n_resamples: int = 9999,
    required_bias: float | None = None,
    unit: str = "pocket",
    rule: tuple[str, dict[str, float], dict[str, float]] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Power of the verdict for one table, and INCONCLUSIVE reasons when it falls short.

    Parameters
    ----------
    out : BatteryOutcome
        The table's battery run (its applicable tests and weights fix the levels).
    data : WheelData
        The table's data (n, the wheel, dealer groups).
    alpha : float
        Certification level.
    power : float
        Power of the statement (default 0.9).
    n_resamples : int
        Monte Carlo resamples of the battery's scan tests.
    required_bias : float, optional
        The lab's declared minimum single-pocket bias (``--min-bias``): INCONCLUSIVE when the
        battery would FAIL a wheel with that bias with less than ``power`` probability.
    unit : {"pocket", "section"}
        The word for one position of the wheel in the sentences: ``"pocket"`` on a roulette wheel,
        ``"section"`` on a money wheel.
    rule : (str, dict, dict), optional
        The standard's id and the levels of its FAIL and finding clauses (:func:`standard_levels`). Where its FAIL
        clauses judge the battery otherwise than weighted Holm at alpha (West Virginia's tests each at 99%), the power
        is that of its verdict: the probability that they make it FAIL (or, where they model no test, that its finding
        clauses make it SUSPECT or FAIL), and the sentences say so. None: the battery's rule.

    Returns
    -------
    power : dict
        ``statement``, ``method``, ``alpha``, ``power``, ``n``, ``single_pocket``, ``sector``,
        ``dealer_signature`` (each ``{"alternative", "effect"}`` or ``{"applicable": False,
        "reason"}``), and with ``required_bias`` the spins needed.
    reasons : list of str
        INCONCLUSIVE reasons.
    """
    n, k = int(data.tally.n), data.m
    P: dict[str, Any] = {"alpha": alpha, "power": power, "n": n, "method": METHOD}
    reasons: list[str] = []
    uniform = bool(np.allclose(data.probs, 1.0 / k))
    battery_levels = _levels(out, alpha)
    levels, who = _rule_levels(battery_levels, rule)
    if who is not None:
        P["method"] = METHOD + f"; at the levels of standard {who[1]}'s {'FAIL' if who[0] != 'SUSPECT or FAIL' else 'finding'} clauses"
        P["rule"] = {"standard": who[1], "verdict": who[0], "levels": dict(sorted(levels.items()))}
    fails, fails_then = _fail_words(who)
    if not data.space.circular or not uniform or n < 2 * k:
        why = ("the outcomes are symbols (wheel order unknown)" if not data.space.circular else
               "the null probabilities are not uniform" if not uniform else f"only {n} spins")
        for key in ("single_pocket", "sector", "dealer_signature"):
            P[key] = {"applicable": False, "reason": f"the power of the verdict is not modelled here: {why}"}
        P["statement"] = f"Power of the verdict not stated: {why}."
        return P, reasons
    n0 = _round2(n)
    scale = math.sqrt(n0 / n)
    lev = tuple(sorted(levels.items()))
    start = stated_start(data)
    cats = tuple(c for c in _categories(out, data, start) if c[0] in levels)  # a standard's clauses may leave some out
    count_levels = tuple((t, a) for t, a in lev if t in vp.COUNT_TESTS or t in dict(cats))
    sentences, rel_se = [], []

    def stated(alternative, lv, g, cats_):
        r = _verdict_effect(n0, k, alternative, lv, power, g, n_resamples, cats_)
        e = math.inf if r["effect"] is None else r["effect"] * scale
        se = None if r["se"] is None else r["se"] * scale
        if se is not None and math.isfinite(e):
            rel_se.append(se / e)
        mc = {"power_at_effect": r["power"], "power_se": r["power_se"], "draws": r["n_alt"], "effective_draws": r["ess"],
              "null_tail_rse": dict(r["null_rse"])}
        return e, se, mc

    if count_levels:
        e1, se1, mc1 = stated("single-pocket", count_levels, 1, cats)
        label = data.space.labels[start]
        P["single_pocket"] = {"alternative": "single-pocket", "effect": e1, "effect_se": se1, "pocket": label, "position": start,
                              "monte_carlo": mc1}
        sector = ""
        if k > SECTOR_WIDTH:
            es, ses, mcs = stated(f"sector:{SECTOR_WIDTH}", count_levels, 1, cats)
            P["sector"] = {"alternative": f"sector:{SECTOR_WIDTH}", "effect": es, "effect_se": ses, "first_pocket": label,
                           "position": start, "monte_carlo": mcs}
            sector = f", or {SECTOR_WIDTH} neighbouring {unit}s each {_pct(es)} more often"
        else:  # a lab's wheel of 5 pockets or fewer has no sector of 5 that is not most of the wheel
            P["sector"] = {"applicable": False, "reason": f"a sector of {SECTOR_WIDTH} {unit}s needs a wheel of more than {SECTOR_WIDTH} (this one has {k})"}
        sentences.append(
            f"With {n:,} spins {fails} with {power:.0%} probability for a wheel on which {'one numbered pocket' if unit == 'pocket' else 'one ' + unit} "
            f"comes up {_pct(e1)} more often than fair{sector}."
        )
    else:
        P["single_pocket"] = P["sector"] = {"applicable": False, "reason": "no count-based test was applicable"}
    if "dealer_signature" in levels and k > SIGNATURE_WIDTH:
        g, ref = _signature_groups(out, data)
        ed, sed, mcd = stated(f"dealer-signature:{SIGNATURE_WIDTH}", (("dealer_signature", levels["dealer_signature"]),), g, ())
        P["dealer_signature"] = {"alternative": f"dealer-signature:{SIGNATURE_WIDTH}", "effect": ed, "effect_se": sed, "groups": g, "reference": ref,
                                 "monte_carlo": mcd}
        sentences.append(
            f"A dealer signature — landing {SIGNATURE_WIDTH} neighbouring {unit}s from the {ref} {_pct(ed)} more often than fair, for every "
            f"one of the {g} dealer/direction groups — is caught with "
            + ("the same probability." if sentences else f"{power:.0%} probability ({fails}).")
        )
    elif "dealer_signature" in levels:  # a lab's wheel of 3 pockets: a signature arc of 3 is the whole wheel
        P["dealer_signature"] = {"applicable": False, "reason": f"a signature of {SIGNATURE_WIDTH} {unit}s needs a wheel of more than "
                                 f"{SIGNATURE_WIDTH} (this one has {k})"}
    elif "dealer_signature" in battery_levels:
        P["dealer_signature"] = {"applicable": False, "reason": f"no clause of standard {who[1]} judges the dealer_signature test"}
    else:
        P["dealer_signature"] = {"applicable": False, "reason": "no dealer ids or release pockets in the log"}
    mc = f", Monte Carlo standard error at most {max(rel_se):.1%} of each effect" if rel_se else ""
    sentences.append(_closing(who, mc))
    if required_bias is not None and "effect" in P["single_pocket"]:
        e1 = P["single_pocket"]["effect"]
        need = _spins_needed(n, e1, required_bias, lambda m: _mde(_round2(m), k, "single-pocket", count_levels, power, 1, n_resamples, cats)
                             * math.sqrt(_round2(m) / m))
        P["required_min_detectable_bias"] = required_bias
        P["spins_needed_for_required_bias"] = need
        if e1 > required_bias:
            reasons.append(
                f"{n:,} spins cannot carry a verdict on the declared minimum bias of {declared_pct(required_bias)} on one {unit}: "
                f"{fails_then} such a wheel with less than {power:.0%} probability (it reaches {power:.0%} at {_pct_above(e1, required_bias)}); "
                + (f"about {need:,} spins are needed" if need else "many more spins are needed (at this size the effect the battery detects lies beyond the range simulated)")
            )
    P["statement"] = " ".join(sentences)
    return P, reasons


#: Refinements of the spins needed for the declared bias (each a verdict-power computation at a new sample size).
NEED_STEPS = 4


def _spins_needed(n: int, effect: float, required_bias: float, effect_at) -> int | None:
    """Spins at which the PASS gate detects ``required_bias``: ``effect_at(m)`` (the effect detected at m spins, as the
    gate computes it) at most ``required_bias``. The first guess scales ``effect`` at ``n`` spins by ``n**-0.5``; that
    law is not exact across a factor of several in n (20,000 fair spins said "about 4,837 spins are needed", where
    4,837 spins detect +53%, not +50%, and were INCONCLUSIVE), so the guess is refined on the effect at the guess
    itself, rounded up to 1% more spins a step, until the gate is met. None when ``effect`` is not finite."""
    if not math.isfinite(effect):
        return None
    need = max(1, int(math.ceil(n * (effect / required_bias) ** 2)))
    for _ in range(NEED_STEPS):
        e = effect_at(need)
        if not math.isfinite(e) or e <= required_bias:
            return need
        need = int(math.ceil(need * max((e / required_bias) ** 2, 1.01)))
    return need


def _rule_levels(battery: dict[str, float], rule) -> tuple[dict[str, float], tuple[str, str] | None]:
    """The levels the power is computed at, and ``(what the verdict is, standard id)`` when they are a standard's rather
    than the battery's (None: the battery's weighted Holm at alpha, which rngcert-default's and uniformity's FAIL
    clauses are, level for level)."""
    if rule is None:
        return battery, None
    sid, fail, finding = rule
    if fail:
        return (battery, None) if fail == battery else (dict(fail), ("FAIL", sid))
    if finding:
        return dict(finding), ("SUSPECT or FAIL", sid)
    return battery, ("none", sid)


def _fail_words(who) -> tuple[str, str]:
    """(``... returns FAIL``, ``... would FAIL``) for the power sentences of :func:`verdict_power_statement`."""
    if who is None or who[0] == "none":
        return "the battery returns FAIL", "the battery would FAIL"
    return f"the verdict under standard {who[1]} is {who[0]}", f"the verdict under standard {who[1]} would be {who[0]} for"


def _closing(who, mc: str) -> str:
    """The last sentence of the power statement: how it was simulated, under which rule."""
    if who is None:
        return f"(Simulated through the battery's own decision rule{mc}; a lower bound.)"
    if who[0] == "FAIL":
        return (f"(Simulated through the FAIL clauses of standard {who[1]}, each test at its clause's level{mc}; a lower bound: "
                f"the tests the model does not simulate are left out.)")
    if who[0] == "SUSPECT or FAIL":
        return (f"(Simulated through the finding clauses of standard {who[1]}{mc}: its FAIL clauses judge what the model does "
                f"not simulate (a player's edge), so their power is not stated; a lower bound.)")
    return (f"(Simulated through the battery's own decision rule{mc}, weighted Holm at alpha: no clause of standard {who[1]} "
            f"judges a test the model simulates, so this is not the power of its verdict.)")


def _signature_groups(out: BatteryOutcome, data: WheelData) -> tuple[int, str]:
    """(dealer/direction groups, reference) of the battery's dealer-signature test: from its result
    when it ran, else recomputed from the data."""
    for r in out.results:
        if r.name == "dealer_signature" and r.applicable and "n_groups" in r.details and "reference" in r.details:
            return int(r.details["n_groups"]), str(r.details["reference"])
    lg = Landings(data.outcomes, data.release, data.dealer, data.dealer_labels, data.direction, data.pair_mask, data.m)
    return len(lg.labels), lg.ref_name


def declared_pct(x: float) -> str:
    """A declared relative effect as a signed percentage to three significant digits: ``0.5`` → ``"+50%"``, ``0.0001`` →
    ``"+0.01%"`` (a whole-percent format printed it "+0%", as if nothing were declared), ``36`` → ``"+3,600%"``."""
    pct = 100 * float(x)
    return f"+{pct:,.0f}%" if pct >= 100 else f"+{pct:.3g}%"


def _pct(e: float) -> str:
    if not math.isfinite(e):
        return "more than +5000%"
    return f"+{e:.0%}" if e >= 0.1 else f"+{e:.1%}"


def _pct_above(e: float, bound: float) -> str:
    """:func:`_pct` of an effect ``e`` above ``bound``, with as many decimals as show it above: 5,400 spins "cannot carry a
    verdict on the declared minimum bias of +50% ... (it reaches 90% at +50%)" read as a contradiction (+50.2%)."""
    text = _pct(e)
    for digits in range(1, 4):
        if not math.isfinite(e) or float(text.strip("+%").replace(",", "")) / 100 > bound:
            break
        text = f"+{e:.{digits}%}"
    return text


#: Seed of the fair sample whose battery run gives the levels of a planned test (:func:`planned_levels`).
PLAN_ENTROPY = 20261204
#: Largest fair sample run for the levels (a 10^12-spin plan must not allocate 10^12 spins).
PLAN_MAX_SAMPLE = 200_000


def planned_levels(wheel, n: int, alpha: float) -> tuple[tuple, tuple]:
    """First-step Holm levels of the count-based tests, and the outside-bet partitions, that the
    battery applies to a plain log of ``n`` spins of ``wheel`` (no dealer ids, release pockets or
    rotor speeds), from its run on a seeded fair sample of that size.

    Parameters
    ----------
    wheel : rngcert.equipment.wheel.Wheel
        A wheel whose arrangement is known (the tests need wheel positions).
    n : int
        Spins of the planned log (the fair sample has at most :data:`PLAN_MAX_SAMPLE`).
    alpha : float
        Certification level.

    Returns
    -------
    levels : tuple of (str, float)
        ``(test, alpha * w / W)`` for the count-based tests (:data:`rngcert.stats.verdict_power.COUNT_TESTS`
        and the outside-bet chi-squares), as :func:`verdict_power_statement` uses them.
    categories : tuple of (str, tuple of int)
        The outside-bet partitions, rotated so that the model's biased block is the first numbered pocket.
    """
    from rngcert.battery.wheel import WHEEL

    space = wheel.position_space()
    from rngcert.seeding import stream

    size = min(int(n), PLAN_MAX_SAMPLE)  # the count tests' applicability does not change above this (5 spins a pocket)
    x = stream(PLAN_ENTROPY, "planned-levels").integers(0, space.m, size).astype(np.int16)
    data = WheelData(x, space)
    out = WHEEL.run(data, entropy=PLAN_ENTROPY, alpha=alpha, n_resamples=99)
    cats = _categories(out, data, stated_start(data))
    levels = tuple(sorted((t, a) for t, a in _levels(out, alpha).items() if t in vp.COUNT_TESTS or t in dict(cats)))
    return levels, cats
