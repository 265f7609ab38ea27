"""Rejected result labels summarised by value, and the wheel label each may be a spelling of.

A row whose result is not a label of the wheel is rejected (:mod:`rngcert.collect.spinlog`). Rows
rejected at random (a cut line, a typo) lose spins evenly; rows rejected because the export spells
one pocket differently (``zero``, ``Null``, ``#7``) remove that pocket from the tests, and a fair
wheel would then FAIL on how a label was written (case c16). This module groups the rejected
result cells by value, counts them, and names the label a value plausibly spells, so that the
pipeline can tell the two apart (:func:`rngcert.pipeline.checks.label_reasons`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from rngcert.equipment.wheel import Wheel

#: How the reason of a row rejected for its result label reads (see ``_resolve_labels``).
LABEL_REJECT = "is not a pocket/section of wheel"

#: Words that exports use for zero and double zero (several languages; matched case-insensitively).
_ZERO_WORDS = frozenset({"zero", "zéro", "zero.", "null", "nul", "nil", "nought", "naught", "o", "oh", "cero", "zer0", "green", "grün", "vert", "z"})
_DOUBLE_ZERO_WORDS = frozenset({"double zero", "double-zero", "doublezero", "oo", "0-0", "0 0", "o-o", "zero zero", "000"})
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
}
_DIGITS_INSIDE = re.compile(r"^[^\d]{0,8}?0*(\d{1,3})(?:[.,]0+)?[^\d]{0,8}$")


@dataclass
class RejectedValue:
    """One distinct rejected result value and the rows that carry it."""

    value: str  #: as written (the first spelling seen), trimmed
    count: int
    lines: list[tuple[str, int]] = field(default_factory=list)  #: (file, line) of the first few rows
    column: str = ""
    guess: str | None = None  #: the wheel label this value plausibly spells, or None

    def where(self, n: int = 3) -> str:
        """The first rows, e.g. ``log.csv lines 5, 17, 40 …``."""
        if not self.lines:
            return ""
        files = {f for f, _ in self.lines}
        shown = ", ".join(str(ln) if len(files) == 1 else f"{f}:{ln}" for f, ln in self.lines[:n])
        head = f"{next(iter(files))} " if len(files) == 1 else ""
        return f"{head}line{'s' if len(self.lines) > 1 else ''} {shown}{' …' if self.count > min(n, len(self.lines)) else ''}"


def _norm(t: str) -> str:
    return t.strip().strip("\"'").strip().lower()


def _squash(t: str) -> str:
    return re.sub(r"[^0-9a-zà-ÿ]", "", t.lower())


def plausible_label(token: str, wheel: Wheel) -> str | None:
    """The wheel label that ``token`` (a result cell the wheel did not read) plausibly spells, or None.

    Spellings recognised: words for zero and double zero (``zero``, ``Null``, ``O``, ``green``,
    ``double zero``), number words up to twenty, a pocket number with a prefix or suffix (``#7``,
    ``No. 7``, ``7R``), a decimal comma (``7,0``), ``00`` on a wheel whose only zero is ``0``, and
    a money-wheel symbol written with other case, spaces or punctuation (``coin flip``).
    """
    t = _norm(token)
    if not t:
        return None
    positions, symbols = wheel.token_table()
    if wheel.kind == "roulette":
        labels = {lab.lower(): lab for lab in wheel.labels}
        if t in _DOUBLE_ZERO_WORDS and "00" in labels:
            return "00"
        if (t in _ZERO_WORDS or t in _DOUBLE_ZERO_WORDS or re.fullmatch(r"0{2,}", t)) and "0" in labels:
            return "0"
        if t in _NUMBER_WORDS and _NUMBER_WORDS[t] in labels:
            return _NUMBER_WORDS[t]
        m = _DIGITS_INSIDE.match(t)
        if m and m.group(1) in labels:
            return labels[m.group(1)]
        return None
    # money wheel: symbols compared without case, spaces and punctuation; section numbers as above
    sq = _squash(t)
    for s in wheel.symbols:
        if sq and _squash(s) == sq:
            return s
    for alias, target in wheel.aliases.items():
        if sq and _squash(alias) == sq:
            return target
    if t in _NUMBER_WORDS and _NUMBER_WORDS[t] in symbols:
        return next(s for s in wheel.symbols if s.lower() == _NUMBER_WORDS[t])
    m = _DIGITS_INSIDE.match(t)
    if m:
        d = m.group(1)
        for s in wheel.symbols:
            if s.lower() == d:
                return s
        if d in positions and wheel.order_known:
            return d
    return None


def rejected_values(rejected, wheel: Wheel, *, keep_lines: int = 3) -> list[RejectedValue]:
    """The rejected rows whose result is not a label of ``wheel``, grouped by value (case, spaces
    and quotes ignored), most rows first.

    Parameters
    ----------
    rejected : iterable of RejectedRow
        A log's rejected rows (other reasons are skipped).
    wheel : Wheel
    keep_lines : int
        Rows kept per value to name where it is.

    Returns
    -------
    list of RejectedValue
    """
    rejected = rejected if isinstance(rejected, (list, tuple)) else list(rejected)
    # grouped by (reason, text, column) first, in the order of their first row: a log of another wheel has
    # millions of rejected rows and a few distinct cells, so the string work is done once a distinct cell
    counts: Counter = Counter()
    first: dict[str, RejectedValue] = {}
    key_of: dict[tuple, str] = {}
    for (why, text, column), c in Counter((r.reason, r.text, r.column) for r in rejected).items():
        if LABEL_REJECT not in why:
            continue
        key = key_of[(why, text)] = _norm(text)
        counts[key] += c
        if key not in first:
            first[key] = RejectedValue(text.strip(), 0, [], column)
    full, wanted = 0, len(first)
    for r in rejected if keep_lines > 0 else ():  # the first rows of each value, in file order
        key = key_of.get((r.reason, r.text))
        if key is None:
            continue
        v = first[key]
        if len(v.lines) < keep_lines and (r.file, r.line) not in v.lines:  # (a permanence line may hold the value twice)
            v.lines.append((r.file, r.line))
            full += len(v.lines) == keep_lines
            if full == wanted:
                break
    out = []
    for key, c in counts.most_common():
        v = first[key]
        v.count = c
        v.guess = plausible_label(v.value, wheel)
        out.append(v)
    return out
