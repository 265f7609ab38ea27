"""Findings in words: one plain sentence for every FAIL or SUSPECT test of a wheel battery.

Each sentence says what was observed (in the field's words: pocket, sector, neighbours, dealer),
the physical causes a wheel technician would check, and the next step, with the number of spins
a re-test needs: the sample at which the battery would FAIL the *observed* effect with the stated
probability (the report's power, 90% unless ``--power`` or the standard says otherwise; from its power of the verdict, which
scales as ``n ** -0.5``).
"""

from __future__ import annotations

import math
from typing import Sequence

#: Causes a technician checks, per test family (DESIGN §5; rules 4.1-4.2 of the roulette rules).
CAUSES = {
    "pocket": "a worn, shallow or loose pocket, a damaged or mis-sized pocket separator (fret), or a pocket liner that deadens the ball",
    "sector": "loose or worn frets in that sector, a dip or bump in the wheel head, or a wheel that is not level",
    "harmonic": "a wheel that is tilted or not level, a rotor out of balance, or a worn spindle bearing",
    "colour": ("first the records (red and black pockets alternate round the wheel, so a worn sector or a tilted "
               "wheel cannot favour one colour; a result keyed wrongly, or a permanence list transcribed by hand, can), "
               "then the pockets of that colour one by one (see the pocket frequencies)"),
    "outside": ("first the records (the numbers of one group are spread round the wheel, so a worn sector or a tilted "
                "wheel hardly favours one group; results keyed wrongly, or a permanence list transcribed by hand, can), "
                "then the pockets of that group one by one (see the pocket frequencies)"),
    "runs": ("results that depend on the previous spin (a habitual release, a rotor speed that is never varied), or "
             "records out of order or a permanence list transcribed by hand (lines repeated, skipped or reversed)"),
    "pairs": ("a dealer releasing the ball at a habitual rotor position and speed, a rotor whose speed and direction are "
              "not varied (rule 4.1), or repeated or reordered records in the log (a permanence list transcribed by hand "
              "repeats or reverses whole lines)"),
    "dealer": "a dealer signature: a habitual release (same ball speed, same launch point, same rotor speed)",
    "symbol": "a section that is larger, looser or more worn than the others, or a pointer or flapper that catches",
    "rotor": "a rotor out of balance or a wheel head that is not level (its effect depends on the direction and speed of "
             "the rotor), a drive motor or controller that does not hold or vary the rotor speed, or a dealer who times the "
             "launch to the rotor (rules 3.6 and 4.1)",
}
FAMILY = {
    "pocket_chisquare": "pocket", "max_count": "pocket", "symbol_frequency": "symbol", "sector_scan": "sector",
    "first_harmonic": "harmonic", "runs_colour": "runs", "runs_parity": "runs", "runs_low_high": "runs",
    "runs_top_symbol": "runs", "longest_colour_run": "runs", "gap_test": "runs", "serial_pair": "pairs",
    "serial_correlation": "pairs", "wheel_distance": "pairs", "dealer_signature": "dealer",
    "out_of_sample_predictor": "dealer", "outside_colour": "colour", "direction_homogeneity": "rotor",
    "ball_against_wheel": "rotor", "speed_independence": "rotor", "rotor_speed_trend": "rotor",
}

#: What the runs tests count.
_RUNS = {"runs_colour": "red and black", "runs_parity": "odd and even", "runs_low_high": "low and high",
         "runs_top_symbol": "the most likely symbol and the rest"}

#: How the outside-bet tests name their bets in a finding.
_BETS = {"outside_colour": "colour bets", "outside_parity": "odd/even bets", "outside_low_high": "low/high bets",
         "outside_dozen": "dozen bets", "outside_column": "column bets", "symbol_frequency": "symbols"}


def _pct(x: float) -> str:
    return f"{x:+.0%}" if abs(x) >= 0.095 else f"{x:+.1%}"


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _lab(labels: Sequence[str], i: int) -> str:
    try:
        return str(labels[int(i) % len(labels)]).split(":", 1)[-1] if labels else str(i)
    except (TypeError, ValueError):
        return str(i)


def _retest(n: int, observed: float | None, mde: float | None) -> int | None:
    """Spins at which the battery FAILs the observed effect with the power statement's probability, from the
    effect ``mde`` it detects with that probability at ``n`` spins."""
    if not observed or not mde or not math.isfinite(mde) or observed <= 0:
        return None
    return int(math.ceil(max(n, n * (mde / observed) ** 2)))


