"""Words and numbers of the reports (HTML, PDF and the terminal summary share them).

* numbers in plain decimals (``21,380``, ``0.0031``), never ``2.138e+04``;
* p-values as ``0.7799``, ``3.1e-05`` and, below the representable floor, ``< 1e-300`` (stored
  in report.json as ``null`` with ``"pvalue_bound": "< 1e-300"``);
* every test id with a title a reader understands (:data:`TITLES`), every grade explained
  (:data:`GRADE_LEGEND`);
* one line per test saying what it saw, in the words of the equipment (pocket, section,
  symbol) — :func:`finding`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

#: Plain titles of the test ids (the id stays in report.json and in the detail tables).
TITLES: dict[str, str] = {
    "pocket_chisquare": "frequencies of every pocket (chi-square)",
    "g_test": "frequencies of every pocket (likelihood ratio G)",
    "max_count": "the most frequent pocket (favourable number)",
    "pocket_binomial_holm": "each pocket on its own (binomial, Holm)",
    "outside_colour": "red / black / zero frequencies",
    "outside_parity": "odd / even frequencies",
    "outside_low_high": "low / high frequencies",
    "outside_dozen": "dozen frequencies",
    "outside_column": "column frequencies",
    "symbol_frequency": "symbol frequencies",
    "sector_scan": "arcs of adjacent pockets (worn frets, shallow pockets)",
    "first_harmonic": "one-sided bias of the rotor (unbalanced or tilted wheel)",
    "runs_colour": "runs of red and black",
    "runs_parity": "runs of odd and even",
    "runs_low_high": "runs of low and high",
    "runs_top_symbol": "runs of the most frequent symbol",
    "longest_colour_run": "the longest run of one colour",
    "gap_test": "gaps between results of one kind",
    "serial_pair": "pairs of consecutive results",
    "serial_correlation": "correlation of consecutive results on the wheel",
    "wheel_distance": "distance on the wheel from one result to the next",
    "dealer_signature": "landing position relative to the release (dealer signature)",
    "out_of_sample_predictor": "a predictor fitted on the first half, tried on the second",
    "card_tracking": "cards that keep their pre-shuffle neighbours",
    "rising_sequences": "rising sequences of the pre-shuffle order",
    "adjacent_pairs": "adjacent pairs kept through the shuffle",
    "displacement": "how far cards move",
    "rank_correlation": "correlation with the pre-shuffle order",
    "position_chisquare": "where each zone of cards goes",
    "position_rank_chisquare": "ranks by position in the shoe",
    "guessing": "guessing the next card with feedback",
    "baccarat_outcomes": "banker / player / tie frequencies",
    "ten_clumping": "clumping of ten-value cards",
    "dealer_totals": "the dealer's final totals",
    "nist_frequency": "Frequency (monobit)",
    "nist_block_frequency": "Frequency within a block",
    "nist_runs": "Runs",
    "nist_longest_run": "Longest run of ones in a block",
    "nist_rank": "Binary matrix rank",
    "nist_dft": "Discrete Fourier transform (spectral)",
    "nist_non_overlapping_template": "Non-overlapping template matching",
    "nist_overlapping_template": "Overlapping template matching",
    "nist_universal": "Maurer's universal statistical test",
    "nist_linear_complexity": "Linear complexity",
    "nist_serial": "Serial",
    "nist_approximate_entropy": "Approximate entropy",
    "nist_cumulative_sums": "Cumulative sums",
    "nist_random_excursions": "Random excursions",
    "nist_random_excursions_variant": "Random excursions variant",
}

#: The grade words of :func:`rngcert.battery.core.grade`, explained (Bonferroni-scaled raw p: p × m).
GRADE_LEGEND: tuple[tuple[str, str], ...] = (
    ("normal", "raw p at or above 0.01: what a fair source gives most of the time"),
    ("unusual", "raw p below 0.01, but not rare among this many tests (p × tests ≥ 0.05)"),
    ("mildly suspicious", "p × tests below 0.05"),
    ("suspicious", "p × tests below 0.01"),
    ("very suspicious", "p × tests below 0.001"),
    ("FAIL (overwhelming)", "p × tests below one in a million"),
    ("FAIL (rejected by Holm)", "rejected after Holm's correction at alpha: this is what makes a verdict FAIL"),
)

P_BOUND = "< 1e-300"


def title(name: str) -> str:
    """Plain title of a test id (``"nist_serial[1]"`` → ``"Serial [1]"``)."""
    base, _, rest = name.partition("[")
    stem, _, part = base.partition(":")
    t = TITLES.get(stem, stem.replace("_", " "))
    if rest:
        t += " [" + rest
    if part:
        t += f" ({part})"
    return t


def num(x: Any, digits: int = 4) -> str:
    """A number in plain decimals: integers with thousands separators, others with ``digits``
    significant digits (``21,380``, ``0.0031``, ``–`` for missing)."""
    if x is None or isinstance(x, bool):
        return "–" if x is None else str(x)
    if isinstance(x, str):
        return x
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v) or math.isinf(v):
        return "–"
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    a = abs(v)
    if a >= 10 ** digits:
        return f"{v:,.0f}"
    if a < 1e-6:
        return f"{v:.1e}"
    dec = max(0, digits - 1 - int(math.floor(math.log10(a))))
    s = f"{v:,.{dec}f}"
    return s.rstrip("0").rstrip(".") if "." in s else s


def pvalue(p: Any, bound: str | None = None) -> str:
    """A p-value as printed: 4 decimals, ``3.1e-05`` below 1e-4, ``< 1e-300`` below the floor."""
    if p is None:
        return bound or "–"
    p = float(p)
    if p < 1e-300:
        return P_BOUND
    if p < 1e-4:
        return f"{p:.1e}"
    return f"{p:.4f}"


def test_p(t: Mapping[str, Any], key: str = "pvalue") -> str:
    """The p-value of a test dict, with the ``pvalue_bound`` of an underflowed p-value."""
    if key == "pvalue":
        return pvalue(t.get("pvalue"), t.get("pvalue_bound"))
    v = t.get(key)
    if v is None and t.get("pvalue") is None and t.get("pvalue_bound"):
        return t["pvalue_bound"]
    return pvalue(v)


def p_is(t: Mapping[str, Any], key: str = "pvalue") -> str:
    """``"= 0.0031"`` or ``"< 1e-300"``, for sentences (``p = 0.0031``, ``p < 1e-300``)."""
    s = test_p(t, key)
    return s if s.startswith("<") else f"= {s}"


def p_float(t: Mapping[str, Any], key: str = "pvalue") -> float:
    """The p-value as a float for comparisons (an underflowed one counts as 0)."""
    v = t.get(key)
    return 0.0 if v is None else float(v)


def pct(x: Any) -> str:
    return "–" if x is None else f"{float(x):+.1%}"


def _outcome_word(labels: Sequence[str], wheel_kind: str | None) -> str:
    if wheel_kind == "roulette":
        return "pocket"
    if labels and not all(str(x).isdigit() for x in labels):
        return "symbol"
    return "section" if wheel_kind == "money-wheel" else "outcome"


def finding(t: Mapping[str, Any], labels: Sequence[str] | None = None, wheel_kind: str | None = None) -> str:
    """One line saying what the test saw, in the equipment's words, from the test's details."""
    if not t.get("applicable", True):
        return ""
    if t.get("plain"):
        return str(t["plain"])
    d = t.get("details") or {}
    labels = list(labels or [])
    word = _outcome_word(labels, wheel_kind)

    def lab(i):
        try:
            return str(labels[int(i) % len(labels)]) if labels else str(i)
        except (TypeError, ValueError):
            return str(i)

    name = str(t.get("name", ""))
    best = d.get("best_arc")
    if isinstance(best, dict) and "start" in best:
        return _arc_finding(name, best, d, word, lab)
    if name.endswith(":proportion") and d.get("interval"):
        lo, hi = d["interval"]
        if d.get("proportion_ok", True):
            return f"{d.get('passes')} of {d.get('m')} sequences pass, inside SP 800-22's interval {lo:.3f} to {min(hi, 1):.3f}"
        return f"{d.get('passes')} of {d.get('m')} sequences pass: outside SP 800-22's interval {lo:.3f} to {min(hi, 1):.3f}"
    if name.endswith(":uniformity") and "histogram" in d:
        return "p-values per tenth of [0, 1]: " + " ".join(str(int(h)) for h in d["histogram"])
    if name == "max_count" and "position" in d:
        exc = d.get("relative_excess")
        return f"{word} {lab(d['position'])}: {num(d.get('count'))} against {num(d.get('expected'))} expected" + (f" ({pct(exc)})" if isinstance(exc, (int, float)) else "")
    if d.get("rejected_positions"):
        return f"{word}s rejected: " + ", ".join(lab(i) for i in d["rejected_positions"])
    if "longest_run" in d:
        col = {1: "red", 2: "black"}.get(d.get("colour"), "")
        return f"longest run {d['longest_run']} {col} (expected {num(d.get('expected_longest'))}), from spin {num(d.get('start_index'))}"
    if "direction_position" in d:
        return f"mean direction near {word} {lab(round(d['direction_position']))}, amplitude {num(d.get('amplitude'))}"
    obs = d.get("observed")
    if isinstance(obs, list) and obs and all(isinstance(x, list) for x in obs):  # a contingency table (direction x pocket):
        return f"{len(obs)} × {len(obs[0])} table of counts (in report.json)"  # not 74 numbers in a table cell (issue 24)
    if isinstance(obs, list) and len(obs) <= 4:
        return " / ".join(num(x) for x in d["observed"]) + " (expected " + " / ".join(num(x) for x in d.get("expected", [])) + ")"
    return ""


def _arc_finding(name: str, best: Mapping[str, Any], d: Mapping[str, Any], word: str, lab) -> str:
    """:func:`finding` of a test that reports its best arc (``best``): the arc's outcomes, or for the dealer
    signature the landing distances past the reference, with observed against expected counts."""
    L = int(best.get("length", 1))
    exc = best.get("relative_excess")
    exc_s = f" ({pct(exc)})" if isinstance(exc, (int, float)) else ""
    obs = f"{num(best.get('observed'))} against {num(best.get('expected'))} expected{exc_s}"
    if name == "dealer_signature":
        who = best.get("label", "")
        ref = d.get("reference", "reference")
        what = " (repeats of the same number)" if int(best["start"]) == 0 and L == 1 and ref == "previous result" else ""
        return f"{who}: landing {int(best['start'])} to {int(best['start']) + L - 1} pockets past the {ref}{what}: {obs}"
    return f"arc of {L} {word}s {lab(best['start'])} to {lab(int(best['start']) + L - 1)}: {obs}"


def verdict_counts(tables: Sequence[Mapping[str, Any]]) -> str:
    """``"1 FAIL, 2 SUSPECT, 15 PASS"`` over a report's tables (most severe first)."""
    order = ("FAIL", "INCONCLUSIVE", "SUSPECT", "PASS")
    c = {v: 0 for v in order}
    for t in tables:
        c[t["battery"]["verdict"]] += 1
    return ", ".join(f"{c[v]} {v}" for v in order if c[v])


