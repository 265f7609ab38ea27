"""Key findings and next steps in words for shoe and SP 800-22 reports (issue 24: page one of every
report says what was found and what to do, as :mod:`rngcert.battery.findings` does for wheels).

Both work on the report's dicts (a section's battery, trackers and findings; an SP 800-22 section's
two-level rows), so the sentences say exactly what the report's tables say. The deciding reason
comes first (:func:`rngcert.battery.findings.order_findings`).
"""

from __future__ import annotations

import math
from typing import Sequence

from rngcert.battery.findings import order_findings


def _p(t: dict) -> str:
    p = t.get("pvalue")
    if p is None:
        return t.get("pvalue_bound") or "< 1e-300"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def _tracker_words(k: dict) -> str:
    name = str(k.get("name", "")).replace("_", " ")
    return (f"the {name} tracker, seeing only the dealt cards, returns {100 * k['edge']:+.2f}% of the stake "
            f"(95% interval {100 * k['ci95'][0]:+.2f}% to {100 * k['ci95'][1]:+.2f}%) against a threshold of {100 * k['threshold']:+.2f}%")


#: How the power gate keeps the PASS reason of a sample it makes INCONCLUSIVE (rngcert.pipeline.shoe_power.gated_reasons).
_ALONE = "the tests alone would PASS: "


def _no_verdict(reason: str) -> str:
    """A key finding of an INCONCLUSIVE sample: its reason, or what the tests alone say (not a reason)."""
    r = str(reason)
    if r.startswith(_ALONE):
        return f"Would be PASS, but these data cannot carry a verdict: {r[len(_ALONE):]}."
    return f"No verdict: {r}."


def shoe_findings(section: dict, *, assumed: Sequence[str] = (), unit: str = "shoes") -> tuple[list[str], list[str]]:
    """Key findings and next steps of one shoe sample (a section of a shuffle report).

    Parameters
    ----------
    section : dict
        ``battery`` (verdict, reasons, tests), ``trackers`` and ``findings`` of the sample.
    assumed : sequence of str
        Names of the parameters the verdict assumes (neither given by the rules nor measured).
    unit : str
        What ``section["n"]`` counts.

    Returns
    -------
    key_findings, next_steps : list of str
    """
    b = section["battery"]
    v = b["verdict"]
    name = str(section.get("table", "the sample"))
    n = int(section.get("n") or 0)
    keys: list[str] = []
    steps: list[str] = []
    trackers = [k for k in section.get("trackers") or [] if k.get("edge") is not None]
    beats = [k for k in trackers if k.get("beats_threshold")]
    found = list(section.get("findings") or [])
    if v == "INCONCLUSIVE":
        keys.extend(_no_verdict(r) for r in b.get("reasons") or ["the data cannot carry a verdict"])
    for k in beats:
        keys.append(f"FAIL: {_tracker_words(k)}: a player can beat the game, because the shuffle leaves the order of the previous "
                    "shoe readable. Possible causes to check: a wash too short, too few riffles, clumps kept by the pickup.")
    if beats:  # the tracker's FAIL is said above: "also rejected" lists the other tests (8 beside the two lines' 8, not 9)
        found = [f for f in found if not str(f).startswith("tracker_edge")]
    if found:
        if beats:  # the tracker decided; the statistical rejections are said after it
            head = f"Also rejected after Holm ({len(found)} test(s))"
        elif v == "FAIL":  # the uniform standard: a rejection is the FAIL
            head = f"FAIL: {len(found)} test(s) reject after Holm"
        else:
            head = f"SUSPECT: {len(found)} test(s) reject after Holm, without a tracker's edge beating the threshold"
        others = [f.split(": ", 1)[0].replace("_", " ") for f in found[1:]]
        keys.append(f"{head}: {found[0]}" + (f"; also {', '.join(others)} (each in words in the sample's findings)" if others else "") + ".")
    if v == "PASS":
        best = max(trackers, key=lambda k: k["edge"], default=None)
        edge = f"; the best tracker returns {100 * best['edge']:+.2f}% of the stake (95% interval {100 * best['ci95'][0]:+.2f}% to {100 * best['ci95'][1]:+.2f}%)" if best else ""
        trk = ("and no tracker beats the threshold " if trackers else "")
        none = "" if trackers else " (no tracker ran, so no player's edge was measured)"
        keys.append(f"No test rejects after Holm {trk}in {n:,} {unit}{none}: the shuffle is consistent "
                    f"with a well-shuffled shoe at this sample size{edge}.")
    if assumed:
        keys.append(f"The verdict rests on {len(assumed)} assumed parameter(s) ({', '.join(assumed)}): neither given by the rules "
                    "nor measured; listed in 'Shuffle procedure: what is measured, what is assumed'.")
    if v == "FAIL":
        steps.append(f"Do not use the procedure as it stands ({name} FAILs): lengthen the wash or add a riffle (see the sensitivity "
                     "table and the remedies tried, where the report has them), then certify again.")
    elif v == "SUSPECT":
        steps.append(_suspect_step(trackers, n, unit))
    elif v == "INCONCLUSIVE":
        steps.append("Correct the input or collect more shoes (see the reasons), then certify again.")
    else:
        steps.append("Keep auditing: re-certify when the procedure, the decks or the shuffler change.")
    if assumed:
        steps.append("Measure the assumed parameters from recorded shoes (rngcert shuffle certify LOG --procedure ...) so that the "
                     "verdict no longer rests on them.")
    return order_findings(keys, v), steps


