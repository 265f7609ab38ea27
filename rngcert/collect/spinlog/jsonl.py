"""JSON Lines spin logs: one object per line, with the keys of a CSV log's columns.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from rngcert.collect import _arrow
from rngcert.collect._lazy import pa
from rngcert.collect.spinlog.core import RejectedRow
from rngcert.errors import InputError


class _DuplicateKey(ValueError):
    """A JSON object names a key twice (which value is meant cannot be known); ``first`` is the
    earlier spelling when the two differ only in case or surrounding spaces."""

    def __init__(self, key: str, first: str | None = None):
        super().__init__(key)
        self.key = key
        self.first = first if first is not None else key


def _no_duplicate_keys(pairs):
    """``object_pairs_hook`` of :func:`json.loads` that refuses an object naming a key twice,
    also in another case or with surrounding spaces (``result`` and ``RESULT``): keys are matched
    as a CSV header's columns are, case-insensitively after trimming."""
    seen = {}
    spelled: dict[str, str] = {}
    for k, v in pairs:
        norm = k.strip().lower()
        if norm in spelled:
            raise _DuplicateKey(k, spelled[norm])
        spelled[norm] = k
        seen[k] = v
    return seen


def _duplicate_reason(exc: _DuplicateKey) -> str:
    """Why a row whose object names a key twice is rejected."""
    what = f"{exc.key!r} given twice" if exc.first == exc.key else f"{exc.first!r} and {exc.key!r} (one column: keys match case-insensitively) given"
    return (f"ambiguous: {what} in one object (which value is meant cannot be known; "
            "as a CSV header naming a column twice is refused): neither value is used")


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


#: Numbers (and NaN, Infinity) read as the text they are written in, as a CSV cell is: ``-0`` is not 0, ``1e1`` not 10.
_AS_WRITTEN = {"parse_int": str, "parse_float": str, "parse_constant": str}


def _read_jsonl(data: bytes, name: str, columns=None, present: list | None = None):
    text, _ = _text_of(data)
    if text.lstrip().startswith("["):
        raise json_array_error(name)
    return _parse_lines(text.splitlines(), name, 1, columns=columns, present=present)


def _parse_lines(lines_of_text, name: str, first: int, keys: list[str] | None = None, columns=None, present: list | None = None):
    """Parse JSON Lines (``first``: the 1-based number of the first line): the columns (text or
    None per row), the line of each row, the rejected lines, the blank-line count and the keys in
    order of first appearance. With ``keys`` (the keys of a file's first block), every one of
    them is a column (None where absent) and a key not among them raises :class:`NewKey`. A row
    giving an object or array for a spin-log column (or a key ``columns`` maps) is rejected.
    ``present``: gets ``(table, spin id)`` of each line rejected before its fields are read
    (:func:`_rejected_row_id`)."""
    from rngcert.collect.spinlog.core import KNOWN_COLUMNS

    used = set(KNOWN_COLUMNS) | {str(v).strip().lower() for v in (columns or {}).values()}
    rows: dict[str, list] = {k: [] for k in keys} if keys is not None else {}
    canon = {k.strip().lower(): k for k in reversed(keys or ())}  # a key's first spelling: `Result` in a later row is `result`
    lines: list[int] = []
    rejects: list[RejectedRow] = []
    blank = 0
    n = 0
    for i, line in enumerate(lines_of_text, first):
        if not line.strip():
            blank += 1
            continue
        try:
            obj = json.loads(line, object_pairs_hook=_no_duplicate_keys, **_AS_WRITTEN)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
        except _DuplicateKey as exc:
            rejects.append(RejectedRow(name, i, exc.key, _duplicate_reason(exc), line[:200]))
            _rejected_row_id(line, columns, present)
            continue
        except ValueError as exc:
            rejects.append(RejectedRow(name, i, "*", f"not a JSON object: {exc}", line[:200]))
            _rejected_row_id(line, columns, present)
            continue
        nested = next((k for k, v in obj.items() if isinstance(v, (dict, list)) and k.strip().lower() in used), None)
        if nested is not None:  # in a column the reader uses, its Python repr is no value of the log: the row is rejected, by key
            rejects.append(RejectedRow(name, i, nested, _nested_reason(nested, obj[nested]), line[:200]))
            _rejected_row_id(line, columns, present)
            continue
        for k0, v in obj.items():
            k = canon.setdefault(k0.strip().lower(), k0)
            col = rows.get(k)
            if col is None:
                if keys is not None:
                    raise NewKey(k)
                col = rows[k] = [None] * n
            col.append(None if v is None else (str(v).lower() if isinstance(v, bool) else str(v)))
        n += 1
        for col in rows.values():
            if len(col) < n:
                col.append(None)
        lines.append(i)
    cols = {k: _arrow.texts(v) for k, v in rows.items()}  # (pa.array would import pandas)
    return cols, np.asarray(lines, dtype=np.int64), rejects, blank, list(rows)