# long: one flat dispatch on the test name, a short branch per test of the battery: splitting it would scatter one table of wordings
def observed_effect(test: dict, labels: Sequence[str], unit: str = "pocket") -> tuple[str, float | None, str]:
    """(what was observed, relative effect or None, which power alternative it is) for one test dict."""
    d = test.get("details") or {}
    name = test["name"]
    if name in ("max_count", "pocket_chisquare"):
        if "position" in d:
            pos, c, e = d["position"], d["count"], d["expected"]
        else:
            obs, exp = d.get("observed"), d.get("expected")
            if not obs:
                return "the outcome frequencies are uneven", None, ""
            z = [(o - x) / math.sqrt(x) for o, x in zip(obs, exp)]
            pos = max(range(len(z)), key=lambda i: abs(z[i]))
            c, e = obs[pos], exp[pos]
        rel = c / e - 1
        return f"{unit} {_lab(labels, pos)} came up {_n(c)} times against {_n(e)} expected ({_pct(rel)})", rel, "single_pocket"
    if name == "sector_scan" and isinstance(d.get("best_arc"), dict):
        b = d["best_arc"]
        pos = b.get("positions") or [b["start"] + i for i in range(int(b["length"]))]
        nb = "-".join(_lab(labels, p) for p in pos)
        rel = b.get("relative_excess")
        return (f"the {int(b['length'])} neighbouring pockets {nb} (in wheel order) came up {_n(b['observed'])} times "
                f"against {_n(b['expected'])} expected ({_pct(rel)})"), rel, "sector"
    if name == "first_harmonic":
        amp, ph = d.get("amplitude"), d.get("phase_position")
        toward = _lab(labels, int(round(ph))) if ph is not None else "?"
        return (f"results lean smoothly towards pocket {toward} and away from the opposite side of the wheel "
                f"(amplitude {amp:.1%})") if amp is not None else "results lean towards one side of the wheel", None, ""
    if name.startswith("outside_") or name == "symbol_frequency":
        obs, exp = d.get("observed"), d.get("expected")
        names = d.get("category_names") or None
        ids = d.get("category_ids")
        if obs and exp:
            i = max(range(len(obs)), key=lambda j: abs(obs[j] - exp[j]) / math.sqrt(exp[j]))
            if names and i < len(names):
                cat = str(names[i])
            else:  # a caller that gave no names: the category's id, never its index
                cat = f"category {ids[i]}" if ids is not None and i < len(ids) else f"category {i}"
            rel = obs[i] / exp[i] - 1
            bets = _BETS.get(name, name.replace("outside_", "").replace("_", "/") + " bets")
            return f"{bets}: {cat} came up {_n(obs[i])} times against {_n(exp[i])} expected ({_pct(rel)})", None, ""
    if name.startswith("runs_"):
        r, er = d.get("runs"), d.get("expected_runs")
        if r is not None and er:
            more = "more" if r > er else "less"
            what = _RUNS.get(name, name[5:].replace("_", " and "))
            return f"{what} alternated {more} often than chance ({_n(r)} runs against {_n(er)} expected)", None, ""
    if name == "gap_test":
        obs, exp, tt = d.get("observed"), d.get("expected"), d.get("t")
        if obs and exp and tt is not None:
            i = max(range(len(obs)), key=lambda j: abs(obs[j] - exp[j]) / math.sqrt(exp[j]))
            gap = f"{i} spins" if i < len(obs) - 1 else f"{i} or more spins"
            what = "red results (the gap test's target on a roulette wheel)" if unit == "pocket" else "results of the most likely symbol"
            return (f"gaps of {gap} between two {what} came up {_n(obs[i])} times against {_n(exp[i])} expected "
                    f"({_pct(obs[i] / exp[i] - 1)})"), None, ""
    if name == "serial_correlation" and d.get("lags"):
        worst = min(d["lags"], key=lambda x: x.get("pvalue", 1.0))
        return (f"results {worst['lag']} spin(s) apart are correlated on the wheel (correlation {worst.get('rho_abs', 0):.3f}, "
                f"p = {worst.get('pvalue', 0):.2g} at that lag)"), None, ""
    if name == "serial_pair":
        used = f" ({_n(d['pairs_used'])} pairs used)" if d.get("pairs_used") is not None else ""
        return f"some results follow others more or less often than chance: consecutive results are not independent{used}", None, ""
    if name == "longest_colour_run":
        return f"the longest run of one colour was {d.get('longest_run')} spins against about {d.get('expected_longest', 0):.1f} expected", None, ""
    if name == "wheel_distance":
        obs, exp = d.get("observed"), d.get("expected")
        if obs and exp:
            i = max(range(len(obs)), key=lambda j: (obs[j] - exp[j]) / math.sqrt(exp[j]))
            what = "the same number twice in a row" if i == 0 else f"a result {i} pockets further on the wheel than the previous one"
            return f"{what} came up {_n(obs[i])} times against {_n(exp[i])} expected ({_pct(obs[i] / exp[i] - 1)})", None, ""
    if name == "dealer_signature" and isinstance(d.get("best_arc"), dict):
        b = d["best_arc"]
        ref = d.get("reference", "reference")
        L = int(b["length"])
        span = f"{int(b['start'])}" if L == 1 else f"{int(b['start'])}-{int(b['start']) + L - 1}"
        return (f"{b.get('label', 'the spins')}: the ball landed {span} pockets past the {ref} {_n(b['observed'])} times against "
                f"{_n(b['expected'])} expected ({_pct(b.get('relative_excess') or 0)})"), None, ""
    if name == "direction_homogeneity" and "observed_in_direction" in d:
        o, e = d["observed_in_direction"], d["expected_in_direction"]
        return (f"in {d['direction']} spins {unit} {_lab(labels, d['outcome'])} came up {_n(o)} times against {_n(e)} expected "
                f"from both directions ({_pct(o / e - 1) if e else 'n/a'}): the results depend on the rotor's direction"), None, ""
    if name == "speed_independence" and "sector_first" in d:
        o, e = d["observed"], d["expected"]
        return (f"at rotor speeds {d['speed_low']:g}-{d['speed_high']:g} the ball landed in positions {d['sector_first']}-{d['sector_last']} "
                f"{_n(o)} times against {_n(e)} expected ({_pct(o / e - 1) if e else 'n/a'}): the landing depends on the rotor speed"), None, ""
    if name == "rotor_speed_trend" and "first" in d:
        return (f"the rotor speed drifted from {d['first']:.4g} (mean of the first tenth of the spins) to {d['last']:.4g} (last tenth)"), None, ""
    if name == "out_of_sample_predictor":
        return f"a predictor fitted on half the spins hit {d.get('hit_rate', 0):.1%} of the other half against {d.get('share', 0):.1%} by chance", None, ""
    return f"{name.replace('_', ' ')} rejects (p = {test.get('pvalue'):.2g})" if test.get("pvalue") is not None else name, None, ""