def _suspect_step(trackers: list, n: int, unit: str) -> str:
    """The next step of a SUSPECT shoe sample: no tracker's edge is *established* (one-sided Holm), which is not that no
    tracker exploits the shuffle: a tracker whose 95% interval lies above the threshold is named (an edge is possible)."""
    above = []
    for k in trackers:
        lo, hi = k["ci95"]
        if lo > k.get("threshold", 0.0):
            above.append(f"{k['name'].replace('_', ' ')} {100 * k['edge']:+.2f}% (95% interval {100 * lo:+.2f}% to {100 * hi:+.2f}%)")
    seen = (f"; {', '.join(above)} {'lies' if len(above) == 1 else 'lie'} above the threshold without being significant after Holm: "
            "an edge is possible, not excluded") if above else ""
    return ("Not a failure under the edge standard: the shuffle keeps order a statistician can see, and no tracker's edge is "
            f"established at {n:,} {unit} (one-sided Holm){seen}; improve the wash, or certify again with more {unit} to settle "
            "whether a player can use it.")


def add_shoe_findings(report: dict) -> dict:
    """Set ``key_findings`` and ``next_steps`` on every section of a shuffle report (in place); the
    note on assumed parameters goes with the first section only. Returns ``report``."""
    assumed = [str(p.get("label") or p.get("name")) for p in report.get("parameters") or [] if p.get("status") == "assumed"]
    for i, t in enumerate(report.get("tables") or []):
        t["key_findings"], t["next_steps"] = shoe_findings(t, assumed=assumed if i == 0 else (), unit=report.get("unit", "shoes"))
    return report


def _uniformity_unchecked(rows: list) -> str:
    """A key finding when SP 800-22's uniformity rule (section 4.2.2, at least 55 sequences) did not run for some names."""
    tested = [r for r in rows if r.get("m")]
    skipped = [r for r in tested if r.get("uniformity_pvalue") is None]
    if not skipped:
        return ""
    ms = sorted({int(r["m"]) for r in skipped})
    on = f"{ms[0]}" if len(ms) == 1 else f"{ms[0]} to {ms[-1]}"
    which = "any test name" if len(skipped) == len(tested) else f"{len(skipped)} of {len(tested)} test names"
    return (f"The uniformity of p-values (SP 800-22's second rule, section 4.2.2) was not checked for {which}: SP 800-22 asks for "
            f"55 sequences or more on which the test applies, here {on}; only the proportion of passing sequences judged "
            f"{'them' if len(skipped) > 1 else 'it'}.")


def _low_pvalues_words(b: dict) -> str:
    """One sequence: how many p-values lie below alpha, against how many chance gives, and which (the rule that makes
    a run SUSPECT, said with its numbers whatever the verdict); empty when none lies below alpha."""
    low, n, a = list(b.get("raw_pvalues_below_alpha") or []), int(b.get("tests_applicable") or 0), float(b.get("alpha") or 0.01)
    if not low or not n:
        return ""
    tail = max(0.0, 1.0 - sum(math.comb(n, i) * a ** i * (1 - a) ** (n - i) for i in range(len(low))))
    names = "; ".join(x.replace("nist_", "").replace("_", " ") for x in low[:4]) + ("; …" if len(low) > 4 else "")
    return (f"{len(low)} of {n} p-values below alpha = {a:g} ({names}), against {a * n:.1f} expected by chance "
            f"(P = {tail:.3g} of so many or more)")


def _flag_expected(b: dict) -> str:
    """Over m >= 2 sequences: ", against E expected for a good generator (P = p)" from the flag-count rule's text, or
    empty (what a good generator flags depends on m: about 3.5 of 188 names at m = 100, 0.6 at m = 1,000)."""
    here = str(b.get("suspect_rule") or "").partition("; here ")[2]
    against = here.partition(" rules, against ")[2] if " rules, against " in here else ""
    return f", against {against}" if against else ""