#: A key and its plain value (a JSON string or number) in a line that is not valid JSON, for :func:`_rejected_row_id`.
_KEY_VALUE = r'"\s*{key}\s*"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)'


def _rejected_row_id(line: str, columns, present: list | None) -> None:
    """Append to ``present`` the ``(table, spin id)`` texts of a rejected line (``table`` None when the line names no
    table) when the line names its spin id once, or twice alike: the id is in the source (its row is rejected), so it
    is no gap, as the id of a CSV row with the wrong number of fields is not. The line is read as JSON with every value
    kept (a key given twice), or, when it is not valid JSON, searched for the keys and their plain values; a key given
    twice differently (or an object, array or boolean there) leaves the row's id unknown."""
    if present is None:
        return
    want = {ours: str((columns or {}).get(ours, ours)).strip().lower() for ours in ("spin_id", "table")}
    try:
        pairs = json.loads(line, object_pairs_hook=list, **_AS_WRITTEN)
        if not isinstance(pairs, list) or not all(isinstance(p, tuple) for p in pairs):
            return  # (an array, a number: no keys)
        found = {ours: [v for k, v in pairs if k.strip().lower() == key] for ours, key in want.items()}
    except ValueError:
        found = {}
        for ours, key in want.items():
            pattern = _KEY_VALUE.format(key=re.escape(key))
            try:
                found[ours] = [json.loads(v) if v[0] == '"' else v for v in re.findall(pattern, line, flags=re.IGNORECASE)]
            except ValueError:  # (a string with a bad escape: not a value)
                return
    texts = {}
    for ours, vals in found.items():
        if any(isinstance(v, (bool, list, tuple, dict)) or v is None for v in vals) or len({str(v).strip() for v in vals}) > 1:
            return  # (which value is meant cannot be known)
        texts[ours] = str(vals[0]).strip() if vals else None
    if texts["spin_id"]:
        present.append((texts["table"], texts["spin_id"]))


def _present_ids(present: list, has_table: bool, own: str) -> tuple[list, list]:
    """``(extra_ids, extra_text_ids)`` of a part: the ``(table, spin id)`` of :func:`_rejected_row_id` split as the CSV
    reader splits the ids of the rows it could not split into fields (whole numbers; letters and a number, ``R1200``);
    the table is the file's own (``own``, named after it) when the file has no table column, and None (every table, as
    the id of a row with an empty table value) where the line names none while the file does."""
    import re

    from rngcert.collect.spinids import PREFIXED_ID

    extra, extra_text = [], []
    for t, sid in present:
        t = (t or None) if has_table else own
        if sid.isascii() and sid.isdigit() and len(sid) <= 18:
            extra.append((t, int(sid)))
        elif sid.isascii() and re.fullmatch(PREFIXED_ID, sid):
            extra_text.append((t, sid))
    return extra, extra_text


#: What a key's value is, for the reason of a row that gives an object or array there.
_EXPECTED = {"result": "a result (pocket label or section)", "dealer": "a dealer name", "table": "a table id", "spin_id": "a spin id",
             "timestamp": "a timestamp", "direction": "a direction", "release_pocket": "a release pocket", "revolutions": "a number of revolutions",
             "void": "a void flag"}


def _nested_reason(key: str, value) -> str:
    """Why a row whose ``key`` holds a JSON object or array is rejected."""
    what = "an object" if isinstance(value, dict) else "an array"
    return f"{what} where {_EXPECTED.get(key.strip().lower(), 'a text or number value')} was expected: the row is not used"


class NewKey(Exception):
    """A key first seen after a file's first block: the streamed reader reads the file again with
    ``keys`` (the file's keys so far, in order of first appearance)."""

    def __init__(self, key: str, keys: list[str] | None = None):
        super().__init__(key)
        self.keys = keys


# ---------------------------------------------------------------------------- streamed
#: Bytes of whole lines parsed at a time by :func:`_read_jsonl_streaming`.
JSONL_BLOCK = 4 << 20
#: Reads of one file at most (each new key seen after the first block starts the read again).
_RESTARTS = 8
#: Bytes that end a line for :meth:`str.splitlines` besides ``\n`` (and ``\r\n``), and the escape of a
#: JSON string (``\u``): a block holding any of them is parsed line by line in Python, as the whole file is.
_ODD = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\\u")


