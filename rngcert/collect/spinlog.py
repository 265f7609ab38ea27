"""Spin-log collector: wheel-controller and surveillance exports, and casino permanence lists.

Reads a log into per-table outcome sequences for a given wheel (DESIGN §3 "Spin log"):

* CSV with a header (``.csv``, ``.tsv``; UTF-8 with or without BOM; LF or CRLF), columns matched
  case-insensitively; ``result`` is required, ``spin_id``, ``timestamp``, ``table``, ``dealer``,
  ``direction``, ``release_pocket``, ``revolutions``, ``void``, ``rotor_speed`` (the wheel head's
  speed at the ball's launch, in the log's own unit), ``ball_direction`` (cw/ccw) and
  ``result_source`` (which device read the result: see :data:`PRIMARY_SOURCES`) are optional. Foreign names are
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

from rngcert.collect import _arrow
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
    rejected: list[RejectedRow]
    notes: list[str] = field(default_factory=list)
    #: (first, last) timestamp of the accepted and void spins, microseconds since the epoch (UTC),
    #: or None when the log has no timestamps
    period: tuple[int, int] | None = None

    @property
    def accepted(self) -> int:
        return sum(s.accepted for s in self.sources)

    @property
    def void(self) -> int:
        return sum(s.void for s in self.sources)


# ---------------------------------------------------------------------------- helpers
def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _as_text(col) -> pa.Array:
    """The column as one pyarrow string array, whatever type the parser gave it (readers type
    every column as text; this keeps each normalisation correct if one ever does not)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = pc.cast(col, pa.string())
    return col


def _decode(col: pa.Array) -> tuple[np.ndarray, list]:
    """Dictionary-encode a string column: ((n,) int32 indices into the list of distinct values,
    that list). A null has the index ``len(list)``: a lookup table of one more slot than the
    list (the last for null) is indexed directly."""
    enc = pc.dictionary_encode(col)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    uniq = enc.dictionary.to_pylist()
    return _arrow.ints(enc.indices, fill=len(uniq)), uniq


def _norm_text(t) -> str | None:
    """Trim spaces and surrounding quotes, lower-case (one distinct value at a time)."""
    if t is None:
        return None
    return t.strip().strip("\"'").strip().lower()


def _decode_norm(col) -> tuple[np.ndarray, list]:
    """Dictionary-encode the raw column, then normalise only its distinct values (fast: the
    per-row work is one hash pass in C++)."""
    idx, uniq = _decode(_as_text(col))
    return idx, [_norm_text(u) for u in uniq]


def _clean_text(col: pa.Array) -> pa.Array:
    """A text column as compared and stored: surrounding white space trimmed, and a cell that
    rngcert wrote with the spreadsheet-safe quote (``'=A1``, see :mod:`rngcert.collect.csvsafe`)
    read as written before."""
    col = pc.utf8_trim_whitespace(col)
    if len(col) and pc.any(pc.starts_with(col, "'")).as_py():
        col = pc.replace_substring_regex(col, r"^'([=+\-@\t\r'])", r"\1")
    return col


_NUMBER = re.compile(r"^(\d+)(?:[.,]0*)?$")  # 7.0 and, with a decimal comma, 7,0


def _pocket_number(tok: str, positions: Mapping[str, int], symbols: Mapping[str, int]) -> str:
    """The label a numeric token means when the wheel has no such label itself: ``7.0`` (a
    spreadsheet export) and ``05`` / ``007`` (zero-padded) mean pocket 7 / 5 / 7. A token of
    zeros only (``00``, ``000``, ``00.0``) is never read as ``0``: ``00`` is the American double
    zero, a pocket of its own, and on a wheel without it it is rejected, not taken for 0."""
    if tok in positions or tok in symbols:
        return tok
    mm = _NUMBER.match(tok)
    if not mm:
        return tok
    digits = mm.group(1)
    if digits.strip("0") == "":
        return "0" if digits == "0" else tok
    return digits.lstrip("0")
_ID_DTYPE = np.int16  # wheel positions and symbol ids (a wheel has at most 32,767 pockets)


def _resolve_labels(col: pa.Array, wheel: Wheel):
    """Map result tokens to wheel positions and symbol ids, vectorised over distinct tokens.

    Returns
    -------
    pos, sym : (n,) int16, -1 where the token is not a position / symbol
    void : (n,) bool, token is a void marker
    bad : (n,) int32, index into ``reasons`` of why the token is not read, -1 where it is
    reasons : list of str
    empty : (n,) bool, the cell is empty (or null)
    """
    positions, symbols = wheel.token_table()
    idx, raw = _decode(_as_text(col))
    uniq = [_norm_text(u) for u in raw]  # (the reason quotes the cell as written, not as normalised)
    m = len(uniq)
    pos_u = np.full(m + 1, -1, dtype=_ID_DTYPE)  # last slot: null
    sym_u = np.full(m + 1, -1, dtype=_ID_DTYPE)
    void_u = np.zeros(m + 1, dtype=bool)
    empty_u = np.zeros(m + 1, dtype=bool)
    bad_u = np.full(m + 1, -1, dtype=np.int32)
    reasons = ["empty result"]
    bad_u[m], empty_u[m] = 0, True  # a null cell: empty (a null result is "empty result")
    for j, tok in enumerate(uniq):
        if tok is None or tok == "":
            bad_u[j] = 0
            empty_u[j] = True
            continue
        t = _pocket_number(tok, positions, symbols)
        if t in positions:
            pos_u[j] = positions[t]
            if wheel.kind != "roulette":
                sym_u[j] = wheel.symbol_of_position()[positions[t]]
        elif t in symbols:
            sym_u[j] = symbols[t]
        elif t in VOID_TOKENS:
            void_u[j] = True
        else:
            bad_u[j] = len(reasons)
            reasons.append(f"{str(raw[j]).strip()[:60]!r} is not a pocket/section of wheel {wheel.id!r}")
    return pos_u[idx], sym_u[idx], void_u[idx], bad_u[idx], reasons, empty_u[idx]


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
        if "," in t and re.fullmatch(r"\d+,\d+", t) and not re.fullmatch(r"\d{1,3},\d{3}", t):
            t = t.replace(",", ".")  # a decimal comma (3,5); 1,000 could be a thousands separator and stays unread
        try:
            val[j] = float(t)
            if not np.isfinite(val[j]):
                bad[j] = True
        except ValueError:
            bad[j] = True
    return val[idx], bad[idx]


def _directions(col) -> tuple[np.ndarray, np.ndarray]:
    """Parse a direction column (cw/ccw and their synonyms): (int8 values, 0 cw, 1 ccw, -1
    empty; bad mask)."""
    idx, uniq = _decode_norm(col)
    m = len(uniq)
    dir_u = np.full(m + 1, -1, dtype=np.int8)  # last slot: null
    bad_u = np.zeros(m + 1, dtype=bool)
    for j, t in enumerate(uniq):  # loop over the distinct values
        if t in _DIRECTIONS:
            dir_u[j] = _DIRECTIONS[t]
        elif t not in ("", None):
            bad_u[j] = True
    return dir_u[idx], bad_u[idx]


def _speeds(col) -> tuple[np.ndarray, np.ndarray]:
    """Parse a rotor-speed column: (float64 values, NaN where empty; bad mask: not a finite
    non-negative number). Cast in C++ when every cell is a number or empty."""
    text = pc.utf8_trim_whitespace(_as_text(col))
    try:
        val = np.asarray(pc.cast(pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text), pa.float64()).to_numpy(zero_copy_only=False), dtype=float)
        bad = np.zeros(val.size, dtype=bool)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        val, bad = _numbers(col)
    with np.errstate(invalid="ignore"):
        bad |= ~np.isnan(val) & ~(np.isfinite(val) & (val >= 0))
    return val, bad


def _timestamps(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Parse ISO 8601 timestamps to int64 microseconds since the epoch (UTC; a timestamp
    without zone is taken as UTC). Returns (values, bad mask); empty cells are bad too."""
    col = _as_text(col)
    if not col.null_count:  # the usual log: every cell as written parses (then trimming would change nothing)
        try:
            return _arrow.ints(pc.cast(col, pa.timestamp("us", tz="UTC")).cast(pa.int64())), np.zeros(len(col), dtype=bool)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    col = pc.utf8_trim(pc.utf8_trim_whitespace(col), characters="\"'")
    for typ in (pa.timestamp("us", tz="UTC"), pa.timestamp("us")):
        try:
            ts = pc.cast(col, typ)
            vals = _arrow.ints(ts.cast(pa.int64()), fill=np.iinfo(np.int64).min)
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
    return val[idx], bad[idx]


def timestamp_kinds(col, ok: np.ndarray) -> dict:
    """What the readable timestamps of a column are (vectorised; cheap string kernels only).

    Returns
    -------
    dict
        ``zoneless``: rows with a time of day but no zone (read as UTC); ``dateonly``: rows with a
        date and no time (``2026-10-25``); ``zoned``: rows with ``Z`` or an offset; ``offsets``:
        the distinct offsets written (``"+02:00"``, ``"Z"``); ``example_zoneless``,
        ``example_dateonly``: one cell of each, as written.
    """
    col = _as_text(col)
    okm = np.asarray(ok, dtype=bool)
    fast = _byte_view(col)
    if fast is not None:  # bytes of the cells, read in place (timestamps are ASCII): a few numpy lookups a row
        starts, ends, data = fast
        n_len = ends - starts

        byte_at: dict[int, np.ndarray] = {}

        def at(k, chars):
            if not data.size:
                return np.zeros(n_len.size, bool)
            if k not in byte_at:  # the k-th byte from the end of every cell (one gather, kept for other sets)
                byte_at[k] = data.take(ends - k, mode="clip")
            lut = np.zeros(256, dtype=bool)
            lut[list(chars)] = True
            hit = lut[byte_at[k]]
            return hit if k == 1 else hit & (n_len >= k)

        if data.size:
            edge = np.zeros(256, dtype=bool)
            edge[list(b" \t\r\"'")] = True
            if np.any(at(1, b" \t\r\"'") & okm) or np.any(edge[data.take(starts, mode="clip")] & (n_len > 0) & okm):
                fast = None  # cells with spaces or quotes around them: trimmed below
    if fast is None:
        col = pc.utf8_trim(pc.utf8_trim_whitespace(col), characters="\"'")
        n_len = _arrow.ints(pc.utf8_length(col), fill=0)

        def at(k, chars):
            return _arrow.bools(pc.is_in(pc.utf8_slice_codeunits(col, -k, -k + 1 if k > 1 else None), value_set=pa.array(list(chars.decode()))))

    dateonly = okm & (n_len == 10)
    z = at(1, b"Zz") if len(col) else np.zeros(0, bool)
    off6 = at(6, b"+-") if len(col) else np.zeros(0, bool)  # +hh:mm
    zoned = okm & ~dateonly & (z | off6)
    rest = okm & ~dateonly & ~zoned
    short: list[tuple[np.ndarray, int]] = []
    if rest.any():  # +hhmm, +hh (rare spellings of an offset)
        o5, o3 = rest & at(5, b"+-"), rest & at(3, b"+-")
        zoned |= o5 | o3
        short = [(o5, 5), (o3 & ~o5, 3)]
    zoneless = okm & ~dateonly & ~zoned
    offsets: set[str] = set()
    if zoned.any():
        if (zoned & z).any():
            offsets.add("Z")
        for sel, k in [(zoned & off6 & ~z, 6)] + short:
            if sel.any():
                offsets.update(pc.unique(pc.utf8_slice_codeunits(col.filter(_arrow.mask(sel)), -k)).to_pylist())

    def first(mask):
        i = np.flatnonzero(mask)
        return str(col[int(i[0])].as_py()) if i.size else ""

    return {"zoneless": int(zoneless.sum()), "dateonly": int(dateonly.sum()), "zoned": int(zoned.sum()), "offsets": offsets,
            "example_zoneless": first(zoneless), "example_dateonly": first(dateonly)}


def _byte_view(col: pa.Array):
    """(starts, ends, data) of a string array's cells as byte offsets into its data buffer, or None
    (a large-string or sliced array: the caller uses the string kernels)."""
    if not pa.types.is_string(col.type) or len(col) == 0:
        return None
    bufs = col.buffers()
    if len(bufs) < 3 or bufs[1] is None:
        return None
    offs = np.frombuffer(bufs[1], dtype=np.int32)[col.offset : col.offset + len(col) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return offs[:-1], offs[1:], data


def _join_kinds(items) -> dict | None:
    """The :func:`timestamp_kinds` of a file's batches, joined."""
    items = [k for k in items if k]
    if not items:
        return None
    out = {"zoneless": 0, "dateonly": 0, "zoned": 0, "offsets": set(), "example_zoneless": "", "example_dateonly": ""}
    for k in items:
        for key in ("zoneless", "dateonly", "zoned"):
            out[key] += k[key]
        out["offsets"] |= k["offsets"]
        for key in ("example_zoneless", "example_dateonly"):
            out[key] = out[key] or k[key]
    return out


def timestamp_notes(name: str, kinds: dict | None) -> list[str]:
    """Notes naming zone-less and date-only timestamps, and mixed zones, of one file."""
    if not kinds:
        return []
    out = []
    if kinds["zoneless"]:
        out.append(f"{name}: {kinds['zoneless']:,} timestamp(s) have no time zone (e.g. {kinds['example_zoneless']!r}): read as UTC; "
                   "local times repeat an hour when daylight-saving time ends")
    if kinds["dateonly"]:
        out.append(f"{name}: {kinds['dateonly']:,} timestamp(s) are a date only (e.g. {kinds['example_dateonly']!r}): they order spins "
                   "by day, not within a day")
    if len(kinds["offsets"]) > 1 or (kinds["offsets"] and kinds["zoneless"]):
        zones = sorted(kinds["offsets"]) + (["no zone"] if kinds["zoneless"] else [])
        out.append(f"{name}: timestamps in mixed time zones ({', '.join(zones)}): all converted to UTC")
    return out


# ---------------------------------------------------------------------------- readers
def detect_format(path: Path, data: bytes) -> str:
    suf = path.suffix.lower()
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"*", b"[") or b"\n*" in data[:4096] or b"\n[" in data[:4096]:
        from rngcert.collect.protocol import sniff  # a wheel controller's capture

        proto = sniff(data[: 1 << 15])
        if proto is not None:
            return proto
    if suf in (".jsonl", ".ndjson"):
        return "jsonl"
    head = data[:4096].lstrip(b"\xef\xbb\xbf").lstrip()
    first = head.split(b"\n", 1)[0]
    if first.startswith((b"{", b"[")):  # (a JSON array is named as such by the JSON Lines reader)
        return "jsonl"
    from rngcert.collect.feed import detect_feed

    fd = detect_feed(data)
    if fd is not None:  # a live result feed described by a packaged definition
        return "feed:" + fd.id
    if re.search(rb"[A-Za-z_]", first) and suf not in (".csv", ".tsv") and _numbers_under_a_title(head):
        return "permanence"  # a titled permanence list without its .txt name (standard input, .dat): c20's kind
    if re.search(rb"[A-Za-z_]", first) and suf != ".txt":
        return "csv"
    if suf in (".csv", ".tsv") and re.search(rb"[A-Za-z_]", first):
        return "csv"
    return "permanence"


