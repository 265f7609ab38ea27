"""A report under a certification standard (issue 23): per-clause results beside the verdict, and
the same two lines for every equipment — the statistical finding and the practical edge.

:func:`apply_standard` is the last step of every certifying pipeline (wheels, shoes, bits, audits):
it evaluates the standard's clauses on each table's battery (:func:`rngcert.battery.standard.evaluate`),
sets each table's verdict and the report's to the standard's, and writes the report's ``standard``
object. Under ``rngcert-default`` the clauses restate the battery's own rule, so the verdict is the
battery's; another standard can change it, and each table then keeps its battery's own verdict as
``battery_verdict`` and says which clause decided.
"""

from __future__ import annotations

from typing import Any, Mapping

from rngcert.battery.core import worst
from rngcert.battery.standard import DEFAULT, Standard, evaluate, load_standard, summarise


def resolve(standard: Standard | str | None) -> Standard:
    """A :class:`Standard` from an object, a packaged id or a TOML path (None: the default)."""
    return standard if isinstance(standard, Standard) else load_standard(standard or DEFAULT)


def shoe_kind(report: Mapping[str, Any]) -> str:
    """``shoe:manual`` when the shuffle was judged as a manual procedure (trackers decide), else ``shoe:machine``."""
    return "shoe:manual" if (report.get("policy") or {}).get("standard") == "edge" else "shoe:machine"


def statistical_line(battery: Mapping[str, Any]) -> str:
    """The statistical finding of a table, in one line."""
    rej = [n for n in battery.get("rejected_familywise", []) if not n.startswith("tracker_edge:")]
    sus = [n for n in battery.get("rejected_at_suspect_level", []) if not n.startswith("tracker_edge:")]
    a = battery.get("alpha")
    if rej:
        return f"Statistical finding: {len(rej)} test(s) reject randomness family-wise at alpha = {a:g}: {', '.join(rej[:6])}."
    if sus:
        return (f"Statistical finding: no family-wise rejection at alpha = {a:g}; {', '.join(sus[:6])} reject(s) at the looser level "
                f"{battery.get('suspect_level'):g}.")
    flags = battery.get("second_level_flags") or []
    if flags:
        return f"Statistical finding: no family-wise rejection at alpha = {a:g}; SP 800-22's second-level rules flag {', '.join(flags[:6])}."
    if battery.get("tests_applicable", 1) == 0:  # "no test rejects" of a battery none of whose tests ran reads as if they had
        return "Statistical finding: none: no test of the battery could run on these data (see the reasons)."
    return f"Statistical finding: no test rejects family-wise at alpha = {a:g}."


def edge_line(kind: str, table: Mapping[str, Any]) -> str:
    """The practical edge of a table, in one line: a wheel's best bet, a shoe's trackers; bits: not applicable."""
    b = table.get("battery") or {}
    if kind == "bits":
        return "Practical edge: not applicable (raw RNG bits carry no bet; their scaling to outcomes is certified separately)."
    if kind == "wheel":
        e = b.get("practical_edge")
        if not e:
            ex = b.get("exploitability") or {}
            return f"Practical edge: not assessed ({ex.get('reason', 'no pay table')})."
        lo, hi = e["ci"]
        return (f"Practical edge: best bet {e['bet']} {e['expected_return']:+.2%} per unit staked ({e['confidence']:.0%} simultaneous "
                f"interval {lo:+.2%} to {hi:+.2%}, over {e['bets']} bets from the pay table): "
                + (f"a player's edge is DEMONSTRATED ({e.get('demonstrated_bet') or e['bet']}: simultaneous lower bound above 0)." if e["demonstrated"]
                   else "no player's edge demonstrated."))
    tr = [k for k in table.get("trackers", []) if k.get("edge") is not None]
    if not tr:
        why = "; ".join(sorted({str(k.get("reason")) for k in table.get("trackers", []) if k.get("reason")})) or "no tracker for this game"
        return f"Practical edge: no tracker could run ({why})."
    best = max(tr, key=lambda k: k["edge"])
    beats = [k["name"] for k in tr if k.get("beats_threshold")]
    lo, hi = best["ci95"]
    return (f"Practical edge: best tracker {best['name']} {best['edge']:+.2%} of the stake (95% interval {lo:+.2%} to {hi:+.2%}); "
            + (f"a player's edge is DEMONSTRATED by {', '.join(beats)} (one-sided Holm at alpha)." if beats
               else "no tracker beats the threshold declared in advance."))