def finding_sentence(test: dict, *, verdict_word: str, n: int, labels: Sequence[str], power: dict, unit: str = "pocket",
                     overridden: bool = False) -> str:
    """The plain sentence of one FAIL or SUSPECT test: observation, causes, next step. With
    ``overridden`` (the verdict is INCONCLUSIVE whatever the tests say) it says so first."""
    what, rel, alt = observed_effect(test, labels, unit)
    fam = FAMILY.get(test["name"], "outside" if test["name"].startswith("outside_") else "pairs")
    causes = CAUSES[fam]
    mde = (power.get(alt) or {}).get("effect") if alt else None
    need = _retest(n, rel, mde)
    if fam == "rotor":
        check = "inspect the wheel head, its drive and the launch procedure: " + causes
    elif fam in ("pocket", "sector", "harmonic", "symbol"):
        check = "inspect the wheel: " + causes
    elif fam in ("colour", "outside"):
        check = "check: " + causes
    elif fam == "dealer":
        check = "review the dealer's procedure (" + causes + "); vary ball speed, release point and rotor direction"
    else:
        check = "check: " + causes
    # the probability is the power statement's (--power, or the standard's declared power): not always 90%
    rule = power.get("rule") or {}  # the power of a standard's verdict (battery/power.py): its words, not the battery's
    who = (f"the verdict under standard {rule['standard']} would then be {rule['verdict']} for this effect" if rule.get("verdict") in ("FAIL", "SUSPECT or FAIL")
           else "the battery would then FAIL this effect")
    if need and power.get("power") is not None:
        retest = f"re-test with at least {need:,} spins ({who} with {float(power['power']):.0%} probability)"
    else:
        retest = f"re-test with at least {need or 2 * n:,} spins"
    lead = "FAIL" if verdict_word == "FAIL" else "SUSPECT"
    if lead == "FAIL" and not overridden:  # a FAIL is settled: the re-test comes after the repair (issue 24)
        retest = "after inspection and repair, " + retest
    if overridden:
        lead = f"Would be {lead}, but these data cannot carry a verdict"
    return f"{lead}: {what}. Possible causes to {check}. Next step: {retest}."