def _numbers_under_a_title(head: bytes) -> bool:
    """True when the first line is a title (words, no CSV delimiter) and every following line of the
    head (at least 3) holds two or more whole numbers and nothing else: a permanence list, which a
    CSV header of one column over rows of many fields cannot be."""
    lines = [ln.strip() for ln in head.splitlines()]
    if not lines or re.search(rb"[,;\t]", lines[0]):
        return False
    body = [ln for ln in lines[1:-1] if ln]  # the last line of the head may be cut
    return len(body) >= 3 and all(re.fullmatch(rb"\d+(?:[ ,;\t]+\d+)+[ ,;\t]*", ln) for ln in body)


class _DuplicateKey(ValueError):
    """A JSON object names a key twice (which value is meant cannot be known)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs):
    """``object_pairs_hook`` of :func:`json.loads` that refuses an object naming a key twice."""
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise _DuplicateKey(k)
        seen[k] = v
    return seen


def json_array_error(name: str) -> InputError:
    """The error for a JSON array given where JSON Lines are read (says what it is and the fix)."""
    stem = Path(name).stem or "log"
    return InputError(
        f"{name}: a JSON array, not JSON Lines (one object per line): convert it with  jq -c '.[]' {name} > {stem}.jsonl  and certify that"
    )


def _text_of(data: bytes) -> tuple[str, str]:
    """The text of a whole-file log and its encoding: UTF-8 (with or without BOM), else Latin-1
    (every byte is a character there: nothing is replaced), as the CSV reader decides."""
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _read_jsonl(data: bytes, name: str):
    text, _ = _text_of(data)
    if text.lstrip().startswith("["):
        raise json_array_error(name)
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
            obj = json.loads(line, object_pairs_hook=_no_duplicate_keys)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
        except _DuplicateKey as exc:
            rejects.append(RejectedRow(name, i, exc.key, f"ambiguous: {exc.key!r} given twice in one object (which value is meant cannot be known; "
                                       "as a CSV header naming a column twice is refused): neither value is used", line[:200]))
            continue
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


def _read_permanence(data: bytes, name: str, wheel: Wheel | None = None, encoding: str | None = None):
    text = _text_of(data)[0] if encoding is None else data.decode(encoding)  # (given: the whole file's, for some of its lines)
    raw = text.encode("utf-8")
    # one string per line, each keeping its newline (trimmed with the other whitespace below)
    nl = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 0x0A)
    lines_arr = _arrow.strings(np.concatenate([[0], nl + 1, [len(raw)]]), raw)
    lines_arr = pc.utf8_trim_whitespace(lines_arr)
    blank = _arrow.ints(pc.utf8_length(lines_arr)) == 0
    if text.endswith("\n"):
        blank = blank[:-1]
    tokens = pc.split_pattern_regex(lines_arr, r"[,;\s]+")
    parent = _arrow.ints(pc.list_parent_indices(tokens)).astype(np.int64)
    flat = pc.list_flatten(tokens)
    nonempty = _arrow.ints(pc.utf8_length(flat)) > 0
    flat = flat.filter(_arrow.mask(nonempty))
    parent = parent[nonempty]
    rejects: list[RejectedRow] = []
    if wheel is not None and parent.size:
        # a line that is mostly words is a title ("Spielbank Tisch 1 19.04.2026"), not spins (c20):
        # rejected whole with its line, and none of its numbers taken as a spin
        title = _title_lines(flat, parent, wheel, len(lines_arr))
        if title.any():
            for ln in np.flatnonzero(title).tolist():
                rejects.append(RejectedRow(name, ln + 1, "line", "a title or text line (mostly words, not results): rejected whole, no spin taken from it",
                                           str(lines_arr[ln].as_py())[:200]))
            keep = ~title[parent]
            flat = flat.filter(_arrow.mask(keep))
            parent = parent[keep]
    # field number within the line (1-based), vectorised
    first = np.r_[True, parent[1:] != parent[:-1]] if parent.size else np.zeros(0, bool)
    grp_start = np.flatnonzero(first)
    pos_in_line = np.arange(parent.size) - np.repeat(grp_start, np.diff(np.r_[grp_start, parent.size]))
    return {"result": flat}, parent + 1, rejects, int(blank.sum()), ["result"], pos_in_line + 1


def _title_lines(flat: pa.Array, parent: np.ndarray, wheel: Wheel, n_lines: int) -> np.ndarray:
    """(n_lines,) bool: lines of a permanence list that are titles or text: at least half of their
    tokens are not results the wheel reads (a number, a label, an alias, a void word) and one of
    them has a letter. A line of numbers with one stray word keeps its numbers (the word alone is
    rejected)."""
    numeric = _arrow.bools(pc.match_substring_regex(flat, r"^\d+([.,]0+)?$"))
    bad = ~numeric
    letter = np.zeros(parent.size, dtype=bool)
    if bad.any():
        rows = np.flatnonzero(bad)
        other = flat.take(pa.array(rows))
        idx, uniq = _decode(other)
        positions, symbols = wheel.token_table()
        ok_u = np.array([_norm_text(u) in positions or _norm_text(u) in symbols or _norm_text(u) in VOID_TOKENS for u in uniq] + [False])
        let_u = np.array([bool(re.search(r"[^\W\d_]", u or "")) for u in uniq] + [False])
        bad[rows] = ~ok_u[idx]
        letter[rows] = let_u[idx]
    n_tok = np.bincount(parent, minlength=n_lines)
    n_bad = np.bincount(parent, weights=bad, minlength=n_lines)
    n_let = np.bincount(parent, weights=letter, minlength=n_lines)
    return (n_let > 0) & (2 * n_bad >= n_tok) & (n_tok > 0)


def _capture_format(fmt: str) -> str:
    """A wheel controller's capture format (``protocol``, ``protocol:NAME``, ``protocol:FILE.toml``)
    checked here (an unknown or invalid protocol is an :class:`EquipmentError`) and passed on to the
    other format checks as ``auto``; any other format unchanged."""
    if fmt == "protocol" or fmt.startswith("protocol:"):
        from rngcert.collect import protocol

        protocol.resolve(fmt)
        return "auto"
    return fmt


def _read_capture(data: bytes, name: str, fmt: str, wheel, columns, text_codes: bool) -> dict:
    """Read a wheel controller's capture (:mod:`rngcert.collect.protocol`): one row per game, as the
    CSV reader gives rows (result, spin_id, void, direction, rotor_speed, timestamp), with the
    capture's rejected lines and notes (void games by reason, assumed units)."""
    from rngcert.collect import protocol

    proto = protocol.resolve(fmt)
    cols, lines, rej, blank, header, pnotes = protocol.read_capture(data, name, proto)
    rej = [RejectedRow(name, r.line, r.column, r.reason, r.text) for r in rej]
    part = _process(cols, lines, rej, name, wheel, columns, None, header, text_codes=text_codes)
    part.update(format=f"protocol:{proto.name}", sha256=sha256_of(data), blank=blank, size=len(data), rows=int(len(lines) + len(rej)))
    part["notes"] = pnotes + list(part["notes"])
    return part