def underpowered(table: Mapping[str, Any]) -> list[str]:
    """Why a table's sample cannot detect the declared minimum effect with the declared power, whatever its
    battery's verdict: a wheel's power reasons (``battery.power.gate_reasons``), a shoe section's power gate."""
    gate = table.get("power_gate") or {}
    if table.get("kind") == "dealer":  # a dealer's share of a log states its power only (the log's verdict rests on all shoes)
        return []
    if gate.get("status") == "underpowered":
        return [str(gate.get("sentence") or "too few shoes to detect the declared minimum tracker edge")]
    return [str(r) for r in ((table.get("battery") or {}).get("power") or {}).get("gate_reasons") or []]


def unmeasured(kind: str, battery: Mapping[str, Any]) -> str | None:
    """Why nothing measured the equipment's practical edge, or None: a wheel whose pay table is missing (its
    exploitability not assessed), a shoe whose game has no tracker, or whose trackers all bet too little on
    these shoes to measure an edge (each not applicable with a count of units or shoes too small). The
    battery's own rule treats the last two alike ("no tracker measured the player's edge ... it stays a
    FAIL"); so does every standard (issue 23: a game without a tracker never downgrades a statistical FAIL,
    and a tracker whose bets are too few measures no more). A tracker that never found a bet worth placing
    has judged the edge (none to take: a Fisher-Yates shoe's trackers never bet), so it is not this case."""
    if kind == "wheel":
        ex = battery.get("exploitability")
        return str(ex.get("reason") or "no pay table") if isinstance(ex, dict) and ex.get("applicable") is False else None
    if kind.startswith("shoe"):
        from rngcert.stats.tracker_edge import NO_BET

        trackers = [x for x in battery.get("tests", []) if str(x.get("name", "")).startswith("tracker_edge:")]
        if not trackers:
            return "no tracker for this game"
        if not any(x.get("applicable", True) or str(x.get("reason") or "").startswith(NO_BET) for x in trackers):
            return "no tracker bet enough on these shoes to measure an edge (" + "; ".join(str(x.get("reason") or x["name"]) for x in trackers[:2]) + ")"
    return None


def _restate(keys: list, old: str, new: str, std_id: str) -> list:
    """Key findings worded by the battery's own verdict, restated under the standard's: a sentence that
    starts "FAIL:" must not stand beside a standard's SUSPECT, PASS or INCONCLUSIVE (the finding stays,
    its verdict word says whose rule it is)."""
    if old == "PASS" and new != "PASS":  # "No test rejects: ... consistent with a fair ..." is the battery's rule, not the standard's
        keys = [f"Under the battery's own rule (PASS; standard {std_id}: {new}), n" + str(k)[1:]
                if str(k).startswith("No test rejects") else k for k in keys]
    if new == "FAIL" and old in ("SUSPECT", "PASS"):  # the battery's own SUSPECT beside the standard's FAIL: say whose word it is
        return [f"SUSPECT under the battery's own rule (standard {std_id}: FAIL): " + str(k)[len("SUSPECT: "):]
                if str(k).startswith("SUSPECT: ") else k for k in keys]
    if old != "FAIL" or new == "FAIL":
        return list(keys)
    head = {"SUSPECT": f"SUSPECT under standard {std_id} (a finding there; FAIL under the battery's own rule): ",
            "PASS": f"Not a FAIL under standard {std_id} (FAIL under the battery's own rule): ",
            "INCONCLUSIVE": f"Would be FAIL under the battery's own rule, but standard {std_id} gives no verdict: "}[new]
    return [head + str(k)[len("FAIL: "):] if str(k).startswith("FAIL: ") else k for k in keys]


