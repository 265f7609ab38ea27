"""Cells that are safe to open in a spreadsheet: one rule for every CSV rngcert writes.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula (OWASP
"CSV injection"; a leading tab or carriage return is also read as the start of a formula by some
programs). rngcert writes log text back out (the ``text`` of a rejected row is the cell as the
log had it), so such cells are neutralised the way OWASP recommends: a single quote ``'`` is put
in front of the cell. A spreadsheet shows the quote-prefixed cell as the text, and runs nothing.

The rule, exactly (:func:`safe_cell`):

* a **text** cell that starts with ``=``, ``+``, ``-``, ``@``, tab, CR or ``'`` gets one ``'`` in
  front. Prefixing cells that already start with ``'`` too makes the rule exactly invertible:
  :func:`original_cell` drops one leading ``'`` and gives back the text as it was;
* a **number** (a Python ``int`` or ``float`` value, e.g. a line number, which is ``-1`` when
  unknown) is written as the number, never quoted: a spreadsheet reads it as a number and runs
  nothing. Numbers that arrive as *text* (``"-5"``, the spin id of a rejected row) are text cells
  and are prefixed like any other: the cell shows ``'-5``, the original is ``-5``.

:func:`writer` wraps :func:`csv.writer` with the rule; :func:`write_rejected` writes a report's
``rejects.csv`` with the same bytes, each distinct cell neutralised once (millions of rejected rows
share a few files, columns and reasons); :func:`safe_column` applies it to a pyarrow string column
(for the bulk writers of simulated logs).
"""

from __future__ import annotations

import csv
from typing import Any, Iterable

#: First characters a spreadsheet may run as a formula (OWASP), plus the quote of the rule itself.
TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "'")


def safe_cell(value: Any) -> Any:
    """The cell to write for ``value``: numbers as they are, text neutralised (module docstring)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return value
    s = str(value)
    return "'" + s if s.startswith(TRIGGERS) else s


def original_cell(text: str) -> str:
    """Inverse of :func:`safe_cell` for a text cell read back from a file rngcert wrote."""
    return text[1:] if text.startswith("'") else text


class _SafeWriter:
    def __init__(self, fh, **kw):
        self._w = csv.writer(fh, **kw)

    def writerow(self, row: Iterable[Any]):
        return self._w.writerow([safe_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]):
        for row in rows:
            self.writerow(row)


def writer(fh, **kw) -> _SafeWriter:
    """A :func:`csv.writer` whose every cell goes through :func:`safe_cell`."""
    return _SafeWriter(fh, **kw)


#: Distinct cells :func:`write_rejected` remembers in their written form (a log's few files, columns and reasons, and the texts
#: that repeat: another wheel's labels).
_MEMO_MAX = 200_000


def write_rejected(fh, rejected: Iterable[Any]) -> int:
    """Write ``rejects.csv``: the header ``file,line,column,reason,text`` and one row per rejected row.

    The bytes are those of :func:`writer` (:func:`safe_cell` on every cell, then :func:`csv.writer`'s
    default dialect). A log of another wheel can hold millions of rejected rows with a few distinct
    cells, so each distinct cell is neutralised and quoted once (by the csv module itself, so the
    quoting is exactly its own), and the rows are joined as text.

    Parameters
    ----------
    fh : text file
        Opened with ``newline=""``.
    rejected : iterable of RejectedRow
        Objects with ``file``, ``line``, ``column``, ``reason`` and ``text``.

    Returns
    -------
    int
        Rows written (the header not counted).
    """
    import io

    buf = io.StringIO()
    one = csv.writer(buf)
    end = len(one.dialect.lineterminator)
    memo: dict = {}

    def cell(v) -> str:
        """The cell as :func:`writer` writes it inside a row (no single-empty-field rule: a leading cell)."""
        text = type(v) is str  # only text is remembered (True == 1 == 1.0 as keys, but they are written differently)
        if text:
            got = memo.get(v)
            if got is not None:
                return got
        buf.seek(0)
        buf.truncate()
        one.writerow(("", safe_cell(v)))
        got = buf.getvalue()[1:-end]
        if text and len(memo) < _MEMO_MAX:
            memo[v] = got
        return got

    w = csv.writer(fh)
    w.writerow(["file", "line", "column", "reason", "text"])
    lt = w.dialect.lineterminator
    count = 0
    lines: list[str] = []
    get = memo.get  # (a remembered cell without a Python call: most cells of most rows)
    for r in rejected:
        f, n, c, why, t = r.file, r.line, r.column, r.reason, r.text
        try:
            lines.append(f"{get(f) or cell(f)},{n if type(n) is int else cell(n)},{get(c) or cell(c)},{get(why) or cell(why)},"
                         f"{get(t) or cell(t)}{lt}")
        except TypeError:  # a cell that cannot be a dictionary key
            lines.append(f"{cell(f)},{cell(n)},{cell(c)},{cell(why)},{cell(t)}{lt}")
        count += 1
        if len(lines) >= 8192:
            fh.write("".join(lines))
            lines.clear()
    fh.write("".join(lines))
    return count


def safe_column(col):
    """:func:`safe_cell` on every cell of a pyarrow string array (vectorised)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rngcert.collect import _arrow

    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return col
    hit = pc.fill_null(pc.match_substring_regex(col, r"^[=+\-@\t\r']"), _arrow.bool_scalar(False))
    if not pc.any(hit).as_py():
        return col
    return pc.if_else(hit, pc.binary_join_element_wise("'", col, ""), col)