#: A value that is the number ``-0`` (``-0``, ``-0.5``: the second takes the exact parse too, which costs nothing in
#: a log of whole numbers).
_NEGATIVE_ZERO = re.compile(rb":[ \t]*-0")


def _scan(fh) -> tuple[str, str, int]:
    """One pass over the bytes: SHA-256, the encoding :func:`_text_of` would choose, and the size."""
    import codecs
    import hashlib

    h = hashlib.sha256()
    dec = codecs.getincrementaldecoder("utf-8")()
    utf8, size = True, 0
    while True:
        chunk = fh.read(8 << 20)
        if not chunk:
            break
        h.update(chunk)
        size += len(chunk)
        if utf8:
            try:
                dec.decode(chunk)
            except UnicodeDecodeError:
                utf8 = False
    if utf8:
        try:
            dec.decode(b"", final=True)
        except UnicodeDecodeError:
            utf8 = False
    return h.hexdigest(), "utf-8" if utf8 else "latin-1", size


def _blocks(fh, size: int | None = None):
    """The file's bytes in blocks of whole lines (each cut after a ``\\n``; the last may end without one)."""
    size = size or JSONL_BLOCK
    rest = b""
    first = min(size, 1 << 16)  # (the first block is parsed by Python, for the keys in their order: a small one)
    while True:
        chunk = fh.read(first or size)
        first = 0
        if not chunk:
            if rest:
                yield rest
            return
        buf = rest + chunk
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            rest = buf
            continue
        rest = buf[cut:]
        yield buf[:cut]


