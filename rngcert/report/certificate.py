"""The certificate on page one of report.pdf, fitted to one A4 page.

The certificate repeats what the report says in full: the subject, the unit under test, the verdict's
line, the schedule of tables, the inputs, the rules and the standard's policy. Some of these have no
bound (a 40-table log, 12 input files, a long ``--subject``, a lab's standard with a long summary), and
a certificate that ran onto page two pushed the signature lines off its page. :func:`view` gives the
certificate's content at a compaction level: level 0 shows everything; each later level (:data:`LEVELS`)
shows fewer rows and shorter texts. What a level leaves out is never dropped silently: the certificate
says how many rows it does not show and names the section of the report that has them in full (with
its page number in the PDF), and a text cut ends in an ellipsis followed by where it is in full.
:func:`rngcert.report.pdf.write_fitted` prints the first level whose certificate fits page one.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rngcert.report import text

#: Compaction levels after level 0 (everything): rows shown of each list and characters of each text.
#: ``uut_tables``: table ids named in the unit-under-test line (more: only their number).
LEVELS: tuple[Mapping[str, int], ...] = (
    {"schedule": 14, "inputs": 4, "uut_tables": 8, "rules": 4, "assumed": 8, "text": 600, "deciding": 200},
    {"schedule": 8, "inputs": 2, "uut_tables": 0, "rules": 2, "assumed": 4, "text": 300, "deciding": 130},
    {"schedule": 4, "inputs": 1, "uut_tables": 0, "rules": 1, "assumed": 0, "text": 140, "deciding": 90},
)

#: The levels :func:`view` takes: 0 (everything) and one per entry of :data:`LEVELS`.
N_LEVELS = 1 + len(LEVELS)


def _cut(s: Any, limit: int | None) -> dict:
    """``{"text": s clipped at limit on a word boundary, "cut": whether it was}``."""
    s = "" if s is None else str(s)
    out = text.clip(s, limit)
    return {"text": out, "cut": out != s}


def _more(items: Sequence, limit: int | None) -> tuple[list, int]:
    """The first ``limit`` items (all when None) and how many are left out."""
    items = list(items)
    if limit is None or len(items) <= limit:
        return items, 0
    return items[:limit], len(items) - limit


def runs_of(tables: Sequence[dict], key) -> list[tuple[dict, int]]:
    """Each table with the number of rows its text cell spans: consecutive tables whose ``key(table)``
    and verdict are the same share one cell (the schedule and summary of 18 tables repeated one sentence
    18 times); 0 for a table whose text the cell above covers.

    Parameters
    ----------
    tables : sequence of dict
        Table sections, in the order shown.
    key : callable
        The text of a table's cell.

    Returns
    -------
    list of (dict, int)
        Every table, in order, with its span (0: covered by the cell above).
    """
    out: list[tuple[dict, int]] = []
    start, prev = 0, None
    for t in tables:
        k = (key(t), t["battery"]["verdict"])
        if out and k == prev:
            out.append((t, 0))
            out[start] = (out[start][0], out[start][1] + 1)
        else:
            start, prev = len(out), k
            out.append((t, 1))
    return out


def _schedule(tables: Sequence[dict], limit: int | None, deciding_limit: int) -> dict:
    """The schedule's rows (most severe first, as given; the text of consecutive rows that say the same
    said once, :func:`runs_of`), and the rows left out with their verdicts counted."""
    shown, more = _more(tables, limit)
    why = {id(t): text.deciding(t, deciding_limit) for t in shown}
    rows = [{"t": t, "why": why[id(t)], "span": span} for t, span in runs_of(shown, lambda t: why[id(t)])]
    rest = list(tables)[len(shown):]
    return {"rows": rows, "more": more, "more_counts": text.verdict_counts(rest) if rest else ""}


def _overall(report: Mapping[str, Any], tables: Sequence[dict], overall: str, limit: int | None) -> dict:
    """The verdict's line, cut at ``limit``; a multi-table line too long keeps the verdict and its count per verdict
    (:func:`rngcert.report.text.verdict_counts`) whole, and cuts what follows (the names and the deciding finding)."""
    if limit is None or len(overall) <= limit or len(tables) < 2:
        return _cut(overall, limit)
    word = str(report.get("section_word", "Table")).lower()
    head = f"{report['verdict']} is the worst of {len(tables)} {word}s: {text.verdict_counts(tables)}."
    first = next((t for t in tables if t["battery"]["verdict"] == report["verdict"]), tables[0])
    tail = text.clip(f"{first['table']}: {text.deciding(first)}", max(limit - len(head), 20))
    return {"text": f"{head} {tail}", "cut": True}


def view(report: Mapping[str, Any], tables_by_severity: Sequence[dict], uut: Mapping[str, Any], overall: str, assumed: Sequence[str] = (),
         level: int = 0) -> dict:
    """What the certificate shows at compaction ``level``.

    Parameters
    ----------
    report : mapping
        The report (``subject``, ``inputs``, ``certified``, ``standard``, ``policy``).
    tables_by_severity : sequence of dict
        The table views, most severe verdict first (the schedule's order).
    uut : mapping
        :func:`rngcert.report.writer.unit_under_test` of the report.
    overall : str
        :func:`rngcert.report.writer.overall_line` of the report.
    assumed : sequence of str
        The assumed parameters' labels (:func:`rngcert.report.writer.assumed_parameters`).
    level : int
        0 (everything, as in full) to ``N_LEVELS - 1`` (the shortest).

    Returns
    -------
    dict
        ``subject``, ``description``, ``overall``, ``policy`` (each ``{"text", "cut"}``); ``uut_tables`` (ids named
        in the unit line; empty when only their number is given); ``schedule`` (``rows`` of ``{"t", "why", "span"}``,
        ``more``, ``more_counts``); ``inputs``, ``rules``, ``assumed`` (shown) with ``inputs_more``, ``rules_more``,
        ``assumed_more`` (left out); ``level``.

    Raises
    ------
    ValueError
        ``level`` outside 0 .. ``N_LEVELS - 1``.
    """
    if not 0 <= level < N_LEVELS:
        raise ValueError(f"certificate level {level}: not in 0..{N_LEVELS - 1}")
    lim = LEVELS[level - 1] if level else {}
    txt, uut_max = lim.get("text"), lim.get("uut_tables", 24)
    std = report.get("standard") or {}
    own = bool(std.get("summary")) and std.get("id") != "rngcert-default"
    tables = list(uut.get("tables") or [])
    inputs, inputs_more = _more(report.get("inputs") or [], lim.get("inputs"))
    rules, rules_more = _more((report.get("certified") or {}).get("rules") or [], lim.get("rules"))
    assumed, assumed_more = _more(assumed, lim.get("assumed"))
    return {
        "level": level,
        "subject": _cut(report.get("subject"), txt),
        "description": _cut(uut.get("description"), txt),
        "overall": _overall(report, tables_by_severity, overall, txt and 2 * txt),
        "policy": _cut(std.get("summary") if own else (report.get("policy") or {}).get("summary"), txt),
        "uut_tables": tables if len(tables) <= uut_max else [],
        "schedule": _schedule(tables_by_severity, lim.get("schedule"), lim.get("deciding", 240)),
        "inputs": inputs, "inputs_more": inputs_more,
        "rules": rules, "rules_more": rules_more,
        "assumed": assumed, "assumed_more": assumed_more,
    }