#: Next steps of a battery PASS or SUSPECT that a standard's FAIL contradicts.
NOT_FAIL_STEPS = ("Not a failure", "Keep auditing", "Keep testing")


def _restate_steps(steps: list, new: str, std_id: str) -> list:
    """Next steps of a battery FAIL restated when the standard's verdict is another (the wheel's or the
    procedure's "take it out of play" step does not follow from a SUSPECT or a PASS), and those of a
    battery PASS or SUSPECT when the standard's verdict is FAIL ("Not a failure" does not stand beside it)."""
    if new == "FAIL":
        kept = [x for x in steps if not str(x).startswith(NOT_FAIL_STEPS)]
        if len(kept) == len(steps):
            return list(steps)
        return [f"FAIL under standard {std_id}: do not use the equipment as it stands; find and repair the cause "
                "(see the findings), then certify again."] + kept
    kept = [x for x in steps if not str(x).startswith(("Take the wheel out of play", "Do not use the procedure"))]
    first = {"SUSPECT": f"Not a failure under standard {std_id}: collect the sample stated above and re-test before drawing a conclusion.",
             "PASS": f"No failure under standard {std_id}: keep auditing at the interval your rules require.",
             "INCONCLUSIVE": f"No verdict under standard {std_id}: correct the input or collect more data (see the reasons), then certify again."}[new]
    return [first] + kept


def apply_standard(report: dict, standard: Standard | str | None, *, kind: str, alpha: float) -> dict:
    """Evaluate ``standard`` on every table of ``report`` and state the verdict under it (in place).

    Parameters
    ----------
    report : dict
        A report with ``tables`` (each with ``battery``).
    standard : Standard, str or None
        The standard (None: ``rngcert-default``).
    kind : str
        ``wheel``, ``shoe`` (manual or machine from the report's policy) or ``bits``.
    alpha : float
        The run's certification level.

    Returns
    -------
    dict
        The report (also changed in place): ``standard`` added, verdicts under the standard.
    """
    std = resolve(standard)
    k = shoe_kind(report) if kind == "shoe" else kind
    per, changed = [], False
    for t in report["tables"]:
        b = t["battery"]
        edges = {**(b.get("practical_edge_levels") or {})}

        def edge(lv, edges=edges):
            return edges.get(f"{lv:g}")

        ev = evaluate(std, k, b, alpha=alpha, n=t.get("n"), edge=edge, underpowered=underpowered(t), unmeasured=unmeasured(k, b))
        b["two_lines"] = {"statistical": statistical_line(b), "practical_edge": edge_line(k, t)}
        if ev["verdict"] != b["verdict"]:
            changed = True
            b["battery_verdict"] = b["verdict"]
            b["verdict"] = ev["verdict"]
            b["reasons"] = [f"under standard {std.id}: " + r for r in ev["reasons"]] + [f"(the battery's own rule: {b['battery_verdict']})"]
            if isinstance(t.get("key_findings"), list):
                t["key_findings"] = _restate(t["key_findings"], b["battery_verdict"], ev["verdict"], std.id)
                t["key_findings"].insert(0, f"Under standard {std.id}, {ev['verdict']}: " + "; ".join(ev["reasons"]) + ".")
            if isinstance(t.get("next_steps"), list) and (b["battery_verdict"] == "FAIL" or ev["verdict"] == "FAIL"):
                t["next_steps"] = _restate_steps(t["next_steps"], ev["verdict"], std.id)
            if b["battery_verdict"] == "FAIL" and ev["verdict"] != "FAIL":  # each test's sentence and grade too
                for x in b.get("tests", []):
                    if isinstance(x.get("plain"), str):
                        x["plain"] = _restate([x["plain"]], "FAIL", ev["verdict"], std.id)[0]
                    if x.get("grade") == "FAIL (rejected by Holm)":
                        x["grade"] = f"rejected by Holm (not a FAIL under standard {std.id})"
        per.append({"table": t.get("table"), "verdict": ev["verdict"], "clauses": ev["clauses"]})
    _restate_blocks(report, std.id)
    report["standard"] = summarise(std, per, alpha=alpha, kind=k)
    report["standard"]["rule_once"] = std.rule
    if changed:
        report["verdict"] = worst([t["battery"]["verdict"] for t in report["tables"]])
    return report


