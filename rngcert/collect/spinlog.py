"""Spin-log collector: wheel-controller and surveillance exports, and casino permanence lists.

Reads a log into per-table outcome sequences for a given wheel (DESIGN §3 "Spin log"):

* CSV with a header (``.csv``, ``.tsv``; UTF-8 with or without BOM; LF or CRLF), columns matched
  case-insensitively; ``result`` is required, ``spin_id``, ``timestamp``, ``table``, ``dealer``,
  ``direction``, ``release_pocket``, ``revolutions``, ``void`` are optional. Foreign names are
  mapped with ``columns={"result": "Number"}`` (CLI: ``--column result=Number``).
* JSON Lines (``.jsonl``, ``.ndjson``), one object per line with the same keys.
* Permanence lists (``.txt`` or any file whose first line has no letters): pocket numbers
  separated by commas, semicolons, whitespace or newlines, in spin order, one table per file
  (the format casinos publish, e.g. Spielbank Wiesbaden).

Every row ends in exactly one of three places, and the counts always add up:

* **accepted** — a readable, valid spin;
* **void** — a spin declared void (``void`` true, ``revolutions`` < 3 — rules 4.2 and 5.1-5.4 of
  the money-wheel rules — or a result such as ``void``/``no spin``/``peg``); excluded from the tests
  and counted;
* **rejected** — a row that cannot be read (unknown pocket, empty result, bad number, bad
  timestamp, wrong number of fields), kept as a :class:`RejectedRow` with file, line, column and
  reason.

Blank lines are not rows; they are counted separately. Parsing is vectorised with pyarrow: the
per-row work is done in C++, and Python only sees the distinct labels.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from rngcert.equipment.wheel import VOID_TOKENS, OutcomeSpace, Wheel
from rngcert.errors import InputError, NoDataError

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
)

_TRUE = {"true", "t", "1", "yes", "y", "void", "no spin"}
_FALSE = {"false", "f", "0", "no", "n", ""}
_DIRECTIONS = {"cw": 0, "clockwise": 0, "ccw": 1, "acw": 1, "anticlockwise": 1, "counterclockwise": 1}


@dataclass(frozen=True)
class RejectedRow:
    """A row that could not be read: kept, counted, and written beside the report."""

    file: str
    line: int
    column: str
    reason: str
    text: str = ""

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

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class TableSpins:
    """The accepted spins of one table, in spin order.

    Attributes
    ----------
    table : str
        Table/wheel id (``"(all)"`` when the log names no table or tables are pooled).
    outcomes : (n,) ndarray of int32
        Outcome ids in ``space``: wheel positions when ``level == "position"``, symbol ids when
        ``level == "symbol"``.
    release : (n,) ndarray of int32 or None
        Wheel position under the ball/pointer at release, -1 where the log has none.
    dealer : (n,) ndarray of int32 or None
        Dealer id index into ``dealer_labels``.
    direction : (n,) ndarray of int8 or None
        0 clockwise, 1 counter-clockwise, -1 unknown.
    void : int
        Void spins of this table (excluded from ``outcomes``).
    spin_ids : (n,) ndarray of object or None
        The ``spin_id`` of each accepted spin, as text.
    """

    table: str
    outcomes: np.ndarray
    release: np.ndarray | None = None
    dealer: np.ndarray | None = None
    dealer_labels: tuple[str, ...] = ()
    direction: np.ndarray | None = None
    void: int = 0
    spin_ids: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

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
    rejected: list[RejectedRow]
    notes: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> int:
        return sum(s.accepted for s in self.sources)

    @property
    def void(self) -> int:
        return sum(s.void for s in self.sources)


# ---------------------------------------------------------------------------- helpers
def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _line_table(data: bytes) -> tuple[int, np.ndarray]:
    """Number of physical lines and the 1-based numbers of the blank (whitespace-only) ones.

    Only lines of at most 16 bytes are inspected; a longer whitespace-only line is treated as a
    row and rejected by the reader like any other unreadable row (nothing is lost either way).
    """
    arr = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [arr.size]))
    if data.endswith(b"\n"):
        starts, ends = starts[:-1], ends[:-1]
    short = np.flatnonzero(ends - starts <= 16)
    blank = [i + 1 for i in short.tolist() if not data[starts[i] : ends[i]].strip()]
    return int(starts.size), np.asarray(blank, dtype=np.int64)


def _norm_tokens(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Trim spaces and surrounding quotes, lower-case; null stays null."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
        col = pc.cast(col, pa.string())
    col = pc.utf8_trim_whitespace(col)
    col = pc.utf8_trim(col, characters="\"'")
    col = pc.utf8_trim_whitespace(col)
    return pc.utf8_lower(col)


def _decode(col: pa.Array) -> tuple[np.ndarray, list]:
    """Dictionary-encode a string column: (indices with -1 for null, list of distinct values)."""
    enc = pc.dictionary_encode(col)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    idx = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return idx, enc.dictionary.to_pylist()


_FLOAT_INT = re.compile(r"^(\d+)\.0*$")


def _resolve_labels(col: pa.Array, wheel: Wheel):
    """Map result tokens to wheel positions and symbol ids, vectorised over distinct tokens.

    Returns
    -------
    pos, sym : (n,) int64, -1 where the token is not a position / symbol
    void : (n,) bool, token is a void marker
    bad : (n,) object array of reason strings or None
    """
    positions, symbols = wheel.token_table()
    idx, uniq = _decode(col)
    m = len(uniq)
    pos_u = np.full(m + 1, -1, dtype=np.int64)  # last slot: null
    sym_u = np.full(m + 1, -1, dtype=np.int64)
    void_u = np.zeros(m + 1, dtype=bool)
    bad_u = np.empty(m + 1, dtype=object)
    bad_u[m] = "empty result"
    for j, tok in enumerate(uniq):
        if tok is None or tok == "":
            bad_u[j] = "empty result"
            continue
        t = tok
        if t not in positions and t not in symbols:
            mm = _FLOAT_INT.match(t)
            if mm:  # "7.0" from a spreadsheet export means pocket 7 (but "00" stays "00")
                t = mm.group(1)
                if len(t) > 1:
                    t = t.lstrip("0") or "0"
        if t in positions:
            pos_u[j] = positions[t]
            if wheel.kind != "roulette":
                sym_u[j] = wheel.symbol_of_position()[positions[t]]
        elif t in symbols:
            sym_u[j] = symbols[t]
        elif t in VOID_TOKENS:
            void_u[j] = True
        else:
            bad_u[j] = f"{tok!r} is not a pocket/section of wheel {wheel.id!r}"
    idx = np.where(idx < 0, m, idx)
    return pos_u[idx], sym_u[idx], void_u[idx], bad_u[idx]


def _truthy(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Parse a boolean column: (values, bad mask)."""
    idx, uniq = _decode(_norm_tokens(col))
    m = len(uniq)
    val = np.zeros(m + 1, dtype=bool)
    bad = np.zeros(m + 1, dtype=bool)
    for j, t in enumerate(uniq):
        if t in _TRUE:
            val[j] = True
        elif t not in _FALSE:
            bad[j] = True
    idx = np.where(idx < 0, m, idx)
    return val[idx], bad[idx]


