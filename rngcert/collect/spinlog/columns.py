"""Column decoders of the spin-log collector: pocket labels resolved against the wheel, booleans, numbers,
directions, rotor speeds and timestamps (with the kinds of timestamp a log uses), vectorised with pyarrow.
"""

from __future__ import annotations

import re
from typing import Mapping

import numpy as np

from rngcert.collect import _arrow
from rngcert.collect._lazy import pa, pc
from rngcert.equipment.wheel import VOID_TOKENS, Wheel

_TRUE = {"true", "t", "1", "yes", "y", "void", "no spin"}
_FALSE = {"false", "f", "0", "no", "n", ""}
_DIRECTIONS = {"cw": 0, "clockwise": 0, "ccw": 1, "acw": 1, "anticlockwise": 1, "counterclockwise": 1}


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
    if _one_value(col):
        return np.zeros(len(col), dtype=np.int32), [col[0].as_py()]
    enc = pc.dictionary_encode(col)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    uniq = enc.dictionary.to_pylist()
    return _arrow.ints(enc.indices, fill=len(uniq)), uniq


def _one_value(col) -> bool:
    """True when every cell of a string column holds the same text and none is null (a log of one table, a void
    column of ``false`` only): its dictionary is its first cell, found by one comparison a row instead of a hash
    (a quarter of the time)."""
    if not isinstance(col, pa.Array) or len(col) < 2 or col.null_count:
        return False
    first = col[0]
    if not (col[len(col) - 1].equals(first) and col[len(col) // 2].equals(first)):
        return False  # (most columns of many values: told apart without a pass over the rows)
    return bool(pc.all(pc.equal(col, first)).as_py())


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
    if _already_clean(col):  # the usual column: nothing to trim, no quote (one look at each cell's first and last byte)
        return col
    col = pc.utf8_trim_whitespace(col)
    if len(col) and pc.any(pc.starts_with(col, "'")).as_py():
        col = pc.replace_substring_regex(col, r"^'([=+\-@\t\r'])", r"\1")
    return col


#: bytes a cell may begin and end with and be left as it is by :func:`_clean_text`: printable ASCII but the space (a byte
#: below 0x21 or above 0x7E may be, or begin, white space that ``utf8_trim_whitespace`` trims)
_EDGE_OK = np.zeros(256, dtype=bool)
_EDGE_OK[0x21:0x7F] = True


def _already_clean(col) -> bool:
    """True when :func:`_clean_text` would give ``col`` back unchanged: every non-empty cell begins and ends with a
    printable ASCII byte other than the space, and none begins with the quote ``'``. False when that is not
    known (then the column is cleaned by the string kernels)."""
    if not isinstance(col, pa.Array):
        return False
    view = _byte_view(col)
    if view is None:
        return False
    starts, ends, data = view
    full = ends > starts
    if not full.all():
        starts, ends = starts[full], ends[full]
    if starts.size == 0:
        return True
    first, last = data.take(starts), data.take(ends - 1)
    return bool(_EDGE_OK[first].all() and _EDGE_OK[last].all() and not (first == 0x27).any())


#: Control characters no label cell (table, dealer, spin id, result, result_source, payout, multiplier) may hold: U+0000-U+001F
#: but tab, LF and CR, and U+007F. Each is one byte in UTF-8 that is never part of another character's bytes, so a cell holding
#: one is found in the column's bytes; such a cell was corrupted (a NUL written into ``D1`` is no fifth dealer ``D\x001``).
CONTROL_BYTES = np.zeros(256, dtype=bool)
CONTROL_BYTES[:0x20] = True
CONTROL_BYTES[[0x09, 0x0A, 0x0D]] = False
CONTROL_BYTES[0x7F] = True


def control_chars(col) -> np.ndarray | None:
    """The first control character (:data:`CONTROL_BYTES`) of each cell of a text column.

    Vectorised over the column's bytes: the usual column (no byte below the space, no DEL) is told by one
    minimum and one comparison of its bytes; otherwise the bytes that are control characters are found and
    each is given to its cell by the column's offsets (no Python loop over rows).

    Parameters
    ----------
    col : pyarrow string, large_string or chunked array (another type is cast to string)

    Returns
    -------
    (n,) ndarray of int16 or None
        The code point of each cell's first control character, -1 in a cell without one (and in a null
        cell); None when no cell holds one.
    """
    col = _as_text(col)
    bufs = col.buffers()
    if len(col) == 0 or bufs[2] is None:
        return None
    offs = np.frombuffer(bufs[1], dtype=np.int64 if pa.types.is_large_string(col.type) else np.int32)[col.offset : col.offset + len(col) + 1]
    lo = int(offs[0])
    data = np.frombuffer(bufs[2], dtype=np.uint8)[lo : int(offs[-1])]
    if data.size == 0 or (data.min() >= 0x20 and not (data == 0x7F).any()):
        return None
    at = np.flatnonzero(CONTROL_BYTES[data])
    if at.size == 0:
        return None
    rows, first = np.unique(np.searchsorted(offs, at + lo, side="right") - 1, return_index=True)  # (bytes in order: each row's first)
    keep = _arrow.valid(col)[rows]
    if not keep.any():
        return None
    out = np.full(len(col), -1, dtype=np.int16)
    out[rows[keep]] = data[at[first[keep]]]
    return out


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
#: The timestamp of a void row whose time is missing or unreadable (int64 microseconds): no time, in no period
#: nor time order (the readers, the id sort and the order checks share it).
NO_TIME = np.iinfo(np.int64).min


def _resolve_labels(col: pa.Array, wheel: Wheel, header: str | None = None):
    """Map result tokens to wheel positions and symbol ids, vectorised over distinct tokens.

    ``col``: a pyarrow string column, or a list of distinct strings (the permanence reader's table of
    digit strings: resolved one by one without pyarrow, the same values as the column of those strings).
    ``header``: the column's name in the file; a cell that spells it is named as a repeated header line.

    Returns
    -------
    pos, sym : (n,) int16, -1 where the token is not a position / symbol
    void : (n,) bool, token is a void marker
    bad : (n,) int32, index into ``reasons`` of why the token is not read, -1 where it is
    reasons : list of str
    empty : (n,) bool, the cell is empty (or null)
    """
    positions, symbols = wheel.token_table()
    idx, raw = (np.arange(len(col)), col) if isinstance(col, list) else _decode(_as_text(col))
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
            if header is not None and tok == _norm_text(header):  # the column's own name: a header line in the middle
                reasons.append(f"{str(raw[j]).strip()[:60]!r} is the column's name, not a result: a header line repeated inside "
                               f"the log (logs joined together?)")
            else:
                reasons.append(f"{str(raw[j]).strip()[:60]!r} is not a pocket/section of wheel {wheel.id!r}")
    return pos_u[idx], sym_u[idx], void_u[idx], bad_u[idx], reasons, empty_u[idx]


def _truthy(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Parse a boolean column: (values, bad mask)."""
    idx, uniq = _decode_norm(col)
    val, bad = _truthy_table(uniq)
    return val[idx], bad[idx]


def _truthy_table(uniq: list) -> tuple[np.ndarray, np.ndarray]:
    """(values, bad) of each distinct normalised cell of a boolean column, one more slot (null) at the end."""
    m = len(uniq)
    val = np.zeros(m + 1, dtype=bool)
    bad = np.zeros(m + 1, dtype=bool)
    for j, t in enumerate(uniq):
        if t in _TRUE:
            val[j] = True
        elif t not in _FALSE:
            bad[j] = True
    return val, bad


def _numbers(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Parse a numeric column: (float values with nan for empty, bad mask)."""
    idx, uniq = _decode_norm(col)
    val, bad = _numbers_table(uniq)
    return val[idx], bad[idx]


def _numbers_table(uniq: list) -> tuple[np.ndarray, np.ndarray]:
    """(values, bad) of each distinct normalised cell of a numeric column, one more slot (null) at the end."""
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
    return val, bad


def _directions(col) -> tuple[np.ndarray, np.ndarray]:
    """Parse a direction column (cw/ccw and their synonyms): (int8 values, 0 cw, 1 ccw, -1
    empty; bad mask)."""
    idx, uniq = _decode_norm(col)
    dir_u, bad_u = _directions_table(uniq)
    return dir_u[idx], bad_u[idx]


def _directions_table(uniq: list) -> tuple[np.ndarray, np.ndarray]:
    """(int8 direction, bad) of each distinct normalised cell of a direction column, one more slot (null) at the end."""
    m = len(uniq)
    dir_u = np.full(m + 1, -1, dtype=np.int8)  # last slot: null
    bad_u = np.zeros(m + 1, dtype=bool)
    for j, t in enumerate(uniq):  # loop over the distinct values
        if t in _DIRECTIONS:
            dir_u[j] = _DIRECTIONS[t]
        elif t not in ("", None):
            bad_u[j] = True
    return dir_u, bad_u


def _speeds(col) -> tuple[np.ndarray, np.ndarray]:
    """Parse a rotor-speed column: (float64 values, NaN where empty; bad mask: not a finite
    non-negative number). Cast in C++ when every cell is a number or empty."""
    text = pc.utf8_trim_whitespace(_as_text(col))
    try:
        val = _arrow.floats(pc.cast(pc.if_else(pc.equal(text, _arrow.text_scalar("")), pa.nulls(1, pa.string())[0], text), pa.float64()))
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
            d = datetime.fromisoformat(_leap_second(t).replace("Z", "+00:00"))
            if d.tzinfo is None:
                d = d.replace(tzinfo=timezone.utc)
            val[j] = int(d.timestamp() * 1_000_000)
        except (ValueError, AttributeError, TypeError):
            bad[j] = True
    return val[idx], bad[idx]


_LEAP = re.compile(r"(.*\d{2}:\d{2}):60(?:[.,]\d+)?((?:Z|[+-]\d{2}:?\d{2})?)")


def _leap_second(t: str) -> str:
    """``t`` with a leap second (``23:59:60``, valid UTC and ISO 8601, which Python's datetime cannot hold)
    written as the last microsecond before it (``23:59:59.999999``): the spin keeps its place in time order."""
    m = _LEAP.fullmatch(t) if isinstance(t, str) and ":60" in t else None
    return f"{m[1]}:59.999999{m[2]}" if m else t


# long: two vectorised paths over the cells (bytes read in place, or Arrow string kernels) feeding one classification of the timestamps
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
            return _arrow.bools(pc.is_in(pc.utf8_slice_codeunits(col, -k, -k + 1 if k > 1 else None), value_set=_arrow.texts(list(chars.decode()))))

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
    return _arrow.byte_view(col)


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