# ---------------------------------------------------------------------------- main entry
def _options_iv(fmt: str, columns) -> dict[str, str]:
    """Validate the format name and the column mapping; returns the mapping with lower-case keys."""
    if fmt.startswith("feed:"):  # a live result feed: a packaged id or a lab's own definition file
        from rngcert.collect.feed import load_feed

        load_feed(fmt[5:])
    elif fmt not in ("auto", "csv", "jsonl", "permanence"):
        raise InputError(f"format {fmt!r} is not one of 'auto', 'csv', 'jsonl', 'permanence', 'feed:ID-or-TOML'")
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
    min_round_interval: float = 0.0,
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
    fmt : {"auto", "csv", "jsonl", "permanence"} or "feed:ID-or-TOML"
        File format; "auto" detects from the extension and first line (and the packaged live
        result feeds, :mod:`rngcert.collect.feed`, from their ``detect`` pattern); ``feed:`` names a
        packaged feed or a feed definition file.
    pool : bool
        Pool all tables into one sequence (default: one sequence per ``table``).
    min_round_interval : float
        Seconds: two rows of a table with the same result (and the same ``payout`` and
        ``multiplier`` where the log has them) closer in time than this are one round logged
        twice (a scraper's double read): counted once, the later row rejected, and the pairs
        reported as a data-integrity finding (:data:`NEAR_DUPLICATE_RULE`). 0 (the default
        here; ``certify`` uses 5 s) turns the check off.

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
    columns = _options_iv(_capture_format(fmt), columns)
    streams: dict[str, bytes] = {}  # pipes and FIFOs are read once, whichever path reads them
    paths = [_stdin_path(p, streams) for p in paths]
    try:
        return _read_spin_log_compact(paths, wheel, columns, fmt, pool, streams, min_round_interval)
    except _NeedExact:
        pass  # not the usual shape: the exact path below reads the log again, keeping every row's keys

    parts = []
    sources = []
    rejected: list[RejectedRow] = []
    notes: list[str] = []
    for p in paths:
        part = _read_file(p, wheel, columns, fmt, data=streams.get(str(p)))
        _check_readable(part, int(part["accepted_mask"].sum()))
        parts.append(part)
    comparisons = _split_sources(parts, wheel)
    repeat_notes = _mark_repeats(parts, wheel)
    near = _mark_near_duplicates(parts, wheel, min_round_interval, pool)
    for part in parts:
        rejected.extend(part["rejected"])
        notes.extend(part["notes"])
        sources.append(
            _source_info(part, int(part["accepted_mask"].sum()))
        )
    if not any(pt["accepted_mask"].any() or pt["void_mask"].any() for pt in parts):
        first = next(r for pt in parts for r in pt["rejected"])
        raise NoDataError(f"no readable spin in {', '.join(pt['name'] for pt in parts)}: every row is rejected (first: {first.file}:{first.line}: {first.reason})")

    # Level: positions if every accepted result resolved to a position.
    all_pos = all(np.all(pt["pos"][pt["accepted_mask"]] >= 0) for pt in parts)
    if wheel.kind == "roulette" or (wheel.order_known and all_pos):
        level, space, key = "position", wheel.position_space(), "pos"
    else:
        level, space, key = "symbol", wheel.symbol_space(), "sym"
        if wheel.order_known:
            notes.append("results are symbols, not section numbers: tests that need the wheel order do not apply")
    tables = _assemble_tables(parts, key, pool, notes, repeat_notes)
    for pt, comp_of in zip(parts, comparisons):
        pt.setdefault("source_comparison", {})
        for tname, comp in comp_of.items():
            pt["source_comparison"].setdefault(tname, []).extend(comp)
    for pt in parts:
        for tname, comp in (pt.get("source_comparison") or {}).items():
            target = tables.get(tname) or (tables.get("(all)") if pool else None)
            if target is not None:
                target.source_comparison.extend(comp)
    for tname, f in near.items():
        if tname in tables:
            if f.get("note_only"):  # the check could not be applied: a note, not a finding
                tables[tname].notes.append(f["text"])
            else:
                tables[tname].findings.append(f)
    period = None
    for pt in parts:
        if pt.get("ts") is not None:
            live = pt["accepted_mask"] | pt["void_mask"]
            if live.any():
                period = _span(period, pt["ts"][live])
    return SpinLog(wheel, level, space, tables, sources, rejected, notes, period)


#: The name standard input (a path of ``-``) has in reports and rejects.
STDIN_NAME = "(standard input)"


def _stdin_path(p, streams: dict[str, bytes]):
    """``-`` (the Unix convention for standard input): read standard input once into ``streams``
    and name it :data:`STDIN_NAME`; any other path is returned as it is."""
    if str(p) != "-":
        return p
    if STDIN_NAME not in streams:
        import sys

        src = getattr(sys.stdin, "buffer", None)
        streams[STDIN_NAME] = src.read() if src is not None else sys.stdin.read().encode("utf-8")
    return Path(STDIN_NAME)


def _span(period: tuple[int, int] | None, ts: np.ndarray) -> tuple[int, int]:
    """``period`` widened to the (non-empty) timestamps ``ts`` (int64 microseconds)."""
    lo, hi = int(ts.min()), int(ts.max())
    return (lo, hi) if period is None else (min(period[0], lo), max(period[1], hi))


#: How the reason of a row rejected as an exact copy of an earlier row begins (see _mark_repeats).
DUPLICATE_REASON = "exact duplicate of"


#: How the reason of a row rejected as a near-duplicate round begins (see _mark_near_duplicates).
NEAR_DUPLICATE_REASON = "near-duplicate of"

#: The rule of the near-duplicate check, as the report states it.
NEAR_DUPLICATE_RULE = (
    "Near-duplicate rounds: two rows of one table with the same result (and the same payout and multiplier, where the log "
    "has those columns) closer in time than the minimum round interval are one round logged twice: counted once, the later "
    "row rejected as a near-duplicate. A round id shared by rows with different results is not a duplicate (a money wheel's "
    "bonus re-spin is a spin of its own); rows with the same spin_id and result are exact duplicates."
)
#: Near-duplicates covering at least this share of a table's rows make its verdict INCONCLUSIVE (the
#: process that logged rounds twice may also have lost or changed others).
NEAR_DUPLICATE_MAX_SHARE = 0.01


def _source_info(part: dict, accepted: int, name: str | None = None) -> SourceInfo:
    """The provenance of one read file: its rows, accepted, void, rejected (and of those, exact
    duplicates and near-duplicate rounds: read, and counted once; a second result source's rows)."""
    dups = sum(1 for r in part["rejected"] if r.reason.startswith((DUPLICATE_REASON, NEAR_DUPLICATE_REASON)))
    near = sum(1 for r in part["rejected"] if r.reason.startswith(NEAR_DUPLICATE_REASON))
    second = sum(1 for r in part["rejected"] if r.reason.startswith(SECOND_SOURCE_REASON))
    return SourceInfo(name or part["name"], part["sha256"], part["format"], part["rows"], accepted, part["void_count"], len(part["rejected"]),
                      part["blank"], dups, second_source=second, near_duplicates=near)


def _check_readable(part: dict, accepted: int) -> None:
    """A file with no accepted and no void spin is a :class:`NoDataError` naming its commonest reasons."""
    if accepted == 0 and part["void_count"] == 0:
        reasons: dict[str, int] = {}
        for r in part["rejected"]:
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
        top = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
        detail = "; ".join(f"{c}× {r}" for r, c in top) if top else "no data rows"
        raise NoDataError(f"{part['name']}: no readable spin in {part['rows']} row(s) ({detail})")


def _read_spin_log_compact(paths, wheel, columns, fmt, pool, streams: dict[str, bytes], min_round_interval: float = 0.0) -> SpinLog:
    """:func:`read_spin_log` in constant memory per spin: CSV logs streamed batch by batch, and
    permanence lists block by block (:mod:`rngcert.collect.permstream`), into a :class:`_CompactLog`,
    which keeps only the small-integer arrays the tests need. Raises :class:`_NeedExact` when a log
    is not in the usual shape (the exact path then reads it)."""
    from rngcert.collect import csvstream

    acc = _CompactLog(wheel, pool, min_round_interval)
    metas, sources, rejected, notes = [], [], [], []
    for p in paths:
        p = Path(p)
        name = str(p)
        data = streams.get(name)
        if data is None and csvstream.is_stream(p):
            data = streams[name] = csvstream.read_stream(p)
        if data is None:
            with open(p, "rb") as fh:
                head = fh.read(1 << 16)
        else:
            if not data.strip(b"\xef\xbb\xbf \t\r\n"):
                raise NoDataError(f"{name}: the file is empty (a FIFO that no process writes to reads as empty): no spins to certify")
            head = data[: 1 << 16]
        csvstream.sniff_content(head, name)
        f = fmt if fmt != "auto" else detect_format(p, head)
        if f not in ("csv", "permanence") or (f == "permanence" and columns):
            raise _NeedExact("not a CSV log or a permanence list")
        acc.begin(p.stem)
        n0 = acc.pos.n
        if f == "permanence":
            from rngcert.collect import permstream

            most = ((data is not None and len(data)) or p.stat().st_size) // 2 + 1  # at most one spin per two bytes
            for g in (acc.pos, acc.sym, acc.tab, acc.line_start):  # (only the columns a list has: no other is filled)
                if g is not None:
                    g.reserve(most)
            try:
                part = permstream.read_permanence(p, wheel, acc, (RejectedRow, _read_permanence, _resolve_labels), data=data)
            except permstream.NeedWholeLines as exc:
                raise _NeedExact(str(exc)) from None
        else:
            part = _read_csv_streaming(p, wheel, columns, data=data, consume=acc)  # (the file-level checks hold: see _CompactLog.add)
        accepted = acc.pos.n - n0
        _check_readable(part, accepted)
        metas.append(part)
        rejected.extend(part["rejected"])
        notes.extend(part["notes"])
        sources.append(_source_info(part, accepted, name))
    level, space, tables = acc.finish(metas, notes)
    return SpinLog(wheel, level, space, tables, sources, rejected, notes, acc.period)


def _read_file(p, wheel, columns, fmt, *, data: bytes | None = None, text_codes: bool = True) -> dict:
    """Read and resolve one file (``data`` instead of reading ``p`` when given).

    CSV files are streamed in record batches (bounded memory, see
    :mod:`rngcert.collect.csvstream`); JSON Lines and permanence lists are read whole, and so
    are pipes and FIFOs (``<(…)``). Bytes that are not a text log (compressed, binary, UTF-16
    without a byte-order mark) are refused with what they are.
    """
    from rngcert.collect import csvstream

    p = Path(p)
    name = str(p)
    stream = False
    if data is None:
        if csvstream.is_stream(p):
            stream = True
            data = csvstream.read_stream(p)
        else:
            with open(p, "rb") as fh:
                head = fh.read(1 << 16)
            csvstream.sniff_content(head, name)
            f = fmt if fmt != "auto" else detect_format(p, head)
            if f == "csv":
                return _file_checks(_read_csv_streaming(p, wheel, columns, text_codes=text_codes), text_codes)
            data = p.read_bytes()
    if not data.strip(b"\xef\xbb\xbf \t\r\n"):
        why = " (a FIFO that no process writes to reads as empty)" if stream else ""
        raise NoDataError(f"{name}: the file is empty{why}: no spins to certify")
    csvstream.sniff_content(data[: 1 << 16], name)
    f = fmt if fmt != "auto" else detect_format(p, data)
    if f.startswith("protocol"):
        return _file_checks(_read_capture(data, name, f, wheel, columns, text_codes), text_codes)
    fieldpos = None
    if f == "csv":
        return _file_checks(_read_csv_streaming(p, wheel, columns, data=data, text_codes=text_codes), text_codes)
    if f.startswith("feed:"):
        return _file_checks(_read_feed(data, name, f[5:], wheel, columns, text_codes), text_codes)
    if f == "jsonl":
        cols, lines, rej, blank, header = _read_jsonl(data, name)
    else:
        cols, lines, rej, blank, header, fieldpos = _read_permanence(data, name, wheel)
    part = _process(cols, lines, rej, name, wheel, columns, fieldpos, header, text_codes=text_codes)
    part["notes"] = list(part["notes"]) + timestamp_notes(name, part.get("ts_kinds"))
    if _text_of(data)[1] != "utf-8":  # (the reader decoded it the same way)
        part["notes"] = list(part["notes"]) + [f"{name}: not valid UTF-8; read as latin-1"]
    part["format"] = f
    part["sha256"] = sha256_of(data)
    part["blank"] = blank
    part["size"] = len(data)
    return _file_checks(part, text_codes)


def _read_feed(data: bytes, name: str, feed_id: str, wheel, columns, text_codes: bool) -> dict:
    """Read a live result feed (:mod:`rngcert.collect.feed`): its primary result as the spin log's
    ``result``, and each secondary source compared with it per table (``source_comparison``)."""
    from rngcert.collect.feed import compare_sources, load_feed, parse_feed

    feed = load_feed(feed_id)
    cols, lines, bad, blank = parse_feed(data, name, feed)
    rej = [RejectedRow(name, line, "*", reason, text[:200]) for line, text, reason in bad]
    part = _process(cols, lines, rej, name, wheel, columns, None, list(cols), text_codes=text_codes)
    part.update(format=f"feed:{feed.id}", sha256=sha256_of(data), blank=blank, size=len(data))
    part["notes"] = list(part["notes"]) + [f"{name}: read as the {feed.id} feed ({feed.description}; {feed.path})"] + (
        [f"{name}: spin ids: {feed.spin_id_note}"] if feed.spin_id_note else [])
    comp: dict[str, list] = {}
    if feed.secondary:
        tab = cols.get("table")
        codes, labels = _decode(tab) if tab is not None else (np.zeros(len(lines), dtype=np.int64), [Path(name).stem])
        for ti, t in enumerate(labels):  # loop over the few tables
            live = part["accepted_mask"] & (codes == ti)
            comp[str(t)] = compare_sources(part["pos"].astype(np.int64), live, cols, feed, lambda c: _resolve_labels(c, wheel)[0],
                                           wheel.position_space().labels, lines=lines, spin_ids=cols.get("spin_id"))
    part["source_comparison"] = comp
    return part


#: Per-row entries of the dictionary :func:`_process` returns (the rest describes the file).
_ROW_KEYS = ("pos", "sym", "accepted_mask", "void_mask", "lines", "line_no", "ts", "direction", "release", "table", "dealer", "spin_id",
             "rotor_speed", "ball_direction", "result_source", "payout", "multiplier")


def _read_csv_streaming(p: Path, wheel, columns, *, data: bytes | None = None, text_codes: bool = True, consume=None) -> dict:
    """Stream a CSV log batch by batch through :func:`_process` and join the parts.

    With ``consume`` (a :class:`_CompactLog`), each batch is handed to ``consume.add`` and only
    its description (counts, rejected rows, notes) is kept: the returned dictionary has no
    per-row arrays."""
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
    header, delim = csvstream.header_fields(scan, name, encoding)

    def reduce(out):
        if consume is None:
            return out
        consume.add(out)
        return {k: (None if k in _ROW_KEYS else v) for k, v in out.items()}

    def process(cols, lines, bad):  # a pure function of its batch: run on the read threads
        rej = [RejectedRow(name, line, "*", reason, text[:200]) for line, text, reason in bad]
        out = _process(cols, lines, rej, name, wheel, columns, None, header, text_codes=text_codes)
        del cols, lines
        csvstream.release_arrow_memory()
        return out

    if consume is not None:
        consume.reserve(scan.n_lines)
    parts, how = csvstream.read_csv_parts(lambda: csvstream.open_source(p, data), name, scan, process, block_size=csvstream.BLOCK_SIZE, encoding=encoding,
                                          on_restart=None if consume is None else consume.rollback, then=reduce, threads=csvstream.read_threads())
    csvstream.release_arrow_memory(force=True)
    if not parts:  # header only
        parts.append(reduce(_process({h: pa.array([], type=pa.string()) for h in header}, np.zeros(0, np.int64), [], name, wheel, columns, None, header, text_codes=text_codes)))
    kinds = _join_kinds([pt.get("ts_kinds") for pt in parts])
    part = _concat_parts(parts)
    part["ts_kinds"] = kinds
    part["notes"] = list(part["notes"]) + timestamp_notes(name, kinds)
    if how:
        part["notes"] = list(part["notes"]) + [how]
    if encoding != "utf-8":
        part["notes"] = list(part["notes"]) + [f"{name}: not valid UTF-8; read as {encoding}"]
    if scan.sep:
        part["notes"] = list(part["notes"]) + [f"{name}: the first line 'sep={scan.sep}' (Excel) names the delimiter: fields read as separated by {scan.sep!r}"]
    # ids and tables of rows the reader could not split (they are rejected, but their ids are not gaps)
    idx = part.get("colindex", {})
    extra = []
    if "spin_id" in idx:
        import csv as _csv

        for r in part["rejected"]:
            if r.column != "*":
                continue
            try:
                fields = next(_csv.reader([r.text], delimiter=delim), [])
            except _csv.Error:
                continue
            sid = fields[idx["spin_id"]].strip() if len(fields) > idx["spin_id"] else ""
            if sid.isascii() and sid.isdigit() and len(sid) <= 18:
                t = fields[idx["table"]].strip() if "table" in idx and len(fields) > idx["table"] else None
                extra.append((t, int(sid)))
    part["extra_ids"] = extra
    part["format"] = "csv"
    part["sha256"] = scan.sha256
    part["blank"] = int(scan.blank_lines.size)
    part["size"] = scan.size
    return part


# ---------------------------------------------------------------------------- file-level checks
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
    part["rejected"] = sorted(list(part["rejected"]) + new, key=lambda r: r.line)


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
        neg = vals < 0
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
    out["rejected"] = sorted((r for pt in parts for r in pt["rejected"]), key=lambda r: r.line)
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


@dataclass
class SpinRows:
    """Every row of one log file, in file order, for the store (:mod:`rngcert.collect.store`).

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
    columns = _options_iv(_capture_format(fmt), columns)
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

    pos, sym, void_tok, bad, bad_why, _ = _resolve_labels(cols[resolved["result"]], wheel)
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
        unflag = void & (col_of == fcols.index(resolved["result"]))
        free[unflag] = True
        col_of[unflag] = -1
        why_of[unflag] = -1
    ts = None
    if "timestamp" in resolved:
        ts, badt = _timestamps(cols[resolved["timestamp"]])
        flag(badt & ~void, resolved["timestamp"], "timestamp is not ISO 8601")
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
        for ci in np.unique(rej_cols).tolist():
            where = np.flatnonzero(rej_cols == ci)
            vals = cols[fcols[ci]].take(pa.array(rej_idx[where])).to_pylist()
            for w, v in zip(where.tolist(), vals):
                texts[w] = v
        for i, ci, wi, t in zip(rej_idx.tolist(), rej_cols.tolist(), why_of[rej_idx].tolist(), texts):
            col = fcols[ci]
            if fieldpos is not None:
                colname = f"field {int(fieldpos[i])}"
            else:
                colname = f"{col} (column {colnum.get(col, '?')})"
            out_rejects.append(RejectedRow(name, int(lines[i]), colname, whys[wi], "" if t is None else str(t)[:200]))
    out_rejects.sort(key=lambda r: r.line)

    def textcol(key):
        """(codes, labels) of a text column: codes index labels; None if the column is absent.
        Whole-number spin ids come back as :class:`IntIds` (no Python object per row)."""
        if key not in resolved:
            return None
        raw = _as_text(cols[resolved[key]])
        if raw.null_count:
            raw = pc.fill_null(raw, "")
        if key == "spin_id" or not text_codes:
            if text_codes:
                try:  # whole numbers as written (a cell with spaces or a quote fails here and is cleaned below)
                    return IntIds(_arrow.ints(pc.cast(raw, pa.int64())))
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    pass
            col = _clean_text(raw)
            if not text_codes:
                return col
            try:
                return IntIds(_arrow.ints(pc.cast(col, pa.int64())))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
            idx, uniq = _decode(col)
            return idx, [("" if u is None else u) for u in uniq]
        # a table or dealer column has few distinct values: clean those, then join the ones that
        # clean to the same text (in order of first appearance, as the cleaned column would give)
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


def _merge_codes(items, raw: bool = False):
    """Concatenate per-file (codes, labels) into global codes and one label list (``raw``: see
    :meth:`IntIds.as_codes`)."""
    if all(isinstance(it, IntIds) for it in items):
        return IntIds(np.concatenate([it.values for it in items]))
    items = [it.as_codes(raw) if isinstance(it, IntIds) else it for it in items]
    if len(items) == 1:
        return items[0]
    offsets = np.cumsum([0] + [len(labs) for _, labs in items])
    enc = pc.dictionary_encode(pa.array([lab for _, labs in items for lab in labs], type=pa.string()))
    remap = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    out = [np.where(codes < 0, -1, remap[np.clip(codes, 0, None) + off]) for (codes, _), off in zip(items, offsets)]
    return np.concatenate(out), enc.dictionary.to_pylist()


def repeat_status(keys: Sequence[np.ndarray], outcome: np.ndarray, consider: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How each row stands among the rows with the same spin identity (the rule of the store's
    ingest, shared by ``certify``): ``0`` the first row of its key (in row order), ``1`` a later
    row that repeats the first exactly (same ``outcome``), ``2`` a later row that differs from the
    first (a conflict); ``-1`` for rows not considered.

    Parameters
    ----------
    keys : sequence of (n,) int arrays
        Together they form the identity, e.g. (table code, spin number, spin label code).
    outcome : (n,) int array
        What must agree between repeats (position, symbol and void flag, combined).
    consider : (n,) bool, optional
        Rows that take part (default all).

    Returns
    -------
    status : (n,) int8
    first : (n,) int64
        Index of the first row of each row's key (-1 for rows not considered).
    """
    n = outcome.size
    status = np.full(n, -1, dtype=np.int8)
    first = np.full(n, -1, dtype=np.int64)
    rows = np.arange(n) if consider is None else np.flatnonzero(consider)
    if rows.size == 0:
        return status, first
    ks = [np.asarray(k)[rows] for k in keys]
    if all(k.size < 2 or (k[0] == k).all() for k in ks[:-1]) and (ks[-1].size < 2 or np.all(ks[-1][1:] > ks[-1][:-1])):
        status[rows] = 0  # the usual log: one table, ids strictly increasing: no repeat
        first[rows] = rows
        return status, first
    order = np.lexsort([rows] + ks[::-1])  # by key, then row order
    srt = rows[order]
    new = np.ones(srt.size, dtype=bool)
    for k in ks:
        kk = k[order]
        new[1:] &= kk[1:] == kk[:-1]
    new = ~new
    new[0] = True
    start = np.flatnonzero(new)
    grp_first = srt[start][np.cumsum(new) - 1]
    first[srt] = grp_first
    same = outcome[srt] == outcome[grp_first]
    status[srt] = np.where(new, 0, np.where(same, 1, 2))
    return status, first


def outcome_key(pos: np.ndarray, sym: np.ndarray, void: np.ndarray) -> np.ndarray:
    """One int64 per row that is equal exactly when position, symbol and void flag all are."""
    return ((np.asarray(pos, dtype=np.int64) + 1) * 65536 + (np.asarray(sym, dtype=np.int64) + 1)) * 2 + np.asarray(void, dtype=np.int64)


def _split_sources(parts: list[dict], wheel: Wheel) -> list[dict[str, list[dict]]]:
    """Rows of secondary result sources (``result_source`` not in :data:`PRIMARY_SOURCES`) are
    taken out of the results and compared with the primary row of the same table and spin_id.

    Each secondary row is moved to the rejected rows with a reason that begins with
    :data:`SECOND_SOURCE_REASON` (counted in ``SourceInfo.second_source``, not as unreadable),
    whether its reading agrees, disagrees, cannot be read or has no primary row. Returns, per part,
    the comparisons by table label (the dictionaries of
    :func:`rngcert.collect.feed.compare_sources`)."""
    out: list[dict[str, list[dict]]] = []
    labels_pos = list(wheel.position_space().labels) if wheel.order_known else []
    for pt in parts:  # loop over the files
        src = pt.get("result_source")
        if src is None:
            out.append({})
            continue
        name = pt["name"]
        codes, labels = _codes_labels(src)
        labels = [str(t).strip().lower() for t in labels]
        primary_code = np.array([t in PRIMARY_SOURCES for t in labels] + [True])
        codes = np.where(codes < 0, len(labels), codes)
        secondary = ~primary_code[codes]
        if not secondary.any():
            out.append({})
            continue
        if pt.get("spin_id") is None:
            raise InputError(f"{name}: the result_source column names {', '.join(sorted({labels[c] for c in np.unique(codes[secondary])}))} besides the "
                             f"wheel, but the file has no spin_id column to pair the rows of one spin")
        n = pt["pos"].size
        line_pos = {int(ln): i for i, ln in enumerate(pt["lines"].tolist())} if n else {}
        # secondary rows that _process rejected (an unreadable reading) are a source's failure, not unreadable data
        kept, unreadable = [], np.zeros(n, dtype=bool)
        for r in pt["rejected"]:  # the rejected rows (few)
            i = line_pos.get(int(r.line))
            if i is not None and secondary[i] and r.column != "*":
                unreadable[i] = True
            else:
                kept.append(r)
        pt["rejected"] = kept
        sid = pt["spin_id"]
        sk = sid.values.astype(np.int64) if isinstance(sid, IntIds) else _codes_labels(sid)[0].astype(np.int64)
        if pt.get("table") is not None:
            tk, tlabels = _codes_labels(pt["table"])
        else:
            tk, tlabels = np.zeros(n, dtype=np.int64), [Path(name).stem]
        live = pt["accepted_mask"] | pt["void_mask"]
        prim = live & ~secondary & (sk >= 0)
        key = tk.astype(np.int64) * (int(sk.max(initial=0)) + 2) + sk
        okey = outcome_key(pt["pos"], pt["sym"], pt["void_mask"])
        order = np.argsort(key[prim], kind="stable")
        pkeys, prow = key[prim][order], np.flatnonzero(prim)[order]
        sec_rows = np.flatnonzero((live | unreadable) & secondary)
        at = np.searchsorted(pkeys, key[sec_rows])
        found = (at < pkeys.size) & (pkeys[np.minimum(at, max(pkeys.size - 1, 0))] == key[sec_rows]) if pkeys.size else np.zeros(sec_rows.size, bool)
        match = np.where(found, prow[np.minimum(at, max(pkeys.size - 1, 0))] if pkeys.size else -1, -1)

        def lab(i):
            if pt["void_mask"][i]:
                return "void"
            if pt["pos"][i] >= 0 and labels_pos:
                return str(labels_pos[pt["pos"][i]])
            return wheel.symbols[pt["sym"][i]] if pt["sym"][i] >= 0 else "?"

        id_labels = None if isinstance(sid, IntIds) else _codes_labels(sid)[1]
        id_text = lambda i: str(int(sk[i])) if id_labels is None else str(id_labels[int(sk[i])])  # noqa: E731
        comp: dict[str, list[dict]] = {}
        reasons = []
        for ti, t in enumerate(tlabels):  # loop over the few tables and sources
            in_t = tk[sec_rows] == ti
            rounds = int(np.count_nonzero(prim & (tk == ti)))
            for sc in np.unique(codes[sec_rows[in_t]]).tolist():
                sname = labels[sc]
                mine = in_t & (codes[sec_rows] == sc)
                rows, m = sec_rows[mine], match[mine]
                bad = unreadable[rows]
                paired = (m >= 0) & ~bad
                agree = paired & (okey[rows] == okey[np.maximum(m, 0)])
                dis = paired & ~agree
                seen = np.unique(m[m >= 0])
                first = [{"line": int(pt["lines"][i]), "round": id_text(i), "result": lab(int(j)), "reading": lab(int(i))}
                         for i, j in zip(rows[dis][:10].tolist(), m[dis][:10].tolist())]
                comp.setdefault(str(t), []).append({
                    "source": sname, "primary": "wheel", "what": f"rows whose result_source is {sname!r}", "rounds": rounds,
                    "read": int(seen.size), "agree": int(agree.sum()), "disagree": int(dis.sum()), "unreadable": int(bad.sum()),
                    "no_reading": ({"no row from this source": rounds - int(seen.size)} if rounds > seen.size else {}),
                    "without_wheel_result": int(np.count_nonzero(m < 0)), "first_disagreements": first,
                })
        for i, j in zip(sec_rows.tolist(), match.tolist()):  # the secondary rows: each gets its reason
            s_ = labels[codes[i]]
            if unreadable[i]:
                why = f"{SECOND_SOURCE_REASON} {s_!r}: its reading is not an outcome of this wheel (compared, not a result)"
            elif j < 0:
                why = f"{SECOND_SOURCE_REASON} {s_!r}: no wheel row for this spin_id (compared, not a result)"
            elif okey[i] == okey[j]:
                why = f"{SECOND_SOURCE_REASON} {s_!r}: agrees with the wheel (line {int(pt['lines'][j])})"
            else:
                why = f"{SECOND_SOURCE_REASON} {s_!r}: read {lab(i)} where the wheel shows {lab(j)} (line {int(pt['lines'][j])}); the wheel's result is used"
            reasons.append(why)
        pt["accepted_mask"] = pt["accepted_mask"].copy()
        pt["void_mask"] = pt["void_mask"].copy()
        pt["accepted_mask"][sec_rows] = False  # (unreadable ones are neither already)
        pt["void_mask"][sec_rows] = False
        pt["void_count"] = int(pt["void_mask"].sum())
        colname = pt.get("colnames", {}).get("result_source", "result_source")
        new = [RejectedRow(name, int(pt["lines"][i]), colname, why, labels[codes[i]]) for i, why in zip(sec_rows.tolist(), reasons)]
        pt["rejected"] = sorted(list(pt["rejected"]) + new, key=lambda r: r.line)
        out.append(comp)
    return out


def _mark_repeats(parts: list[dict], wheel: Wheel) -> dict[str, list[str]]:
    """Repeated spin ids of a table, across all files, with the store's rule
    (:func:`repeat_status`): an exact repeat (same result) is counted once, the later copies are
    rejected as duplicates; a spin id with different results is a conflict: every one of its rows
    is rejected and neither result is used. Returns notes per table label."""
    with_ids = [i for i, pt in enumerate(parts) if pt.get("spin_id") is not None]
    if not with_ids:
        return {}
    tab_ids: dict[str, int] = {}
    text_ids: dict[str, int] = {}
    keys_t, keys_s, outs, lives, where = [], [], [], [], []
    for i in with_ids:
        pt = parts[i]
        n = pt["pos"].size
        if pt.get("table") is not None:
            codes, labels = _codes_labels(pt["table"])
            lut = np.array([tab_ids.setdefault(t, len(tab_ids)) for t in labels] + [-1], dtype=np.int64)
            tk = lut[np.where(codes < 0, len(labels), codes)]
        else:
            tk = np.full(n, tab_ids.setdefault(Path(pt["name"]).stem, len(tab_ids)), dtype=np.int64)
        sid = pt["spin_id"]
        if isinstance(sid, IntIds):
            sk = sid.values.astype(np.int64)
        else:
            codes, labels = _codes_labels(sid)
            lut = np.array([-(text_ids.setdefault(t, len(text_ids)) + 2) if t != "" else -1 for t in labels] + [-1], dtype=np.int64)
            sk = lut[np.where(codes < 0, len(labels), codes)]
        lv = (pt["accepted_mask"] | pt["void_mask"]) & (sk != -1) & (tk >= 0)
        if len(with_ids) == 1 and (tk.size < 2 or (tk[0] == tk).all()):
            s_ = sk[lv]
            if s_.size < 2 or np.all(s_[1:] > s_[:-1]):
                return {}  # the usual log: one table, ids strictly increasing: nothing repeats
        keys_t.append(tk)
        keys_s.append(sk)
        outs.append(outcome_key(pt["pos"], pt["sym"], pt["void_mask"]))
        lives.append(lv)
        where.append(np.full(n, i, dtype=np.int64))
    if len(with_ids) == 1:
        tk, sk, out, live, part_of = keys_t[0], keys_s[0], outs[0], lives[0], where[0]
    else:
        tk, sk, out, live, part_of = (np.concatenate(x) for x in (keys_t, keys_s, outs, lives, where))
    status, first = repeat_status([tk, sk], out, live)
    if not np.any(status > 0):
        return {}
    conflict_first = np.unique(first[status == 2])
    in_conflict = np.isin(first, conflict_first) & live
    dup = (status == 1) & ~in_conflict
    offsets = np.cumsum([0] + [parts[i]["pos"].size for i in with_ids])
    local = np.arange(tk.size) - offsets[np.searchsorted(offsets, np.arange(tk.size), side="right") - 1]
    tab_label = {v: k for k, v in tab_ids.items()}
    text_label = {-(v + 2): k for k, v in text_ids.items()}
    id_text = lambda v: text_label.get(int(v), str(int(v)))  # noqa: E731
    labels_pos = wheel.position_space().labels if wheel.order_known else ()

    def result(g):
        pt = parts[int(part_of[g])]
        j = int(local[g])
        if pt["void_mask"][j]:
            return "void"
        if pt["pos"][j] >= 0 and labels_pos:
            return str(labels_pos[pt["pos"][j]])
        return wheel.symbols[pt["sym"][j]] if pt["sym"][j] >= 0 else "?"

    def at(g, ref):
        pt = parts[int(part_of[g])]
        ln = int(pt["lines"][int(local[g])])
        return f"line {ln}" if part_of[g] == part_of[ref] else f"{pt['name']} line {ln}"

    reasons: dict[int, tuple[str, str]] = {}
    for g in np.flatnonzero(dup).tolist():  # the rows that repeat (few, usually)
        f = int(first[g])
        reasons[g] = ("duplicate", f"{DUPLICATE_REASON} {at(f, g)} (spin_id {id_text(sk[g])}, same result {result(g)}): counted once")
    members = np.flatnonzero(in_conflict)
    members = members[np.lexsort((members, first[members]))]
    bounds = np.flatnonzero(np.r_[True, first[members][1:] != first[members][:-1], True]) if members.size else np.zeros(1, np.int64)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        grp = members[a:b].tolist()
        seen = ", ".join(f"{result(g)} ({at(g, grp[0])})" for g in grp[:4]) + (" …" if len(grp) > 4 else "")
        msg = f"conflict: spin_id {id_text(sk[grp[0]])} has different results: {seen}; neither result is used"
        for g in grp:
            reasons[g] = ("conflict", msg)
    per_part: dict[int, list[int]] = {}
    for g in reasons:
        per_part.setdefault(int(part_of[g]), []).append(g)
    for i, gs in per_part.items():
        pt = parts[i]
        gs.sort()
        rows = np.array([int(local[g]) for g in gs], dtype=np.int64)
        texts = [id_text(sk[g]) for g in gs]
        _reject_rows(pt, rows, pt.get("colnames", {}).get("spin_id", "spin_id"), [reasons[g][1] for g in gs], texts)
    notes: dict[str, list[str]] = {}
    for t in np.unique(tk[dup | in_conflict]).tolist():
        in_t = tk == t
        nd = int(np.count_nonzero(dup & in_t))
        cf = np.unique(first[in_conflict & in_t])
        out_t = []
        if nd:
            ex = ", ".join(id_text(v) for v in np.unique(sk[dup & in_t])[:5])
            out_t.append(f"{nd} exact duplicate row(s) (same spin_id and result; duplicated spin_id(s): {ex}) counted once; the copies are in the rejects")
        if cf.size:
            ex = ", ".join(id_text(sk[f]) for f in cf[:5])
            nr = int(np.count_nonzero(in_conflict & in_t))
            out_t.append(f"{cf.size} spin_id(s) with conflicting results ({ex}): their {nr} rows are left out, neither result is chosen (see the rejects)")
        notes[tab_label[t]] = out_t
    return notes


def _mark_near_duplicates(parts: list[dict], wheel: Wheel, min_s: float, pool: bool) -> dict[str, dict]:
    """Near-duplicate rounds (:data:`NEAR_DUPLICATE_RULE`): per table, rows taken in time order;
    a row with the same result (and payout, multiplier) as the row before it, less than ``min_s``
    seconds later, is rejected as a near-duplicate of the first row of its run. Tables whose
    timestamps are whole minutes (or dates) cannot resolve ``min_s`` and are left out with a note
    in the finding. Returns the finding per table label ("(all)" when ``pool``)."""
    if not min_s or min_s <= 0:
        return {}
    min_us = int(round(min_s * 1e6))
    use = [i for i, pt in enumerate(parts) if pt.get("ts") is not None]
    if not use:
        return {}
    tab_ids: dict[str, int] = {}
    extra_ids: dict[tuple[str, str], int] = {}
    T, TS, O, P, M, ROW, PART = [], [], [], [], [], [], []
    extra_cols = [c for c in ("payout", "multiplier") if all(parts[i].get(c) is not None for i in use)]
    for i in use:
        pt = parts[i]
        n = pt["pos"].size
        live = np.flatnonzero(pt["accepted_mask"] | pt["void_mask"])
        if pt.get("table") is not None:
            codes, labels = _codes_labels(pt["table"])
            lut = np.array([tab_ids.setdefault(t, len(tab_ids)) for t in labels] + [-1], dtype=np.int64)
            tk = lut[np.where(codes < 0, len(labels), codes)]
        else:
            tk = np.full(n, tab_ids.setdefault(Path(pt["name"]).stem, len(tab_ids)), dtype=np.int64)
        T.append(tk[live])
        TS.append(pt["ts"][live])
        O.append(outcome_key(pt["pos"], pt["sym"], pt["void_mask"])[live])
        for c, dest in zip(("payout", "multiplier"), (P, M)):
            if c in extra_cols:
                codes, labels = _codes_labels(pt[c])
                lut = np.array([extra_ids.setdefault((c, t), len(extra_ids)) for t in labels] + [-1], dtype=np.int64)
                dest.append(lut[np.where(codes < 0, len(labels), codes)][live])
            else:
                dest.append(np.zeros(live.size, dtype=np.int64))
        ROW.append(live)
        PART.append(np.full(live.size, i, dtype=np.int64))
    tk, ts, o, pay, mul, row, part_of = (np.concatenate(x) for x in (T, TS, O, P, M, ROW, PART))
    if ts.size < 2:
        return {}
    # rows compared with their neighbour in spin order: spin-id order where every file has whole-number
    # ids (a clock that repeats an hour interleaves distinct spins in time), else time order
    if all(isinstance(parts[i].get("spin_id"), IntIds) for i in use):
        key = np.concatenate([parts[i]["spin_id"].values[r] for i, r in zip(use, ROW)])
    elif all(np.all(np.diff(x) >= 0) or _clock_change_only(x, parts[i].get("ts_kinds")) for i, x in zip(use, TS)):
        key = np.arange(ts.size)  # file order (files in the order given): time order, or a clock change that repeats an hour
    else:
        key = ts
    order = np.lexsort((row, part_of, key, tk))
    tk, ts, o, pay, mul, row, part_of = (x[order] for x in (tk, ts, o, pay, mul, row, part_of))
    same_t = tk[1:] == tk[:-1]
    dt = np.abs(ts[1:] - ts[:-1])
    near = same_t & (dt < min_us) & (o[1:] == o[:-1]) & (pay[1:] == pay[:-1]) & (mul[1:] == mul[:-1])
    # a table whose timestamps are all whole minutes cannot resolve the interval; one whose rounds are
    # logged closer than twice the interval (median spacing) is not a log of rounds that last longer
    coarse_t: set = set()
    fast_t: dict[int, float] = {}
    bounds = np.flatnonzero(np.r_[True, ~same_t, True])  # rows of each table are contiguous (sorted by table first)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        t = int(tk[a])
        if np.all(ts[a:b] % 60_000_000 == 0):
            coarse_t.add(t)
        elif b - a > 2:
            med = float(np.median(dt[a : b - 1]))
            if med < 2 * min_us:
                fast_t[t] = med / 1e6
    skip = coarse_t | set(fast_t)
    if skip:
        near &= ~np.isin(tk[1:], list(skip))
    tab_label = {v: k for k, v in tab_ids.items()}
    labels_pos = wheel.position_space().labels if wheel.order_known else ()
    compared = ", ".join(["result"] + extra_cols)

    def result(g):
        pt = parts[int(part_of[g])]
        j = int(row[g])
        if pt["void_mask"][j]:
            return "void"
        if pt["pos"][j] >= 0 and labels_pos:
            return str(labels_pos[pt["pos"][j]]).split(":", 1)[-1]
        return wheel.symbols[pt["sym"][j]] if pt["sym"][j] >= 0 else "?"

    def line(g):
        pt = parts[int(part_of[g])]
        return int(pt["lines"][int(row[g])])

    pairs_of: dict[int, list] = {}
    rejects: dict[int, list] = {}
    head = -1
    for j in np.flatnonzero(near).tolist():  # (pairs are few: a loop over them only)
        a, b = j, j + 1
        head = a if not (a > 0 and near[a - 1]) else head
        t = int(tk[b])
        pairs_of.setdefault(t, []).append({"first_line": line(a), "second_line": line(b), "seconds_apart": round(float(dt[j]) / 1e6, 3),
                                           "result": result(b), **({"file": parts[int(part_of[b])]["name"]} if len(use) > 1 else {})})
        first = parts[int(part_of[head])]
        at = f"line {line(head)}" if part_of[head] == part_of[b] else f"{first['name']} line {line(head)}"
        why = (f"{NEAR_DUPLICATE_REASON} {at} (same {compared}: {result(b)}; {float(dt[j]) / 1e6:.3f} s after the row before it, "
               f"less than the minimum round interval {min_s:g} s): one round logged twice, counted once")
        rejects.setdefault(int(part_of[b]), []).append((int(row[b]), why, result(b)))
    for i, rr in rejects.items():
        rr.sort()
        _reject_rows(parts[i], np.array([r for r, _, _ in rr], dtype=np.int64), "timestamp", [w for _, w, _ in rr], [x for _, _, x in rr])
    out: dict[str, dict] = {}
    sizes = dict(zip(*[x.tolist() for x in np.unique(tk, return_counts=True)]))
    for t in sorted(set(pairs_of) | skip):
        name = "(all)" if pool else tab_label[t]
        prs = pairs_of.get(t, [])
        n_rows = sizes.get(t, 0)
        if not prs:
            if t in coarse_t:
                note = (f"Near-duplicate rounds not checked: the timestamps are whole minutes (or dates), too coarse to tell rounds "
                        f"less than {min_s:g} s apart.")
            else:
                note = (f"Near-duplicate rounds not checked: rounds are logged every {fast_t[t]:g} s (median), less than twice the "
                        f"minimum round interval {min_s:g} s, so rows that close are this equipment's rounds, not copies "
                        "(--min-round-interval sets the interval).")
            out.setdefault(name, {"name": "near_duplicates", "text": note, "note_only": True})
            continue
        shown = "; ".join(f"lines {p['first_line']} and {p['second_line']} ({p['seconds_apart']:g} s, {p['result']})" for p in prs[:20])
        share = len(prs) / n_rows if n_rows else 0.0
        text = (f"{len(prs):,} near-duplicate round(s): rows with the same {compared} less than {min_s:g} s apart (a round of "
                f"the wheel lasts longer): one round logged twice; each counted once, the later row is in the rejects. Pairs: "
                f"{shown}{' … (all in the evidence)' if len(prs) > 20 else ''}. Rule applied: {NEAR_DUPLICATE_RULE}"
                + ("" if extra_cols else " This log has no payout or multiplier column (map one with --column payout=NAME to compare it too)."))
        reason = "" if share < NEAR_DUPLICATE_MAX_SHARE else (
            f"data integrity: {len(prs):,} near-duplicate rounds ({share:.1%} of the rows): the process that logged rounds twice may "
            "also have lost or changed others")
        f = out.get(name)
        if f is not None and f.get("note_only"):
            f = None
        ev = {"pairs": prs, "min_round_interval_s": min_s, "compared": ["table", "timestamp"] + ["result"] + extra_cols, "rule": NEAR_DUPLICATE_RULE}
        if f is None or not f["evidence"]["pairs"]:
            out[name] = {"name": "near_duplicates", "text": text, "inconclusive": reason, "evidence": ev,
                         "summary": f"{len(prs):,} near-duplicate round(s) (same {compared}, less than {min_s:g} s apart) counted once; "
                                    "the pairs are in the data-integrity section"}
        else:  # pooled tables: one finding listing every table's pairs
            f["evidence"]["pairs"] += prs
            f["text"] = f"{len(f['evidence']['pairs']):,} near-duplicate round(s) in the pooled tables; see the evidence. Rule: {NEAR_DUPLICATE_RULE}"
            f["inconclusive"] = f["inconclusive"] or reason
    return out


def _sort_key_of_ids(spin_id) -> np.ndarray:
    """Per row, a number that orders spin ids (numbers by value, text ids by text; -1 none)."""
    if isinstance(spin_id, IntIds):
        return spin_id.values
    codes, labels = spin_id
    rank = np.empty(len(labels) + 1, dtype=np.int64)
    rank[np.array(sorted(range(len(labels)), key=labels.__getitem__), dtype=np.int64)] = np.arange(len(labels))
    rank[-1] = -1
    codes = np.asarray(codes, dtype=np.int64)
    return rank[np.where(codes < 0, len(labels), codes)]


def _id_numbers(spin_id) -> np.ndarray | None:
    """Per row, the spin id as a number (-1 where it has none); None when the ids are text."""
    if isinstance(spin_id, IntIds):
        return spin_id.values
    codes, labels = spin_id
    vals = np.array([_id_value(t)[0] if t != "" else -1 for t in labels] + [-1], dtype=np.int64)
    if any(v < 0 and t != "" for v, t in zip(vals, labels)):
        return None  # text ids: no gap check
    codes = np.asarray(codes, dtype=np.int64)
    return vals[np.where(codes < 0, len(labels), codes)]


def _assemble_tables(parts, key, pool, notes, repeat_notes=None) -> dict[str, TableSpins]:
    """Concatenate files, split per table, put rows in spin order, report gaps in spin ids.

    Spin order: with whole-number spin ids, spin-id order (then file and line); timestamps that go
    back against it are a data-integrity finding (:func:`time_order_finding`), not a re-sort (c18).
    Without ids, when the rows have timestamps, by (timestamp, file and line); otherwise file
    order. Either way a shuffled copy of a log gives the same sequence."""
    repeat_notes = repeat_notes or {}
    # a file without a table column is one table, named after the file (as the store names it)
    parts = [dict(pt) for pt in parts]
    for pt in parts:
        if pt["table"] is None:
            pt["table"] = (np.zeros(pt["pos"].size, dtype=np.int32), [Path(pt["name"]).stem])
    has = {c: all(pt.get(c) is not None for pt in parts) for c in ("ts", "table", "dealer", "spin_id", "direction", "release", "line_no", "rotor_speed", "ball_direction")}
    cat = {}
    def joined(key):  # no copy for a single file
        return parts[0][key] if len(parts) == 1 else np.concatenate([pt[key] for pt in parts])

    for c in ("ts", "direction", "release", "line_no", "rotor_speed", "ball_direction"):
        if has[c]:
            cat[c] = joined(c)
    for c in ("table", "dealer", "spin_id"):
        if has[c]:
            cat[c] = _merge_codes([pt[c] for pt in parts])
    outcome = joined(key)
    acc = joined("accepted_mask")
    void = joined("void_mask")
    tab_all, tab_labels_all = cat["table"]
    if has["table"] and not pool:
        tab, tab_labels = tab_all, list(tab_labels_all)
    else:
        tab, tab_labels = np.zeros(outcome.size, dtype=np.int64), ["(all)"]
        if pool and (len(parts) > 1 or len(tab_labels_all) > 1):
            notes.append("tables pooled on request (--pool): tested as one sequence")
    if len(tab_labels) == 1:  # one table: no sort needed
        order, bounds = None, (0, tab.size)
    else:
        order = np.argsort(tab, kind="stable")
        bounds = np.searchsorted(tab[order], np.arange(len(tab_labels) + 1))
    id_sort = _sort_key_of_ids(cat["spin_id"]) if has["spin_id"] else None
    id_num = _id_numbers(cat["spin_id"]) if has["spin_id"] else None
    # ids of rows with no table value (rejected) and of rows the reader could not split are present in the file: not gaps
    tabless = np.zeros(0, dtype=np.int64)
    if id_num is not None and "" in tab_labels_all:
        tabless = id_num[(np.asarray(tab_all) == tab_labels_all.index(""))]
    extra = {}
    for pt in parts:
        for t, v in pt.get("extra_ids", []):
            extra.setdefault(t, []).append(v)
    ts_kinds_all = _join_kinds([pt.get("ts_kinds") for pt in parts])
    tables: dict[str, TableSpins] = {}
    for ti, t in enumerate(tab_labels):
        all_idx = np.arange(tab.size) if order is None else order[bounds[ti] : bounds[ti + 1]]
        idx = all_idx[acc[all_idx] | void[all_idx]]
        if idx.size == 0:
            continue
        tnotes = []
        order_finding = None
        if pool:
            for tn, rn in repeat_notes.items():
                tnotes.extend(f"table {tn}: {x}" for x in rn)
        else:
            tnotes.extend(repeat_notes.get(str(t), []))
        if id_num is not None and idx.size > 1 and np.all(id_num[idx] >= 0):
            # spin ids are the order (a controller's counter is set at the spin; a wall clock can be
            # changed, or repeat an hour when daylight-saving time ends): where the timestamps disagree
            # with it, that is a data-integrity finding, not a reason to re-sort (c18)
            ids_t = id_num[idx]
            if np.any(np.diff(ids_t) < 0):
                idx = idx[np.lexsort((idx, ids_t))]
                tnotes.append("rows were not in spin_id order in the file; put in spin_id order")
            order_finding = time_order_finding(cat["ts"][idx], id_num[idx], ts_kinds_all) if has["ts"] else None
        elif has["ts"] and _clock_change_only(cat["ts"][idx], ts_kinds_all):
            # no ids, and the only steps back are a daylight-saving change of zone-less times: the file
            # order is the spin order (a sort by time would interleave the two passes of the repeated hour)
            order_finding = time_order_finding(cat["ts"][idx], None, ts_kinds_all)
        elif has["ts"]:
            tsv = cat["ts"][idx]
            d = np.diff(tsv)
            back = bool(np.any(d < 0))
            ties = False
            if not back and id_sort is not None:
                s_ = id_sort[idx]
                ties = bool(np.any((d == 0) & (s_[1:] < s_[:-1])))
            if back or ties:
                keys = [idx] + ([id_sort[idx]] if id_sort is not None else []) + [tsv]
                idx = idx[np.lexsort(keys)]
                if back:
                    tnotes.append("rows were not in time order; sorted by timestamp (then spin_id, then file and line)")
                else:
                    tnotes.append("rows with the same timestamp were put in spin_id order")
            del tsv, d
        keep = idx[acc[idx]]
        small = _small_int(max(int(outcome.max(initial=0)), 1))
        ts_ = TableSpins(table=str(t), outcomes=outcome[keep].astype(small), void=int(void[idx].sum()), notes=tnotes)
        if order_finding is not None:
            ts_.findings.append(order_finding)
        if has["release"]:
            ts_.release = cat["release"][keep].astype(_small_int(max(int(cat["release"].max(initial=0)), 1)))
        if has["line_no"] and keep.size:
            ln = cat["line_no"][keep]
            ts_.line_start = np.r_[True, ln[1:] != ln[:-1]]
        if has["direction"]:
            ts_.direction = cat["direction"][keep]
        if has["rotor_speed"]:
            ts_.rotor_speed = cat["rotor_speed"][keep]
        if has["ball_direction"]:
            ts_.ball_direction = cat["ball_direction"][keep]
        if has["dealer"]:
            codes, labels = cat["dealer"]
            sel = codes[keep]
            used = np.flatnonzero(np.bincount(sel, minlength=len(labels))) if sel.size else np.zeros(0, np.int64)
            lookup = np.zeros(len(labels), dtype=_small_int(max(used.size - 1, 1)))
            lookup[used] = np.arange(used.size)
            ts_.dealer = lookup[sel]
            ts_.dealer_labels = tuple(labels[u] if labels[u] else "(none)" for u in used)
        if has["spin_id"]:
            if id_num is not None:
                # every row of the table with a valid id counts as present, rejected ones too
                names = ([str(t)] if not pool else list(tab_labels_all)) + [None]
                unsplit = np.asarray([v for nm in names for v in extra.get(nm, [])], dtype=np.int64)
                present = np.concatenate([id_num[all_idx], tabless, unsplit])
                present = np.sort(present[present >= 0])
                if present.size > 1:
                    distinct = 1 + int(np.count_nonzero(present[1:] != present[:-1]))
                    gaps = int(present[-1] - present[0] + 1 - distinct)
                    if gaps:
                        tnotes.append(f"{gaps} spin_id(s) missing between {present[0]} and {present[-1]} (gaps in the sequence)")
        tables[str(t)] = ts_
    return tables


#: A backward step of the clock this close to one hour, at zone-less timestamps, is a daylight-saving change.
DST_TOLERANCE_S = 120
#: A backward step of at most this many seconds is a clock adjustment (a time server's correction).
CLOCK_ADJUST_S = 60


def _clock_change_only(ts: np.ndarray, kinds: dict | None) -> bool:
    """Whether timestamps in file order go back, and only by daylight-saving changes (about one
    hour, at zone-less timestamps)."""
    if ts.size < 2 or not (kinds and kinds.get("zoneless")):
        return False
    d = np.diff(ts)
    back = d[d < 0]
    return bool(back.size) and bool(np.all(np.abs(-back / 1e6 - 3600) <= DST_TOLERANCE_S))


def time_order_finding(ts: np.ndarray, ids: np.ndarray | None, kinds: dict | None) -> dict | None:
    """The disagreement between spin-id order (or, without ids, file order) and time order of one
    table, or None when the timestamps never go back in that order.

    Parameters
    ----------
    ts : (n,) int64
        Timestamps (microseconds, UTC) of the table's spins, in spin-id order.
    ids : (n,) int64 or None
        Their spin ids (same order); None when the log has none and the order is the file's.
    kinds : dict or None
        :func:`timestamp_kinds` of the log (zone-less, date-only, offsets).

    Returns
    -------
    dict or None
        ``name`` ``"time_order"``, ``text`` (counts and where), ``evidence``, and ``inconclusive``:
        a reason when the disagreement is not explained, "" when it is. Explained: every backward
        step is a daylight-saving change (about one hour, at zone-less timestamps) or a clock
        adjustment of at most :data:`CLOCK_ADJUST_S` s. The tests use the spin-id order either way;
        an unexplained disagreement leaves open whether the ids or the clock are wrong, so the
        order-dependent tests cannot be trusted (DESIGN §4: timestamps out of order).
    """
    if ts.size < 2:
        return None
    d = np.diff(ts)
    steps = np.flatnonzero(d < 0)
    if steps.size == 0:
        return None
    runmax = np.maximum.accumulate(ts)
    behind = int(np.count_nonzero(ts[1:] < runmax[:-1]))  # spins a sort by time would move back
    size_s = -d[steps] / 1e6
    zoneless = bool(kinds and kinds.get("zoneless"))
    dst = zoneless & (np.abs(size_s - 3600) <= DST_TOLERANCE_S)
    adjust = size_s <= CLOCK_ADJUST_S
    import datetime as _dt

    def when(us):
        return (_dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=int(us))).isoformat(sep=" ")

    what = "spin-id order" if ids is not None else "file order (the log has no spin ids)"
    name = (lambda j: f"spin_id {int(ids[j])}") if ids is not None else (lambda j: f"spin {j + 1} of the table")  # noqa: E731
    places = []
    for j in steps[:5].tolist():
        places.append(f"after {name(j)} ({when(ts[j])}) comes {name(j + 1)} ({when(ts[j + 1])}), "
                      f"{(ts[j] - ts[j + 1]) / 1e6:,.0f} s earlier")
    if bool(np.all(dst)):
        cause = "a clock change: the local time repeats an hour when daylight-saving time ends (the timestamps have no zone)"
    elif bool(np.all(dst | adjust)):
        cause = "clock changes and adjustments (daylight-saving time and corrections of at most a minute)" if dst.any() else \
            "clock adjustments of at most a minute (e.g. a time server's correction)"
    elif kinds and len(kinds.get("offsets", ())) + bool(kinds.get("zoneless")) > 1:
        cause = "timestamps in mixed time zones"
    elif kinds and kinds.get("dateonly"):
        cause = "date-only timestamps"
    else:
        cause = None
    order = what.split(" (")[0]
    text = (f"Time order disagrees with {what}: the timestamps go back {steps.size:,} time(s) in {order} "
            f"({behind:,} spin(s) would move if sorted by time); {'; '.join(places)}{' …' if steps.size > 5 else ''}. "
            f"Cause: {cause or 'not explained by a clock change'}. The spins are tested in {order}.")
    reason = "" if cause and cause != "date-only timestamps" else (
        f"data integrity: the timestamps go back {steps.size:,} time(s) against the {order} ({behind:,} spins), "
        "not explained by a clock change: whether the spin ids or the clock are wrong cannot be told, so the order the wheel produced is not known")
    summary = (f"the timestamps go back {steps.size:,} time(s) against the {order} ({behind:,} spins); "
               f"{cause or 'not explained by a clock change'}; the spins are tested in {order}")
    return {"name": "time_order", "text": text, "summary": summary, "inconclusive": reason,
            "evidence": {"backward_steps": int(steps.size), "spins_out_of_time_order": behind, "cause": cause or "not explained",
                         "steps_seconds": [round(float(x), 3) for x in size_s[:20]],
                         "order": order,
                         "first_places": [({"after_spin_id": int(ids[j]), "spin_id": int(ids[j + 1])} if ids is not None else
                                           {"after_spin": j + 1, "spin": j + 2}) for j in steps[:20].tolist()]}}


