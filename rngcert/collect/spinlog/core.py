"""The row-to-spin core of the spin-log collector (:mod:`rngcert.collect.spinlog`): the types a log is read into
(:class:`RejectedRow`, :class:`SourceInfo`, :class:`TableSpins`, :class:`SpinLog`), :func:`_process` (the
decoded columns of any format to spins, voids and rejected rows), the file-level checks and the merging of batches.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from rngcert.collect import _arrow
from rngcert.collect._lazy import pa, pc
from rngcert.collect.permstream import field_name
from rngcert.collect.spinlog.columns import (
    _ID_DTYPE,
    NO_TIME,
    _as_text,
    _clean_text,
    _decode,
    _directions,
    _numbers,
    _one_value,
    _resolve_labels,
    _speeds,
    _timestamps,
    _truthy,
    control_chars,
    timestamp_kinds,
)
from rngcert.equipment.wheel import OutcomeSpace, Wheel
from rngcert.errors import InputError
from rngcert.stats import arrayops

#: Column names understood in a spin log (DESIGN §3).
KNOWN_COLUMNS = (
    "result",
    "spin_id",
    "timestamp",
    "table",
    "dealer",
    "direction",
    "release_pocket",
    "revolutions",
    "void",
    "rotor_speed",
    "ball_direction",
    "result_source",
    "payout",
    "multiplier",
)

#: ``result_source`` values whose rows are the results (the wheel's own sensor or controller); rows
#: of any other source (``camera``, ``display``) are compared with them, never used as results
#: (money-wheel rule 5.5). An empty value is a primary row.
PRIMARY_SOURCES = ("wheel", "wheel sensor", "wheel_sensor", "sensor", "controller", "serial", "")
#: How the reason of a row of a secondary result source begins (see :func:`_split_sources`).
SECOND_SOURCE_REASON = "second result source"


#: Sort key of rejected rows: their line (C code, not a Python call a row: a log may have millions).
_BY_LINE = attrgetter("line")

#: Control characters shown escaped (``\\x00``) in a rejected row's column, reason and text (:class:`RejectedRow`): U+0000-U+001F but
#: tab, LF and CR, and U+007F, as :data:`~rngcert.collect.spinlog.columns.CONTROL_BYTES` names them.
_SHOWN_ESCAPED = {c: f"\\x{c:02x}" for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)}


def _shown(text: str) -> str:
    """``text`` with its control characters (:data:`_SHOWN_ESCAPED`) written as ``\\xNN``: the text of a corrupted cell goes
    into rejects.csv, report.json and report.html, where a raw NUL is no text a reader can see (and breaks tools)."""
    return text if text.isprintable() else text.translate(_SHOWN_ESCAPED)


@dataclass(frozen=True, slots=True)
class RejectedRow:
    """A row that could not be read: kept, counted, and written beside the report. A control character in
    ``column``, ``reason`` or ``text`` (a corrupted cell's text) is kept escaped, as ``\\x00``.

    A log may hold millions of them (an export of another wheel, a wrong ``--column``): the class has
    slots (no per-row ``__dict__``) and the common case, three printable strings, is one test."""

    file: str
    line: int
    column: str
    reason: str
    text: str = ""

    def __post_init__(self):
        try:
            if self.text.isprintable() and self.reason.isprintable() and self.column.isprintable():
                return
        except AttributeError:  # a cell that is not text (None, a number) is kept as it is
            pass
        for key in ("column", "reason", "text"):
            v = getattr(self, key)
            if isinstance(v, str) and not v.isprintable():
                object.__setattr__(self, key, _shown(v))

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "column": self.column, "reason": self.reason, "text": self.text}


@dataclass(frozen=True)
class SourceInfo:
    """Provenance of one input file."""

    path: str
    sha256: str
    format: str
    rows: int
    accepted: int
    void: int
    rejected: int
    blank_lines: int
    #: rows among ``rejected`` that are exact copies of an earlier row (same table, spin_id and
    #: result): read, and counted once, so not data that could not be read
    duplicates: int = 0
    #: rows among ``rejected`` that are a secondary source's reading of a spin (``result_source``
    #: camera, display): compared with the result, not data that could not be read
    second_source: int = 0
    #: rows among ``duplicates`` that are near-duplicate rounds (same result, closer in time than a round lasts)
    near_duplicates: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class TableSpins:
    """The accepted spins of one table, in spin order.

    Attributes
    ----------
    table : str
        Table/wheel id: the ``table`` column, the file name without extension when the file has
        no such column, or ``"(all)"`` when tables are pooled.
    outcomes : (n,) ndarray of int8 (int16 on a wheel of more than 127 pockets)
        Outcome ids in ``space``: wheel positions when ``level == "position"``, symbol ids when
        ``level == "symbol"``. The per-spin arrays are the smallest integer type that holds
        their values (4 bytes a spin with every column: DESIGN §2).
    release : (n,) ndarray of int8/int16 or None
        Wheel position under the ball/pointer at release, -1 where the log has none.
    dealer : (n,) ndarray of int8/int16 or None
        Dealer id index into ``dealer_labels``.
    direction : (n,) ndarray of int8 or None
        0 clockwise, 1 counter-clockwise, -1 unknown.
    void : int
        Void spins of this table (excluded from ``outcomes``).
    rotor_speed : (n,) ndarray of float64 or None
        Rotor (wheel head) speed at the ball's launch, in the log's own unit; NaN where the row
        has none.
    ball_direction : (n,) ndarray of int8 or None
        Direction the ball was spun: 0 clockwise, 1 counter-clockwise, -1 unknown.
    line_start : (n,) ndarray of bool or None
        Permanence lists (many spins per line): True where a spin is the first accepted spin of
        its line of the file (for the data-integrity checks); None for one-row-per-spin formats.
    """

    table: str
    outcomes: np.ndarray
    release: np.ndarray | None = None
    dealer: np.ndarray | None = None
    dealer_labels: tuple[str, ...] = ()
    direction: np.ndarray | None = None
    void: int = 0
    notes: list[str] = field(default_factory=list)
    line_start: np.ndarray | None = None
    rotor_speed: np.ndarray | None = None
    ball_direction: np.ndarray | None = None
    #: per secondary result source (camera, display) of a live feed, its comparison with the result
    #: (:func:`rngcert.collect.feed.compare_sources`)
    source_comparison: list = field(default_factory=list)
    #: data-integrity findings of the reader (time order against spin ids, near-duplicate rounds):
    #: ``{"name", "text", "evidence", "inconclusive": reason or ""}``, shown in the report's
    #: data-integrity section (:func:`rngcert.pipeline.checks.integrity_findings`)
    findings: list[dict] = field(default_factory=list)

    @property
    def n(self) -> int:
        return int(self.outcomes.size)


@dataclass
class SpinLog:
    """Everything read from one or more log files for one wheel."""

    wheel: Wheel
    level: str
    space: OutcomeSpace
    tables: dict[str, TableSpins]
    sources: list[SourceInfo]
    #: a list, or (rows of repeated spin ids on the compact path) a read-only sequence that makes them
    #: when read (:class:`rngcert.collect.spinlog.rejects.RejectedRows`)
    rejected: list[RejectedRow]
    notes: list[str] = field(default_factory=list)
    #: (first, last) timestamp of the accepted and void spins, microseconds since the epoch (UTC),
    #: or None when the log has no timestamps
    period: tuple[int, int] | None = None
    #: ``{path: table}`` of the files read (the table of a file without a ``table`` column:
    #: :func:`rngcert.collect.spinlog.tablenames.tables_of`); empty when not made by the reader
    file_tables: dict[str, str] = field(default_factory=dict)

    @property
    def accepted(self) -> int:
        return sum(s.accepted for s in self.sources)

    @property
    def void(self) -> int:
        return sum(s.void for s in self.sources)


# ---------------------------------------------------------------------------- helpers
def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _span(period: tuple[int, int] | None, ts: np.ndarray) -> tuple[int, int] | None:
    """``period`` widened to the (non-empty) timestamps ``ts`` (int64 microseconds; :data:`NO_TIME` left out)."""
    if ts.size and ts.min() == NO_TIME:
        ts = ts[ts != NO_TIME]
        if not ts.size:
            return period
    lo, hi = int(ts.min()), int(ts.max())
    return (lo, hi) if period is None else (min(period[0], lo), max(period[1], hi))


# ---------------------------------------------------------------------------- file-level checks
#: The first whole number that is not a spin counter (19 digits): :func:`_id_value`.
_MAX_ID = 10**18


def _id_value(t: str) -> tuple[int, str | None]:
    """A spin id's number (a whole number >= 0, at most 18 digits), or -1 and why not."""
    if t == "":
        return -1, "empty spin_id (the other rows of the file have one)"
    if t.isascii() and t.isdigit():
        if len(t) > 18:
            return -1, f"spin_id {t[:24]!r}{'…' if len(t) > 24 else ''} has {len(t)} digits; a spin counter has at most 18"
        return int(t), None
    if t[:1] == "-" and t[1:].isascii() and t[1:].isdigit():
        return -1, f"spin_id {t!r} is negative; spin ids are whole numbers from 0"
    return -1, f"spin_id {t[:40]!r} is not a whole number (the other spin ids of the file are)"


def _codes_labels(col) -> tuple[np.ndarray, list]:
    """(codes, labels) of a text column given as pyarrow strings or as (codes, labels)."""
    if isinstance(col, tuple):
        return np.asarray(col[0], dtype=np.int64), list(col[1])
    idx, uniq = _decode(_as_text(col))
    return idx, ["" if u is None else u for u in uniq]


#: The columns whose cells are kept as text (labels), and the result: a control character in one of their cells rejects the row.
CONTROL_CHECKED = ("result", "spin_id", "table", "dealer", "result_source", "payout", "multiplier")
#: How the reason of a row rejected for a control character in a cell begins (:func:`_control_faults`).
CONTROL_REASON = "control character"


def _control_faults(cols, resolved: dict) -> list[tuple[str, np.ndarray, list[str], np.ndarray]]:
    """The rows whose cell in a column of :data:`CONTROL_CHECKED` holds a control character
    (:func:`~rngcert.collect.spinlog.columns.control_chars`), column by column in the file's order:
    ``(file column, rows (bool), reasons, index into reasons of each row)`` for :func:`_process`'s ``flag``."""
    order = {c: i for i, c in enumerate(cols)}
    out = []
    for key in sorted((k for k in CONTROL_CHECKED if k in resolved), key=lambda k: order.get(resolved[k], 0)):
        cp = control_chars(cols[resolved[key]])
        if cp is None:
            continue
        hit = cp >= 0
        points, codes = np.unique(cp, return_inverse=True)  # (-1 first when some cell has none: its reason is never used)
        reasons = [f"{CONTROL_REASON} U+{int(c):04X} in the {key} column (a corrupted cell: the row is not used)" for c in points.tolist()]
        out.append((resolved[key], hit, reasons, codes.ravel()))
    return out


def _reject_rows(part: dict, rows: np.ndarray, column: str, reasons, texts) -> None:
    """Move rows (accepted or void so far) to the rejected, with a reason each."""
    if rows.size == 0:
        return
    part["accepted_mask"] = part["accepted_mask"].copy()
    part["void_mask"] = part["void_mask"].copy()
    part["accepted_mask"][rows] = False
    part["void_mask"][rows] = False
    part["void_count"] = int(part["void_mask"].sum())
    lines = part["lines"]
    new = [RejectedRow(part["name"], int(lines[i]), column, str(why), str(t)[:200]) for i, why, t in zip(rows.tolist(), reasons, texts)]
    part["rejected"] = sorted(list(part["rejected"]) + new, key=_BY_LINE)


# long: the two file-wide checks (empty table values; spin ids that are not counters) share one file's live-row mask and
#   reject bookkeeping
def _file_checks(part: dict, text_codes: bool) -> dict:
    """Checks of a file as a whole (one batch cannot judge them): empty ``table`` values, and
    ``spin_id`` values that are not spin counters.

    * A file whose ``table`` column is empty in some rows rejects those rows (line and reason);
      empty in every row, the column is ignored (one table, named after the file) with a note.
    * When most ids of a file are whole numbers, an id that is not (``abc``, ``-5``, ``2.5``,
      ``1e29``, empty) rejects its row; the duplicate and gap checks run on the valid ids. When
      most are not numbers, ids are labels (no gap check) and only empty ones are rejected.
      Empty in every row, the column is ignored with a note.
    """
    name = part["name"]
    part.setdefault("extra_ids", [])
    live = part["accepted_mask"] | part["void_mask"]
    colnames = part.get("colnames", {})
    if part.get("table") is not None:
        codes, labels = _codes_labels(part["table"])
        if "" in labels:
            empty = codes == labels.index("")
            if empty.all():
                part["table"] = None
                part["notes"] = list(part["notes"]) + [f"{name}: the table column is empty in every row: the file is one table, named after the file"]
            else:
                rows = np.flatnonzero(empty & live)
                _reject_rows(part, rows, colnames.get("table", "table"), ["empty table value (the other rows of the file name a table)"] * rows.size, [""] * rows.size)
    live = part["accepted_mask"] | part["void_mask"]
    sid = part.get("spin_id")
    if sid is None:
        return part
    if isinstance(sid, IntIds):
        vals = sid.values
        neg = vals.view(np.uint64) >= _MAX_ID  # negative, or 19 digits (not a counter, as in _id_value): one comparison
        if np.any(neg & live):
            rows = np.flatnonzero(neg & live)
            _reject_rows(part, rows, colnames.get("spin_id", "spin_id"), [_id_value(str(v))[1] for v in vals[rows]], [str(v) for v in vals[rows]])
            part["spin_id"] = IntIds(np.where(neg, -1, vals))
        return part
    codes, labels = _codes_labels(sid)
    val_u = np.empty(len(labels) + 1, dtype=np.int64)
    why_u = np.empty(len(labels) + 1, dtype=object)
    for j, t in enumerate(labels):
        val_u[j], why_u[j] = _id_value(t)
    val_u[-1], why_u[-1] = _id_value("")
    codes = np.where(codes < 0, len(labels), codes)
    vals = val_u[codes]
    empty_u = np.array([t == "" for t in labels] + [True])
    empty = empty_u[codes]
    if empty.all():
        part["spin_id"] = None
        part["notes"] = list(part["notes"]) + [f"{name}: the spin_id column is empty in every row: spins are taken in file order without ids"]
        return part
    n_valid = int(np.count_nonzero(vals >= 0))
    n_text = int(np.count_nonzero((vals < 0) & ~empty))
    numeric = n_valid >= n_text
    bad = (vals < 0) if numeric else empty
    rows = np.flatnonzero(bad & live)
    if rows.size:
        lab = np.array(labels + [""], dtype=object)
        _reject_rows(part, rows, colnames.get("spin_id", "spin_id"), why_u[codes[rows]] if numeric else ["empty spin_id (the other rows of the file have one)"] * rows.size, lab[codes[rows]])
    if numeric and text_codes:
        part["spin_id"] = IntIds(np.where(vals >= 0, vals, -1))
    return part


def _concat_parts(parts: list[dict]) -> dict:
    """Join the per-batch results of one file, in order."""
    if len(parts) == 1:
        return parts[0]
    out = dict(parts[0])
    out["rows"] = sum(pt["rows"] for pt in parts)
    out["void_count"] = sum(pt["void_count"] for pt in parts)
    out["rejected"] = sorted((r for pt in parts for r in pt["rejected"]), key=_BY_LINE)
    out["notes"] = [n for pt in parts for n in pt["notes"]]
    for key in ("pos", "sym", "accepted_mask", "void_mask", "lines", "line_no", "ts", "direction", "release", "rotor_speed", "ball_direction"):
        out[key] = None if parts[0].get(key) is None else np.concatenate([pt[key] for pt in parts])
        for pt in parts[1:]:  # free each batch's copy as soon as it is joined (bounded peak memory)
            pt[key] = None
    for key in ("table", "dealer", "spin_id", "result_source", "payout", "multiplier"):
        vals = [pt.get(key) for pt in parts]
        if vals[0] is None:
            out[key] = None
        elif isinstance(vals[0], (pa.Array, pa.ChunkedArray)):
            out[key] = pa.concat_arrays([v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v for v in vals])
        else:
            out[key] = _merge_codes(vals, raw=True)  # the batches of one file, before its file-level checks
    return out


def _given(ours: str, mapping) -> str:
    """How a known column got its file column: the user's ``--column`` or its default name."""
    return f"--column {ours}={mapping[ours]}" if ours in mapping else f"its default name {ours!r}"


def _loose(text: str) -> str:
    """A column name without case, spaces, ``_``, ``-`` and ``.``: ``Spin ID``, ``spin-id`` and ``SpinID`` are ``spinid``."""
    return re.sub(r"[\s_.\-]+", "", text.lower())


def _loose_columns(names, name: str, mapping, resolved: dict[str, str]) -> None:
    """Add to ``resolved`` each known column that no column of the file names as such nor ``--column`` maps, but one
    column spells with spaces, hyphens, underscores, dots or capitals of its own (``Spin ID``, ``Time Stamp``); two such
    columns for one known column are an :class:`InputError` (as a header naming a column twice)."""
    taken = set(resolved.values())
    for ours in KNOWN_COLUMNS:
        if ours in resolved or ours in mapping:
            continue
        alike = [c for c in dict.fromkeys(names) if c not in taken and _loose(c) == _loose(ours)]
        if len(alike) > 1:
            raise InputError(f"{name}: columns {alike[0]!r} and {alike[1]!r} both name {ours!r}; keep one, or name the one to read "
                             f"with --column {ours}=NAME")
        if alike:
            resolved[ours] = alike[0]
            taken.add(alike[0])


#: Words of a column name that may hold a spin id (``Round ID``, ``Game No``), for :func:`unread_columns`.
_ID_WORDS = ("spin", "round", "game", "coup")
_ID_ENDS = ("id", "no", "nr", "number", "#")


def unread_columns(name: str, header, mapping) -> list[str]:
    """A note naming the columns of a file that are not read but whose name holds a known column's (``Table ID``,
    ``Dealer Name``) or a spin id's words (``Round ID``, ``Game No``), each with the ``--column`` that reads it: the
    checks of a column (repeats and gaps of spin ids, tables, dealers) do not run on a column that is not read. Empty
    when there is none (or the columns cannot be resolved: the reader says why)."""
    header = [str(h) for h in header]
    try:
        resolved = resolve_columns(header, name, mapping or {}, header)
    except InputError:
        return []
    used = set(resolved.values())
    hints = []
    for c in dict.fromkeys(header):
        lc = _loose(c)
        if c in used or not lc:
            continue
        for ours in KNOWN_COLUMNS:
            if ours not in resolved and (_loose(ours) in lc or (ours == "spin_id" and any(w in lc for w in _ID_WORDS) and lc.endswith(_ID_ENDS))):
                hints.append(f"{c!r} (to read it as {ours}: --column {ours}={c!r})")
                break
    return [f"{name}: column(s) not read: {', '.join(hints)}"] if hints else []


def loose_spellings(resolved: dict[str, str], mapping) -> dict[str, str]:
    """The known columns of ``resolved`` (:func:`resolve_columns`) read from a column spelled otherwise than their name
    (``{"spin_id": "Spin ID"}``): neither the name in any case nor a ``--column`` mapping (``mapping``)."""
    return {ours: col for ours, col in resolved.items() if ours not in (mapping or {}) and col.strip().lower() != ours}


def spelling_notes(name: str, spelled: dict[str, str] | None) -> list[str]:
    """The note naming the columns of file ``name`` read by their spelling (:func:`loose_spellings`); [] when none."""
    if not spelled:
        return []
    said = ", ".join(f"{col!r} as {ours}" for ours, col in spelled.items())
    return [f"{name}: columns read as rngcert's columns by their spelling: {said} (--column OURS=NAME reads another column)"]


def resolve_columns(names, name: str, mapping, header) -> dict[str, str]:
    """Which of the file's columns (``names``, as the reader gives them) holds each known column
    (``mapping``: the user's ``--column`` names). Raises :class:`InputError` when a named column or
    the result column is missing."""
    lower = {}
    for c in names:
        lower.setdefault(c.strip().lower(), c)
    resolved: dict[str, str] = {}
    for ours in KNOWN_COLUMNS:
        want = mapping.get(ours, ours)
        if want.lower() in lower:
            resolved[ours] = lower[want.lower()]
        elif ours in mapping:
            raise InputError(f"{name}: column {want!r} (given for {ours!r}) is not in the file; columns: {', '.join(header)}")
    _loose_columns(names, name, mapping, resolved)
    if "result" not in resolved:
        raise InputError(
            f"{name}: no 'result' column (columns: {', '.join(header)}); name the column holding the pocket with --column result=NAME"
        )
    claimed: dict[str, str] = {}
    for ours, col in resolved.items():  # one column of the file read as two things would be a misread, not a log
        if col in claimed:
            first = claimed[col]
            raise InputError(
                f"{name}: column {col!r} would be read both as {first!r} ({_given(first, mapping)}) and as {ours!r} "
                f"({_given(ours, mapping)}); "
                f"each known column must come from its own column of the file: fix the --column mapping")
        claimed[col] = ours
    return resolved


# long: one file's columns resolved and every row validated column by column (control characters in label cells, result,
#   void, revolutions, times, ids, table, dealer), each row's first fault kept as a small integer code: the checks share the row masks
def _process(cols, lines, rejects, name, wheel, mapping, fieldpos, header, text_codes: bool = True, id_numbers: bool = False) -> dict:
    """Resolve columns, validate, and return arrays for one file (``id_numbers``: text spin ids as a
    :class:`TextIds` when they are all in its shapes, for the compact log: no Python string a row)."""
    resolved = resolve_columns(cols, name, mapping, header)
    n = len(cols[resolved["result"]])
    colnum = {c: i + 1 for i, c in enumerate(cols)}  # the reader's names, in file order
    # Each row's first fault: the column (index into fcols) and the reason (index into whys);
    # -1 and free = True while the row has none. Per-row reasons are small integer codes, not
    # Python objects: a 10 M-spin log has 10 M rows and almost no faults.
    free = np.ones(n, dtype=bool)
    col_of = np.full(n, -1, dtype=np.int16)
    why_of = np.full(n, -1, dtype=np.int32)
    fcols: list[str] = []
    whys: list[str] = []

    def flag(mask, col, why, codes=None):
        """Give the rows in ``mask`` that have no fault yet the reason ``why`` (a string), or,
        with ``codes``, the reason ``why[codes[i]]`` of each row."""
        new = mask & free
        if not new.any():
            return
        if col not in fcols:
            fcols.append(col)
        col_of[new] = fcols.index(col)
        if codes is None:
            why_of[new] = len(whys)
            whys.append(why)
        else:
            why_of[new] = len(whys) + codes[new]
            whys.extend(why)
        free[new] = False

    corrupt = np.zeros(n, dtype=bool)
    # a corrupted cell is the row's first fault; a permanence list's tokens (fieldpos) are judged by its own readers'
    # rules (the streamed reader's reasons), so that both of its paths give the same rejects
    for col, rows, reasons, codes in (_control_faults(cols, resolved) if fieldpos is None else ()):
        flag(rows, col, reasons, codes)
        corrupt |= rows
    pos, sym, void_tok, bad, bad_why, _ = _resolve_labels(cols[resolved["result"]], wheel, header=resolved["result"])
    void = void_tok.copy()
    flag(bad >= 0, resolved["result"], bad_why, bad)
    notes = []
    if "void" in resolved:
        v, badv = _truthy(cols[resolved["void"]])
        flag(badv, resolved["void"], "void must be true/false")
        void |= v & ~badv
    if "revolutions" in resolved:
        rv, badr = _numbers(cols[resolved["revolutions"]])
        flag(badr | (rv < 0), resolved["revolutions"], "revolutions is not a non-negative number")
        void |= (rv < 3) & ~badr  # rules 4.2 / 5.3: fewer than 3 revolutions is a void spin
    # A void spin needs no readable result (e.g. "No spin" with an empty pocket).
    if resolved["result"] in fcols:
        unflag = void & ~corrupt & (col_of == fcols.index(resolved["result"]))
        free[unflag] = True
        col_of[unflag] = -1
        why_of[unflag] = -1
    ts = None
    if "timestamp" in resolved:
        ts, badt = _timestamps(cols[resolved["timestamp"]])
        flag(badt & ~void, resolved["timestamp"], "timestamp is not ISO 8601")
        ts = np.where(badt, NO_TIME, ts)  # (a void row without a time: in no period nor time order, whichever parse read it)
        ts_kinds = timestamp_kinds(cols[resolved["timestamp"]], ~badt)
    else:
        ts_kinds = None
    release = None
    if "release_pocket" in resolved:
        rpos, _, _, _, _, empty = _resolve_labels(cols[resolved["release_pocket"]], wheel)
        flag((rpos < 0) & ~empty & ~void, resolved["release_pocket"], "release_pocket is not a pocket of this wheel")
        release = np.where(empty, -1, rpos)
    direction = ball_direction = rotor_speed = None
    if "direction" in resolved:
        direction, badd = _directions(cols[resolved["direction"]])
        flag(badd & ~void, resolved["direction"], "direction must be cw or ccw")
    if "ball_direction" in resolved:
        ball_direction, badb = _directions(cols[resolved["ball_direction"]])
        flag(badb & ~void, resolved["ball_direction"], "ball_direction must be cw or ccw")
    if "rotor_speed" in resolved:
        rotor_speed, bads = _speeds(cols[resolved["rotor_speed"]])
        flag(bads & ~void, resolved["rotor_speed"], "rotor_speed is not a non-negative number")
    accepted = free & ~void
    void_final = void & free
    rej_idx = np.flatnonzero(~free)
    out_rejects = list(rejects)
    if rej_idx.size:
        # the text of the cell that was wrong (not always the result)
        texts = [None] * rej_idx.size
        rej_cols = col_of[rej_idx]
        for ci in arrayops.unique(rej_cols).tolist():
            where = np.flatnonzero(rej_cols == ci)
            vals = cols[fcols[ci]].take(_arrow.array(rej_idx[where])).to_pylist()  # (not pa.array: that imports pandas, 0.5 s)
            for w, v in zip(where.tolist(), vals):
                texts[w] = v
        # one name string per column (or field), shared by its rows: a million rejects hold one copy, not a million
        if fieldpos is not None:
            colnames = [field_name(f) for f in np.asarray(fieldpos)[rej_idx].tolist()]
        else:
            names = {ci: f"{fcols[ci]} (column {colnum.get(fcols[ci], '?')})" for ci in set(rej_cols.tolist())}
            colnames = [names[ci] for ci in rej_cols.tolist()]
        seen: dict = {}  # one string a distinct cell text (another wheel's labels repeat: 'x13' a million times)
        for ln, colname, wi, t in zip(np.asarray(lines)[rej_idx].tolist(), colnames, why_of[rej_idx].tolist(), texts):
            t = "" if t is None else str(t)[:200]
            out_rejects.append(RejectedRow(name, int(ln), colname, whys[wi], seen.setdefault(t, t)))
    out_rejects.sort(key=_BY_LINE)

    def textcol(key):
        """(codes, labels) of a text column: codes index labels; None if the column is absent.
        Whole-number spin ids come back as :class:`IntIds` (no Python object per row)."""
        if key not in resolved:
            return None
        raw = _as_text(cols[resolved[key]])
        if raw.null_count:
            raw = pc.fill_null(raw, _arrow.text_scalar(""))  # (a str here goes through pandas)
        if key == "spin_id" or not text_codes:
            if text_codes and _may_be_int(raw):  # (a cast that fails costs 1 µs a row: not tried when it must fail)
                try:  # whole numbers as written (a cell with spaces or a quote fails here and is cleaned below)
                    if _counters(raw):
                        return IntIds(_arrow.ints(pc.cast(raw, pa.int64())))
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    pass
            col = _clean_text(raw)
            if not text_codes:
                return col
            try:
                if _may_be_int(col) and _counters(col):
                    return IntIds(_arrow.ints(pc.cast(col, pa.int64())))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
            got = TextIds.of(col) if id_numbers else None
            if got is not None:
                return got
            idx, uniq = _decode(col)
            return idx, [("" if u is None else u) for u in uniq]
        # a table or dealer column has few distinct values: clean those, then join the ones that
        # clean to the same text (in order of first appearance, as the cleaned column would give)
        if _one_value(raw):  # (one table, one dealer: no hash a row)
            idx, uniq = _decode(_clean_text(raw.slice(0, 1)))
            return np.full(len(raw), idx[0], dtype=idx.dtype), [("" if u is None else u) for u in uniq]
        enc = pc.dictionary_encode(raw)
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        idx, uniq = _decode(_clean_text(enc.dictionary))
        return idx[_arrow.ints(enc.indices)], [("" if u is None else u) for u in uniq]

    return {
        "name": name,
        "rows": int(n + len(rejects)),
        "pos": pos.astype(_ID_DTYPE, copy=False),  # compact dtypes: a 10 M-spin log must fit in memory
        "sym": sym.astype(_ID_DTYPE, copy=False),
        "accepted_mask": accepted,
        "void_mask": void_final,
        "void_count": int(void_final.sum()),
        "rejected": out_rejects,
        "lines": np.asarray(lines, dtype=np.int64 if not text_codes else np.int32),  # file-level checks name rows by line
        "colnames": {
            k: (f"{resolved[k]} (column {colnum.get(resolved[k], '?')})" if fieldpos is None else k) for k in ("spin_id", "table", "result_source") if k in resolved
        },
        "colindex": {k: colnum[resolved[k]] - 1 for k in ("spin_id", "table") if k in resolved and resolved[k] in colnum},
        # permanence lists hold many spins per line: the line of each spin, for the data-integrity checks
        "line_no": np.asarray(lines, dtype=np.int64) if fieldpos is not None else None,
        "ts": ts,
        "table": textcol("table"),
        "dealer": textcol("dealer"),
        "payout": textcol("payout") if text_codes else None,  # (compared by the near-duplicate check)
        "multiplier": textcol("multiplier") if text_codes else None,
        "spin_id": textcol("spin_id"),
        "direction": direction,
        "release": None if release is None else release.astype(np.int32),
        "rotor_speed": rotor_speed,
        "ball_direction": ball_direction,
        "result_source": textcol("result_source"),
        "notes": notes,
        "ts_kinds": ts_kinds,
        "spelled": loose_spellings(resolved, mapping),  # (the file's note: rngcert.collect.spinlog.read)
    }


@dataclass
class IntIds:
    """Whole-number spin ids of a file (kept as int64, not as text codes)."""

    values: np.ndarray

    def as_codes(self, raw: bool = False):
        """(codes, labels); a row without a valid id (value -1) gets code -1. ``raw``: the values
        are the ids as read, before the file-level checks (a negative id is a label of its own,
        so that those checks name it as they do when the file is read in one piece)."""
        v = self.values
        ok = v >= 0 if not raw else np.ones(v.size, dtype=bool)
        uniq, inv = np.unique(v[ok], return_inverse=True)
        codes = np.full(v.size, -1, dtype=np.int64)
        codes[ok] = inv
        return codes, [str(u) for u in uniq]


def _counters(col) -> bool:
    """Whether every cell of a text column is a spin counter as :func:`_id_value` reads one (ASCII digits, at most 18),
    so that its int64 cast is the ids' values: the cast also reads ``0x65``, ``-0`` and 19 or more digits, which
    :func:`_id_value` rejects (else read as codes and labels, each such row rejected by :func:`_file_checks`)."""
    return len(col) == 0 or (pc.max(pc.binary_length(col)).as_py() <= 18 and pc.all(pc.ascii_is_decimal(col)).as_py() is True)


def _may_be_int(col) -> bool:
    """False when the cast of a text column to int64 must fail: its first value has a character
    that is neither a digit nor a sign."""
    first = col[0].as_py() if len(col) else None
    return not first or all(c in "0123456789+-" for c in first)


@dataclass
class TextIds:
    """Text spin ids of one batch of a streamed read kept as numbers, without their texts (for the compact
    log, :mod:`rngcert.collect.spinlog.compact`): ``kind`` True: letters and a whole number (``R1200``,
    :func:`rngcert.collect.spinlog.idorder.text_id_numbers`): ``values`` the numbers, ``prefix`` per row
    an index into ``prefixes``; ``"label"``: other texts (UUIDs): ``values`` 64-bit keys, equal for equal
    texts (:func:`rngcert.collect.spinlog.idsort.label_keys`)."""

    kind: bool | str
    values: np.ndarray
    prefix: np.ndarray | None = None
    prefixes: list = field(default_factory=list)

    @staticmethod
    def of(col) -> "TextIds | None":
        """The text ids of a (cleaned) pyarrow string column, or None when one is empty, null, a whole
        number or too long (the column is then read as codes and labels)."""
        from rngcert.collect.spinids import PREFIXED_ID
        from rngcert.collect.spinlog.idorder import text_id_numbers_arrow
        from rngcert.collect.spinlog.idsort import label_keys

        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        if col.null_count or not len(col) or pc.any(pc.equal(col, _arrow.text_scalar(""))).as_py():  # (a str literal imports pandas)
            return None
        got = text_id_numbers_arrow(col)
        if got is not None:
            return TextIds(True, got[1], got[2], got[0])
        if pc.any(pc.match_substring_regex(col, PREFIXED_ID)).as_py():
            return None  # (ids of two shapes: read as codes and labels, whose note names the other shape, order._two_shapes)
        keys = label_keys(col)
        return None if keys is None else TextIds("label", keys)


def _merge_codes(items, raw: bool = False):
    """Concatenate per-file (codes, labels) into global codes and one label list (``raw``: see
    :meth:`IntIds.as_codes`)."""
    if all(isinstance(it, IntIds) for it in items):
        return IntIds(np.concatenate([it.values for it in items]))
    items = [it.as_codes(raw) if isinstance(it, IntIds) else it for it in items]
    if len(items) == 1:
        return items[0]
    offsets = np.cumsum([0] + [len(labs) for _, labs in items])
    enc = pc.dictionary_encode(_arrow.texts([lab for _, labs in items for lab in labs]))  # (not pa.array: that imports pandas)
    remap = _arrow.ints(enc.indices).astype(np.int64)
    out = [np.where(codes < 0, -1, remap[np.clip(codes, 0, None) + off]) for (codes, _), off in zip(items, offsets)]
    return np.concatenate(out), enc.dictionary.to_pylist()


def _small_int(top: int) -> np.dtype:
    """The smallest signed integer type holding ``-1 .. top``."""
    for dt in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)