def severity(sentence: str) -> str:
    """The verdict word a key finding stands for: ``FAIL``, ``SUSPECT``, ``INCONCLUSIVE`` (no verdict, a
    data-integrity finding, a rejection the data cannot carry) or ``""`` (the rest)."""
    s = str(sentence)
    if s.startswith("FAIL"):
        return "FAIL"
    if s.startswith("SUSPECT"):
        return "SUSPECT"
    if s.startswith(("No verdict", "Would be", "Data integrity")):
        return "INCONCLUSIVE"
    return ""


def order_findings(keys: Sequence[str], verdict: str) -> list[str]:
    """Key findings with the deciding reason first (issue 24): FAIL, SUSPECT, INCONCLUSIVE, then the rest;
    under an INCONCLUSIVE verdict its reasons come first (they are the verdict), the rejections the data
    cannot carry after them; under a PASS its statement comes first, an informational data-integrity note
    after it. The order within a rank is kept (stable)."""
    rank = {"FAIL": 0, "SUSPECT": 1, "INCONCLUSIVE": 2, "": 3}
    if verdict == "INCONCLUSIVE":
        rank = {"INCONCLUSIVE": 0, "FAIL": 1, "SUSPECT": 2, "": 3}

    def key(s: str) -> tuple[int, int]:
        if verdict == "PASS" and s.startswith("No test rejects"):  # the PASS statement is what decided a PASS
            return -1, 0
        sev = severity(s)
        # "No verdict: ..." (the reasons) before a data-integrity note that did not itself decide the verdict
        # (one that did is among the "No verdict" reasons), before "Would be FAIL, but ..." (c18)
        sub = 2 if s.startswith("Would be") else 1 if s.startswith("Data integrity") else 0
        return rank[sev], sub

    return sorted(keys, key=key)


def table_findings(battery: dict, *, n: int, labels: Sequence[str], power: dict, unit: str = "pocket") -> tuple[list[str], list[str]]:
    """Key findings and next steps of one table, from its battery dict (``BatteryOutcome.to_dict``).

    Also sets ``plain`` on every FAIL or SUSPECT test dict.

    Returns
    -------
    key_findings, next_steps : list of str
    """
    keys: list[str] = []
    steps: list[str] = []
    v = battery["verdict"]
    if v == "INCONCLUSIVE":  # why there is no verdict comes first: it is the verdict
        keys.extend(f"No verdict: {r}." for r in battery["reasons"])
    # the strongest rejection first (smallest Holm p; stable otherwise): a direction bias at p = 1e-51 must not stand
    # behind a lag-9 correlation at p = 0.0025 in the banner
    def strength(x: dict) -> float:
        h = x.get("pvalue_holm")
        return float(h) if isinstance(h, (int, float)) else (0.0 if x.get("rejected_familywise") else 2.0)

    for t in sorted(battery["tests"], key=strength):
        if not t.get("applicable"):
            continue
        word = "FAIL" if t.get("rejected_familywise") else "SUSPECT" if t.get("rejected_at_suspect_level") else None
        if word is None:
            continue
        s = finding_sentence(t, verdict_word=word, n=n, labels=labels, power=power, unit=unit, overridden=v == "INCONCLUSIVE")
        t["plain"] = s
        if s not in keys:  # two tests can see one effect (pocket chi-square and max count): said once
            keys.append(s)
    if v == "PASS":
        keys.append("No test rejects: the spins are consistent with a fair wheel at this sample size.")
        steps.append("Keep auditing: repeat the audit at the interval your rules require.")
    elif v == "INCONCLUSIVE":
        steps.append("Correct the input or collect more spins (see the reasons), then certify again.")
    elif v == "FAIL":
        steps.append("Take the wheel out of play until it has been inspected; after repair, re-test with the number of spins stated above.")
    elif v == "SUSPECT":
        steps.append("Not a failure: collect the number of spins stated above and re-test before drawing a conclusion.")
    return order_findings(keys, v), steps