# long: the findings and next steps of an SP 800-22 section, verdict by verdict, read top to bottom as the report says them; 14 lines are its
#   docstring
def bits_findings(section: dict, *, ones: int | None = None, bits: int | None = None) -> tuple[list[str], list[str]]:
    """Key findings and next steps of an SP 800-22 battery section.

    Parameters
    ----------
    section : dict
        ``battery`` (verdict, reasons, tests) and, over m >= 2 sequences, ``two_level`` (rows per name).
    ones, bits : int, optional
        Ones among all bits tested, and the number of bits: the share of ones is said in words (a
        dump with 50.5% ones is described as such, not only as a failed monobit proportion).

    Returns
    -------
    key_findings, next_steps : list of str
    """
    b = section["battery"]
    v = b["verdict"]
    keys: list[str] = []
    steps: list[str] = []
    if v == "INCONCLUSIVE":
        keys.extend(_no_verdict(r) for r in b.get("reasons") or ["the data cannot carry a verdict"])
    share_line = ""
    biased = False
    if ones is not None and bits:
        share = ones / bits
        half = 2.5758 * 0.5 / math.sqrt(bits)  # 99% interval of the share of ones for a fair source
        biased = abs(share - 0.5) > half
        share_line = (f"the bits are {100 * share:.2f}% ones ({ones:,} of {bits:,}; a fair source gives 50% within "
                      f"±{100 * half:.2f}% with 99% probability)")
    rows = (section.get("two_level") or {}).get("rows") or []
    unchecked = _uniformity_unchecked(rows)
    flagged = [r for r in rows if r.get("m") and (r.get("proportion_ok") is False or r.get("uniformity_ok") is False)]
    rejected = [x for x in b.get("tests", []) if x.get("applicable") and x.get("rejected_familywise")]

    def row_words(r: dict) -> str:
        t = str(r["name"]).replace("nist_", "").replace("_", " ")
        parts = []
        if r.get("proportion_ok") is False:
            parts.append(f"{r['passes']} of {r['m']} sequences pass")
        if r.get("uniformity_ok") is False:
            parts.append("p-values not uniform")
        return f"{t} ({', '.join(parts)})"

    low_words = "" if rows else _low_pvalues_words(b)
    if v in ("FAIL", "SUSPECT"):
        what = []
        if biased:
            what.append(share_line + ": the generator is biased towards " + ("ones" if ones / bits > 0.5 else "zeros"))
        if flagged:
            what.append("SP 800-22's rules flag " + "; ".join(row_words(r) for r in flagged[:4]) + ("; …" if len(flagged) > 4 else "")
                        + (f" ({len(flagged)} of {len(rows)} test names{_flag_expected(b)})" if _flag_expected(b) else ""))
        elif not rows and v == "SUSPECT" and low_words:
            what.append(low_words + ", more than a good generator gives")
        elif rejected:
            what.append("rejected after Holm: " + "; ".join(f"{x['name'].replace('nist_', '').replace('_', ' ')} (p {_p(x)})" for x in rejected[:4]))
        causes = ("a biased or failing entropy source (noise diode, ring oscillator) without a working conditioner, a stuck or "
                  "leaking bit, or a dump read with the wrong --format or --bit-order")
        keys.append(f"{v}: " + "; ".join(what or ["a test rejects after Holm (see the summary)" if v == "FAIL" else
                                                  "SP 800-22's second-level rules flag a test name" if rows else
                                                  "more p-values below alpha than independent tests give by chance (see the summary)"])
                    + f". Possible causes to check: {causes}.")
    if share_line and not (v in ("FAIL", "SUSPECT") and biased):
        keys.append(share_line[0].upper() + share_line[1:] + ".")
    if v == "PASS" and not rows:  # one sequence: SP 800-22's second-level rules did not run, so say nothing of them
        keys.insert(0, "No test rejects after Holm" + (f"; {low_words}, not improbably many" if low_words else "")
                       + ": the sequence is consistent with independent, uniform bits at this length "
                       "(SP 800-22's second-level rules need at least 2 sequences and were not applied).")
    elif v == "PASS" and flagged:  # a good generator fails a few names by chance: say how many, never "no test name"
        keys.insert(0, f"No test rejects after Holm; SP 800-22's second-level rules flag {len(flagged)} of {len(rows)} test names ("
                       + "; ".join(row_words(r) for r in flagged[:4]) + ("; …" if len(flagged) > 4 else "")
                       + ")" + (_flag_expected(b) + ", not improbably many" if _flag_expected(b) else
                                ", no more than a good generator flags by chance")
                       + ": the streams are consistent with independent, uniform "
                       "bits at this number and length of sequences.")
    elif v == "PASS":
        rule = ("SP 800-22's proportion rule flags no test name" if unchecked and all(r.get("uniformity_pvalue") is None for r in rows if r.get("m"))
                else "SP 800-22's second-level rules flag no test name")
        keys.insert(0, f"No test rejects after Holm and {rule}: the streams are "
                       "consistent with independent, uniform bits at this number and length of sequences.")
    if unchecked:
        keys.append(unchecked)
    if v == "FAIL":
        steps.append("Do not use this generator for gaming outcomes until the cause is found: check the entropy source and its "
                     "conditioning (and that the dump was read with the right --format and --bit-order), then test a new dump "
                     "at least as long.")
    elif v == "SUSPECT":
        steps.append("Not a failure: test a new, longer dump (more sequences) before drawing a conclusion.")
    elif v == "INCONCLUSIVE":
        need = section.get("length_needed")
        steps.append(f"Supply streams of at least {need:,} bits (--length {need}), the length every required test needs, then "
                     "certify again." if need else "Supply a dump long enough for every test (see the reasons), then certify again.")
    else:
        steps.append("Keep testing: a PASS covers this dump; re-test at the interval your rules require and after any change "
                     "to the device.")
    return order_findings(keys, v), steps