def flagged(battery: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Tests that matter on page one: rejected by Holm, or raw p below alpha; those rejected by Holm (FAIL)
    first, then those rejected at the SUSPECT level, then the rest (battery order within each)."""
    a = battery.get("alpha", 0.01)
    out = [x for x in battery.get("tests", []) if x.get("applicable") and (x.get("rejected_familywise") or p_float(x) < a)]
    return sorted(out, key=lambda x: 0 if x.get("rejected_familywise") else 1 if x.get("rejected_at_suspect_level") else 2)


def headline(t: Mapping[str, Any]) -> str:
    """One plain line on a table's verdict (its first key finding when the verdict engine gave
    one, else the flagged tests by title)."""
    b = t["battery"]
    if t.get("key_findings"):
        return str(t["key_findings"][0])
    if str(b.get("suspect_rule", "")).startswith(("edge standard", "uniform standard")):
        return _shuffle_headline(t)
    fl = flagged(b)
    if b["verdict"] == "FAIL":
        rej = [x for x in fl if x.get("rejected_familywise")]
        return "rejected after Holm's correction: " + "; ".join(f"{title(x['name'])} (p {p_is(x)})" for x in rej[:3])
    if b["verdict"] == "INCONCLUSIVE":
        return (b.get("reasons") or ["the data cannot carry a verdict"])[0]
    if b["verdict"] == "SUSPECT":
        if fl:
            return "raw p below alpha, not rejected after the correction: " + "; ".join(f"{title(x['name'])} (p {p_is(x)})" for x in fl[:3])
        return (b.get("reasons") or [""])[0]
    low = next((r for r in b.get("reasons", []) if r.startswith("low power")), None)
    line = f"all {b.get('tests_applicable', 0)} applicable tests within what a fair source gives"
    return line + (f"; {low.split(';', 1)[0]}" if low else "")


def _shuffle_headline(t: Mapping[str, Any]) -> str:
    """:func:`headline` of a shuffle section: its verdict rests on the trackers' edges (edge
    standard) or on any family-wise rejection (uniform standard), so the line names what decided it."""
    b = t["battery"]
    level = b.get("alpha", 0.01)
    tests = [x for x in b.get("tests", []) if x.get("applicable")]
    rej = [x for x in tests if x.get("rejected_familywise")]
    rej_stat = [x for x in rej if not x["name"].startswith("tracker_edge:")]
    beats = [k for k in t.get("trackers") or [] if k.get("beats_threshold")]
    stats = "; ".join(f"{title(x['name'])} (p {p_is(x)})" for x in rej_stat[:3]) + ("; …" if len(rej_stat) > 3 else "")
    if b["verdict"] == "FAIL":
        if beats:
            line = "a tracker beats the threshold: " + "; ".join(f"{k['name'].replace('_', ' ')} {k.get('sentence', '')}".split(" — ")[0] for k in beats[:2])
            return line + (f"; also rejected after Holm: {stats}" if rej_stat else "")
        return f"rejected after Holm's correction at {level:.3g}: {stats}"
    if b["verdict"] == "SUSPECT":
        if rej_stat:
            return f"findings, no tracker beats the threshold: {stats} reject after Holm at {level:.3g}"
        return (b.get("reasons") or [""])[0]
    if b["verdict"] == "INCONCLUSIVE":
        return (b.get("reasons") or ["the data cannot carry a verdict"])[0]
    low = [x for x in tests if p_float(x) < level]
    if low:
        return (f"no test rejects after Holm at {level:.3g}, but {len(low)} raw p-value(s) are below it: "
                + "; ".join(f"{title(x['name'])} (p {p_is(x)})" for x in low[:3]) + ("; …" if len(low) > 3 else ""))
    return f"all {b.get('tests_applicable', 0)} applicable tests within what a fair source gives (Holm at {level:.3g})"


#: Tables in the order a multi-table summary lists them: the ones that are not PASS first (issue 24).
VERDICT_ORDER = ("FAIL", "INCONCLUSIVE", "SUSPECT", "PASS")


def by_severity(tables: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``tables`` with FAIL first, then INCONCLUSIVE, SUSPECT and PASS (stable within a verdict)."""
    rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
    return sorted(tables, key=lambda t: rank.get(t["battery"]["verdict"], len(rank)))