# ---------------------------------------------------------------------------- constant-memory read
class _NeedExact(Exception):
    """The log is not in the usual shape, so the streamed reduction cannot prove its result equal
    to the exact one: a spin id repeats or goes backwards within a table, timestamps are out of
    order, ids are not whole numbers, a ``table`` value is empty, the files differ in their
    columns (a CSV log beside a permanence list), a file is neither CSV nor a permanence list, or
    a permanence list has text on a line longer than a block. :func:`read_spin_log` then reads the log again on the exact
    path, which keeps every row's keys."""


def _small_int(top: int) -> np.dtype:
    """The smallest signed integer type holding ``-1 .. top``."""
    for dt in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)


class _Grow:
    """A column appended to in place: space is reserved for the rows a file can hold at most (its
    line count), so appending a batch never concatenates and copies; the type widens (once) only
    when a value does not fit."""

    def __init__(self, dtype):
        self.a = np.empty(0, dtype=dtype)
        self.n = 0

    def reserve(self, extra: int) -> None:
        need = self.n + int(extra)
        if need > self.a.size:
            new = np.empty(need, dtype=self.a.dtype)  # untouched pages cost no memory until written
            new[: self.n] = self.a[: self.n]
            self.a = new

    def put(self, v: np.ndarray) -> None:
        v = np.asarray(v)
        if v.size == 0:
            return
        if self.a.dtype.kind != "f":  # integers: widen once when a value does not fit
            info = np.iinfo(self.a.dtype)
            lo, hi = int(v.min()), int(v.max())
            if lo < info.min or hi > info.max:
                self.a = self.a.astype(_small_int(max(hi, -lo)))
        if self.n + v.size > self.a.size:
            self.reserve(max(v.size, self.a.size // 4))
        self.a[self.n : self.n + v.size] = v
        self.n += v.size

    def truncate(self, n: int) -> None:
        self.n = n

    def values(self) -> np.ndarray:
        """The filled part, with the unused reserve given back (no copy)."""
        if self.a.size != self.n:
            try:
                self.a.resize(self.n, refcheck=False)
            except ValueError:  # pragma: no cover - a view of the buffer exists
                self.a = self.a[: self.n].copy()
        return self.a


def _groups(codes: np.ndarray, rows: np.ndarray):
    """``(code, rows of that code in row order)`` for the given rows (one group, usually)."""
    if rows.size == 0:
        return
    c = codes[rows]
    if c[0] == c[-1] and (c == c[0]).all():
        yield int(c[0]), rows
        return
    order = np.argsort(c, kind="stable")
    cs = c[order]
    cut = np.flatnonzero(cs[1:] != cs[:-1]) + 1
    for a, b in zip(np.r_[0, cut].tolist(), np.r_[cut, cs.size].tolist()):
        yield int(cs[a]), rows[order[a:b]]


class _CompactLog:
    """The accepted spins of a log reduced batch by batch to what the tests keep: per spin the
    outcome, table code, release pocket, dealer code and direction as small integers (about 7
    bytes a spin, 4 once split into tables), and per table a few numbers that prove the log is in
    the usual shape (no repeated spin id, ids and timestamps in order) and give its gaps.

    Rows are taken in file order, files in the order given; the result equals the exact path's
    (:func:`_mark_repeats`, :func:`_assemble_tables`) whenever no :class:`_NeedExact` is raised.
    """

    def __init__(self, wheel: Wheel, pool: bool, min_round_interval: float = 0.0):
        self.wheel, self.pool = wheel, pool
        self.min_us = int(round(min_round_interval * 1e6))
        self.pos = _Grow(_small_int(max(wheel.k - 1, 1)))
        self.sym = _Grow(_small_int(max(len(wheel.symbols) - 1, 1))) if wheel.kind != "roulette" else None
        self.tab = _Grow(np.int16)
        self.release = _Grow(_small_int(max(wheel.k - 1, 1)))
        self.dealer = _Grow(np.int16)
        self.direction = _Grow(np.int8)
        self.rotor_speed = _Grow(np.float64)
        self.ball_direction = _Grow(np.int8)
        self.line_start = _Grow(np.int8)  # permanence lists: 1 where a spin is the first accepted one of its line
        self.last_line: dict[int, int] = {}  # per assembly table: line of its last accepted spin
        self.tables: dict[str, int] = {}
        self.dealers: dict[str, int] = {}
        self.columns: tuple | None = None
        self.all_pos = True
        self.void: dict[int, int] = {}
        self.live_rows: dict[int, int] = {}
        self.last_id: dict[int, int] = {}  # per table: last id of a live row (repeats)
        self.last_ts: dict[int, tuple[int, int]] = {}  # per assembly table: (ts, id) of its last live row
        self.present: dict[int, list] = {}  # per assembly table: [count, last id, runs (start, end) of the ids]
        self.n_runs = 0
        self.period: tuple[int, int] | None = None  # first and last timestamp of the live rows
        self.stem = ""
        self._mark = None

    # -- one file
    def begin(self, stem: str) -> None:
        self.stem = stem
        self._mark = self._state()

    def reserve(self, rows: int) -> None:
        for g in self._cols():
            g.reserve(rows)

    def rollback(self) -> None:
        """Forget what the current file added (its fast parse is thrown away and done again)."""
        n, tables, dealers, small = self._mark
        for g in self._cols():
            g.truncate(n)
        for d, k in ((self.tables, tables), (self.dealers, dealers)):
            for key in list(d)[k:]:
                del d[key]
        (self.columns, self.all_pos, self.void, self.live_rows, self.last_id, self.last_ts, self.present, self.n_runs, self.period,
         self.last_line) = small

    def _cols(self):
        return [g for g in (self.pos, self.sym, self.tab, self.release, self.dealer, self.direction, self.rotor_speed, self.ball_direction,
                            self.line_start) if g is not None]

    def _state(self):
        import copy

        small = (self.columns, self.all_pos, dict(self.void), dict(self.live_rows), dict(self.last_id), dict(self.last_ts),
                 copy.deepcopy(self.present), self.n_runs, self.period, dict(self.last_line))
        return self.pos.n, len(self.tables), len(self.dealers), small

    @staticmethod
    def _lut(d: dict, labels) -> np.ndarray:
        return np.array([d.setdefault(t, len(d)) for t in labels] or [0], dtype=np.int64)

    # -- one batch (the dictionary of :func:`_process`)
    def add(self, pt: dict) -> None:
        cols = tuple(k for k in ("ts", "spin_id", "dealer", "direction", "release", "rotor_speed", "ball_direction", "line_no") if pt.get(k) is not None)
        if self.columns is None:
            self.columns = cols
        elif cols != self.columns:
            raise _NeedExact("the files have different columns")
        if pt.get("result_source") is not None:
            raise _NeedExact("rows of several result sources")
        n = pt["pos"].size
        if n == 0:
            return
        acc, void = pt["accepted_mask"], pt["void_mask"]
        live = np.flatnonzero(acc | void)
        if pt.get("table") is None:
            tcode = np.full(n, self._lut(self.tables, [self.stem])[0], dtype=np.int64)
        else:
            codes, labels = pt["table"]
            if "" in labels:
                raise _NeedExact("empty table values")
            tcode = self._lut(self.tables, labels)[codes]
        akey = tcode if not self.pool else np.zeros(n, dtype=np.int64)
        ids = None
        if pt.get("spin_id") is not None:
            if not isinstance(pt["spin_id"], IntIds):
                raise _NeedExact("spin ids that are not all whole numbers")
            ids = pt["spin_id"].values
            if ids.size and ids.min() < 0:
                raise _NeedExact("negative spin ids")
            for t, rows in _groups(tcode, live):  # repeats: ids strictly increasing within each table
                v = ids[rows]
                if v[0] <= self.last_id.get(t, -1) or (v.size > 1 and np.any(v[1:] <= v[:-1])):
                    raise _NeedExact("a spin id repeats or goes backwards")
                self.last_id[t] = int(v[-1])
            for t, rows in _groups(akey, np.arange(n)):  # gaps: every row of the table with an id counts
                self._present(t, ids[rows])
        ts = pt.get("ts")
        if ts is not None and live.size:
            self.period = _span(self.period, ts[live])
        if ts is not None:
            for t, rows in _groups(akey, live):  # spin order: timestamps never go back; equal ones in id order
                v = ts[rows]
                prev = self.last_ts.get(t)
                if prev is not None:
                    v = np.r_[prev[0], v]
                d = np.diff(v)
                if np.any(d < 0):
                    raise _NeedExact("timestamps out of order")
                if self.min_us > 0 and d.size and np.any(d < self.min_us):  # rounds closer than a round lasts, same result?
                    o = outcome_key(pt["pos"][rows], pt["sym"][rows], void[rows])
                    if prev is not None:
                        o = np.r_[prev[2], o]
                    if np.any((d < self.min_us) & (o[1:] == o[:-1])):
                        raise _NeedExact("near-duplicate rounds")
                if ids is not None and np.any(d == 0):
                    s_ = ids[rows] if prev is None else np.r_[prev[1], ids[rows]]
                    if np.any((d == 0) & (s_[1:] < s_[:-1])):
                        raise _NeedExact("equal timestamps out of id order")
                last = rows[-1:]
                self.last_ts[t] = (int(ts[rows[-1]]), int(ids[rows[-1]]) if ids is not None else 0,
                                   int(outcome_key(pt["pos"][last], pt["sym"][last], void[last])[0]))
        for t, c in enumerate(np.bincount(akey[void]).tolist()):  # (table codes are small: a count per code, no sort)
            if c:
                self.void[t] = self.void.get(t, 0) + c
        for t, c in enumerate(np.bincount(tcode[live]).tolist()):
            if c:
                self.live_rows[t] = self.live_rows.get(t, 0) + c
        pos = pt["pos"][acc]
        self.all_pos = self.all_pos and bool(np.all(pos >= 0))
        self.pos.put(pos)
        if self.sym is not None:
            self.sym.put(pt["sym"][acc])
        self.tab.put(tcode[acc])
        if pt.get("release") is not None:
            self.release.put(pt["release"][acc])
        if pt.get("dealer") is not None:
            codes, labels = pt["dealer"]
            self.dealer.put(self._lut(self.dealers, labels)[codes[acc]])
        if pt.get("direction") is not None:
            self.direction.put(pt["direction"][acc])
        if pt.get("rotor_speed") is not None:
            self.rotor_speed.put(pt["rotor_speed"][acc])
        if pt.get("ball_direction") is not None:
            self.ball_direction.put(pt["ball_direction"][acc])
        if pt.get("line_no") is not None:  # as _assemble_tables: a spin whose line differs from the table's spin before it
            ln, ka = pt["line_no"][acc], akey[acc]
            start = np.empty(ln.size, dtype=np.int8)
            for t, rows in _groups(ka, np.arange(ln.size)):
                v = ln[rows]
                start[rows[0]] = v[0] != self.last_line.get(t, -1)
                start[rows[1:]] = v[1:] != v[:-1]
                self.last_line[t] = int(v[-1])
            self.line_start.put(start)

    def _present(self, t: int, v: np.ndarray) -> None:
        """Add ids (in row order) to the runs of table ``t``; they must keep increasing."""
        st = self.present.setdefault(t, [0, -1, [], []])
        if v[0] <= st[1] or (v.size > 1 and np.any(v[1:] <= v[:-1])):
            raise _NeedExact("spin ids of a table not increasing")
        brk = np.flatnonzero(v[1:] != v[:-1] + 1) + 1
        starts, ends = v[np.r_[0, brk]], v[np.r_[brk - 1, v.size - 1]]
        if st[2] and st[3][-1][-1] + 1 == starts[0]:  # the first run continues the last one
            st[3][-1] = np.r_[st[3][-1][:-1], ends[0]]
            starts, ends = starts[1:], ends[1:]
        if starts.size:
            st[2].append(starts)
            st[3].append(ends)
            self.n_runs += starts.size
            if self.n_runs > 4_000_000:
                raise _NeedExact("too many gaps in the spin ids to keep as runs")
        st[0] += v.size
        st[1] = int(v[-1])

    # -- the log
    def finish(self, parts: list[dict], notes: list[str]) -> tuple[str, OutcomeSpace, dict[str, TableSpins]]:
        """Level, outcome space and tables, as :func:`read_spin_log` and :func:`_assemble_tables`
        build them."""
        wheel = self.wheel
        if wheel.kind == "roulette" or (wheel.order_known and self.all_pos):
            level, space, out = "position", wheel.position_space(), self.pos
        else:
            level, space, out = "symbol", wheel.symbol_space(), self.sym
            if wheel.order_known:
                notes.append("results are symbols, not section numbers: tests that need the wheel order do not apply")
        cols = self.columns or ()
        outcome = out.values()
        for g in self._cols():
            if g is not out:
                g.values()
        tab_labels_all = list(self.tables)
        if not self.pool:
            labels = tab_labels_all
        else:
            labels = ["(all)"]
            if len(parts) > 1 or len(tab_labels_all) > 1:
                notes.append("tables pooled on request (--pool): tested as one sequence")
        arrays = {"outcomes": outcome}
        if "release" in cols:
            arrays["release"] = self.release.a
        if "dealer" in cols:
            arrays["dealer"] = self.dealer.a
        if "direction" in cols:
            arrays["direction"] = self.direction.a
        for c in ("rotor_speed", "ball_direction"):
            if c in cols:
                arrays[c] = getattr(self, c).a
        if "line_no" in cols:
            arrays["line_start"] = self.line_start.a
        tab = self.tab.a
        self.pos = self.sym = self.tab = self.release = self.dealer = self.direction = self.rotor_speed = self.ball_direction = self.line_start = None  # (the arrays live on in ``arrays``)
        del out, outcome
        if len(labels) > 1:
            arrays, bounds = _split_by_table(arrays, tab, len(labels))  # the ungrouped arrays are freed here
        else:
            bounds = np.array([0, arrays["outcomes"].size])
        del tab
        extra: dict = {}
        for pt in parts:
            for t, v in pt.get("extra_ids", []):
                extra.setdefault(t, []).append(v)
        dealer_labels = list(self.dealers)
        tables: dict[str, TableSpins] = {}
        for ti, t in enumerate(labels):
            live = self.live_rows.get(ti, 0) if not self.pool else sum(self.live_rows.values())
            if live == 0:
                continue
            a, b = int(bounds[ti]), int(bounds[ti + 1])
            tnotes: list[str] = []
            ts_ = TableSpins(table=str(t), outcomes=arrays["outcomes"][a:b], void=self.void.get(ti, 0), notes=tnotes)
            if "release" in arrays:
                ts_.release = arrays["release"][a:b]
            if "direction" in arrays:
                ts_.direction = arrays["direction"][a:b]
            if "rotor_speed" in arrays:
                ts_.rotor_speed = arrays["rotor_speed"][a:b]
            if "ball_direction" in arrays:
                ts_.ball_direction = arrays["ball_direction"][a:b]
            if "line_start" in arrays and b > a:
                ts_.line_start = arrays["line_start"][a:b].view(bool)
            if "dealer" in arrays:
                sel = arrays["dealer"][a:b]
                used = np.flatnonzero(np.bincount(sel, minlength=len(dealer_labels))) if sel.size else np.zeros(0, np.int64)
                lookup = np.zeros(max(len(dealer_labels), 1), dtype=_small_int(max(used.size - 1, 1)))
                lookup[used] = np.arange(used.size)
                ts_.dealer = lookup[sel]
                ts_.dealer_labels = tuple(dealer_labels[u] if dealer_labels[u] else "(none)" for u in used)
            if "spin_id" in cols:
                names = ([str(t)] if not self.pool else tab_labels_all) + [None]
                unsplit = np.asarray([v for nm in names for v in extra.get(nm, [])], dtype=np.int64)
                gaps = self._gaps(ti, unsplit[unsplit >= 0])
                if gaps:
                    tnotes.append(f"{gaps[0]} spin_id(s) missing between {gaps[1]} and {gaps[2]} (gaps in the sequence)")
            tables[str(t)] = ts_
        return level, space, tables

    def _gaps(self, t: int, unsplit: np.ndarray):
        """(missing, first, last) of the ids of table ``t`` and the unsplit rows' ids, or None."""
        st = self.present.get(t)
        if st is None or st[0] == 0:
            if unsplit.size < 2:
                return None
            u = np.unique(unsplit)
            gaps = int(u[-1] - u[0] + 1 - u.size)
            return (gaps, int(u[0]), int(u[-1])) if gaps else None
        starts, ends = np.concatenate(st[2]), np.concatenate(st[3])
        distinct = st[0]
        u = np.unique(unsplit)
        if u.size:
            i = np.searchsorted(starts, u, side="right") - 1  # the run that may hold each id
            inside = (i >= 0) & (u <= ends[np.clip(i, 0, None)])
            distinct += int(np.count_nonzero(~inside))
        lo = int(min(starts[0], u[0])) if u.size else int(starts[0])
        hi = int(max(ends[-1], u[-1])) if u.size else int(ends[-1])
        if st[0] + unsplit.size < 2:
            return None
        gaps = hi - lo + 1 - distinct
        return (gaps, lo, hi) if gaps else None


def _split_by_table(arrays: dict[str, np.ndarray], tab: np.ndarray, n_tables: int, chunk: int = 1 << 20):
    """Group the rows of every array by table (a stable counting sort done chunk by chunk, so
    that no index array of the whole log is made). Returns the grouped arrays and the bounds of
    each table's rows."""
    counts = np.bincount(tab, minlength=n_tables)
    bounds = np.r_[0, np.cumsum(counts)]
    out = {k: np.empty_like(v) for k, v in arrays.items()}
    fill = bounds[:-1].copy()
    for a in range(0, tab.size, chunk):
        t = tab[a : a + chunk].astype(np.int64)
        order = np.argsort(t, kind="stable")
        st = t[order]
        c = np.bincount(st, minlength=n_tables)
        first = np.r_[0, np.cumsum(c)[:-1]]
        dest = np.empty(t.size, dtype=np.int64)
        dest[order] = fill[st] + (np.arange(t.size) - first[st])
        for k, v in arrays.items():
            out[k][dest] = v[a : a + chunk]
        fill += c
    return out, bounds