def _numbers(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Parse a numeric column: (float values with nan for empty, bad mask)."""
    idx, uniq = _decode(_norm_tokens(col))
    m = len(uniq)
    val = np.full(m + 1, np.nan)
    bad = np.zeros(m + 1, dtype=bool)
    for j, t in enumerate(uniq):
        if t is None or t == "":
            continue
        try:
            val[j] = float(t)
            if not np.isfinite(val[j]):
                bad[j] = True
        except ValueError:
            bad[j] = True
    idx = np.where(idx < 0, m, idx)
    return val[idx], bad[idx]


def _timestamps(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Parse ISO 8601 timestamps to int64 microseconds since the epoch (UTC; a timestamp
    without zone is taken as UTC). Returns (values, bad mask); empty cells are bad too."""
    col = pc.utf8_trim(pc.utf8_trim_whitespace(col), characters="\"'")
    for typ in (pa.timestamp("us", tz="UTC"), pa.timestamp("us")):
        try:
            ts = pc.cast(col, typ)
            vals = ts.cast(pa.int64()).fill_null(np.iinfo(np.int64).min).to_numpy(zero_copy_only=False)
            bad = vals == np.iinfo(np.int64).min
            return vals, bad
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    # Mixed or partly malformed: parse each distinct value in Python (slow path).
    from datetime import datetime, timezone

    idx, uniq = _decode(col)
    m = len(uniq)
    val = np.zeros(m + 1, dtype=np.int64)
    bad = np.zeros(m + 1, dtype=bool)
    bad[m] = True
    for j, t in enumerate(uniq):
        try:
            d = datetime.fromisoformat(t.replace("Z", "+00:00"))
            if d.tzinfo is None:
                d = d.replace(tzinfo=timezone.utc)
            val[j] = int(d.timestamp() * 1_000_000)
        except (ValueError, AttributeError):
            bad[j] = True
    idx = np.where(idx < 0, m, idx)
    return val[idx], bad[idx]


# ---------------------------------------------------------------------------- readers
def _detect_format(path: Path, data: bytes) -> str:
    suf = path.suffix.lower()
    if suf in (".jsonl", ".ndjson"):
        return "jsonl"
    head = data[:4096].lstrip(b"\xef\xbb\xbf").lstrip()
    first = head.split(b"\n", 1)[0]
    if first.startswith(b"{"):
        return "jsonl"
    if re.search(rb"[A-Za-z_]", first) and suf != ".txt":
        return "csv"
    if suf in (".csv", ".tsv") and re.search(rb"[A-Za-z_]", first):
        return "csv"
    return "permanence"


def _read_csv(data: bytes, name: str):
    """CSV → (dict of column name → pa.Array of strings, line numbers, rejected rows, header)."""
    text_start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    n_lines, blank_lines = _line_table(data)
    isblank = np.zeros(n_lines + 1, dtype=bool)
    isblank[blank_lines[blank_lines <= n_lines]] = True
    nonblank_lines = np.flatnonzero(~isblank[1:]) + 1  # 1-based physical line numbers
    if nonblank_lines.size == 0:
        raise NoDataError(f"{name}: the file is empty")
    header_line = data.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].decode("utf-8", "replace")
    delim = "\t" if header_line.count("\t") > header_line.count(",") else ","
    header = [h.strip().strip('"').strip() for h in next(iter(__import__("csv").reader([header_line.lstrip("\ufeff")], delimiter=delim)))]
    invalid: list[tuple[int, str, str]] = []

    def handler(row):
        invalid.append((row.number, row.text, f"expected {row.expected_columns} fields, found {row.actual_columns}"))
        return "skip"

    try:
        tbl = pacsv.read_csv(
            io.BytesIO(data[text_start:]),
            read_options=pacsv.ReadOptions(use_threads=False, column_names=None, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=delim, invalid_row_handler=handler, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(column_types={h: pa.string() for h in header}, strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(f"{name}: not a readable CSV file: {exc}") from None
    # Map records (non-blank lines; record 1 = header) to physical lines.
    bad_records = np.array(sorted(r[0] for r in invalid if r[0] is not None), dtype=np.int64)
    rec = np.arange(2, nonblank_lines.size + 1)
    keep = ~np.isin(rec, bad_records)
    good_lines = nonblank_lines[rec[keep] - 1]
    if good_lines.size != tbl.num_rows:  # quoted newlines or unknown record numbering: fall back
        good_lines = np.arange(2, tbl.num_rows + 2)
    rejects = []
    for number, text, reason in invalid:
        line = int(nonblank_lines[number - 1]) if number is not None and 0 < number <= nonblank_lines.size else -1
        rejects.append(RejectedRow(name, line, "*", reason, text[:200]))
    cols = {c: tbl.column(c).combine_chunks() for c in tbl.column_names}
    return cols, good_lines, rejects, int(isblank.sum()), tbl.column_names


def _read_jsonl(data: bytes, name: str):
    text = data.decode("utf-8-sig", errors="replace")
    rows: dict[str, list] = {}
    lines: list[int] = []
    rejects: list[RejectedRow] = []
    blank = 0
    n = 0
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            blank += 1
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            rejects.append(RejectedRow(name, i, "*", f"not a JSON object: {exc}", line[:200]))
            continue
        for k, v in obj.items():
            col = rows.setdefault(k, [None] * n)
            col.append(None if v is None else (str(v).lower() if isinstance(v, bool) else str(v)))
        n += 1
        for col in rows.values():
            if len(col) < n:
                col.append(None)
        lines.append(i)
    cols = {k: pa.array(v, type=pa.string()) for k, v in rows.items()}
    return cols, np.asarray(lines, dtype=np.int64), rejects, blank, list(rows)


def _read_permanence(data: bytes, name: str):
    text = data.decode("utf-8-sig", errors="replace")
    lines_arr = pa.array(text.split("\n"))
    lines_arr = pc.utf8_trim_whitespace(lines_arr)
    blank = pc.equal(lines_arr, "").to_numpy(zero_copy_only=False)
    if text.endswith("\n"):
        blank = blank[:-1]
    tokens = pc.split_pattern_regex(lines_arr, r"[,;\s]+")
    parent = pc.list_parent_indices(tokens).to_numpy()
    flat = pc.list_flatten(tokens)
    nonempty = pc.not_equal(flat, "").to_numpy(zero_copy_only=False)
    flat = flat.filter(pa.array(nonempty))
    parent = parent[nonempty]
    # field number within the line (1-based), vectorised
    first = np.r_[True, parent[1:] != parent[:-1]] if parent.size else np.zeros(0, bool)
    grp_start = np.flatnonzero(first)
    pos_in_line = np.arange(parent.size) - np.repeat(grp_start, np.diff(np.r_[grp_start, parent.size]))
    return {"result": flat}, parent + 1, [], int(blank.sum()), ["result"], pos_in_line + 1


# ---------------------------------------------------------------------------- main entry
def read_spin_log(
    paths: Sequence[str | Path] | str | Path,
    wheel: Wheel,
    *,
    columns: Mapping[str, str] | None = None,
    fmt: str = "auto",
    pool: bool = False,
) -> SpinLog:
    """Read one or more spin logs for ``wheel``.

    Parameters
    ----------
    paths : path or sequence of paths
        Log files, in time order when several (their spins are concatenated per table).
    wheel : Wheel
        The wheel the log was recorded on; results are resolved against its labels.
    columns : mapping, optional
        ``{our_name: name_in_file}`` for foreign column names, e.g. ``{"result": "Number"}``.
    fmt : {"auto", "csv", "jsonl", "permanence"}
        File format; "auto" detects from the extension and first line.
    pool : bool
        Pool all tables into one sequence (default: one sequence per ``table``).

    Returns
    -------
    SpinLog

    Raises
    ------
    InputError
        Unknown format, missing ``result`` column, a mapped column that is not in the file.
    NoDataError
        A file with no readable spin at all (empty, header only, or every row rejected).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if fmt not in ("auto", "csv", "jsonl", "permanence"):
        raise InputError(f"format {fmt!r} is not one of 'auto', 'csv', 'jsonl', 'permanence'")
    columns = {k.lower(): v for k, v in (columns or {}).items()}
    unknown = sorted(set(columns) - set(KNOWN_COLUMNS))
    if unknown:
        raise InputError(f"--column names {unknown} are not spin-log columns; known: {', '.join(KNOWN_COLUMNS)}")

    parts = []
    sources = []
    rejected: list[RejectedRow] = []
    notes: list[str] = []
    for p in paths:
        p = Path(p)
        if not p.is_file():
            raise InputError(f"{p}: no such file")
        data = p.read_bytes()
        name = str(p)
        f = fmt if fmt != "auto" else _detect_format(p, data)
        if not data.strip(b"\xef\xbb\xbf \t\r\n"):
            raise NoDataError(f"{name}: the file is empty: no spins to certify")
        fieldpos = None
        if f == "csv":
            cols, lines, rej, blank, header = _read_csv(data, name)
        elif f == "jsonl":
            cols, lines, rej, blank, header = _read_jsonl(data, name)
        else:
            cols, lines, rej, blank, header, fieldpos = _read_permanence(data, name)
        part = _process(cols, lines, rej, name, wheel, columns, fieldpos, header)
        part["format"] = f
        part["sha256"] = sha256_of(data)
        part["blank"] = blank
        if part["accepted_mask"].sum() == 0 and part["void_count"] == 0:
            reasons = {}
            for r in part["rejected"]:
                reasons[r.reason] = reasons.get(r.reason, 0) + 1
            top = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
            detail = "; ".join(f"{c}× {r}" for r, c in top) if top else "no data rows"
            raise NoDataError(f"{name}: no readable spin in {part['rows']} row(s) ({detail})")
        parts.append(part)
        rejected.extend(part["rejected"])
        notes.extend(part["notes"])
        sources.append(
            SourceInfo(name, part["sha256"], f, part["rows"], int(part["accepted_mask"].sum()), part["void_count"], len(part["rejected"]), blank)
        )

    # Level: positions if every accepted result resolved to a position.
    all_pos = all(np.all(pt["pos"][pt["accepted_mask"]] >= 0) for pt in parts)
    if wheel.kind == "roulette" or (wheel.order_known and all_pos):
        level, space, key = "position", wheel.position_space(), "pos"
    else:
        level, space, key = "symbol", wheel.symbol_space(), "sym"
        if wheel.order_known:
            notes.append("results are symbols, not section numbers: tests that need the wheel order do not apply")
    tables = _assemble_tables(parts, key, pool, notes)
    return SpinLog(wheel, level, space, tables, sources, rejected, notes)


def _process(cols, lines, rejects, name, wheel, mapping, fieldpos, header) -> dict:
    """Resolve columns, validate, and return arrays for one file."""
    lower = {}
    for c in cols:
        lower.setdefault(c.strip().lower(), c)
    resolved: dict[str, str] = {}
    for ours in KNOWN_COLUMNS:
        want = mapping.get(ours, ours)
        if want.lower() in lower:
            resolved[ours] = lower[want.lower()]
        elif ours in mapping:
            raise InputError(f"{name}: column {want!r} (given for {ours!r}) is not in the file; columns: {', '.join(header)}")
    if "result" not in resolved:
        raise InputError(
            f"{name}: no 'result' column (columns: {', '.join(header)}); name the column holding the pocket with --column result=NAME"
        )
    n = len(cols[resolved["result"]])
    colnum = {c: i + 1 for i, c in enumerate(header)}
    reason = np.empty(n, dtype=object)
    column = np.empty(n, dtype=object)

    def flag(mask, col, why):
        new = mask & (reason == None)  # noqa: E711  (object array comparison)
        if np.any(new):
            reason[new] = why if isinstance(why, str) else why[new]
            column[new] = col

    res = _norm_tokens(cols[resolved["result"]])
    pos, sym, void_tok, bad = _resolve_labels(res, wheel)
    void = void_tok.copy()
    flag(bad != None, resolved["result"], bad)  # noqa: E711
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
    reason[void & (column == resolved["result"])] = None
    column[void & (column == resolved["result"])] = None
    ts = None
    if "timestamp" in resolved:
        ts, badt = _timestamps(cols[resolved["timestamp"]])
        flag(badt & ~void, resolved["timestamp"], "timestamp is not ISO 8601")
    release = None
    if "release_pocket" in resolved:
        rcol = _norm_tokens(cols[resolved["release_pocket"]])
        rpos, _, _, rbad = _resolve_labels(rcol, wheel)
        empty = pc.equal(pc.fill_null(rcol, ""), "").to_numpy(zero_copy_only=False)
        flag((rpos < 0) & ~empty & ~void, resolved["release_pocket"], "release_pocket is not a pocket of this wheel")
        release = np.where(empty, -1, rpos)
    direction = None
    if "direction" in resolved:
        idx, uniq = _decode(_norm_tokens(cols[resolved["direction"]]))
        m = len(uniq)
        dir_u = np.full(m + 1, -1, dtype=np.int8)
        bad_u = np.zeros(m + 1, dtype=bool)
        for j, t in enumerate(uniq):
            if t in _DIRECTIONS:
                dir_u[j] = _DIRECTIONS[t]
            elif t not in ("", None):
                bad_u[j] = True
        idx = np.where(idx < 0, m, idx)
        direction = dir_u[idx]
        flag(bad_u[idx] & ~void, resolved["direction"], "direction must be cw or ccw")
    accepted = (reason == None) & ~void  # noqa: E711
    void_final = void & (reason == None)  # noqa: E711
    rej_idx = np.flatnonzero(reason != None)  # noqa: E711
    raw_result = cols[resolved["result"]]
    out_rejects = list(rejects)
    if rej_idx.size:
        texts = raw_result.take(pa.array(rej_idx)).to_pylist()
        for i, t in zip(rej_idx.tolist(), texts):
            col = column[i]
            if fieldpos is not None:
                colname = f"field {int(fieldpos[i])}"
            else:
                colname = f"{col} (column {colnum.get(col, '?')})"
            out_rejects.append(RejectedRow(name, int(lines[i]), colname, reason[i], "" if t is None else str(t)[:200]))
    out_rejects.sort(key=lambda r: r.line)

    def textcol(key):
        """(codes, labels) of a text column: codes index labels; None if the column is absent."""
        if key not in resolved:
            return None
        col = pc.utf8_trim_whitespace(pc.fill_null(cols[resolved[key]], ""))
        idx, uniq = _decode(col)
        return idx.astype(np.int64), [("" if u is None else u) for u in uniq]

    return {
        "name": name,
        "rows": int(n + len(rejects)),
        "pos": pos,
        "sym": sym,
        "accepted_mask": accepted,
        "void_mask": void_final,
        "void_count": int(void_final.sum()),
        "rejected": out_rejects,
        "lines": lines,
        "ts": ts,
        "table": textcol("table"),
        "dealer": textcol("dealer"),
        "spin_id": textcol("spin_id"),
        "direction": direction,
        "release": release,
        "notes": notes,
    }


def _merge_codes(items):
    """Concatenate per-file (codes, labels) into global codes and one label list."""
    if len(items) == 1:
        return items[0]
    offsets = np.cumsum([0] + [len(labs) for _, labs in items])
    enc = pc.dictionary_encode(pa.array([lab for _, labs in items for lab in labs], type=pa.string()))
    remap = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    out = [np.where(codes < 0, -1, remap[np.clip(codes, 0, None) + off]) for (codes, _), off in zip(items, offsets)]
    return np.concatenate(out), enc.dictionary.to_pylist()


def _assemble_tables(parts, key, pool, notes) -> dict[str, TableSpins]:
    """Concatenate files, split per table, sort by timestamp, report duplicate spin ids."""
    has = {c: all(pt[c] is not None for pt in parts) for c in ("ts", "table", "dealer", "spin_id", "direction", "release")}
    cat = {}
    for c in ("ts", "direction", "release"):
        if has[c]:
            cat[c] = np.concatenate([pt[c] for pt in parts])
    for c in ("table", "dealer", "spin_id"):
        if has[c]:
            cat[c] = _merge_codes([pt[c] for pt in parts])
    outcome = np.concatenate([pt[key] for pt in parts])
    acc = np.concatenate([pt["accepted_mask"] for pt in parts])
    void = np.concatenate([pt["void_mask"] for pt in parts])
    if has["table"] and not pool:
        tab, tab_labels = cat["table"]
        tab_labels = [t if t != "" else "(no table)" for t in tab_labels]
    else:
        tab, tab_labels = np.zeros(outcome.size, dtype=np.int64), ["(all)"]
        if has["table"] and pool:
            notes.append("tables pooled on request (--pool): tested as one sequence")
    order = np.argsort(tab, kind="stable")
    bounds = np.searchsorted(tab[order], np.arange(len(tab_labels) + 1))
    tables: dict[str, TableSpins] = {}
    for ti, t in enumerate(tab_labels):
        idx = order[bounds[ti] : bounds[ti + 1]]
        idx = idx[acc[idx] | void[idx]]
        if idx.size == 0:
            continue
        tnotes = []
        if has["ts"]:
            tsv = cat["ts"][idx]
            if np.any(np.diff(tsv) < 0):
                idx = idx[np.argsort(tsv, kind="stable")]
                tnotes.append("rows were not in time order; sorted by timestamp")
        keep = idx[acc[idx]]
        ts_ = TableSpins(table=str(t), outcomes=outcome[keep].astype(np.int32), void=int(void[idx].sum()), notes=tnotes)
        if has["release"]:
            ts_.release = cat["release"][keep].astype(np.int32)
        if has["direction"]:
            ts_.direction = cat["direction"][keep]
        if has["dealer"]:
            codes, labels = cat["dealer"]
            used, inv = np.unique(codes[keep], return_inverse=True)
            ts_.dealer = inv.astype(np.int32)
            ts_.dealer_labels = tuple(labels[u] if labels[u] else "(none)" for u in used)
        if has["spin_id"]:
            codes, labels = cat["spin_id"]
            ts_.spin_ids = codes[keep]
            sid = codes[idx]  # void spins carry spin ids too
            cnt = np.bincount(sid, minlength=len(labels)) if sid.size else np.zeros(0, int)
            dup = np.flatnonzero(cnt > 1)
            if dup.size:
                first = ", ".join(labels[d] for d in dup[:5])
                tnotes.append(f"{dup.size} duplicated spin_id(s) (first: {first}); each row is kept and counted")
            try:
                ids = pc.cast(pa.array(labels), pa.int64()).to_numpy(zero_copy_only=False)[np.flatnonzero(cnt)]
                if ids.size > 1:
                    ids.sort()
                    gaps = int(np.sum(np.diff(ids) - 1))
                    if gaps:
                        tnotes.append(f"{gaps} spin_id(s) missing between {ids[0]} and {ids[-1]} (gaps in the sequence)")
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass  # spin ids are not numbers: no gap check
        tables[str(t)] = ts_
    return tables
