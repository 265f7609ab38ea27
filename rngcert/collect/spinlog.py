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
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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
        Table/wheel id: the ``table`` column, the file name without extension when the file has
        no such column, or ``"(all)"`` when tables are pooled.
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
    spin_ids: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)
    line_start: np.ndarray | None = None

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


def _decode(col: pa.Array) -> tuple[np.ndarray, list]:
    """Dictionary-encode a string column: (indices with -1 for null, list of distinct values)."""
    enc = pc.dictionary_encode(col)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    idx = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return idx, enc.dictionary.to_pylist()


def _norm_text(t) -> str | None:
    """Trim spaces and surrounding quotes, lower-case (one distinct value at a time)."""
    if t is None:
        return None
    return t.strip().strip("\"'").strip().lower()


def _decode_norm(col) -> tuple[np.ndarray, list]:
    """Dictionary-encode the raw column, then normalise only its distinct values (fast: the
    per-row work is one hash pass in C++)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
        col = pc.cast(col, pa.string())
    idx, uniq = _decode(col)
    return idx, [_norm_text(u) for u in uniq]


_FLOAT_INT = re.compile(r"^(\d+)\.0*$")
_ID_DTYPE = np.int16  # wheel positions and symbol ids (a wheel has at most 32,767 pockets)


def _resolve_labels(col: pa.Array, wheel: Wheel):
    """Map result tokens to wheel positions and symbol ids, vectorised over distinct tokens.

    Returns
    -------
    pos, sym : (n,) int64, -1 where the token is not a position / symbol
    void : (n,) bool, token is a void marker
    bad : (n,) object array of reason strings or None
    """
    positions, symbols = wheel.token_table()
    idx, uniq = _decode_norm(col)
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
            if mm and (mm.group(1) == "0" or not mm.group(1).startswith("0")):
                t = mm.group(1)  # "7.0" from a spreadsheet export means pocket 7; "00.0" is not read
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
    idx, uniq = _decode_norm(col)
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
    idx, uniq = _decode_norm(col)
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
def detect_format(path: Path, data: bytes) -> str:
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
def _options_iv(fmt: str, columns) -> dict[str, str]:
    """Validate the format name and the column mapping; returns the mapping with lower-case keys."""
    if fmt not in ("auto", "csv", "jsonl", "permanence"):
        raise InputError(f"format {fmt!r} is not one of 'auto', 'csv', 'jsonl', 'permanence'")
    columns = {k.lower(): v for k, v in (columns or {}).items()}
    unknown = sorted(set(columns) - set(KNOWN_COLUMNS))
    if unknown:
        raise InputError(f"--column names {unknown} are not spin-log columns; known: {', '.join(KNOWN_COLUMNS)}")
    return columns


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
    columns = _options_iv(fmt, columns)

    parts = []
    sources = []
    rejected: list[RejectedRow] = []
    notes: list[str] = []
    for p in paths:
        part = _read_file(p, wheel, columns, fmt)
        name, f, blank = part["name"], part["format"], part["blank"]
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


def _read_file(p, wheel, columns, fmt, *, data: bytes | None = None, text_codes: bool = True) -> dict:
    """Read and resolve one file (``data`` instead of reading ``p`` when given).

    CSV files are streamed in record batches (bounded memory, see
    :mod:`rngcert.collect.csvstream`); JSON Lines and permanence lists are read whole.
    """
    p = Path(p)
    if data is None:
        if not p.is_file():
            raise InputError(f"{p}: no such file")
        with open(p, "rb") as fh:
            head = fh.read(4096)
        f = fmt if fmt != "auto" else detect_format(p, head)
        if f == "csv":
            return _read_csv_streaming(p, wheel, columns, text_codes=text_codes)
        data = p.read_bytes()
    name = str(p)
    f = fmt if fmt != "auto" else detect_format(p, data)
    if not data.strip(b"\xef\xbb\xbf \t\r\n"):
        raise NoDataError(f"{name}: the file is empty: no spins to certify")
    fieldpos = None
    if f == "csv":
        return _read_csv_streaming(p, wheel, columns, data=data, text_codes=text_codes)
    if f == "jsonl":
        cols, lines, rej, blank, header = _read_jsonl(data, name)
    else:
        cols, lines, rej, blank, header, fieldpos = _read_permanence(data, name)
    part = _process(cols, lines, rej, name, wheel, columns, fieldpos, header, text_codes=text_codes)
    part["format"] = f
    part["sha256"] = sha256_of(data)
    part["blank"] = blank
    part["size"] = len(data)
    return part


def _read_csv_streaming(p: Path, wheel, columns, *, data: bytes | None = None, text_codes: bool = True) -> dict:
    """Stream a CSV log batch by batch through :func:`_process` and join the parts."""
    from rngcert.collect import csvstream

    name = str(p)
    with csvstream.open_source(p, data) as fh:
        head = fh.read(1 << 16)
        fh.seek(0)
        scan = csvstream.scan_lines(fh)
    encoding = csvstream.detect_encoding(scan, head)
    if encoding == "utf-16":
        raise InputError(f"{name}: the file is UTF-16; save it as UTF-8 (or ASCII) CSV and certify that")
    if scan.size == 0 or not scan.first_line.strip(b" \t\r\n"):
        raise NoDataError(f"{name}: the file is empty: no spins to certify")
    header, _ = csvstream.header_fields(scan, name, encoding)
    parts = []
    with csvstream.open_source(p, data) as fh:
        for cols, lines, bad in csvstream.iter_csv_batches(fh, name, scan, block_size=csvstream.BLOCK_SIZE, encoding=encoding):
            rej = [RejectedRow(name, line, "*", reason, text[:200]) for line, text, reason in bad]
            parts.append(_process(cols, lines, rej, name, wheel, columns, None, header, text_codes=text_codes))
            del cols
            csvstream.release_arrow_memory()
    if not parts:  # header only
        parts.append(_process({h: pa.array([], type=pa.string()) for h in header}, np.zeros(0, np.int64), [], name, wheel, columns, None, header, text_codes=text_codes))
    part = _concat_parts(parts)
    if encoding != "utf-8":
        part["notes"] = list(part["notes"]) + [f"{name}: not valid UTF-8; read as {encoding}"]
    part["format"] = "csv"
    part["sha256"] = scan.sha256
    part["blank"] = int(scan.blank_lines.size)
    part["size"] = scan.size
    return part


def _concat_parts(parts: list[dict]) -> dict:
    """Join the per-batch results of one file, in order."""
    if len(parts) == 1:
        return parts[0]
    out = dict(parts[0])
    out["rows"] = sum(pt["rows"] for pt in parts)
    out["void_count"] = sum(pt["void_count"] for pt in parts)
    out["rejected"] = sorted((r for pt in parts for r in pt["rejected"]), key=lambda r: r.line)
    out["notes"] = [n for pt in parts for n in pt["notes"]]
    for key in ("pos", "sym", "accepted_mask", "void_mask", "lines", "line_no", "ts", "direction", "release"):
        out[key] = None if parts[0].get(key) is None else np.concatenate([pt[key] for pt in parts])
        for pt in parts[1:]:  # free each batch's copy as soon as it is joined (bounded peak memory)
            pt[key] = None
    for key in ("table", "dealer", "spin_id"):
        vals = [pt[key] for pt in parts]
        if vals[0] is None:
            out[key] = None
        elif isinstance(vals[0], (pa.Array, pa.ChunkedArray)):
            out[key] = pa.concat_arrays([v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v for v in vals])
        else:
            out[key] = _merge_codes(vals)
    return out


@dataclass
class SpinRows:
    """Every row of one log file, in file order, for the store (:mod:`rngcert.store`).

    Rows are the readable records of the file (for permanence lists: each number). A row is
    either accepted, void, or rejected (then also listed in ``rejected``); ``line`` gives its
    1-based physical line. Rows the CSV reader could not split into fields (wrong number of
    fields) are not rows here; they are only in ``rejected``.

    Attributes
    ----------
    path, sha256, format : str
        Source file, SHA-256 of its bytes, detected format.
    size : int
        Bytes read.
    line : (n,) int64
        Physical line of each row.
    pos, sym : (n,) int64
        Wheel position / symbol id of the result, -1 where none.
    accepted, void : (n,) bool
        Row status (rejected rows are neither).
    timestamp : (n,) int64 or None
        Microseconds since the epoch, UTC (meaningless where the row is rejected).
    table, dealer, spin_id : pyarrow string Array or None
        The trimmed text of these columns ("" where empty), None when the file has no such column.
    direction : (n,) int8 or None
        0 cw, 1 ccw, -1 unknown.
    release : (n,) int64 or None
        Release position, -1 unknown.
    rejected : list of RejectedRow
    blank_lines : int
    """

    path: str
    sha256: str
    format: str
    size: int
    line: np.ndarray
    pos: np.ndarray
    sym: np.ndarray
    accepted: np.ndarray
    void: np.ndarray
    timestamp: np.ndarray | None
    table: pa.Array | None
    dealer: pa.Array | None
    spin_id: pa.Array | None
    direction: np.ndarray | None
    release: np.ndarray | None
    rejected: list[RejectedRow]
    blank_lines: int

    @property
    def n(self) -> int:
        return int(self.line.size)


def read_spin_rows(
    path: str | Path,
    wheel: Wheel,
    *,
    columns: Mapping[str, str] | None = None,
    fmt: str = "auto",
    data: bytes | None = None,
) -> SpinRows:
    """Read every row of one spin log with its status and line (the arrays :func:`read_spin_log`
    is built on), for the store.

    Parameters
    ----------
    path : path
        The log file (its name is used in rejects; it is read unless ``data`` is given).
    wheel : Wheel
        The wheel the log was recorded on.
    columns, fmt
        As in :func:`read_spin_log`.
    data : bytes, optional
        The file's bytes, when already read (e.g. a tail of a growing log prefixed by its header).

    Returns
    -------
    SpinRows

    Raises
    ------
    InputError
        Unknown format, missing ``result`` column, a mapped column that is not in the file.
    NoDataError
        The file is empty. (A file whose rows are all rejected is returned, not raised.)
    """
    columns = _options_iv(fmt, columns)
    pt = _read_file(path, wheel, columns, fmt, data=data, text_codes=False)
    return SpinRows(
        path=pt["name"],
        sha256=pt["sha256"],
        format=pt["format"],
        size=pt["size"],
        line=np.asarray(pt["lines"], dtype=np.int64),
        pos=pt["pos"],
        sym=pt["sym"],
        accepted=pt["accepted_mask"],
        void=pt["void_mask"],
        timestamp=pt["ts"],
        table=pt["table"],
        dealer=pt["dealer"],
        spin_id=pt["spin_id"],
        direction=pt["direction"],
        release=pt["release"],
        rejected=pt["rejected"],
        blank_lines=pt["blank"],
    )


def _process(cols, lines, rejects, name, wheel, mapping, fieldpos, header, text_codes: bool = True) -> dict:
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

    pos, sym, void_tok, bad = _resolve_labels(cols[resolved["result"]], wheel)
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
        rcol = cols[resolved["release_pocket"]]
        rpos, _, _, rbad = _resolve_labels(rcol, wheel)
        ridx, runiq = _decode_norm(rcol)
        empty = np.array([u in ("", None) for u in runiq] + [True])[np.where(ridx < 0, len(runiq), ridx)]
        flag((rpos < 0) & ~empty & ~void, resolved["release_pocket"], "release_pocket is not a pocket of this wheel")
        release = np.where(empty, -1, rpos)
    direction = None
    if "direction" in resolved:
        idx, uniq = _decode_norm(cols[resolved["direction"]])
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
    out_rejects = list(rejects)
    if rej_idx.size:
        # the text of the cell that was wrong (not always the result)
        texts = [None] * rej_idx.size
        rej_cols = column[rej_idx]
        for colname in set(rej_cols.tolist()):
            where = np.flatnonzero(rej_cols == colname)
            vals = cols[colname].take(pa.array(rej_idx[where])).to_pylist()
            for w, v in zip(where.tolist(), vals):
                texts[w] = v
        for i, t in zip(rej_idx.tolist(), texts):
            col = column[i]
            if fieldpos is not None:
                colname = f"field {int(fieldpos[i])}"
            else:
                colname = f"{col} (column {colnum.get(col, '?')})"
            out_rejects.append(RejectedRow(name, int(lines[i]), colname, reason[i], "" if t is None else str(t)[:200]))
    out_rejects.sort(key=lambda r: r.line)

    def textcol(key):
        """(codes, labels) of a text column: codes index labels; None if the column is absent.
        Whole-number spin ids come back as :class:`IntIds` (no Python object per row)."""
        if key not in resolved:
            return None
        col = pc.utf8_trim_whitespace(pc.fill_null(cols[resolved[key]], ""))
        if not text_codes:
            return col
        if key == "spin_id":
            try:
                return IntIds(pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        idx, uniq = _decode(col)
        return idx.astype(np.int32), [("" if u is None else u) for u in uniq]

    return {
        "name": name,
        "rows": int(n + len(rejects)),
        "pos": pos.astype(_ID_DTYPE),  # compact dtypes: a 10 M-spin log must fit in memory
        "sym": sym.astype(_ID_DTYPE),
        "accepted_mask": accepted,
        "void_mask": void_final,
        "void_count": int(void_final.sum()),
        "rejected": out_rejects,
        "lines": lines if not text_codes else None,  # per-row lines only for the store; rejects carry theirs
        # permanence lists hold many spins per line: the line of each spin, for the data-integrity checks
        "line_no": np.asarray(lines, dtype=np.int64) if fieldpos is not None else None,
        "ts": ts,
        "table": textcol("table"),
        "dealer": textcol("dealer"),
        "spin_id": textcol("spin_id"),
        "direction": direction,
        "release": None if release is None else release.astype(np.int32),
        "notes": notes,
    }


@dataclass
class IntIds:
    """Whole-number spin ids of a file (kept as int64, not as text codes)."""

    values: np.ndarray

    def as_codes(self):
        uniq, inv = np.unique(self.values, return_inverse=True)
        return inv.astype(np.int64), [str(u) for u in uniq]


def _merge_codes(items):
    """Concatenate per-file (codes, labels) into global codes and one label list."""
    if all(isinstance(it, IntIds) for it in items):
        return IntIds(np.concatenate([it.values for it in items]))
    items = [it.as_codes() if isinstance(it, IntIds) else it for it in items]
    if len(items) == 1:
        return items[0]
    offsets = np.cumsum([0] + [len(labs) for _, labs in items])
    enc = pc.dictionary_encode(pa.array([lab for _, labs in items for lab in labs], type=pa.string()))
    remap = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    out = [np.where(codes < 0, -1, remap[np.clip(codes, 0, None) + off]) for (codes, _), off in zip(items, offsets)]
    return np.concatenate(out), enc.dictionary.to_pylist()


def _assemble_tables(parts, key, pool, notes) -> dict[str, TableSpins]:
    """Concatenate files, split per table, sort by timestamp, report duplicate spin ids."""
    # a file without a table column is one table, named after the file (as the store names it)
    parts = [dict(pt) for pt in parts]
    for pt in parts:
        if pt["table"] is None:
            pt["table"] = (np.zeros(pt["pos"].size, dtype=np.int32), [Path(pt["name"]).stem])
    has = {c: all(pt.get(c) is not None for pt in parts) for c in ("ts", "table", "dealer", "spin_id", "direction", "release", "line_no")}
    cat = {}
    def joined(key):  # no copy for a single file
        return parts[0][key] if len(parts) == 1 else np.concatenate([pt[key] for pt in parts])

    for c in ("ts", "direction", "release", "line_no"):
        if has[c]:
            cat[c] = joined(c)
    for c in ("table", "dealer", "spin_id"):
        if has[c]:
            cat[c] = _merge_codes([pt[c] for pt in parts])
    outcome = joined(key)
    acc = joined("accepted_mask")
    void = joined("void_mask")
    if has["table"] and not pool:
        tab, tab_labels = cat["table"]
        tab_labels = [t if t != "" else "(no table)" for t in tab_labels]
    else:
        tab, tab_labels = np.zeros(outcome.size, dtype=np.int64), ["(all)"]
        if pool and (len(parts) > 1 or len(cat["table"][1]) > 1):
            notes.append("tables pooled on request (--pool): tested as one sequence")
    if len(tab_labels) == 1:  # one table: no sort needed
        order, bounds = None, (0, tab.size)
    else:
        order = np.argsort(tab, kind="stable")
        bounds = np.searchsorted(tab[order], np.arange(len(tab_labels) + 1))
    tables: dict[str, TableSpins] = {}
    for ti, t in enumerate(tab_labels):
        idx = np.flatnonzero(acc | void) if order is None else order[bounds[ti] : bounds[ti + 1]]
        if order is not None:
            idx = idx[acc[idx] | void[idx]]
        if idx.size == 0:
            continue
        tnotes = []
        if has["ts"]:
            tsv = cat["ts"][idx]
            if np.any(tsv[1:] < tsv[:-1]):
                idx = idx[np.argsort(tsv, kind="stable")]
                tnotes.append("rows were not in time order; sorted by timestamp")
            del tsv
        keep = idx[acc[idx]]
        ts_ = TableSpins(table=str(t), outcomes=outcome[keep].astype(np.int32), void=int(void[idx].sum()), notes=tnotes)
        if has["release"]:
            ts_.release = cat["release"][keep].astype(np.int32)
        if has["line_no"] and keep.size:
            ln = cat["line_no"][keep]
            ts_.line_start = np.r_[True, ln[1:] != ln[:-1]]
        if has["direction"]:
            ts_.direction = cat["direction"][keep]
        if has["dealer"]:
            codes, labels = cat["dealer"]
            sel = codes[keep]
            used = np.flatnonzero(np.bincount(sel, minlength=len(labels))) if sel.size else np.zeros(0, np.int64)
            lookup = np.zeros(len(labels), dtype=np.int32)
            lookup[used] = np.arange(used.size, dtype=np.int32)
            ts_.dealer = lookup[sel]
            ts_.dealer_labels = tuple(labels[u] if labels[u] else "(none)" for u in used)
        if has["spin_id"] and isinstance(cat["spin_id"], IntIds):
            vals = cat["spin_id"].values
            ts_.spin_ids = vals[keep]
            srt = np.sort(vals[idx])  # void spins carry spin ids too
            same = srt[1:] == srt[:-1]
            dup = np.unique(srt[1:][same])
            n_unique = int(srt.size - np.count_nonzero(same))
            lo_id, hi_id = (int(srt[0]), int(srt[-1])) if srt.size else (0, 0)
            del srt, same
            if dup.size:
                first = ", ".join(str(d) for d in dup[:5])
                tnotes.append(f"{dup.size} duplicated spin_id(s) (first: {first}); each row is kept and counted")
            gaps = (hi_id - lo_id + 1 - n_unique) if n_unique > 1 else 0
            if gaps:
                tnotes.append(f"{gaps} spin_id(s) missing between {lo_id} and {hi_id} (gaps in the sequence)")
        elif has["spin_id"]:
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