def _fast_block(block: bytes, keys: list[str]):
    """Columns of a block by pyarrow's JSON reader when that gives exactly what :func:`_parse_lines`
    gives (every line one object starting at its first byte, values text, whole numbers within
    int64, booleans or null, no new key); None when it cannot tell (the block is then parsed line
    by line). Returns ``(cols, lines in the block)``."""
    import io

    import pyarrow.compute as pc
    import pyarrow.json as pj

    if any(b in block for b in _ODD) or block.count(b"\r") != block.count(b"\r\n") or _NEGATIVE_ZERO.search(block):
        return None  # (pyarrow reads the number -0 as 0: the text is '-0', as Python's parse gives it)
    arr = np.frombuffer(block, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    starts = np.r_[0, nl[:-1] + 1] if nl.size else np.zeros(1, np.int64)
    if nl.size and nl[-1] + 1 < arr.size:
        starts = np.r_[starts, nl[-1] + 1]
    if not np.all(arr[starts] == ord("{")):  # a blank line, leading space or not an object: the exact parse
        return None
    try:
        tab = pj.read_json(io.BytesIO(block), read_options=pj.ReadOptions(use_threads=False, block_size=len(block) + 1))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if tab.num_rows != starts.size or any(k not in keys for k in tab.column_names):
        return None
    cols = {}
    for k in keys:
        if k not in tab.column_names:
            cols[k] = pa.nulls(starts.size, type=pa.string())
            continue
        c = tab.column(k).combine_chunks()
        if pa.types.is_string(c.type):
            cols[k] = c
        elif pa.types.is_int64(c.type) or pa.types.is_boolean(c.type) or pa.types.is_null(c.type):
            cols[k] = pc.cast(c, pa.string())  # (as str(): "17", "-3"; booleans "true"/"false")
        else:
            return None
    return cols, starts.size


def _read_jsonl_streaming(p: Path, wheel, columns, *, data: bytes | None = None, consume=None, table: str | None = None) -> dict:
    """A JSON Lines log read block by block (:data:`JSONL_BLOCK` bytes of whole lines) through the
    same row-to-spin core as the whole-file reader, each block's rows handed to ``consume.add``
    (a :class:`_CompactLog`): memory does not grow with the file. Rows, rejects, notes and spins
    are those of :func:`_read_jsonl` and the exact path: lines are parsed by Python's JSON parser,
    or by pyarrow's where a block is in the plain shape that both read alike (:func:`_fast_block`).
    Raises :class:`_NeedExact` when a key first appears after the first block. ``table``: the file's table when it
    has no table column (its name without the extension by default)."""
    from rngcert.collect import csvstream
    from rngcert.collect.spinlog.columns import _join_kinds, timestamp_notes
    from rngcert.collect.spinlog.compact import _NeedExact
    from rngcert.collect.spinlog.core import _concat_parts, unread_columns
    from rngcert.collect.spinlog.csv import _ROW_KEYS

    name = str(p)
    with csvstream.open_source(p, data) as fh:
        sha, encoding, size = _scan(fh)
        fh.seek(0)
        head = fh.read(1 << 20)
    lead = head.decode("utf-8-sig" if encoding == "utf-8" else encoding, errors="ignore").lstrip()  # (as _read_jsonl strips the text)
    if lead.startswith("["):
        raise json_array_error(name)
    if not lead and size > len(head):
        raise _NeedExact("a long run of white space at the start")
    keys = None
    for _ in range(_RESTARTS):
        try:
            parts, blank, present, found = _stream_blocks(p, data, name, encoding, keys, wheel, columns, consume, _ROW_KEYS, size)
            break
        except NewKey as exc:  # a key first seen in a later block: read again with it (rows without it have None there)
            keys = exc.keys
            if consume is not None:
                consume.rollback()
    else:
        raise _NeedExact("keys keep appearing late in the file")
    if not parts:
        raise _NeedExact("an empty file")
    kinds = _join_kinds([pt.get("ts_kinds") for pt in parts])
    part = _concat_parts(parts)
    part["ts_kinds"] = kinds
    part["notes"] = list(part["notes"]) + timestamp_notes(name, kinds) + unread_columns(name, found, columns)
    if encoding != "utf-8":
        part["notes"] = list(part["notes"]) + [f"{name}: not valid UTF-8; read as latin-1"]
    part["extra_ids"], part["extra_text_ids"] = _present_ids(present, "table" in part.get("colindex", {}), table or Path(name).stem)
    part["format"] = "jsonl"
    part["sha256"] = sha
    part["blank"] = blank
    part["size"] = size
    return part


def _stream_blocks(p, data, name, encoding, keys, wheel, columns, consume, row_keys, size=None):
    """One read of :func:`_read_jsonl_streaming`: ``(parts, blank lines, (table, spin id) of the lines rejected before their
    fields were read, the file's keys)``. ``keys``: the file's keys
    when known (None: the first block's). Raises :class:`NewKey` with the keys known so far when
    a block names one more, and :class:`_NeedExact` when a block is not one the streamed read can
    prove equal to the whole-file read (no object in the first block, a column the whole file has
    but a block lacks); :class:`InputError` when the file is no longer ``size`` bytes (hashed) after it."""
    from rngcert.collect import csvstream
    from rngcert.collect.spinlog.compact import _NeedExact
    from rngcert.collect.spinlog.core import _process

    parts, blank, line = [], 0, 1
    present: list = []  # (table, spin id) of the lines rejected before their fields were read
    with csvstream.open_source(p, data) as fh:
        for bi, block in enumerate(_blocks(fh)):
            if bi == 0 and block.startswith(b"\xef\xbb\xbf") and encoding == "utf-8":
                block = block[3:]  # (utf-8-sig: the mark is not text)
            fast = _fast_block(block, keys) if keys and encoding == "utf-8" else None
            if fast is not None:
                cols, k = fast
                lines, rej, b = np.arange(line, line + k, dtype=np.int64), [], 0
            else:
                text = block.decode(encoding)
                split = text.splitlines()
                try:
                    cols, lines, rej, b, found = _parse_lines(split, name, line, keys, columns, present)
                except NewKey:
                    found = _parse_lines(split, name, line, columns=columns)[4]
                    known = {x.strip().lower() for x in keys}  # (`Result` in this block is the file's `result`: one column, its first spelling)
                    raise NewKey("", keys + [x for x in found if x.strip().lower() not in known]) from None
                k = len(split)
                if keys is None:
                    keys = found
            line += k
            blank += b
            if not keys:
                raise _NeedExact("no JSON object in the first block")  # (the keys and their order are the file's first object's)
            try:
                out = _process(cols, lines, rej, name, wheel, columns, None, keys, id_numbers=consume is not None)
            except InputError:
                raise _NeedExact("a block without a column the file has") from None  # (the whole-file read judges the file)
            del cols
            if consume is not None:
                consume.add(out)
                out = {kk: (None if kk in row_keys else v) for kk, v in out.items()}
            parts.append(out)
        if size is not None:  # (grown or cut since hashed: the rows would not be those of the SHA-256 reported)
            csvstream._same_size(fh, name, SimpleNamespace(size=size))
    return parts, blank, present, keys