def grouped(tables: Sequence[Mapping[str, Any]], key: str) -> list[dict]:
    """The lines of a multi-table summary, the tables that are not PASS first, identical lines said once.

    Parameters
    ----------
    tables : sequence of table dicts (``table``, ``battery.verdict`` and ``key``)
    key : str
        ``"key_findings"`` or ``"next_steps"`` (lists of sentences), or ``"headline"`` (:func:`headline`).

    Returns
    -------
    list of dict
        ``text``, ``verdict`` (of the first table saying it), ``tables`` (names, in report order) and
        ``anchor`` (of the first); a line that several tables share is one item with all their names.
    """
    out: dict[str, dict] = {}
    for t in by_severity(tables):
        lines = [headline(t)] if key == "headline" else list(t.get(key) or [])
        for s in lines:
            item = out.setdefault(s, {"text": s, "verdict": t["battery"]["verdict"], "tables": [], "anchor": t.get("anchor", "")})
            if t["table"] not in item["tables"]:
                item["tables"].append(t["table"])
    return list(out.values())


def tables_label(names: Sequence[str], word: str = "table", limit: int | None = None) -> str:
    """``"bitcasino-2"`` or ``"17 tables (a, b, …)"``: who a grouped line is about (``limit`` cuts the list,
    saying how many are left out)."""
    names = [str(n) for n in names]
    if len(names) == 1:
        return names[0]
    shown = names if limit is None or len(names) <= limit else names[:limit]
    rest = "" if len(shown) == len(names) else f" and {len(names) - len(shown)} more"
    return f"{len(names)} {word}s ({', '.join(shown)}{rest})"


def deciding(t: Mapping[str, Any], limit: int = 240) -> str:
    """The observation that decided a table's verdict, without its causes and next step (for banners and
    the certificate's schedule), cut at ``limit`` characters with an ellipsis."""
    return clip(headline(t).split(". Possible causes", 1)[0].rstrip("."), limit)


def clip(s: str, limit: int | None) -> str:
    """``s`` cut to at most ``limit`` characters at a word boundary, ending in an ellipsis; never in the
    middle of a word, so a cut banner or page header does not read "the previous s…" (issue 24).

    Parameters
    ----------
    s : str
        The text.
    limit : int or None
        The largest length of the result (None: no limit).

    Returns
    -------
    str
        ``s`` itself when it fits, else its longest prefix of whole words with "…" appended.

    Examples
    --------
    >>> clip("the order of the previous shoe", 24)
    'the order of the…'
    """
    if limit is None or len(s) <= limit:
        return s
    cut = s[: limit - 1]
    if s[limit - 1] != " " and " " in cut:  # the cut falls inside a word: back to the last whole word
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-–—(") + "…"
