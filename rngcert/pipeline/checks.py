"""Checks that decide whether the data can carry a verdict at all (DESIGN §4, precedence).

Each returns plain-words reasons; the pipeline passes them to the battery's decision as
INCONCLUSIVE reasons, which take precedence over FAIL and PASS:

* :func:`unreadable_reasons` — more than ``--max-rejected`` of a file's data rows could not be
  read; in a multi-file run the file is named and only its tables are affected;
* :func:`other_wheel_hint` — the labels read better as another packaged wheel's (a wrong
  ``--equipment``): says which wheel and the option to use;
* :func:`label_reasons` — rejected results that concentrate on a few values, or that spell a
  pocket the accepted rows never show ("labels that do not fit the wheel"): never a FAIL on how
  a label was written, whatever share ``--max-rejected`` allows;
* :func:`too_few_reasons` — fewer than :data:`MIN_PER_OUTCOME` spins per outcome;
* :func:`integrity_findings` — the data-integrity section (repeats at line starts, duplicated
  blocks, time order), with the pairs the order-dependent tests must leave out.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np

from rngcert.collect.spinlog import SpinLog, TableSpins
from rngcert.collect.spinlog.tablenames import file_tables
from rngcert.equipment.wheel import VOID_TOKENS, load_wheel, packaged_wheels
from rngcert.stats import chunks
from rngcert.stats import integrity as integ

#: Fewer spins per outcome than this cannot carry a verdict: the frequency tests need an expected
#: count of 5 per pocket (Cochran's rule), i.e. 185 spins on a single-zero wheel.
MIN_PER_OUTCOME = 5
#: A duplicated-block finding covering at least this share of the spins makes the verdict INCONCLUSIVE.
MAX_COPIED_SHARE = 0.01

#: Order-dependent tests that cannot be restricted to the pairs within lines: they see whole sequences.
UNMASKABLE = ("runs_colour", "runs_parity", "runs_low_high", "runs_top_symbol", "longest_colour_run", "gap_test", "serial_correlation")

INTEGRITY_RULE = (
    "Data-integrity findings never FAIL a wheel. Repeats in excess at the line starts of a transcribed list: the pair-based "
    "tests (serial pairs, wheel distance, dealer signature, predictor) use only the pairs within lines. The tests that see "
    "whole sequences (runs, longest run, gap, serial correlation) cannot be restricted so; if one of them rejects at the "
    "SUSPECT level or beyond, the verdict is INCONCLUSIVE, because the wheel and the artefact cannot be told apart. "
    f"Duplicated blocks covering at least {MAX_COPIED_SHARE:.0%} of the spins make the verdict INCONCLUSIVE. With spin ids, "
    "spin-id order is the order: timestamps that go back against it are a finding with counts and where; explained by a clock "
    "change (about one hour back at zone-less timestamps), a clock adjustment of at most a minute, or mixed time zones, it is "
    "reported only (the tests use the id order, which the clock does not change); otherwise the verdict is INCONCLUSIVE. "
    "Without spin ids, rows out of time order are sorted by time and the notes say so."
)


def _norm(tok: str) -> str:
    return tok.strip().strip('"').strip("'").strip().lower()


def _whole_line_tokens(log: SpinLog, path: str) -> int:
    """The tokens beyond one of each line of the permanence list ``path`` that was rejected whole (a title, a garbled
    line: mostly words): such a line is one rejected row, but it held as many results as tokens (its text is kept up to
    200 characters: a lower bound for a longer line)."""
    return sum(max(len(re.split(r"[,;|\s]+", r.text.strip())) - 1, 0) for r in log.rejected if r.column == "line" and str(r.file) == str(path))


def unreadable_reasons(log: SpinLog, max_share: float) -> tuple[list[str], dict[str, list[str]]]:
    """Reasons for every table, and per table, from files with too many unreadable rows.

    Returns
    -------
    all_tables : list of str
        Reasons that apply to every table (one file, or a file whose tables are not known).
    per_table : dict of str to list of str
        Reasons for the tables named after a bad file (a file without a ``table`` column is one
        table named after it) in a multi-file run.
    """
    all_tables: list[str] = []
    per_table: dict[str, list[str]] = {}
    multi = len(log.sources) > 1
    by_file: Counter | None = None
    file_table = log.file_tables or file_tables([str(s.path) for s in log.sources])
    names = Counter(Path(s.path).name for s in log.sources)
    for s in log.sources:
        # an exact copy of an earlier row was read and is counted once: it is neither data nor unreadable
        dups = s.duplicates + getattr(s, "second_source", 0)  # a second source's readings are compared, not unreadable
        whole = _whole_line_tokens(log, s.path) if s.format == "permanence" else 0  # (a line rejected whole held several results)
        rows = s.accepted + s.void + s.rejected - dups + whole
        bad = s.rejected - dups + whole
        share = bad / rows if rows else 0.0
        if share <= max_share:
            continue
        of = (f" of {Path(s.path).name}" if names[Path(s.path).name] == 1 else f" of {s.path}") if multi else ""
        what = f"{bad:,} of {rows:,} data rows ({share:.0%}){of} could not be read"
        if whole:
            what += " (counting each number of a line rejected whole)"
        if by_file is None:  # (reason, file) of the rejected rows, counted once: a log may hold millions
            by_file = Counter((r.reason, r.file) for r in log.rejected)
        conf = sum(c for (why, f), c in by_file.items() if str(why).startswith("conflict:") and str(f) == str(s.path))
        if conf:  # c07: rows read well whose spin_id carries two results are not "unreadable", and are said apart
            what += f" or used ({conf:,} of them conflicting results of one spin_id: neither result is used)"
        reason = f"{what}, more than --max-rejected {max_share:.0%}: a verdict cannot stand on what is left (check --equipment and --column)"
        if dups:
            reason += f"; {dups:,} duplicate row(s) besides (exact, or near-duplicate rounds), counted once, are not among them"
        table = file_table[str(s.path)]
        if multi and table in log.tables:
            per_table.setdefault(table, []).append(reason)
        else:
            all_tables.append(reason)
    return all_tables, per_table


def other_wheel_hint(log: SpinLog, *, labels_flagged: bool = False) -> str | None:
    """A reason naming the packaged wheel whose labels fit the log better, or None.

    The log's result tokens (accepted labels and the cells of rejected result rows) are read with
    every packaged wheel's token table; when another wheel reads at least 99% of them and more than
    the declared wheel does, the labels are another wheel's. The declared wheel must read less
    than 95% of them, unless ``labels_flagged`` (:func:`label_reasons` found rejected values that
    are labels of the export) and every outcome of the declared wheel has accepted rows: an
    American list certified as European leaves only its ``00`` (1/38 of the rows) unread, which is
    a pocket of the American wheel, not a spelling of a pocket the list never shows.
    """
    if labels_flagged and 0 < _empty_outcomes(log) <= len({t for why, t in {(r.reason, r.text) for r in log.rejected} if "is not a pocket/section" in why}):
        return None  # a flagged value may spell the empty pocket (`00` written for 0): the alias, not another wheel (one value
        # spells one pocket: 15 empty sections of a money wheel given an American list are not spelled by its '00')
    tokens: Counter = Counter()
    labels = list(log.space.labels)
    written = _written_labels(log)  # a money wheel's section as the log wrote it: its index, not its symbol
    for t in log.tables.values():
        cnt = np.bincount(t.outcomes, minlength=len(labels)) if t.n else np.zeros(len(labels), int)
        for i in np.flatnonzero(cnt):
            tokens[_norm(written[i] if written else str(labels[i]).split(":", 1)[-1])] += int(cnt[i])
    # the result cells that the declared wheel could not read: grouped first (millions of rows, few distinct cells)
    for (why, text), c in Counter((r.reason, r.text) for r in log.rejected).items():
        if text and "is not a pocket/section" in why:
            tokens[_norm(text)] += c
    total = sum(tokens.values())
    if total == 0 or not log.rejected:
        return None

    def readable(w) -> float:
        pos, sym = w.token_table()
        ok = 0
        for tok, c in tokens.items():
            t = tok[:-2] if tok.endswith(".0") and tok[:-2] in pos else tok
            if t in pos or t in sym or t in VOID_TOKENS:
                ok += c
        return ok / total

    mine = readable(log.wheel)
    if mine >= 0.95 and not labels_flagged:
        return None
    best, best_share = None, mine
    for wid in packaged_wheels():
        if wid == log.wheel.id:
            continue
        share = readable(load_wheel(wid))
        if share >= 0.99 and share > best_share:
            best, best_share = wid, share
    if best is None:
        return None
    return (
        f"the labels look like the {best} wheel's ({best_share:.1%} of the results read as {best}, {mine:.1%} as "
        f"{log.wheel.id}): certify with --equipment {best}"
    )


def pooled_counts(log: SpinLog) -> np.ndarray:
    """(m,) int64: accepted spins of each outcome of ``log.space``, all tables together."""
    m = len(log.space.labels)
    counts = np.zeros(m, dtype=np.int64)
    for t in log.tables.values():  # (a handful of tables; each counted in spans: no n-long index array)
        for lo, hi in chunks.spans(t.n, 4 * chunks.CHUNK):
            counts += np.bincount(t.outcomes[lo:hi], minlength=m)[:m]
    return counts


def missing_pockets_hint(log: SpinLog) -> str | None:
    """A reason when pockets that a fair wheel gives many spins never came up and another packaged
    roulette wheel has every pocket that did and none of those (a European list certified with
    ``--equipment american``: '00' never written; a roulette list certified as ``money-wheel-52``, its
    0..36 read as section indices and sections 37..51 never seen). Whether the list is that wheel's or the
    pockets never caught the ball cannot be told from the counts: no verdict, both named. None otherwise."""
    wheel = log.wheel
    if wheel.kind not in ("roulette", "money-wheel") or log.rejected and any("is not a pocket/section" in why for why in {r.reason for r in log.rejected}):
        return None
    labels = _written_labels(log)
    if labels is None:
        return None
    counts = pooled_counts(log)
    expected = int(counts.sum()) * np.asarray(log.space.probs, dtype=float)
    missing = {labels[i] for i in np.flatnonzero((counts == 0) & (expected >= 2 * LABEL_MIN_ROWS))}
    seen = {labels[i] for i in np.flatnonzero(counts)}
    if not missing:
        return None
    fits = []  # roulette wheels with every pocket that came up and none that did not, the one with fewest pockets left over first
    for wid in packaged_wheels():
        other = load_wheel(wid) if wid != wheel.id else None
        if other is not None and other.kind == "roulette" and seen <= set(other.labels) and not missing & set(other.labels):
            fits.append((len(set(other.labels) - seen), wid))
    if not fits:
        return _few_sections_hint(log, labels, counts, expected, missing)
    wid = min(fits)[1]
    ordered = sorted(missing, key=lambda x: (len(x), x))
    names = ", ".join(ordered)
    unit = "pocket" if wheel.kind == "roulette" else "section"
    return (f"{unit}(s) {names} never came up in {int(counts.sum()):,} spins ({float(expected[labels.index(ordered[0])]):.0f} expected "
            f"each), and every result is a pocket of the {wid} wheel, which has no {names}: the log looks like a {wid} wheel's "
            f"(certify with --equipment {wid}); if the wheel really has {unit}s {names}, inspect {'them' if len(missing) > 1 else 'it'}: "
            f"a {unit} that never {'catches the ball' if unit == 'pocket' else 'stops under the pointer'}")


def _few_sections_hint(log: SpinLog, labels: list[str], counts: np.ndarray, expected: np.ndarray, missing: set) -> str | None:
    """A reason when a money wheel read by section index leaves more than half of its sections empty that a fair wheel
    fills (an export that writes each symbol's payout, 1 2 5 10 20 40, read as sections 1, 2, 5 …), else None."""
    if log.wheel.kind != "money-wheel" or 2 * len(missing) <= len(labels):
        return None
    seen = ", ".join(labels[i] for i in np.flatnonzero(counts))
    return (f"labels that do not fit the wheel: read as section indices, only section(s) {seen} came up in {int(counts.sum()):,} spins and "
            f"{len(missing)} of the {len(labels)} sections never did ({float(expected.max()):.0f} expected each): the values look like symbols "
            f"or payouts written as numbers, not section indices; export the symbol ({', '.join(sorted(set(log.wheel.labels)))}) or the "
            "section index (a number that is a section index cannot be an alias of a symbol); if the wheel really stops only on these "
            "sections, inspect it")


def _written_labels(log: SpinLog) -> list[str] | None:
    """The token that names each outcome of ``log.space`` as a log writes it: a roulette pocket's label; a money wheel's
    section index (a list of ``0``..``36`` certified as ``money-wheel-52`` reads as sections 0..36 and leaves the other
    sections empty). None for a money wheel whose outcomes are not its sections (symbols only, order unknown)."""
    if log.wheel.kind == "roulette":
        return [str(x) for x in log.space.labels]
    if not getattr(log.wheel, "order_known", False) or len(log.space.labels) != log.wheel.k:
        return None
    return [str(i) for i in range(log.wheel.k)]


def _empty_outcomes(log: SpinLog) -> int:
    """How many outcomes that a fair wheel gives at least ``2 * LABEL_MIN_ROWS`` of the log's rows
    have no accepted row (as :func:`label_reasons` judges a missing pocket)."""
    counts = pooled_counts(log)
    n_rows = int(counts.sum()) + sum(c for why, c in Counter(r.reason for r in log.rejected).items() if "is not a pocket/section" in why)
    expected = n_rows * np.asarray(log.space.probs, dtype=float)
    return int(np.count_nonzero((counts == 0) & (expected >= 2 * LABEL_MIN_ROWS)))


#: A rejected value carried by at least this many rows, and by enough rows to move one outcome's
#: count by :data:`LABEL_SD` standard deviations (the rarest outcome's, sqrt of its expected count),
#: is a label of the export, not a random loss (see :func:`label_reasons`).
LABEL_MIN_ROWS = 5
LABEL_SD = 2.0


# long: the rejected values weighed against the wheel's labels and counts (an export's label, a missing pocket's spelling), each with its sentence
def label_reasons(log: SpinLog) -> list[str]:
    """INCONCLUSIVE reasons from result labels that do not fit the wheel (case c16).

    The rejected result cells are grouped by value (:func:`rngcert.collect.labels.rejected_values`).
    A value is a *label of the export*, not a random loss, when it is carried by at least
    :data:`LABEL_MIN_ROWS` rows and by at least :data:`LABEL_SD` standard deviations of one outcome's
    count (``LABEL_SD * sqrt(n p_min)`` rows: enough to move a pocket's count visibly if they are
    that pocket's spins), or when it plausibly spells an outcome that no accepted row shows
    (``zero`` with pocket 0 at 0). The tests then ran without
    those rows, so a pocket's count can be wrong by exactly them: the verdict is INCONCLUSIVE,
    and the reason names each value, its rows, and the ``--alias`` option (or TOML alias) that
    would read it. A log whose labels all fit gives no reason.

    Returns
    -------
    list of str
        At most one reason (naming up to five values).
    """
    from rngcert.collect.labels import rejected_values

    wheel = log.wheel
    values = rejected_values(log.rejected, wheel)
    if not values:
        return []
    labels = list(log.space.labels)
    counts = pooled_counts(log)
    n_rows = int(counts.sum()) + log.void + sum(v.count for v in values)
    expected_min = n_rows * float(np.min(log.space.probs))

    def count_of(label: str) -> int | None:
        if wheel.kind == "roulette" or log.level == "symbol":
            names = [str(x) for x in labels]
            return int(counts[names.index(label)]) if label in names else None
        # money wheel at the level of positions: a symbol's count is the sum of its sections
        sym = [str(x).split(":", 1)[-1] for x in labels]
        if label.isdigit() and int(label) < len(labels):
            return int(counts[int(label)])
        hit = [i for i, s in enumerate(sym) if s == label]
        return int(counts[hit].sum()) if hit else None

    # outcomes with no accepted row although a fair wheel gives them 2 * LABEL_MIN_ROWS or more (a fair
    # wheel leaves such a pocket empty with probability below 5e-5): a repeated rejected value may be
    # their spelling even when it is none rngcert recognises
    expected = n_rows * np.asarray(log.space.probs, dtype=float)
    missing = [str(labels[i]).split(":", 1)[-1] if wheel.kind != "roulette" and log.level == "position" else str(labels[i])
               for i in np.flatnonzero((counts == 0) & (expected >= 2 * LABEL_MIN_ROWS))]
    flagged = []
    for v in values:
        c_guess = count_of(v.guess) if v.guess is not None else None
        empty_target = c_guess == 0
        concentrated = v.count >= LABEL_MIN_ROWS and v.count >= LABEL_SD * np.sqrt(expected_min)
        repeated_beside_empty = bool(missing) and v.count >= LABEL_MIN_ROWS
        if concentrated or empty_target or repeated_beside_empty:
            flagged.append((v, c_guess))
    if not flagged:
        return []
    unit = "pocket" if wheel.kind == "roulette" else "section" if log.level == "position" else "symbol"
    parts = []
    for v, c_guess in flagged[:5]:
        share = v.count / n_rows if n_rows else 0.0
        what = f"{v.count:,} row(s) ({share:.1%}) read {v.value!r} ({v.where()})"
        if v.guess is not None:
            opt = f"{v.value}={v.guess}"
            opt = opt if re.fullmatch(r"[\w.#=-]+", opt) else f'"{opt}"'  # as typed in a shell
            seen = f"; {unit} {v.guess} has no accepted row" if c_guess == 0 else ""
            parts.append(f"{what}, which looks like {unit} {v.guess}{seen}: read it with --alias {opt} "
                         f"(or \"{v.value}\" = \"{v.guess}\" under [aliases] in the wheel's TOML)")
        else:
            empty = (f" ({unit}{'s' if len(missing) > 1 else ''} {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''} "
                     f"{'have' if len(missing) > 1 else 'has'} no accepted row)") if missing else ""
            parts.append(f"{what}, not a label of {wheel.id}{empty}: say which {unit} it is with --alias VALUE=LABEL, "
                         f"or fix the export (a void spin is written void)")
    more = f"; and {len(flagged) - 5} more value(s)" if len(flagged) > 5 else ""
    return [
        "labels that do not fit the wheel: " + "; ".join(parts) + more + ". The tests ran without these rows, so "
        f"{'a ' + unit + chr(39) + 's' if len(flagged) == 1 else 'some ' + unit + 's' + chr(39)} count can be wrong by exactly them: "
        "no verdict on the wheel from how a label was written"
    ]


def too_few_reasons(t: TableSpins, m: int) -> list[str]:
    """INCONCLUSIVE when a table has fewer than :data:`MIN_PER_OUTCOME` spins per outcome."""
    need = MIN_PER_OUTCOME * m
    if t.n < need:
        return [f"only {t.n:,} spins for {m} outcomes: too few to certify (at least {need:,}, {MIN_PER_OUTCOME} per outcome)"]
    return []


def line_start_evidence(t: TableSpins, space) -> dict | None:
    """The repeats-at-line-starts comparison of a transcribed list (:func:`rngcert.stats.integrity.boundary_repeats`),
    or None when the table has no line structure to compare. Its ``finding`` decides the pairs the
    pair-based tests may use (``pair_mask``), so it runs before the battery."""
    if t.line_start is not None and t.n > 1 and 0 < int(t.line_start[1:].sum()) < t.n - 1:
        return integ.boundary_repeats(t.outcomes, t.line_start, space.m, np.asarray(space.probs))
    return None


#: A permanence list whose lines hold two or more spins, in at least this share of which the first number is
#: one more than the previous line's first number, is read as numbered lines (a fair wheel does that in 1/k).
COUNTER_SHARE = 0.5
#: ... judged on at least this many such lines.
COUNTER_MIN_LINES = 10


def line_counter(t: TableSpins, space) -> dict | None:
    """A permanence list whose lines start with a running number (``1 17``, ``2. 22``: a coup or spin
    number, read as a result), or None.

    Among the lines of two spins or more, the first spin of a line is one more than the first spin
    of the line before in at least :data:`COUNTER_SHARE` of them (a fair wheel: 1 in k; a numbering
    that restarts every page: all but the restarts). The counter is then read as every other result:
    the sequence tests see the counter, not the wheel, so the verdict is INCONCLUSIVE with this text."""
    if t.line_start is None or t.n < 2:
        return None
    ls = np.asarray(t.line_start, dtype=bool)
    multi = ls.copy()  # lines holding a result besides their first number: a line start not followed by another
    multi[:-1] &= ~ls[1:]
    multi[-1] = False
    if chunks.count_true(multi) < COUNTER_MIN_LINES:  # (a list of one number a line: no such line, no index array)
        return None
    starts = np.flatnonzero(multi)
    if starts.size < COUNTER_MIN_LINES:
        return None
    num = np.array([int(lab) if str(lab).isdigit() else -2 for lab in space.labels], dtype=np.int64)
    first = num[t.outcomes[starts]]
    up = (first[1:] == first[:-1] + 1) & (first[:-1] >= 0)
    share = float(up.mean())
    if share < COUNTER_SHARE:
        return None
    shown = ", ".join(str(v) for v in first[:4])
    return {"lines": int(starts.size), "counting_up": int(up.sum()), "share": share, "first_values": [int(v) for v in first[:10]],
            "text": (f"the first number of {int(up.sum()):,} of {starts.size - 1:,} lines is one more than the line before's ({shown} …): "
                     "the lines are numbered (a coup or spin number), and that number was read as a result, so the sequence "
                     "tested is not the wheel's; give the results alone, or the list as CSV with a header (spin_id,result)")}


#: A rejected first field read as a line number: digits, then a period, a bracket or a colon (``37.``, ``38)``).
_COUNTER_TOKEN = re.compile(r"(\d{1,9})[.):]?")


def rejected_counter_reasons(log: SpinLog) -> list[str]:
    """INCONCLUSIVE reason for a permanence list numbered beyond the wheel's largest pocket (``37. 17 5 …``,
    ``38. 22 …``): the line numbers above it are rejected as not pockets, those below it are read as
    results, so :func:`line_counter` (which sees accepted spins only) cannot find the numbering. The rejected
    first fields of the lines count up by one from one line to the next in at least :data:`COUNTER_SHARE` of
    at least :data:`COUNTER_MIN_LINES` of them.

    Returns
    -------
    list of str
        At most one reason.
    """
    rows = [r for r in log.rejected if r.column == "field 1" and "is not a pocket/section" in r.reason]  # (rejected rows, not spins)
    if len(rows) < COUNTER_MIN_LINES:
        return []
    num = np.array([int(m.group(1)) if (m := _COUNTER_TOKEN.fullmatch(str(r.text).strip())) else -2 for r in rows], dtype=np.int64)
    line = np.array([r.line for r in rows], dtype=np.int64)
    same_file = np.array([a.file == b.file for a, b in zip(rows[:-1], rows[1:])], dtype=bool)
    up = (num[1:] == num[:-1] + 1) & (num[:-1] >= 0) & (line[1:] > line[:-1]) & same_file
    if float(up.mean()) < COUNTER_SHARE:
        return []
    shown = ", ".join(str(r.text) for r in rows[:3])
    read = (f"; the line numbers below {int(num[0])} (the lines before line {rows[0].line}) were read as results, so the sequence tested "
            "is not the wheel's") if num[0] > 1 and rows[0].line > 1 else ""
    return [f"data integrity: the lines are numbered: the first field of {int(up.sum()) + 1:,} lines counts up ({shown} …, from "
            f"{rows[0].file} line {rows[0].line}) and was rejected as not a pocket (a coup or spin number){read}; give the results alone, "
            "or the list as CSV with a header (spin_id,result)"]


def pair_mask_of(ev: dict | None) -> np.ndarray | None:
    """(n-1,) bool of the pairs the pair-based tests may use, from :func:`line_start_evidence`; None: all."""
    return ~ev["boundary_pairs"] if ev is not None and ev["finding"] else None


def integrity_findings(t: TableSpins, space, *, line_starts: dict | None | bool = False, dup: dict | None = None) -> dict:
    """The data-integrity section of one table.

    ``line_starts`` (the result of :func:`line_start_evidence`) and ``dup`` (of
    :func:`rngcert.stats.integrity.duplicated_blocks` with its default length) may be given when
    already computed (the certify pipeline scans for duplicated blocks beside the battery); by
    default both are computed here.

    Returns
    -------
    dict
        ``findings``: list of ``{"name", "text", "evidence"}``; ``checks``: what ran; ``rule``;
        ``pair_mask``: (n-1,) bool of the pairs the pair-based tests may use, or None;
        ``inconclusive``: reasons that already make the verdict INCONCLUSIVE.
    """
    out: dict = {"findings": [], "checks": [], "rule": INTEGRITY_RULE, "pair_mask": None, "inconclusive": []}
    x = t.outcomes
    ev = line_start_evidence(t, space) if line_starts is False else line_starts
    if ev is not None:
        out["checks"].append("repeats at line starts against within lines")
        if ev["finding"]:
            out["pair_mask"] = pair_mask_of(ev)
            out["findings"].append({
                "name": "repeats_at_line_starts",
                "text": "Transcription artefact: " + integ.excess_text(ev) + ". A wheel does not know where a line of the "
                "file begins: the excess comes from how the list was written or scraped. The pair-based tests use only "
                f"the {int((~ev['boundary_pairs']).sum()):,} pairs within lines.",
                "evidence": {kk: vv for kk, vv in ev.items() if kk != "boundary_pairs"},
            })
    counter = line_counter(t, space)
    if counter is not None:
        out["checks"].append("a counter in the first column of a permanence list")
        out["findings"].append({"name": "line_counter", "text": counter["text"], "evidence": {k: v for k, v in counter.items() if k != "text"}})
        out["inconclusive"].append("data integrity: " + counter["text"])
    for f in getattr(t, "findings", ()):  # the reader's: time order against spin ids, near-duplicate rounds
        out["checks"].append({"time_order": "time order against spin-id order", "near_duplicates": "near-duplicate rounds"}.get(f["name"], f["name"]))
        out["findings"].append({k: v for k, v in f.items() if k != "inconclusive"})
        if f.get("inconclusive"):
            out["inconclusive"].append(f["inconclusive"])
    dup = integ.duplicated_blocks(x, space.m) if dup is None else dup
    out["checks"].append(f"duplicated blocks of {dup['length']} spins")
    if dup["repeated_blocks"]:
        where = ", ".join(f"spins {a + 1}–{a + dup['length']} again at {b + 1}" for a, b in dup["first"])
        out["findings"].append({
            "name": "duplicated_blocks",
            "text": f"{dup['repeated_blocks']:,} block(s) of {dup['length']} consecutive spins occur twice ({where}); "
            f"{dup['spins_in_copies']:,} spins ({dup['share']:.2%}) are in the copies. A fair wheel repeats such a block "
            f"with probability below {dup['chance_bound']:.0e}: the record was copied.",
            "evidence": dup,
        })
        if dup["share"] >= MAX_COPIED_SHARE:
            out["inconclusive"].append(
                f"data integrity: {dup['share']:.1%} of the spins are in duplicated blocks; the record is not a list of distinct spins"
            )
    return out