def _restate_blocks(report: dict, std_id: str) -> None:
    """A shuffle procedure's ``steady_state`` and ``first_shoe`` blocks state their section's verdict under the
    standard where it restated it (the battery's own verdict kept as ``battery_verdict``; the first shoe's remedies,
    tried for the battery's FAIL, say so)."""
    for key in ("steady_state", "first_shoe"):
        block = report.get(key)
        b = next((t["battery"] for t in report["tables"] if t.get("kind") == key), None)
        if not isinstance(block, dict) or b is None or "battery_verdict" not in b or block.get("verdict") == b["verdict"]:
            continue
        block["battery_verdict"], block["verdict"] = block.get("verdict"), b["verdict"]
        if "reasons" in block:
            block["reasons"] = list(b["reasons"])
        if block.get("needs"):
            block["needs"] = (f"under standard {std_id} the first shoe is {b['verdict']}, not a FAIL; under the battery's own rule "
                              f"({block['battery_verdict']}): " + block["needs"])


def terminal_lines(report: Mapping[str, Any]) -> list[str]:
    """The standard's lines of the terminal summary: its id and verdict with each clause that applies
    to the equipment and its result (one line), and for one table the two lines (statistical finding,
    practical edge). The rule itself is stated on page one of the report."""
    s = report.get("standard")
    if not s:
        return []
    parts = [f"{c['id']} {c['result'].upper() if c['result'] == 'not met' else c['result']}" for c in s["results"] if c.get("for_equipment", True)]
    src = "" if s.get("packaged", True) else f" from {s.get('source')}" + (f" (SHA-256 {s['sha256'][:16]}…)" if s.get("sha256") else "")
    if not any(c.get("for_equipment", True) for c in s["results"]):  # the equipment, not the data or the battery
        parts.append(f"no clause applies to {s.get('kind', 'this')} equipment")
    elif s["verdict"] == "INCONCLUSIVE" and not any(c["result"] in ("inconclusive", "not met") for c in s["results"] if c.get("for_equipment", True)):
        met = any(c["result"] == "met" for c in s["results"] if c.get("for_equipment", True))
        # c22: not "all met" beside INCONCLUSIVE; and no "clauses met" when none is (every clause not applicable)
        gated = [t for t in report.get("tables", []) if t["battery"].get("battery_verdict") not in (None, "INCONCLUSIVE")
                 and t["battery"]["verdict"] == "INCONCLUSIVE"]
        # the battery rejected, the standard's clauses are met, the sample lacks power: not "battery INCONCLUSIVE"
        parts.append("no PASS without the power to detect the declared minimum effect: see the reasons" if gated and met else
                     "battery INCONCLUSIVE (" + ("the clauses met do not make a PASS" if met else "no clause could be judged") + ": see the reasons)")
    lines = [f"standard: {s['id']}{src}: {s['verdict']} (clauses: {' · '.join(parts)})"]
    if len(report.get("tables", [])) == 1:
        two = report["tables"][0]["battery"].get("two_lines") or {}
        lines += [f"  {two[k]}" for k in ("statistical", "practical_edge") if two.get(k)]
    return lines
